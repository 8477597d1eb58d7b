//! A tokio codec for protocol lines, on top of [`bingo::frame`].

use bingo::Message;
use bingo::frame::{self, FrameError};
use bytes::{Buf, BufMut, BytesMut};
use tokio_util::codec::{Decoder, Encoder};

/// Decodes lines as `Ok(text)` or the framing violation, and encodes messages
/// as lines ending in `\n`.
#[derive(Debug, Default, Clone, Copy)]
pub struct LineCodec;

impl Decoder for LineCodec {
    type Item = Result<String, FrameError>;
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Self::Item>, Self::Error> {
        match frame::next_line(buf) {
            Ok(Some((line, used))) => {
                let line = line.to_owned();
                buf.advance(used);
                Ok(Some(Ok(line)))
            }
            Ok(None) => Ok(None),
            Err(error) => {
                // The connection is closed after a framing error; drop what
                // came so a caller that reads on never sees it twice.
                buf.clear();
                Ok(Some(Err(error)))
            }
        }
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Self::Item>, Self::Error> {
        // An unfinished line at the end of the stream is not a message.
        let item = self.decode(buf)?;
        buf.clear();
        Ok(item)
    }
}

impl Encoder<Message> for LineCodec {
    type Error = std::io::Error;

    fn encode(&mut self, message: Message, buf: &mut BytesMut) -> Result<(), Self::Error> {
        buf.put_slice(message.to_string().as_bytes());
        buf.put_u8(b'\n');
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_lines_and_violations() {
        let mut codec = LineCodec;
        let mut buf = BytesMut::from(&b"CALL 5\r\nTIE\nCHA"[..]);
        assert_eq!(codec.decode(&mut buf).unwrap(), Some(Ok("CALL 5".into())));
        assert_eq!(codec.decode(&mut buf).unwrap(), Some(Ok("TIE".into())));
        assert_eq!(codec.decode(&mut buf).unwrap(), None);
        assert_eq!(codec.decode_eof(&mut buf).unwrap(), None);
        let mut long = BytesMut::from(&[b'x'; 1025][..]);
        assert_eq!(
            codec.decode(&mut long).unwrap(),
            Some(Err(FrameError::TooLong))
        );
    }
}
