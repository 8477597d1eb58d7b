//! The player's side over TCP: a thin tokio layer around
//! [`Session`].
//!
//! A [`Connection`] sends Connect as soon as it is made and Ready once
//! seated, and hands the application the session's [`Notice`]s one at a time
//! through [`Connection::next_notice`]; the application answers
//! [`Notice::OurTurn`] with [`Connection::play`]. Bots and the terminal
//! client both use it; one connection plays one game.
//!
//! ```no_run
//! # async fn demo() -> Result<(), omok_net::client::ClientError> {
//! use omok_net::client::Connection;
//! use omok::player::Notice;
//!
//! let mut conn = Connection::connect("127.0.0.1:9000", renju::Rule::Renju).await?;
//! while let Some(notice) = conn.next_notice().await? {
//!     match notice {
//!         Notice::OurTurn(game) => conn.play(game.legal_moves()[0]).await?,
//!         Notice::GameOver(outcome) => println!("{outcome}"),
//!         _ => {}
//!     }
//! }
//! # Ok(())
//! # }
//! ```

use std::collections::VecDeque;
use std::io;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use renju::{Point, Rule};
use thiserror::Error;
use tokio::net::{TcpStream, ToSocketAddrs};
use tokio::time::{Instant, timeout_at};
use tokio_util::codec::Framed;
use tracing::{Span, debug, info_span};

use crate::codec::FrameCodec;
use omok::frame::PlayerMsg;
use omok::player::{Limits, MoveError, Notice, Phase, ProtocolError, Session, SessionAction};

/// How long a connection may take to be made, by default.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a connection failed. Inner errors are shown in the message, not
/// chained as sources, so that each is printed once.
#[derive(Debug, Error)]
pub enum ClientError {
    /// Reading or writing the socket failed.
    #[error("network error: {0}")]
    Io(io::Error),
    /// The connection was not made in time.
    #[error("no connection after {0:?}")]
    ConnectTimeout(Duration),
    /// The referee broke the protocol or closed the connection early.
    #[error("protocol error: {0}")]
    Protocol(ProtocolError),
    /// The point cannot be played now (nothing was sent).
    #[error(transparent)]
    Move(#[from] MoveError),
}

impl From<io::Error> for ClientError {
    fn from(e: io::Error) -> ClientError {
        ClientError::Io(e)
    }
}

impl From<ProtocolError> for ClientError {
    fn from(e: ProtocolError) -> ClientError {
        ClientError::Protocol(e)
    }
}

/// One connection to a referee, for one game.
#[derive(Debug)]
pub struct Connection {
    framed: Framed<TcpStream, FrameCodec>,
    session: Session,
    /// Frames the session asked for that are not yet handed to the socket.
    outbox: VecDeque<PlayerMsg>,
    /// Notices produced but not yet returned.
    notices: VecDeque<Notice>,
    span: Span,
}

impl Connection {
    /// Connects to the referee at `addr` to play a game under `rule`, with
    /// [`CONNECT_TIMEOUT`] and the default [`Limits`].
    pub async fn connect(addr: impl ToSocketAddrs, rule: Rule) -> Result<Connection, ClientError> {
        Connection::connect_with(addr, rule, CONNECT_TIMEOUT, Limits::default()).await
    }

    /// Connects to the referee at `addr` to play a game under `rule`,
    /// waiting `connect_timeout` for the connection and then for the
    /// referee no longer than `limits` say.
    pub async fn connect_with(
        addr: impl ToSocketAddrs,
        rule: Rule,
        connect_timeout: Duration,
        limits: Limits,
    ) -> Result<Connection, ClientError> {
        let stream = tokio::time::timeout(connect_timeout, TcpStream::connect(addr))
            .await
            .map_err(|_| ClientError::ConnectTimeout(connect_timeout))??;
        Ok(Connection::with_session(
            stream,
            Session::with_limits(rule, limits),
        ))
    }

    /// Plays over an already connected socket, with the default [`Limits`].
    pub fn new(stream: TcpStream, rule: Rule) -> Connection {
        Connection::with_session(stream, Session::new(rule))
    }

    fn with_session(stream: TcpStream, session: Session) -> Connection {
        // Frames are tiny and every one matters to the clock.
        let _ = stream.set_nodelay(true);
        let span = match stream.peer_addr() {
            Ok(peer) => info_span!("omok_player", %peer, rule = %session.game().rule()),
            Err(_) => info_span!("omok_player", rule = %session.game().rule()),
        };
        let mut conn = Connection {
            framed: Framed::new(stream, FrameCodec),
            session,
            outbox: VecDeque::new(),
            notices: VecDeque::new(),
            span,
        };
        conn.session.handle_open(std::time::Instant::now());
        conn.queue();
        conn
    }

    /// The session's state: colour, phase and the game so far.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The next thing the referee tells us; `None` once the game is over
    /// (after [`Notice::GameOver`] or [`Notice::Refused`]).
    ///
    /// Cancel-safe: it can be raced against user input in `select!`, and a
    /// frame half-sent or half-read is picked up by the next call.
    pub async fn next_notice(&mut self) -> Result<Option<Notice>, ClientError> {
        loop {
            self.flush_outbox().await?;
            if let Some(notice) = self.notices.pop_front() {
                return Ok(Some(notice));
            }
            if matches!(
                self.session.phase(),
                Phase::Over | Phase::Refused | Phase::Failed
            ) {
                return Ok(None);
            }
            let read = match self.session.poll_timeout() {
                Some(deadline) => {
                    match timeout_at(Instant::from_std(deadline), self.framed.next()).await {
                        Ok(read) => read,
                        Err(_) => {
                            self.session.handle_timeout(deadline)?;
                            continue;
                        }
                    }
                }
                None => self.framed.next().await,
            };
            let now = std::time::Instant::now();
            match read {
                Some(Ok(frame)) => {
                    let _guard = self.span.enter();
                    debug!(?frame, "received");
                    self.session.handle_frame(frame, now)?;
                    drop(_guard);
                    self.queue();
                }
                Some(Err(e)) => return Err(e.into()),
                None => {
                    self.session.handle_closed(now)?;
                    return Ok(None);
                }
            }
        }
    }

    /// Plays `p` on our turn. An illegal point or a move out of turn is
    /// refused locally with [`ClientError::Move`] and nothing is sent.
    pub async fn play(&mut self, p: Point) -> Result<(), ClientError> {
        self.session.handle_play(p, std::time::Instant::now())?;
        self.span.in_scope(|| debug!(%p, "playing"));
        self.queue();
        self.flush_outbox().await
    }

    /// Takes the session's actions into the outbox and the notices.
    fn queue(&mut self) {
        while let Some(action) = self.session.poll_action() {
            match action {
                SessionAction::Send(msg) => self.outbox.push_back(msg),
                SessionAction::Notify(notice) => self.notices.push_back(notice),
            }
        }
    }

    /// Hands queued frames to the codec, then flushes. A frame leaves the
    /// outbox only once the codec holds it, so cancelling loses nothing.
    async fn flush_outbox(&mut self) -> Result<(), ClientError> {
        while let Some(&msg) = self.outbox.front() {
            self.framed.feed(msg.encode()).await?;
            self.outbox.pop_front();
        }
        self.framed.flush().await?;
        Ok(())
    }
}
