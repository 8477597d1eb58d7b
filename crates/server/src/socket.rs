//! The TCP socket of a web connection, shared between the connection's
//! task and the rooms that write to it.
//!
//! A room writes each WebSocket frame to its members' sockets itself, with
//! a non-blocking write from the room's task: a move costs one system call
//! per recipient and no channel, task wake-up or copy per recipient. The
//! connection's task is woken only when a socket would block: what could
//! not be written waits in the socket's pending frames, which the task
//! writes out when the socket can take them. Every other write (the HTTP
//! response, tungstenite's replies, the connection's own messages) goes
//! through the same pending frames first, so frames never interleave and
//! leave in the order they were accepted.

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::net::Shutdown;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker, ready};
use std::time::Duration;

use axum::extract::connect_info::Connected;
use axum::serve::IncomingStream;
use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, Sleep};
use tungstenite::protocol::frame::FrameHeader;
use tungstenite::protocol::frame::coding::{Data, OpCode};

use crate::rooms::CLIENT_QUEUE;
use crate::{ConnectionSlot, Connections};

/// A web connection's socket.
pub(crate) struct Socket {
    tcp: TcpStream,
    out: Mutex<Out>,
    /// The connection is a WebSocket now: the handshake time no longer
    /// applies.
    upgraded: AtomicBool,
    /// The connection's place among those not yet WebSockets, given up at
    /// the upgrade.
    handshake: Mutex<Option<ConnectionSlot>>,
}

/// What waits to be written, and who to wake for it.
#[derive(Default)]
struct Out {
    /// Frames accepted and not yet written, oldest first; the first may
    /// be partly written already (it is then the rest of a frame).
    pending: VecDeque<Bytes>,
    /// The connection has ended: frames are refused.
    ended: bool,
    /// A room asked the connection to close once what is pending is out.
    close_asked: bool,
    /// The connection's task, while it waits in [`Socket::ended`].
    task: Option<Waker>,
}

impl Out {
    fn wake(&mut self) {
        if let Some(task) = self.task.take() {
            task.wake();
        }
    }
}

impl Socket {
    fn out(&self) -> MutexGuard<'_, Out> {
        lock(&self.out)
    }

    /// Writes `frame` now, or after the frames pending before it; `false`
    /// if it was refused: the connection ended, or it already has
    /// [`CLIENT_QUEUE`] frames waiting (it cannot keep up: the connection
    /// is then ended, so that its client learns it lost its place and
    /// can come back for a complete state, rather than wait for
    /// messages that will never come).
    pub(crate) fn send(&self, frame: Bytes) -> bool {
        let mut out = self.out();
        if out.ended || out.close_asked {
            return false;
        }
        if !out.pending.is_empty() {
            if out.pending.len() >= CLIENT_QUEUE {
                out.ended = true;
                out.wake();
                return false;
            }
            out.pending.push_back(frame);
            return true;
        }
        match self.tcp.try_write(&frame) {
            Ok(n) if n == frame.len() => return true,
            Ok(n) => out.pending.push_back(frame.slice(n..)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => out.pending.push_back(frame),
            Err(_) => out.ended = true,
        }
        // The connection's task writes the rest, or finds the socket failed.
        out.wake();
        !out.ended
    }

    /// Asks the connection to close once what is pending is written.
    pub(crate) fn ask_close(&self) {
        let mut out = self.out();
        out.close_asked = true;
        out.wake();
    }

    /// Writes the pending frames; ready once none is left, or with an
    /// error once the connection has ended (a write of the connection's
    /// own must not wait for a client that lost its place).
    fn poll_pending(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            {
                let mut out = self.out();
                if out.ended {
                    return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
                }
                let Some(first) = out.pending.front_mut() else {
                    return Poll::Ready(Ok(()));
                };
                match self.tcp.try_write(first) {
                    Ok(n) if n == first.len() => {
                        out.pending.pop_front();
                        continue;
                    }
                    Ok(n) => {
                        *first = first.slice(n..);
                        continue;
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => {
                        out.ended = true;
                        return Poll::Ready(Err(e));
                    }
                }
            }
            ready!(self.tcp.poll_write_ready(cx))?;
        }
    }

    /// Resolves when the connection must end: a room asked it to close and
    /// everything before that is written, or the socket failed. Until then
    /// it writes out what the rooms could not.
    pub(crate) fn ended(&self) -> impl Future<Output = ()> + '_ {
        std::future::poll_fn(|cx| {
            {
                let mut out = self.out();
                if out.ended {
                    return Poll::Ready(());
                }
                if !out.task.as_ref().is_some_and(|t| t.will_wake(cx.waker())) {
                    out.task = Some(cx.waker().clone());
                }
            }
            match ready!(self.poll_pending(cx)) {
                Ok(()) if self.out().close_asked => Poll::Ready(()),
                Ok(()) => Poll::Pending,
                Err(_) => Poll::Ready(()),
            }
        })
    }

    /// Reads what is there; a read that fills less than `buf` means the
    /// socket is drained, so its readiness is cleared without a second
    /// read that would only say so.
    fn read_some(&self, buf: &mut [u8]) -> io::Result<usize> {
        let mut short = None;
        let read = self.tcp.try_io(Interest::READABLE, || {
            let n = self.tcp.try_read(buf)?;
            if n > 0 && n < buf.len() {
                short = Some(n);
                // Clears the readiness seen before this read (a later
                // one is kept).
                return Err(io::ErrorKind::WouldBlock.into());
            }
            Ok(n)
        });
        match short {
            Some(n) => Ok(n),
            None => read,
        }
    }
}

