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
use omok::player::{Action, MoveError, Notice, Phase, ProtocolError, Session};

/// How long a player waits for the referee before giving up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientLimits {
    /// For the TCP connection to be made.
    pub connect: Duration,
    /// For the referee's reply to Connect, and its acknowledgement of a
    /// move (both immediate from a working referee).
    pub reply: Duration,
    /// For the opponent's move: the turn time and a margin.
    pub their_turn: Duration,
    /// For the game to start once seated (an opponent to arrive); `None`
    /// waits as long as the referee keeps the seat.
    pub start: Option<Duration>,
}

impl ClientLimits {
    /// The limits for a referee giving `turn_time` per move.
    pub fn for_turn_time(turn_time: Duration) -> ClientLimits {
        ClientLimits {
            connect: Duration::from_secs(10),
            reply: Duration::from_secs(10),
            their_turn: turn_time + Duration::from_secs(10),
            start: None,
        }
    }
}

impl Default for ClientLimits {
    /// The limits for the protocol's default turn of 15 s.
    fn default() -> ClientLimits {
        ClientLimits::for_turn_time(Duration::from_secs(15))
    }
}

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
    /// The referee said nothing for too long.
    #[error("the referee sent nothing for {after:?} while we were {phase}")]
    Silent {
        /// What we were waiting for.
        phase: Phase,
        /// How long we waited.
        after: Duration,
    },
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
    limits: ClientLimits,
    /// When we last heard from the referee or sent it a frame: the waits
    /// of [`ClientLimits`] count from here.
    last_exchange: Instant,
    span: Span,
}

impl Connection {
    /// Connects to the referee at `addr` to play a game under `rule`, with
    /// the default [`ClientLimits`].
    pub async fn connect(addr: impl ToSocketAddrs, rule: Rule) -> Result<Connection, ClientError> {
        Connection::connect_with(addr, rule, ClientLimits::default()).await
    }

    /// Connects to the referee at `addr` to play a game under `rule`,
    /// waiting for the referee no longer than `limits` say.
    pub async fn connect_with(
        addr: impl ToSocketAddrs,
        rule: Rule,
        limits: ClientLimits,
    ) -> Result<Connection, ClientError> {
        let stream = tokio::time::timeout(limits.connect, TcpStream::connect(addr))
            .await
            .map_err(|_| ClientError::ConnectTimeout(limits.connect))??;
        let mut conn = Connection::new(stream, rule);
        conn.limits = limits;
        Ok(conn)
    }

    /// Plays over an already connected socket, with the default
    /// [`ClientLimits`].
    pub fn new(stream: TcpStream, rule: Rule) -> Connection {
        // Frames are tiny and every one matters to the clock.
        let _ = stream.set_nodelay(true);
        let span = match stream.peer_addr() {
            Ok(peer) => info_span!("omok_player", %peer, %rule),
            Err(_) => info_span!("omok_player", %rule),
        };
        let mut conn = Connection {
            framed: Framed::new(stream, FrameCodec),
            session: Session::new(rule),
            outbox: VecDeque::new(),
            notices: VecDeque::new(),
            limits: ClientLimits::default(),
            last_exchange: Instant::now(),
            span,
        };
        let actions = conn.session.open();
        conn.queue(actions);
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
            let phase = self.session.phase();
            let limit = match phase {
                Phase::Connecting | Phase::Moved(_) => Some(self.limits.reply),
                Phase::TheirTurn => Some(self.limits.their_turn),
                Phase::Seated => self.limits.start,
                _ => None,
            };
            let read = match limit {
                Some(limit) => timeout_at(self.last_exchange + limit, self.framed.next())
                    .await
                    .map_err(|_| ClientError::Silent {
                        phase,
                        after: limit,
                    })?,
                None => self.framed.next().await,
            };
            self.last_exchange = Instant::now();
            match read {
                Some(Ok(frame)) => {
                    let _guard = self.span.enter();
                    debug!(?frame, "received");
                    let actions = self.session.handle_frame(frame)?;
                    drop(_guard);
                    self.queue(actions);
                }
                Some(Err(e)) => return Err(e.into()),
                None => {
                    self.session.closed()?;
                    return Ok(None);
                }
            }
        }
    }

    /// Plays `p` on our turn. An illegal point or a move out of turn is
    /// refused locally with [`ClientError::Move`] and nothing is sent.
    pub async fn play(&mut self, p: Point) -> Result<(), ClientError> {
        let actions = self.session.play(p)?;
        self.span.in_scope(|| debug!(%p, "playing"));
        self.queue(actions);
        self.flush_outbox().await
    }

    fn queue(&mut self, actions: Vec<Action>) {
        for action in actions {
            match action {
                Action::Send(msg) => self.outbox.push_back(msg),
                Action::Notify(notice) => self.notices.push_back(notice),
            }
        }
    }

    /// Hands queued frames to the codec, then flushes. A frame leaves the
    /// outbox only once the codec holds it, so cancelling loses nothing.
    async fn flush_outbox(&mut self) -> Result<(), ClientError> {
        let sending = !self.outbox.is_empty();
        while let Some(&msg) = self.outbox.front() {
            self.framed.feed(msg.encode()).await?;
            self.outbox.pop_front();
        }
        self.framed.flush().await?;
        if sending {
            self.last_exchange = Instant::now();
        }
        Ok(())
    }
}
