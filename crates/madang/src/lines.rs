//! Lines from untrusted input (a Gomocup manager, a file of positions):
//! a line longer than the cap costs no more memory than the cap, and a
//! line that is not UTF-8 is an error for that line only.

use std::io::{self, BufRead};

use thiserror::Error;

/// The longest line kept: far above any real command or position.
pub const MAX_LINE: usize = 64 * 1024;

/// Why a line was skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum LineError {
    /// The line is longer than the cap; its bytes were read and dropped.
    #[error("line longer than {0} bytes, ignored")]
    TooLong(usize),
    /// The line is not UTF-8 text.
    #[error("line is not valid UTF-8, ignored")]
    NotUtf8,
}

/// Reads the next line into `buf`, without its `\n` or `\r\n`, keeping at
/// most `max` bytes. `None` at the end of the input; a last line without
/// `\n` still counts.
pub fn read_line<'a>(
    input: &mut impl BufRead,
    buf: &'a mut Vec<u8>,
    max: usize,
) -> io::Result<Option<Result<&'a str, LineError>>> {
    buf.clear();
    let mut seen = false;
    let mut too_long = false;
    loop {
        let chunk = match input.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            if !seen {
                return Ok(None);
            }
            break;
        }
        seen = true;
        let (part, used, end) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..i], i + 1, true),
            None => (chunk, chunk.len(), false),
        };
        if !too_long && buf.len() + part.len() <= max {
            buf.extend_from_slice(part);
        } else if !too_long {
            too_long = true;
            *buf = Vec::new();
        }
        input.consume(used);
        if end {
            break;
        }
    }
    if too_long {
        return Ok(Some(Err(LineError::TooLong(max))));
    }
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    Ok(Some(
        std::str::from_utf8(buf).map_err(|_| LineError::NotUtf8),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(input: &[u8], max: usize) -> Vec<Result<String, LineError>> {
        let mut input = io::BufReader::with_capacity(4, input);
        let mut buf = Vec::new();
        let mut lines = Vec::new();
        while let Some(line) = read_line(&mut input, &mut buf, max).unwrap() {
            lines.push(line.map(str::to_owned));
        }
        lines
    }

    #[test]
    fn lines_errors_and_the_end() {
        let lines = all(b"one\r\n\ntoo long line\n\xffbad\nok\nlast", 8);
        assert_eq!(
            lines,
            [
                Ok("one".to_owned()),
                Ok(String::new()),
                Err(LineError::TooLong(8)),
                Err(LineError::NotUtf8),
                Ok("ok".to_owned()),
                Ok("last".to_owned()),
            ]
        );
        assert!(all(b"", 8).is_empty());
        assert_eq!(all(b"exactly8\n", 8), [Ok("exactly8".to_owned())]);
    }
}