/// Locks `m`: a panic while it was held left its value whole (every change
/// to what these locks hold is a single step), so a poisoned lock is still
/// usable.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The handle the connection's task owns: once it is dropped, the
/// connection has ended; rooms' frames are refused and the socket is shut
/// down, even while rooms still hold it.
pub(crate) struct Owned(pub(crate) Arc<Socket>);

impl Drop for Owned {
    fn drop(&mut self) {
        let mut out = self.0.out();
        out.ended = true;
        let out_was_full = out.pending.len() >= CLIENT_QUEUE;
        out.pending.clear();
        drop(out);
        let socket = socket2::SockRef::from(&self.0.tcp);
        if out_was_full {
            // Its client reads nothing: what the kernel still holds for it
            // is dropped at once rather than kept until it reads.
            let _ = socket.set_linger(Some(Duration::ZERO));
        }
        let _ = socket.shutdown(Shutdown::Both);
    }
}

/// A text message as a server's WebSocket frame (unmasked, so the same
/// bytes go to every recipient).
pub(crate) fn text_frame(text: &str) -> Bytes {
    let header = FrameHeader {
        opcode: OpCode::Data(Data::Text),
        ..FrameHeader::default()
    };
    let len = text.len() as u64;
    let mut frame = Vec::with_capacity(header.len(len) + text.len());
    // Writing to a `Vec` cannot fail.
    let _ = header.format(len, &mut frame);
    frame.extend_from_slice(text.as_bytes());
    frame.into()
}

/// The web listener: its connections' sockets are [`Socket`]s, which the
/// WebSocket handler finds in its [`Peer`].
pub(crate) struct Listener {
    /// The listening socket.
    pub(crate) tcp: TcpListener,
    /// How long a connection may take over each HTTP request (from its
    /// opening or the previous response) until it becomes a WebSocket: a
    /// socket that says nothing, or half a request, is closed then.
    pub(crate) handshake: Duration,
    /// The connections not yet WebSockets...
    pub(crate) handshakes: Arc<Connections>,
    /// ...and how many of them may be open at once: past it a new one is
    /// answered 503 and closed.
    pub(crate) max_handshakes: usize,
}

/// The answer to a connection past [`Listener::max_handshakes`].
const FULL: &[u8] =
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n\
Content-Length: 65\r\nConnection: close\r\nRetry-After: 10\r\n\r\n\
the server has as many connections as it allows; try again later\n";

impl axum::serve::Listener for Listener {
    type Io = Io;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Io, Self::Addr) {
        let (tcp, addr, slot) = loop {
            let (tcp, addr) = axum::serve::Listener::accept(&mut self.tcp).await;
            match self.handshakes.slot(self.max_handshakes) {
                Some(slot) => break (tcp, addr, slot),
                None => refuse(&tcp),
            }
        };
        // Game messages are small and latency-bound: no Nagle delay.
        let _ = tcp.set_nodelay(true);
        let socket = Arc::new(Socket {
            tcp,
            out: Mutex::default(),
            upgraded: AtomicBool::new(false),
            handshake: Mutex::new(Some(slot)),
        });
        let io = Io {
            socket,
            handshake: self.handshake,
            deadline: Box::pin(tokio::time::sleep(self.handshake)),
        };
        (io, addr)
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}

