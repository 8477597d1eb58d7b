//! The generator's WebSocket client: tungstenite's protocol (handshake,
//! masked client frames, UTF-8 checked text, pings, close) on a
//! non-blocking socket. While a room is set up its connections wait on
//! tokio ([`Pending`]); once it plays they are [`Conn`]s in a mio event loop
//! ([`super::play`]), with no task or waker per message. Either way a read
//! that comes back short ends the reads, without a system call that would
//! find nothing.

// Registering a descriptor with tokio is an unsafe call.
#![allow(unsafe_code)]

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
use tokio_tungstenite::tungstenite::{self, Message, Utf8Bytes, WebSocket};

/// The stream tungstenite reads and writes.
struct Stream {
    tcp: mio::net::TcpStream,
    /// A read came back short (or found nothing): the socket is empty, so
    /// the next read answers `WouldBlock` without asking the kernel.
    drained: bool,
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.drained {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let read = self.tcp.read(buf);
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
}

/// One WebSocket connection of the generator, driven by whoever polls its
/// socket's readiness.
pub(super) struct Conn {
    ws: WebSocket<Stream>,
    /// A message is waiting in tungstenite's buffer for the socket to
    /// take it.
    unflushed: bool,
}

fn would_block(e: &tungstenite::Error) -> bool {
    matches!(e, tungstenite::Error::Io(e) if e.kind() == io::ErrorKind::WouldBlock)
}

impl Conn {
    /// Sends a text message now, or as soon as the socket takes it (see
    /// [`Conn::flush`]); false if the connection is broken.
    pub(super) fn send(&mut self, text: Utf8Bytes) -> bool {
        match self.ws.send(Message::Text(text)) {
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
        self.ws.get_mut().drained = false;
        let now = Instant::now();
        loop {
            match self.ws.read() {
                Ok(Message::Text(text)) => each(&text, now),
                Ok(Message::Close(_)) => {
                    // tungstenite has queued the answer to the close.
                    let _ = self.ws.flush();
                    return Reads::Closed;
                }
                Ok(_) => {}
                Err(e) if would_block(&e) => return Reads::Waiting,
                Err(_) => return Reads::Closed,
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
        // Small reads: tungstenite zero-fills the space it reads into before
        // each read. A moved (170 bytes) fits in one; a complete state (about
        // 1 KiB, and rare) takes a few.
        let config = WebSocketConfig::default()
            .read_buffer_size(512)
            .write_buffer_size(0);
        let stream = Stream {
            tcp,
            drained: false,
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
        ws.get_mut().drained = false;
        Ok(Pending {
            ready,
            conn: Conn {
                ws,
                unflushed: false,
            },
        })
    }

    /// Sends a text message and waits until it is written.
    pub(super) async fn send_now(&mut self, text: String) -> Result<()> {
        if !self.conn.send(text.into()) {
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
    pub(super) async fn next_text(&mut self) -> Result<Utf8Bytes> {
        loop {
            let mut guard = self.ready.readable().await?;
            let ws = &mut self.conn.ws;
            ws.get_mut().drained = false;
            loop {
                match ws.read() {
                    Ok(Message::Text(text)) => return Ok(text),
                    Ok(Message::Close(_)) => bail!("the server closed the connection"),
                    Ok(_) => {}
                    Err(e) if would_block(&e) => break,
                    Err(e) => return Err(e.into()),
                }
            }
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
