//! The generator's WebSocket client: tungstenite's protocol (handshake,
//! masked client frames, UTF-8 checked text, pings, close) on a
//! non-blocking socket. While a room is set up its connections wait on
//! tokio ([`Pending`]); once it plays they are [`Conn`]s in a mio event loop
//! ([`super::play`]), with no task or waker per message. Either way a read
//! that comes back short ends the reads, without a system call that would
//! find nothing.
//!
//! tungstenite does the handshake and writes; the server's frames are read
//! here, in place, from one buffer per thread: a frame whose text is whole
//! is handed on where it lies, with no copy, allocation or zero-fill per
//! frame (only the start of a frame whose rest has not come yet is kept
//! with its connection until it has).

// Registering a descriptor with tokio is an unsafe call.
#![allow(unsafe_code)]

use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use mio::{Interest, Registry, Token};
use tokio::io::unix::AsyncFd;
use tokio::time::timeout;
use tokio_tungstenite::tungstenite::handshake::HandshakeError;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::protocol::frame::CloseFrame;
use tokio_tungstenite::tungstenite::{self, Bytes, Message, Utf8Bytes, WebSocket};

/// The largest frame payload the server may send: a complete state is
/// about 1 KiB, a lobby list a few.
const MAX_PAYLOAD: usize = 64 << 10;

/// The per-thread read buffer: room for a whole frame of the largest size
/// and the reads after it.
const SCRATCH: usize = 2 * MAX_PAYLOAD;

thread_local! {
    /// Where every connection of the thread reads into.
    static SCRATCH_BUF: RefCell<Box<[u8]>> = RefCell::new(vec![0; SCRATCH].into_boxed_slice());
}