/// The connection's socket, as every request on it sees it.
#[derive(Clone)]
pub(crate) struct Peer(pub(crate) Arc<Socket>);

impl Connected<IncomingStream<'_, Listener>> for Peer {
    fn connect_info(stream: IncomingStream<'_, Listener>) -> Peer {
        Peer(Arc::clone(&stream.io().socket))
    }
}

/// The kernel's send buffer of a WebSocket, asked for at the upgrade
/// (Linux keeps twice this for its own accounting). Game messages are a
/// few hundred bytes, so it holds a thousand of them; a client that never
/// reads holds at most this much of the kernel's memory (the default grows
/// to 4 MiB), then its frames wait in [`Out::pending`], which is bounded
/// too. Not smaller: at 64 KiB the kernel woke writers so much more often
/// that a move cost the server 10-20% more CPU on loopback (BENCHMARKS,
/// session 9). Pages keep the default, which grows for their larger
/// responses.
pub(crate) const SEND_BUFFER: usize = 256 << 10;

impl Peer {
    /// The connection becomes a WebSocket: the handshake time no longer
    /// applies, its place among the handshakes is given back, and the
    /// kernel's send buffer is capped at [`SEND_BUFFER`].
    pub(crate) fn upgrading(&self) {
        self.0.upgraded.store(true, Ordering::Relaxed);
        drop(lock(&self.0.handshake).take());
        // Without it the connection still works, with the default buffer.
        let _ = socket2::SockRef::from(&self.0.tcp).set_send_buffer_size(SEND_BUFFER);
    }
}

/// Tells a connection past the cap so without waiting for it, and closes
/// it: what it already sent is read first, so that the close is no reset
/// that could lose the answer.
fn refuse(tcp: &TcpStream) {
    let mut request = [0; 4096];
    let _ = tcp.try_read(&mut request);
    let _ = tcp.try_write(FULL);
    let _ = socket2::SockRef::from(tcp).shutdown(Shutdown::Write);
}

/// The socket as hyper (and, after the upgrade, tungstenite) reads and
/// writes it.
pub(crate) struct Io {
    socket: Arc<Socket>,
    /// The time for each HTTP request ([`Listener::handshake`]).
    handshake: Duration,
    /// When the HTTP request being read must be complete.
    deadline: Pin<Box<Sleep>>,
}

