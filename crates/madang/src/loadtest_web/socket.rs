//! The generator's WebSocket client: tungstenite's protocol (handshake,
//! masked client frames, UTF-8 checked text, pings, close) on a
//! non-blocking socket whose readiness the caller polls, so that one task
//! can drive every connection of a room, and a read that comes back short
//! ends the reads without a system call that would find nothing.

// Registering a descriptor with tokio is an unsafe call.
#![allow(unsafe_code)]

use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use tokio::io::unix::AsyncFd;
use tokio::time::{Instant, timeout};
use tokio_tungstenite::tungstenite::handshake::HandshakeError;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{self, Message, Utf8Bytes, WebSocket};

/// A non-blocking TCP stream, with the readiness tokio tracks for it.
type Fd = Arc<AsyncFd<std::net::TcpStream>>;

/// The stream tungstenite reads and writes.
struct Stream {
    fd: Fd,
    /// A read came back short (or found nothing): the socket is empty, so
    /// the next read answers `WouldBlock` without asking the kernel.
    drained: bool,
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.drained {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let read = self.fd.get_ref().read(buf);
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
        self.fd.get_ref().write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// What a poll of a connection's reads ended with.
pub(super) enum Reads {
    /// Every message there was was read; the task is woken for the next.
    Waiting,
    /// The connection is closed or broken.
    Closed,
}

/// One WebSocket connection of the generator.
pub(super) struct Conn {
    /// The same stream as the one inside `ws`, for its readiness.
    fd: Fd,
    ws: WebSocket<Stream>,
    /// A message is waiting in tungstenite's buffer for the socket to
    /// take it.
    unflushed: bool,
}

fn would_block(e: &tungstenite::Error) -> bool {
    matches!(e, tungstenite::Error::Io(e) if e.kind() == io::ErrorKind::WouldBlock)
}

impl Conn {
    /// Connects to `url` at `addr` and does the WebSocket handshake.
    pub(super) async fn connect(addr: SocketAddr, url: &str, limit: Duration) -> Result<Conn> {
        let tcp = timeout(limit, tokio::net::TcpStream::connect(addr))
            .await
            .context("connecting took too long")?
            .context("connecting")?;
        tcp.set_nodelay(true)?;
        let tcp = tcp.into_std()?;
        // SAFETY: the std stream owns its descriptor, which stays open and the
        // same until the `AsyncFd` (which owns the stream) is dropped.
        let fd = Arc::new(unsafe { AsyncFd::register(tcp) }.map_err(io::Error::from)?);
        // Small reads: tungstenite zero-fills the space it reads into before
        // each read. A moved (170 bytes) fits in one; a complete state (about
        // 1 KiB, and rare) takes a few.
        let config = WebSocketConfig::default()
            .read_buffer_size(512)
            .write_buffer_size(0);
        let stream = Stream {
            fd: Arc::clone(&fd),
            drained: false,
        };
        let handshake = async {
            let mut step = tungstenite::client::client_with_config(url, stream, Some(config));
            loop {
                match step {
                    Ok((ws, _)) => return Ok(ws),
                    Err(HandshakeError::Interrupted(mut mid)) => {
                        let mut ready = fd.readable().await?;
                        mid.get_mut().get_mut().drained = false;
                        ready.clear_ready();
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
        Ok(Conn {
            fd,
            ws,
            unflushed: false,
        })
    }

    /// Sends a text message now, or as soon as the socket takes it (see
    /// [`Conn::poll_flush`]); false if the connection is broken.
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

    /// Writes what [`Conn::send`] could not; false if the connection is
    /// broken.
    pub(super) fn poll_flush(&mut self, cx: &mut Context<'_>) -> bool {
        while self.unflushed {
            let Poll::Ready(ready) = self.fd.poll_write_ready(cx) else {
                return true;
            };
            let Ok(mut ready) = ready else { return false };
            match self.ws.flush() {
                Ok(()) => self.unflushed = false,
                Err(e) if would_block(&e) => ready.clear_ready(),
                Err(_) => return false,
            }
        }
        true
    }

    /// Reads every text message the socket holds, handing each to `each`
    /// with the time it was read; registers the task to be woken for the
    /// next.
    pub(super) fn poll_read(
        &mut self,
        cx: &mut Context<'_>,
        mut each: impl FnMut(&str, Instant),
    ) -> Reads {
        loop {
            let Poll::Ready(ready) = self.fd.poll_read_ready(cx) else {
                return Reads::Waiting;
            };
            let Ok(mut ready) = ready else {
                return Reads::Closed;
            };
            self.ws.get_mut().drained = false;
            let now = Instant::now();
            loop {
                match self.ws.read() {
                    Ok(Message::Text(text)) => each(&text, now),
                    Ok(Message::Close(_)) => return Reads::Closed,
                    Ok(_) => {}
                    Err(e) if would_block(&e) => break,
                    Err(_) => return Reads::Closed,
                }
            }
            // The socket is empty (a short read or none): wait for the
            // next edge, and poll again so that the waker is registered.
            ready.clear_ready();
        }
    }

    /// Sends a text message and waits until it is written.
    pub(super) async fn send_now(&mut self, text: String) -> Result<()> {
        if !self.send(text.into()) {
            bail!("sending failed");
        }
        std::future::poll_fn(|cx| {
            if !self.poll_flush(cx) {
                return Poll::Ready(Err(anyhow::anyhow!("sending failed")));
            }
            if self.unflushed {
                Poll::Pending
            } else {
                Poll::Ready(Ok(()))
            }
        })
        .await
    }

    /// Waits for the next text message.
    pub(super) async fn next_text(&mut self) -> Result<Utf8Bytes> {
        loop {
            let mut ready = self.fd.readable().await?;
            self.ws.get_mut().drained = false;
            loop {
                match self.ws.read() {
                    Ok(Message::Text(text)) => return Ok(text),
                    Ok(Message::Close(_)) => bail!("the server closed the connection"),
                    Ok(_) => {}
                    Err(e) if would_block(&e) => break,
                    Err(e) => return Err(e.into()),
                }
            }
            ready.clear_ready();
        }
    }

    /// Says goodbye (a close frame), without waiting for the answer.
    pub(super) fn close(mut self) {
        let _ = self.ws.close(None);
        let _ = self.ws.flush();
    }
}
