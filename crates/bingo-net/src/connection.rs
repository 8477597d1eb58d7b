//! One TCP connection carrying protocol lines.

use std::net::SocketAddr;
use std::time::Duration;

use bingo::Message;
use bingo::frame::FrameError;
use futures::{SinkExt, StreamExt};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio_util::codec::Framed;

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

/// A connection to the other player.
#[derive(Debug)]
pub struct Connection {
    framed: Framed<TcpStream, LineCodec>,
    peer: Option<SocketAddr>,
}

impl Connection {
    /// Wraps a connected stream.
    pub fn new(stream: TcpStream) -> Connection {
        let _ = stream.set_nodelay(true);
        let peer = stream.peer_addr().ok();
        Connection {
            framed: Framed::new(stream, LineCodec),
            peer,
        }
    }

    /// The other side's address, if known.
    pub fn peer(&self) -> Option<SocketAddr> {
        self.peer
    }

    /// Reads the next line. Cancel-safe: a line is never half read.
    pub async fn receive(&mut self) -> Received {
        match self.framed.next().await {
            Some(Ok(Ok(line))) => Received::Line(line),
            Some(Ok(Err(error))) => Received::Bad(error),
            Some(Err(_)) | None => Received::Closed,
        }
    }

    /// Sends one line.
    pub async fn send(&mut self, message: &Message) -> std::io::Result<()> {
        self.framed.send(message).await
    }

    /// Closes politely: flush, end our side, and wait for the other side to
    /// end its own, so that nothing we sent is lost to a reset; all within
    /// `limit`, even if the other side has stopped reading.
    pub async fn close(mut self, limit: Duration) {
        let _ = tokio::time::timeout(limit, async {
            let _ = self.framed.flush().await;
            let _ = self.framed.get_mut().shutdown().await;
            while let Some(Ok(_)) = self.framed.next().await {}
        })
        .await;
    }
}