impl AsyncRead for Io {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if !self.socket.upgraded.load(Ordering::Relaxed)
            && self.deadline.as_mut().poll(cx).is_ready()
        {
            return Poll::Ready(Err(io::ErrorKind::TimedOut.into()));
        }
        loop {
            ready!(self.socket.tcp.poll_read_ready(cx))?;
            match self.socket.read_some(buf.initialize_unfilled()) {
                Ok(n) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

impl AsyncWrite for Io {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if !this.socket.upgraded.load(Ordering::Relaxed) {
            // A response: the client has the time again for its next
            // request.
            this.deadline
                .as_mut()
                .reset(Instant::now() + this.handshake);
        }
        let socket = &this.socket;
        loop {
            // After what the rooms wrote before it, never inside a frame.
            ready!(socket.poll_pending(cx))?;
            {
                let mut out = socket.out();
                if !out.pending.is_empty() {
                    continue;
                }
                match socket.tcp.try_write(data) {
                    Ok(n) if n < data.len() => {
                        // The rest waits with the pending frames, so that
                        // a room's frame cannot be written inside this one.
                        out.pending.push_back(Bytes::copy_from_slice(&data[n..]));
                        out.wake();
                        return Poll::Ready(Ok(data.len()));
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    written => return Poll::Ready(written),
                }
            }
            ready!(socket.tcp.poll_write_ready(cx))?;
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.socket.poll_pending(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.socket.poll_pending(cx))?;
        Poll::Ready(socket2::SockRef::from(&self.socket.tcp).shutdown(Shutdown::Write))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// The size of the frames that fill a socket.
    const FRAME: usize = 64 << 10;

    impl Io {
        /// The socket of a WebSocket connection.
        fn upgraded(socket: Arc<Socket>) -> Io {
            let handshake = Duration::ZERO;
            let deadline = Box::pin(tokio::time::sleep(handshake));
            Io {
                socket,
                handshake,
                deadline,
            }
        }
    }

    /// A socket of ours and the client's end of it, whose receive buffer
    /// is as small as our WebSockets' send buffer (so that what the kernel
    /// holds for a client that does not read is bounded on both ends).
    async fn pair() -> (Arc<Socket>, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = tokio::net::TcpSocket::new_v4().unwrap();
        client.set_recv_buffer_size(SEND_BUFFER as u32).unwrap();
        let client = client.connect(listener.local_addr().unwrap());
        let (client, accepted) = tokio::join!(client, listener.accept());
        let tcp = accepted.unwrap().0;
        let socket = Socket {
            tcp,
            out: Mutex::default(),
            upgraded: AtomicBool::new(true),
            handshake: Mutex::new(None),
        };
        (Arc::new(socket), client.unwrap())
    }

    #[test]
    fn a_frame_is_the_text_behind_a_server_header() {
        assert_eq!(&text_frame("hi")[..], b"\x81\x02hi");
        let long = "x".repeat(300);
        let frame = text_frame(&long);
        assert_eq!(&frame[..4], [0x81, 126, 1, 44]);
        assert_eq!(&frame[4..], long.as_bytes());
    }

    #[tokio::test]
    async fn frames_the_socket_cannot_take_wait_in_order() {
        let (socket, mut client) = pair().await;
        // Nobody reads: once the kernel's buffers are full, frames wait.
        let big = |b: u8| Bytes::from(vec![b; FRAME]);
        let mut sent = 0;
        while socket.out().pending.len() < 8 {
            assert!(socket.send(big(sent as u8)));
            sent += 1;
        }
        // A write of the connection's own waits behind them; it is made by
        // the connection's task, which also writes the pending frames.
        let mut io = Io::upgraded(Arc::clone(&socket));
        let own = Arc::clone(&socket);
        let task = tokio::spawn(async move {
            let write = async {
                io.write_all(b"last").await.unwrap();
                io.flush().await.unwrap();
            };
            tokio::join!(write, own.ended());
        });
        let mut got = vec![0; FRAME];
        for i in 0..sent {
            client.read_exact(&mut got).await.unwrap();
            assert!(
                got.iter().all(|&b| b == i as u8),
                "frame {i} whole and in order"
            );
        }
        let mut last = [0; 4];
        client.read_exact(&mut last).await.unwrap();
        assert_eq!(&last, b"last");
        // Nothing asked the connection to close.
        assert!(!task.is_finished());
        socket.ask_close();
        task.await.unwrap();
        assert!(!socket.send(big(0)), "no frame after a close was asked");
    }

    #[tokio::test]
    async fn a_client_that_falls_too_far_behind_is_ended_and_its_frames_dropped() {
        let (socket, mut client) = pair().await;
        let big = |b: u8| Bytes::from(vec![b; FRAME]);
        let mut sent = 0;
        while socket.send(big(sent as u8)) {
            sent += 1;
        }
        assert!(sent > CLIENT_QUEUE);
        // The frame past the limit ended the connection: its task stops
        // at once (it does not wait for the client to read), and a write
        // of its own fails rather than waits.
        socket.ended().await;
        let mut io = Io::upgraded(Arc::clone(&socket));
        let own = tokio::time::timeout(Duration::from_secs(5), io.write_all(b"pong")).await;
        assert!(matches!(own, Ok(Err(_))), "{own:?}");
        assert!(!socket.send(big(0)), "no frame once ended");
        drop(Owned(Arc::clone(&socket)));
        assert!(socket.out().pending.is_empty(), "the waiting frames freed");
        // The client finds whole frames, in order, then the end.
        let mut got = vec![0; FRAME];
        let mut read = 0;
        while client.read_exact(&mut got).await.is_ok() {
            assert!(got.iter().all(|&b| b == read as u8), "frame {read} whole");
            read += 1;
        }
        assert!(read < sent);
    }

    #[tokio::test]
    async fn a_client_that_never_reads_holds_bounded_memory_and_slows_no_one() {
        const LEN: usize = 1 << 10;
        let frame = |i: usize| Bytes::from(vec![i as u8; LEN]);
        let (slow, _never_reads) = pair().await;
        let (fast, mut reader) = pair().await;
        for socket in [&slow, &fast] {
            Peer(Arc::clone(socket)).upgrading();
        }
        let kernel = socket2::SockRef::from(&slow.tcp)
            .send_buffer_size()
            .unwrap();
        assert!(kernel <= 2 * SEND_BUFFER, "send buffer {kernel}");
        // The reading client's connection task writes what waits for it.
        let writer = tokio::spawn({
            let fast = Arc::clone(&fast);
            async move { fast.ended().await }
        });
        let reading = tokio::spawn(async move {
            let mut got = vec![0; LEN];
            let mut read = 0;
            while reader.read_exact(&mut got).await.is_ok() {
                assert!(got.iter().all(|&b| b == read as u8), "frame {read} whole");
                read += 1;
            }
            read
        });
        // Both get the same frames, as a room's members do, until the one
        // that never reads is ended.
        let mut sent = 0;
        let mut in_kernel = None;
        while slow.send(frame(sent)) {
            if in_kernel.is_none() && !slow.out().pending.is_empty() {
                in_kernel = Some(sent * LEN);
            }
            assert!(fast.send(frame(sent)), "the reading client kept up");
            sent += 1;
            tokio::task::yield_now().await;
        }
        // What the kernel took for it: its send buffer and the client's
        // receive buffer (each kept at twice the size asked), no more.
        let in_kernel = in_kernel.unwrap();
        assert!(
            in_kernel <= 4 * SEND_BUFFER,
            "{in_kernel} bytes in the kernel"
        );
        // Then at most `CLIENT_QUEUE` frames waited (shared with the other
        // members in a room) before it was ended and they were dropped.
        assert_eq!(sent, in_kernel / LEN + CLIENT_QUEUE);
        slow.ended().await;
        drop(Owned(slow));
        // The other client got every frame, in order.
        assert!(fast.send(frame(sent)));
        fast.ask_close();
        writer.await.unwrap();
        drop(Owned(fast));
        assert_eq!(reading.await.unwrap(), sent + 1);
    }

    #[tokio::test]
    async fn a_room_frame_never_lands_inside_a_partly_written_one_of_the_connection() {
        let (socket, mut client) = pair().await;
        // More than the kernel takes at once: the connection's own write
        // is only partly on the wire when a room sends its frame.
        let own = vec![7u8; 64 * FRAME];
        let mut io = Io::upgraded(Arc::clone(&socket));
        let accepted = std::future::poll_fn(|cx| Pin::new(&mut io).poll_write(cx, &own))
            .await
            .unwrap();
        assert_eq!(accepted, own.len());
        assert!(socket.send(text_frame("room")));
        let writer = Arc::clone(&socket);
        let task = tokio::spawn(async move { writer.ended().await });
        let mut got = vec![0; own.len()];
        client.read_exact(&mut got).await.unwrap();
        assert!(got.iter().all(|&b| b == 7), "the connection's bytes whole");
        let mut frame = [0; 6];
        client.read_exact(&mut frame).await.unwrap();
        assert_eq!(&frame, b"\x81\x04room");
        socket.ask_close();
        task.await.unwrap();
    }

    #[tokio::test]
    async fn the_owner_ending_shuts_the_socket_while_rooms_still_hold_it() {
        let (socket, mut client) = pair().await;
        assert!(socket.send(text_frame("a")));
        drop(Owned(Arc::clone(&socket)));
        assert!(!socket.send(text_frame("b")));
        let mut got = Vec::new();
        client.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, b"\x81\x01a");
    }

    #[tokio::test]
    async fn reads_see_every_byte_and_the_end() {
        let (socket, mut client) = pair().await;
        let mut io = Io::upgraded(socket);
        client.write_all(b"hello").await.unwrap();
        let mut got = [0; 5];
        io.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"hello");
        // A short read cleared the readiness; the next bytes still wake it.
        client.write_all(b"again").await.unwrap();
        drop(client);
        let mut rest = Vec::new();
        io.read_to_end(&mut rest).await.unwrap();
        assert_eq!(rest, b"again");
    }
}
