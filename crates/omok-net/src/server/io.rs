//! Writing to players and letting connections go.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use futures::StreamExt;
use omok::frame::FRAME_LEN;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::timeout;
use tokio_util::codec::FramedRead;

use crate::codec::FrameCodec;

/// How long a closing connection is kept open for the player to close first.
pub const LINGER: Duration = Duration::from_secs(2);

/// How long a table waits on a player whose send buffer is full before
/// dropping it.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(1);

/// One accepted connection, read frame by frame. It holds one of the
/// referee's connection slots until dropped.
pub(super) struct Link {
    pub(super) frames: FramedRead<TcpStream, FrameCodec>,
    pub(super) peer: SocketAddr,
    pub(super) _slot: OwnedSemaphorePermit,
}

impl Link {
    /// Writes one frame without waiting when the send buffer has room
    /// (always, for a player that reads), else for at most
    /// [`WRITE_TIMEOUT`]. Returns whether the frame went out whole.
    pub(super) async fn write_frame(&mut self, frame: [u8; FRAME_LEN]) -> bool {
        let stream = self.frames.get_mut();
        let sent = match stream.try_write(&frame) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => 0,
            Err(_) => return false,
        };
        if sent == FRAME_LEN {
            return true;
        }
        matches!(
            timeout(WRITE_TIMEOUT, stream.write_all(&frame[sent..])).await,
            Ok(Ok(()))
        )
    }

    /// Shuts down the sending side, then waits for the player to close (or
    /// [`LINGER`] to pass), discarding whatever it still sends, so that a
    /// final End is never lost to a reset.
    pub(super) async fn linger(mut self) {
        if self.frames.get_mut().shutdown().await.is_err() {
            return;
        }
        let _ = timeout(LINGER, async {
            while let Some(Ok(_)) = self.frames.next().await {}
        })
        .await;
    }
}
