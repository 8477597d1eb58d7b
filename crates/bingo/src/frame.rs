//! Cutting a byte stream into protocol lines.
//!
//! A line ends in `\n` (a `\r` just before it is dropped) and holds at most
//! [`MAX_LINE`] bytes of UTF-8. An over-long line is reported as soon as more
//! than [`MAX_LINE`] bytes have arrived without a line end, so a peer cannot
//! make the receiver buffer without bound.

use thiserror::Error;

/// The longest line, in bytes, not counting the line end.
pub const MAX_LINE: usize = 1024;

/// A framing violation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum FrameError {
    /// More than [`MAX_LINE`] bytes without a line end.
    #[error("line longer than {MAX_LINE} bytes")]
    TooLong,
    /// The line is not UTF-8.
    #[error("line is not valid UTF-8")]
    InvalidUtf8,
}

/// The first complete line in `buf` and how many bytes it used, `None` if no
/// line is complete yet.
pub fn next_line(buf: &[u8]) -> Result<Option<(&str, usize)>, FrameError> {
    // A line end may sit at most at MAX_LINE + 1 (after a `\r`).
    let window = &buf[..buf.len().min(MAX_LINE + 2)];
    match window.iter().position(|&b| b == b'\n') {
        Some(end) => {
            let content = &buf[..end];
            let content = content.strip_suffix(b"\r").unwrap_or(content);
            if content.len() > MAX_LINE {
                return Err(FrameError::TooLong);
            }
            let line = std::str::from_utf8(content).map_err(|_| FrameError::InvalidUtf8)?;
            Ok(Some((line, end + 1)))
        }
        None => {
            let pending = buf.strip_suffix(b"\r").unwrap_or(buf).len();
            if pending > MAX_LINE {
                Err(FrameError::TooLong)
            } else {
                Ok(None)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_line_ends() {
        assert_eq!(next_line(b"CALL 5\nTIE\n"), Ok(Some(("CALL 5", 7))));
        assert_eq!(next_line(b"CALL 5\r\n"), Ok(Some(("CALL 5", 8))));
        assert_eq!(next_line(b"\n"), Ok(Some(("", 1))));
        assert_eq!(next_line(b"CALL 5"), Ok(None));
        assert_eq!(next_line(b""), Ok(None));
    }

    #[test]
    fn the_limit_is_exact() {
        let mut line = vec![b'a'; MAX_LINE];
        assert_eq!(next_line(&line), Ok(None));
        line.push(b'\r');
        assert_eq!(next_line(&line), Ok(None), "the \\r may start a line end");
        line.push(b'\n');
        assert_eq!(next_line(&line).unwrap().unwrap().1, MAX_LINE + 2);
        let long = vec![b'a'; MAX_LINE + 1];
        assert_eq!(next_line(&long), Err(FrameError::TooLong));
        let mut long_with_end = long.clone();
        long_with_end.push(b'\n');
        assert_eq!(next_line(&long_with_end), Err(FrameError::TooLong));
    }

    #[test]
    fn invalid_utf8() {
        assert_eq!(next_line(b"CHAT \xff\n"), Err(FrameError::InvalidUtf8));
        assert_eq!(
            next_line("CHAT 빙고\n".as_bytes()).unwrap().unwrap().0,
            "CHAT 빙고"
        );
    }
}