/// A frame from the server, read in place.
#[derive(Debug, PartialEq)]
enum Frame<'a> {
    Text(&'a str),
    Ping(&'a [u8]),
    Close(Option<u16>),
    /// A pong or a binary message: nothing to do.
    Ignored,
}

/// Why a frame from the server was refused.
#[derive(Debug, PartialEq, thiserror::Error)]
pub(super) enum BadFrame {
    #[error("reserved bits set")]
    Reserved,
    #[error("masked")]
    Masked,
    #[error("fragmented")]
    Fragmented,
    #[error("unknown opcode")]
    Opcode,
    #[error("a control frame over 125 bytes")]
    LongControl,
    #[error("over {MAX_PAYLOAD} bytes")]
    TooLong,
    #[error("text that is not UTF-8")]
    NotUtf8,
}

/// The first frame in `buf` and its length, `None` if it is not all
/// there yet. The server never masks nor fragments its messages (its rooms
/// write each as one frame); anything else is refused.
fn next_frame(buf: &[u8]) -> Result<Option<(Frame<'_>, usize)>, BadFrame> {
    let [first, second, ..] = *buf else {
        return Ok(None);
    };
    if first & 0x70 != 0 {
        return Err(BadFrame::Reserved);
    }
    if second & 0x80 != 0 {
        return Err(BadFrame::Masked);
    }
    let opcode = first & 0x0f;
    let fin = first & 0x80 != 0;
    let (len, header) = match second & 0x7f {
        126 => match buf.get(2..4) {
            Some(b) => (u64::from(u16::from_be_bytes([b[0], b[1]])), 4),
            None => return Ok(None),
        },
        127 => match buf.get(2..10) {
            Some(b) => (u64::from_be_bytes(b.try_into().unwrap_or_default()), 10),
            None => return Ok(None),
        },
        n => (u64::from(n), 2),
    };
    if opcode >= 8 && (len > 125 || !fin) {
        return Err(BadFrame::LongControl);
    }
    if len > MAX_PAYLOAD as u64 {
        return Err(BadFrame::TooLong);
    }
    let end = header + len as usize;
    let Some(payload) = buf.get(header..end) else {
        return Ok(None);
    };
    let frame = match opcode {
        0 => return Err(BadFrame::Fragmented),
        _ if !fin => return Err(BadFrame::Fragmented),
        1 => Frame::Text(std::str::from_utf8(payload).map_err(|_| BadFrame::NotUtf8)?),
        2 | 10 => Frame::Ignored,
        8 => Frame::Close(payload.get(..2).map(|c| u16::from_be_bytes([c[0], c[1]]))),
        9 => Frame::Ping(payload),
        _ => return Err(BadFrame::Opcode),
    };
    Ok(Some((frame, end)))
}

/// The stream tungstenite reads and writes.
struct Stream {
    tcp: mio::net::TcpStream,
    /// A read came back short (or found nothing): the socket is empty, so
    /// the next read answers `WouldBlock` without asking the kernel.
    drained: bool,
    /// Every byte tungstenite read: it reads only the handshake's answer,
    /// and what came after that answer is the start of the server's frames.
    seen: Vec<u8>,
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.drained {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let read = self.tcp.read(buf);
        if let Ok(n) = &read {
            self.seen.extend_from_slice(&buf[..*n]);
        }
        match &read {
            Ok(n) if *n < buf.len() => self.drained = true,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.drained = true,
            _ => {}
        }
        read
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.tcp.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// What reading a connection's messages ended with.
pub(super) enum Reads {
    /// Every message there was was read; the next comes with the next
    /// readiness.
    Waiting,
    /// The connection is closed or broken.
    Closed,
    /// The server sent a frame no server may send; the connection is
    /// dropped.
    Bad(BadFrame),
}

/// One WebSocket connection of the generator, driven by whoever polls its
/// socket's readiness.
pub(super) struct Conn {
    /// The handshake was tungstenite's; it writes, and never reads again.
    ws: WebSocket<Stream>,
    /// A message is waiting in tungstenite's buffer for the socket to
    /// take it.
    unflushed: bool,
    /// The start of a frame whose rest has not been read yet.
    partial: Vec<u8>,
    /// Messages read while the room was set up and not yet looked at.
    early: VecDeque<String>,
}

fn would_block(e: &tungstenite::Error) -> bool {
    matches!(e, tungstenite::Error::Io(e) if e.kind() == io::ErrorKind::WouldBlock)
}

impl Conn {
    /// Sends a text message now, or as soon as the socket takes it (see
    /// [`Conn::flush`]); false if the connection is broken.
    pub(super) fn send_text(&mut self, text: Utf8Bytes) -> bool {
        self.send(Message::Text(text))
    }

    fn send(&mut self, message: Message) -> bool {
        match self.ws.send(message) {
            Ok(()) => true,
            Err(e) if would_block(&e) => {
                self.unflushed = true;
                true
            }
            Err(_) => false,
        }
    }

    /// Whether a message waits for the socket to take it.
    pub(super) fn unflushed(&self) -> bool {
        self.unflushed
    }

    /// Writes what [`Conn::send`] could not, as far as the socket takes it;
    /// false if the connection is broken.
    pub(super) fn flush(&mut self) -> bool {
        match self.ws.flush() {
            Ok(()) => {
                self.unflushed = false;
                true
            }
            Err(e) => would_block(&e),
        }
    }

    /// Reads every text message the socket holds, handing each to `each`
    /// with the time it was read. Call it when the socket is readable.
    pub(super) fn read(&mut self, mut each: impl FnMut(&str, Instant)) -> Reads {
        let now = Instant::now();
        for text in self.early.drain(..) {
            each(&text, now);
        }
        SCRATCH_BUF.with_borrow_mut(|buf| self.read_into(buf, |text| each(text, now)))
    }

    /// [`Conn::read`] with `buf` to read into.
    fn read_into(&mut self, buf: &mut [u8], mut each: impl FnMut(&str)) -> Reads {
        let mut filled = self.partial.len();
        buf[..filled].copy_from_slice(&self.partial);
        self.partial.clear();
        loop {
            let room = buf.len() - filled;
            let n = match self.ws.get_mut().tcp.read(&mut buf[filled..]) {
                Ok(0) => return Reads::Closed,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => 0,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return Reads::Closed,
            };
            filled += n;
            let mut at = 0;
            loop {
                let (frame, len) = match next_frame(&buf[at..filled]) {
                    Ok(Some(frame)) => frame,
                    Ok(None) => break,
                    Err(bad) => return Reads::Bad(bad),
                };
                at += len;
                match frame {
                    Frame::Text(text) => each(text),
                    Frame::Ping(payload) => {
                        if !self.send(Message::Pong(Bytes::copy_from_slice(payload))) {
                            return Reads::Closed;
                        }
                    }
                    Frame::Close(code) => {
                        // The answer says the same code, as a close should.
                        let frame = code.map(|code| CloseFrame {
                            code: code.into(),
                            reason: Utf8Bytes::default(),
                        });
                        let _ = self.ws.close(frame);
                        let _ = self.ws.flush();
                        return Reads::Closed;
                    }
                    Frame::Ignored => {}
                }
            }
            buf.copy_within(at..filled, 0);
            filled -= at;
            if n < room {
                // A short read: the socket is drained.
                self.partial.extend_from_slice(&buf[..filled]);
                return Reads::Waiting;
            }
        }
    }

    /// Adds the socket to a mio event loop, edge-triggered, for reads and
    /// for writes the socket could not take at once.
    pub(super) fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        registry.register(
            &mut self.ws.get_mut().tcp,
            token,
            Interest::READABLE | Interest::WRITABLE,
        )
    }

    /// Says goodbye (a close frame), without waiting for the answer.
    pub(super) fn close(mut self) {
        let _ = self.ws.close(None);
        let _ = self.ws.flush();
    }
}

/// Reads what `conn`'s socket holds into its messages not yet looked at,
/// until the socket is drained.
fn read_early(conn: &mut Conn) -> Result<()> {
    let mut early = std::mem::take(&mut conn.early);
    let read = conn.read(|text, _| early.push_back(text.to_owned()));
    conn.early = early;
    match read {
        Reads::Waiting => Ok(()),
        Reads::Closed => bail!("the server closed the connection"),
        Reads::Bad(bad) => bail!("a bad frame from the server: {bad}"),
    }
}

/// A connection being set up: a [`Conn`] whose readiness tokio tracks, so
/// that many can connect and ask at once.
pub(super) struct Pending {
    /// The descriptor of the stream inside `conn` (which owns it).
    ready: AsyncFd<RawFd>,
    conn: Conn,
}

impl Pending {
    /// Connects to `url` at `addr` and does the WebSocket handshake.
    pub(super) async fn connect(addr: SocketAddr, url: &str, limit: Duration) -> Result<Pending> {
        let tcp = timeout(limit, tokio::net::TcpStream::connect(addr))
            .await
            .context("connecting took too long")?
            .context("connecting")?;
        tcp.set_nodelay(true)?;
        let tcp = mio::net::TcpStream::from_std(tcp.into_std()?);
        // SAFETY: the stream stays in the WebSocket below, which keeps the
        // descriptor open and the same until the `AsyncFd` is dropped
        // (`into_conn`, or both together).
        let ready = unsafe { AsyncFd::register(tcp.as_raw_fd()) }.map_err(io::Error::from)?;
        // tungstenite reads the handshake's answer only (a few hundred
        // bytes), and writes every message at once.
        let config = WebSocketConfig::default()
            .read_buffer_size(512)
            .write_buffer_size(0);
        let stream = Stream {
            tcp,
            drained: false,
            seen: Vec::new(),
        };
        let handshake = async {
            let mut step = tungstenite::client::client_with_config(url, stream, Some(config));
            loop {
                match step {
                    Ok((ws, _)) => return Ok(ws),
                    Err(HandshakeError::Interrupted(mut mid)) => {
                        let mut guard = ready.readable().await?;
                        mid.get_mut().get_mut().drained = false;
                        guard.clear_ready();
                        step = mid.handshake();
                    }
                    Err(HandshakeError::Failure(e)) => return Err(anyhow::Error::from(e)),
                }
            }
        };
        let mut ws = timeout(limit, handshake)
            .await
            .context("the handshake took too long")??;
        // What followed the answer's blank line is the server's first
        // frames (or their start); they are read from here on.
        let seen = std::mem::take(&mut ws.get_mut().seen);
        let frames = seen
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map_or(seen.len(), |end| end + 4);
        let mut pending = Pending {
            ready,
            conn: Conn {
                ws,
                unflushed: false,
                partial: seen[frames..].to_vec(),
                early: VecDeque::new(),
            },
        };
        if !pending.conn.partial.is_empty() {
            // No readiness will tell of frames already read.
            read_early(&mut pending.conn)?;
        }
        Ok(pending)
    }

    /// Sends a text message and waits until it is written.
    pub(super) async fn send_now(&mut self, text: String) -> Result<()> {
        if !self.conn.send_text(text.into()) {
            bail!("sending failed");
        }
        while self.conn.unflushed {
            let mut guard = self.ready.writable().await?;
            if !self.conn.flush() {
                bail!("sending failed");
            }
            if self.conn.unflushed {
                guard.clear_ready();
            }
        }
        Ok(())
    }

    /// Waits for the next text message.
    pub(super) async fn next_text(&mut self) -> Result<String> {
        loop {
            if let Some(text) = self.conn.early.pop_front() {
                return Ok(text);
            }
            let mut guard = self.ready.readable().await?;
            read_early(&mut self.conn)?;
            guard.clear_ready();
        }
    }

    /// The connection, no longer watched by tokio (call it on the runtime
    /// that set it up).
    pub(super) fn into_conn(self) -> Conn {
        let Pending { ready, conn } = self;
        drop(ready);
        conn
    }
}

#[cfg(test)]
mod tests {
    use std::net::TcpListener;
    use std::sync::mpsc;

    use mio::{Events, Poll};

    use super::*;

    /// A server's text frame.
    fn text(s: &str) -> Vec<u8> {
        let mut frame = vec![0x81];
        if s.len() < 126 {
            frame.push(s.len() as u8);
        } else {
            frame.push(126);
            frame.extend((s.len() as u16).to_be_bytes());
        }
        frame.extend(s.as_bytes());
        frame
    }

    #[test]
    fn frames_are_read_where_they_lie_and_bad_ones_refused() {
        let long = "x".repeat(300);
        let frame = text(&long);
        assert_eq!(
            next_frame(&frame),
            Ok(Some((Frame::Text(&long), frame.len())))
        );
        // Not all there yet: the header, then the payload.
        assert_eq!(next_frame(&frame[..1]), Ok(None));
        assert_eq!(next_frame(&frame[..3]), Ok(None));
        assert_eq!(next_frame(&frame[..frame.len() - 1]), Ok(None));
        assert_eq!(
            next_frame(b"\x89\x02hi\x81"),
            Ok(Some((Frame::Ping(b"hi"), 4)))
        );
        assert_eq!(
            next_frame(b"\x88\x02\x03\xe9"),
            Ok(Some((Frame::Close(Some(1001)), 4)))
        );
        assert_eq!(next_frame(b"\x88\x00"), Ok(Some((Frame::Close(None), 2))));
        assert_eq!(next_frame(b"\x8a\x00"), Ok(Some((Frame::Ignored, 2))));
        let bad: [(&[u8], BadFrame); 7] = [
            (b"\xc1\x00", BadFrame::Reserved),
            (b"\x81\x81abcdx", BadFrame::Masked),
            (b"\x01\x01a", BadFrame::Fragmented),
            (b"\x80\x01a", BadFrame::Fragmented),
            (b"\x83\x00", BadFrame::Opcode),
            (b"\x89\x7e\x00\x7e", BadFrame::LongControl),
            (b"\x81\x02\xff\xfe", BadFrame::NotUtf8),
        ];
        for (frame, why) in bad {
            assert_eq!(next_frame(frame), Err(why), "{frame:?}");
        }
        let too_long = [&[0x81, 127][..], &(1u64 << 20).to_be_bytes()].concat();
        assert_eq!(next_frame(&too_long), Err(BadFrame::TooLong));
    }

    #[test]
    fn a_frame_split_across_reads_is_whole_once_its_rest_comes() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (go, chunks) = mpsc::channel::<Vec<u8>>();
        let server = std::thread::spawn(move || {
            let (tcp, _) = listener.accept().unwrap();
            tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let mut ws = tungstenite::accept(tcp).unwrap();
            for chunk in chunks {
                ws.get_mut().write_all(&chunk).unwrap();
            }
            loop {
                if let Message::Pong(payload) = ws.read().unwrap() {
                    break payload;
                }
            }
        });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let url = format!("ws://{addr}/ws");
        let conn = runtime.block_on(Pending::connect(addr, &url, Duration::from_secs(10)));
        let mut conn = conn.unwrap().into_conn();
        drop(runtime);
        let mut poll = Poll::new().unwrap();
        conn.register(poll.registry(), Token(0)).unwrap();
        let mut events = Events::with_capacity(4);
        // Reads as the socket becomes readable until `done` says enough.
        let mut read_until = |conn: &mut Conn, done: &dyn Fn(&Conn, &[String]) -> bool| {
            let mut got = Vec::new();
            while !done(conn, &got) {
                poll.poll(&mut events, Some(Duration::from_secs(10)))
                    .unwrap();
                assert!(!events.is_empty(), "nothing came");
                let read = conn.read(|t, _| got.push(t.to_owned()));
                assert!(matches!(read, Reads::Waiting));
            }
            got
        };
        let (a, b, c) = (text("first"), text(&"b".repeat(200)), text("third"));
        go.send(a[..4].to_vec()).unwrap();
        let got = read_until(&mut conn, &|conn, _| conn.partial.len() == 4);
        assert!(got.is_empty());
        go.send([&a[4..], &b, &c[..3]].concat()).unwrap();
        let got = read_until(&mut conn, &|_, got| got.len() == 2);
        assert_eq!(got, ["first".to_owned(), "b".repeat(200)]);
        assert_eq!(conn.partial, c[..3]);
        go.send([&c[3..], b"\x89\x04ping"].concat()).unwrap();
        let got = read_until(&mut conn, &|_, got| !got.is_empty());
        assert_eq!(got, ["third"]);
        drop(go);
        assert_eq!(&server.join().unwrap()[..], b"ping");
    }
}
