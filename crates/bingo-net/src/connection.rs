//! One TCP connection carrying protocol lines, run as its own task: lines
//! read go to the driver as events, lines to write come from the driver.

use std::net::SocketAddr;
use std::time::Duration;

use bingo::frame::FrameError;
use bingo::{ConnId, Message};
use futures::{SinkExt, StreamExt};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::mpsc;
use tokio::time::timeout;
use tokio_util::codec::{FramedRead, FramedWrite};

use crate::codec::LineCodec;

/// What reading from the connection gave.
#[derive(Debug)]
pub enum Received {
    /// A line.
    Line(String),
    /// Bytes that are not a valid line.
    Bad(FrameError),
    /// The other side closed, or the connection failed.
    Closed,
}

/// What the driver asks of a connection.
#[derive(Debug)]
pub enum Command {
    /// Write this line.
    Send(Message),
    /// Flush and close.
    Close,
}

/// How long a connection's writes and its polite close may take.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// One write, when the other side stops reading.
    pub write: Duration,
    /// Flushing, ending our side and waiting for the other side's end.
    pub close: Duration,
}

/// A connection to the other player.
#[derive(Debug)]
pub struct Connection {
    reader: FramedRead<OwnedReadHalf, LineCodec>,
    writer: FramedWrite<OwnedWriteHalf, LineCodec>,
    peer: Option<SocketAddr>,
}

impl Connection {
    /// Wraps a connected stream.
    pub fn new(stream: TcpStream) -> Connection {
        let _ = stream.set_nodelay(true);
        let peer = stream.peer_addr().ok();
        let (read, write) = stream.into_split();
        Connection {
            reader: FramedRead::new(read, LineCodec),
            writer: FramedWrite::new(write, LineCodec),
            peer,
        }
    }

    /// The other side's address, if known.
    pub fn peer(&self) -> Option<SocketAddr> {
        self.peer
    }

    /// Runs the connection until it closes or is told to: every line read
    /// goes to `events` as `(id, Received)` (the last being `Closed` unless
    /// the driver closed it), every [`Command`] is carried out. Reading
    /// waits while `events` is full, so a flood stays in the socket.
    pub async fn run(
        mut self,
        id: ConnId,
        mut commands: mpsc::Receiver<Command>,
        events: mpsc::Sender<(ConnId, Received)>,
        timing: Timing,
    ) {
        loop {
            tokio::select! {
                command = commands.recv() => match command {
                    Some(Command::Send(message)) => {
                        let sent = timeout(timing.write, self.writer.send(message)).await;
                        if !matches!(sent, Ok(Ok(()))) {
                            let _ = events.send((id, Received::Closed)).await;
                            return;
                        }
                    }
                    Some(Command::Close) | None => return self.close(timing.close).await,
                },
                item = self.reader.next() => {
                    let received = match item {
                        Some(Ok(Ok(line))) => Received::Line(line),
                        Some(Ok(Err(error))) => Received::Bad(error),
                        Some(Err(_)) | None => Received::Closed,
                    };
                    let closed = matches!(received, Received::Closed);
                    if events.send((id, received)).await.is_err() || closed {
                        return;
                    }
                }
            }
        }
    }

    /// Closes politely: flush, end our side, and wait for the other side to
    /// end its own, so that nothing we sent is lost to a reset; all within
    /// `limit`, even if the other side has stopped reading.
    async fn close(mut self, limit: Duration) {
        let _ = timeout(limit, async {
            let _ = self.writer.flush().await;
            let _ = self.writer.get_mut().shutdown().await;
            while let Some(Ok(_)) = self.reader.next().await {}
        })
        .await;
    }
}
