//! Cutting a byte stream into 3-byte frames, for `tokio_util::codec`.
//!
//! The stream has no length prefix or terminator, so framing is only a
//! matter of counting: a frame may arrive split over several reads, and one
//! read may hold several frames.

use bytes::{Buf, BytesMut};
use tokio_util::codec::{Decoder, Encoder};

use omok::frame::FRAME_LEN;

/// Frames raw 3-byte messages; interpretation is left to
/// [`PlayerMsg::decode`](omok::frame::PlayerMsg::decode) and
/// [`RefereeMsg::decode`](omok::frame::RefereeMsg::decode).
#[derive(Debug, Default, Clone, Copy)]
pub struct FrameCodec;

impl Decoder for FrameCodec {
    type Item = [u8; FRAME_LEN];
    type Error = std::io::Error;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Self::Item>, Self::Error> {
        if src.len() < FRAME_LEN {
            src.reserve(FRAME_LEN - src.len());
            return Ok(None);
        }
        let frame = [src[0], src[1], src[2]];
        src.advance(FRAME_LEN);
        Ok(Some(frame))
    }
}

impl Encoder<[u8; FRAME_LEN]> for FrameCodec {
    type Error = std::io::Error;

    fn encode(&mut self, frame: [u8; FRAME_LEN], dst: &mut BytesMut) -> Result<(), Self::Error> {
        dst.extend_from_slice(&frame);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_and_coalesced_frames() {
        let mut codec = FrameCodec;
        let mut buf = BytesMut::new();
        buf.extend_from_slice(&[3, 0]);
        assert_eq!(codec.decode(&mut buf).unwrap(), None);
        buf.extend_from_slice(&[0x77, 1, 0, 1, 0]);
        assert_eq!(codec.decode(&mut buf).unwrap(), Some([3, 0, 0x77]));
        assert_eq!(codec.decode(&mut buf).unwrap(), Some([1, 0, 1]));
        assert_eq!(codec.decode(&mut buf).unwrap(), None);
        assert_eq!(&buf[..], &[0]);
    }
}
