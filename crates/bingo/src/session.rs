//! One side of the protocol as a sans-IO state machine.
//!
//! A [`Session`] is driven the one way every protocol of the project is
//! (quinn-proto's shape): [`Session::handle`] takes an [`Input`] (a
//! connection came up, a line arrived, the user called a number...) with the
//! current time, [`Session::poll_output`] gives what to do ([`Output`]: send
//! this line on that connection, close it, connect, tell the user),
//! [`Session::poll_timeout`] says when the next limit falls due and
//! [`Session::handle_timeout`] lets it fall. Every limit of the game lives
//! here: the HELLO limit, the idle limit (waited only by the side whose
//! opponent is on turn), the REVEAL wait, the resume grace, the short limit
//! of each rejoin attempt, the guest's connect limit and its pause between
//! attempts. The driver owns sockets and a clock, nothing else.
//!
//! The same type serves the host and the guest. A session outlives a
//! connection when `resume` is agreed: a drop suspends the game; the host
//! then serves every rejoin attempt at once, each under its own limit, and
//! the guest keeps connecting until the grace runs out.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::card::{Board, Card};
use crate::message::{Answer, Extensions, Flag, Hello, MAX_CHAT, Message};
use crate::settings::{Role, Settings};
use crate::text;
use crate::verify::{self, CallRecord, Transcript};
use crate::violation::Violation;

pub use crate::config::{CardChoice, Config, Limits};
pub use crate::event::{ConnId, GameEvent, Input, Output};
pub use crate::outcome::{Disconnect, Ending, GameResult, Outcome, Side, Verification};

/// At most this many rejoin attempts are served at once; one more pushes
/// out the oldest (the real guest needs one round trip, a squatter waits).
pub const MAX_REJOIN_ATTEMPTS: usize = 16;

/// The `ERROR` text sent when this side's player leaves.
pub const LEFT: &str = "the player left the game";

/// Whose move it is during play.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Turn {
    /// This side may call.
    Mine,
    /// The other side calls next; `pending` is this side's `CALL k` that it may
    /// still answer with `BINGO`.
    Theirs { pending: Option<u16> },
    /// This side sent `FINAL k` and waits for `YIELD` or `TIE`.
    Verdict(u16),
}

/// Where a game stands once the HELLOs are through: what a drop interrupts
/// and a resume restores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Waiting for the other side's COMMIT (verify).
    Commit,
    /// Calling numbers.
    Play(Turn),
    /// The result is known; waiting for the other side's REVEAL (verify).
    Reveal(Outcome),
}

/// A live game's step: its stage, or, just after a resume with `verify`,
/// the wait for the other side's COMMIT sent again before the stage goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    At(Stage),
    Recommit(Stage),
}

/// One connection and when its current wait began.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Link {
    id: ConnId,
    since: Instant,
}

/// A guest's rejoin attempt and how far it got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Attempt {
    Connecting,
    /// Waiting for the host's HELLO.
    Hello,
    /// Waiting for the host's RESUME.
    Resume,
}

/// How a suspended game waits for its connection.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Rejoin {
    /// Host: every connection trying to take the game back.
    Host(Vec<Link>),
    /// Guest: the next attempt starts at this time.
    Pause(Instant),
    /// Guest: an attempt under way.
    Guest(Link, Attempt),
}

/// The game's data, from the HELLOs on.
#[derive(Debug, Clone)]
struct Game {
    settings: Settings,
    agreed: Extensions,
    board: Board,
    transcript: Transcript,
    called: Vec<bool>,
    /// The other side's COMMIT, once it came.
    peer_commit: Option<String>,
    /// The guest's resume key when `resume` is agreed (the host learns it
    /// from the guest's HELLO), `None` when it is not.
    resume_key: Option<String>,
}

impl Game {
    fn check_number(&self, k: u16) -> Result<(), Violation> {
        let max = self.settings.max_number();
        if k == 0 || k > max {
            Err(Violation::OutOfRange { number: k, max })
        } else if self.called[usize::from(k)] {
            Err(Violation::AlreadyCalled(k))
        } else {
            Ok(())
        }
    }

    /// How many flag messages (calls and the answer) this side has recorded:
    /// the count exchanged in `RESUME`.
    fn flags_seen(&self) -> usize {
        self.transcript.calls.len() + usize::from(self.transcript.answer.is_some())
    }

    /// The game's last flag message, if `by` sent it: the one message that
    /// can have been lost in a drop.
    fn last_flag_from(&self, by: Role) -> Option<Message> {
        let last = self.transcript.calls.last()?;
        match self.transcript.answer {
            // The answer comes from the receiver of the last call.
            Some(answer) => (last.by != by).then_some(Message::Answer(answer)),
            None => (last.by == by).then_some(Message::Flag(last.flag, last.number)),
        }
    }

    /// What `role` sends again after the other side reported `seen` flag
    /// messages: at most the one that can have been lost.
    fn reconcile(&self, role: Role, seen: usize) -> Result<Option<Message>, Violation> {
        let mine = self.flags_seen();
        let refused = Violation::ResumeCount { seen, mine };
        // Each flag waits for the one before it, so at most one can be in
        // flight: the last, sent by the side that has one more.
        if seen + 1 == mine {
            self.last_flag_from(role).map(Some).ok_or(refused)
        } else if seen == mine || seen == mine + 1 {
            Ok(None)
        } else {
            Err(refused)
        }
    }
}

#[derive(Debug, Clone)]
enum State {
    /// Host: waiting for a guest's HELLO on this connection, or for a
    /// connection (`None`).
    Waiting(Option<Link>),
    /// Guest: connecting to the host.
    Connecting(Link),
    /// Guest: waiting for the host's HELLO.
    Greeting(Link),
    /// The game on its connection.
    Live {
        game: Box<Game>,
        link: Link,
        step: Step,
    },
    /// The connection dropped; the game waits until `until` to come back.
    Suspended {
        game: Box<Game>,
        stage: Stage,
        until: Instant,
        rejoin: Rejoin,
    },
    /// Over; the game's data stays for a look back (none if it ended
    /// before the HELLOs).
    Over {
        ending: Ending,
        game: Option<Box<Game>>,
    },
}

/// One side of a bingo game. See the module docs.
#[derive(Debug, Clone)]
pub struct Session {
    config: Config,
    state: State,
    out: VecDeque<Output>,
    now: Instant,
    resumes: usize,
    /// The guest's next connection id.
    next_conn: u64,
}

impl Session {
    /// A session starting at `now`: a host waits for its first connection,
    /// a guest asks to connect at once.
    pub fn new(config: Config, now: Instant) -> Session {
        let role = config.role;
        let mut session = Session {
            config,
            state: State::Waiting(None),
            out: VecDeque::new(),
            now,
            resumes: 0,
            next_conn: 0,
        };
        if role == Role::Guest {
            let link = session.connect();
            session.state = State::Connecting(link);
        }
        session
    }

    /// This side's role.
    pub fn role(&self) -> Role {
        self.config.role
    }

    fn game(&self) -> Option<&Game> {
        match &self.state {
            State::Live { game, .. }
            | State::Suspended { game, .. }
            | State::Over {
                game: Some(game), ..
            } => Some(game),
            _ => None,
        }
    }

    /// The agreed settings, once the handshake is done (and while the game
    /// is on).
    pub fn settings(&self) -> Option<Settings> {
        self.game().map(|game| game.settings)
    }

    /// The extensions both sides listed (none before the handshake).
    pub fn extensions(&self) -> Extensions {
        self.game()
            .map_or_else(Extensions::default, |game| game.agreed)
    }

    /// The game id (host; the guest learns it from the HELLO).
    pub fn game_id(&self) -> &str {
        &self.config.game_id
    }

    /// This side's card with its marks, once the game has started.
    pub fn board(&self) -> Option<&Board> {
        self.game().map(|game| &game.board)
    }

    /// Every call so far.
    pub fn calls(&self) -> &[CallRecord] {
        self.game().map_or(&[], |game| &game.transcript.calls)
    }

    /// Whether this side may call now.
    pub fn is_my_turn(&self) -> bool {
        matches!(
            self.state,
            State::Live {
                step: Step::At(Stage::Play(Turn::Mine)),
                ..
            }
        )
    }

    /// Whether the game waits for a reconnection.
    pub fn is_suspended(&self) -> bool {
        matches!(self.state, State::Suspended { .. })
    }

    /// Whether a host would take a new connection now: while it waits for a
    /// guest, and while a dropped game waits for its guest (every rejoin
    /// attempt is served at once). Never for a guest: it asks with
    /// [`Output::Connect`].
    pub fn wants_connection(&self) -> bool {
        self.config.role == Role::Host
            && matches!(self.state, State::Waiting(None) | State::Suspended { .. })
    }

    /// How the game ended, once it has.
    pub fn ending(&self) -> Option<&Ending> {
        match &self.state {
            State::Over { ending, .. } => Some(ending),
            _ => None,
        }
    }

    /// The configured time limits.
    pub fn limits(&self) -> &Limits {
        &self.config.limits
    }

    /// How many times the game was resumed on a new connection.
    pub fn resumes(&self) -> usize {
        self.resumes
    }

    /// The next thing to do, in order.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.out.pop_front()
    }

    /// When [`Session::handle_timeout`] must next be called, if ever.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let limits = &self.config.limits;
        match &self.state {
            State::Waiting(None) | State::Over { .. } => None,
            State::Waiting(Some(link)) | State::Greeting(link) => Some(link.since + limits.hello),
            State::Connecting(link) => Some(link.since + limits.connect),
            State::Live { link, step, .. } => {
                self.live_limit(*step).map(|limit| link.since + limit)
            }
            State::Suspended { until, rejoin, .. } => {
                let attempt = match rejoin {
                    Rejoin::Host(links) => {
                        links.iter().map(|link| link.since + limits.rejoin).min()
                    }
                    Rejoin::Guest(link, Attempt::Connecting) => Some(link.since + limits.connect),
                    Rejoin::Guest(link, _) => Some(link.since + limits.rejoin),
                    Rejoin::Pause(at) => Some(*at),
                };
                Some(attempt.map_or(*until, |at| at.min(*until)))
            }
        }
    }

    /// How long the live connection may stay quiet in `step`, counted from
    /// the start of the wait; `None` on this side's turn (the other side
    /// has nothing to say; its own timer guards against this side).
    fn live_limit(&self, step: Step) -> Option<Duration> {
        let limits = &self.config.limits;
        match step {
            Step::Recommit(_) => Some(limits.rejoin),
            Step::At(Stage::Commit) => Some(limits.hello),
            Step::At(Stage::Play(Turn::Mine)) => None,
            Step::At(Stage::Play(_)) => Some(limits.idle),
            Step::At(Stage::Reveal(_)) => Some(limits.close),
        }
    }

    /// Lets every limit that has fallen due by `now` take effect.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.now = now;
        let limits = self.config.limits;
        match &mut self.state {
            State::Waiting(Some(link)) | State::Greeting(link) => {
                if now >= link.since + limits.hello {
                    let id = link.id;
                    self.violation(id, Violation::Silence(limits.hello));
                }
            }
            State::Connecting(link) => {
                if now >= link.since + limits.connect {
                    let id = link.id;
                    self.out.push_back(Output::Close(id));
                    let why = format!("no connection within {} s", limits.connect.as_secs_f64());
                    self.end(Ending::Disconnected(Disconnect::ConnectFailed(why)));
                }
            }
            State::Live { link, step, .. } => {
                let (link, step) = (*link, *step);
                let Some(limit) = self.live_limit(step) else {
                    return;
                };
                if now < link.since + limit {
                    return;
                }
                match step {
                    Step::At(Stage::Reveal(outcome)) => {
                        let why = format!("no REVEAL within {} s", limit.as_secs_f64());
                        self.finish(link.id, outcome, Verification::Missing(why));
                    }
                    // The resumed connection went quiet: wait for another.
                    Step::Recommit(_) => {
                        self.out.push_back(Output::Close(link.id));
                        self.suspend();
                    }
                    Step::At(_) => self.violation(link.id, Violation::Silence(limit)),
                }
            }
            State::Suspended { until, rejoin, .. } => {
                if now >= *until {
                    let grace = self.grace();
                    return self.give_up(Ending::Disconnected(Disconnect::NotResumed(grace)));
                }
                match rejoin {
                    Rejoin::Host(links) => {
                        let (late, on_time): (Vec<Link>, Vec<Link>) = links
                            .iter()
                            .partition(|link| now >= link.since + limits.rejoin);
                        *links = on_time;
                        for link in late {
                            self.refuse(link.id, Violation::Silence(limits.rejoin));
                        }
                    }
                    Rejoin::Pause(at) => {
                        if now >= *at {
                            let link = self.connect();
                            self.set_rejoin(Rejoin::Guest(link, Attempt::Connecting));
                        }
                    }
                    Rejoin::Guest(link, attempt) => {
                        let limit = match attempt {
                            Attempt::Connecting => limits.connect,
                            Attempt::Hello | Attempt::Resume => limits.rejoin,
                        };
                        if now >= link.since + limit {
                            let id = link.id;
                            self.retry_later(id);
                        }
                    }
                }
            }
            State::Waiting(None) | State::Over { .. } => {}
        }
    }

    /// Feeds one input that happened at `now`.
    pub fn handle(&mut self, input: Input, now: Instant) {
        self.now = now;
        match input {
            Input::Connected(id) => self.on_connected(id),
            Input::ConnectFailed(id, why) => self.on_connect_failed(id, why),
            Input::Line(id, line) => match Message::parse(&line) {
                Ok(message) => self.on_message(id, message),
                Err(error) => self.on_bad(id, error.into()),
            },
            Input::BadFrame(id, error) => self.on_bad(id, error.into()),
            Input::Closed(id) => self.on_closed(id),
            Input::Call(k) => self.on_user_call(k),
            Input::Chat(text) => self.on_user_chat(text),
            Input::Quit => self.on_quit(),
        }
    }

    fn send(&mut self, id: ConnId, message: Message) {
        self.out.push_back(Output::Send(id, message));
    }

    fn report(&mut self, event: GameEvent) {
        self.out.push_back(Output::Report(event));
    }

    /// A fresh guest connection, asked for now.
    fn connect(&mut self) -> Link {
        let id = ConnId(self.next_conn);
        self.next_conn += 1;
        self.out.push_back(Output::Connect(id));
        Link {
            id,
            since: self.now,
        }
    }

    fn link_of(&self, id: ConnId) -> Option<Link> {
        match &self.state {
            State::Waiting(Some(link))
            | State::Connecting(link)
            | State::Greeting(link)
            | State::Live { link, .. }
            | State::Suspended {
                rejoin: Rejoin::Guest(link, _),
                ..
            } if link.id == id => Some(*link),
            State::Suspended {
                rejoin: Rejoin::Host(links),
                ..
            } => links.iter().copied().find(|link| link.id == id),
            _ => None,
        }
    }

    fn on_connected(&mut self, id: ConnId) {
        let now = self.now;
        match &mut self.state {
            State::Waiting(waiting @ None) => {
                *waiting = Some(Link { id, since: now });
                let hello = self.host_hello();
                self.send(id, hello);
            }
            State::Connecting(link) if link.id == id => {
                self.state = State::Greeting(Link { id, since: now });
            }
            State::Suspended {
                rejoin: Rejoin::Host(links),
                ..
            } => {
                let evicted = (links.len() >= MAX_REJOIN_ATTEMPTS).then(|| links.remove(0));
                links.push(Link { id, since: now });
                if let Some(oldest) = evicted {
                    self.out.push_back(Output::Close(oldest.id));
                }
                // Nothing of the game to a connection not yet known to be
                // its guest.
                let hello = Message::Hello(Hello {
                    extensions: Extensions {
                        verify: false,
                        resume: true,
                    },
                    ..Hello::default()
                });
                self.send(id, hello);
            }
            State::Suspended {
                rejoin: Rejoin::Guest(link, attempt @ Attempt::Connecting),
                ..
            } if link.id == id => {
                link.since = now;
                *attempt = Attempt::Hello;
            }
            // A connection nobody asked for, or one given up on.
            _ => self.out.push_back(Output::Close(id)),
        }
    }

    fn on_connect_failed(&mut self, id: ConnId, why: String) {
        match &self.state {
            State::Connecting(link) if link.id == id => {
                self.end(Ending::Disconnected(Disconnect::ConnectFailed(why)));
            }
            State::Suspended {
                rejoin: Rejoin::Guest(link, Attempt::Connecting),
                ..
            } if link.id == id => {
                let at = self.now + self.config.limits.retry;
                self.set_rejoin(Rejoin::Pause(at));
            }
            _ => {}
        }
    }

    fn host_hello(&self) -> Message {
        let offered = self.config.extensions;
        Message::Hello(Hello {
            settings: Some(self.config.settings),
            id: offered.resume.then(|| self.config.game_id.clone()),
            key: None,
            extensions: offered,
        })
    }

    fn on_message(&mut self, id: ConnId, message: Message) {
        let Some(link) = self.link_of(id) else {
            // A line from a connection already given up on.
            return;
        };
        match &self.state {
            State::Waiting(_) | State::Greeting(_) => match message {
                // Nobody has joined yet: nothing to show.
                Message::Chat(_) => {}
                Message::Error(reason) => {
                    self.out.push_back(Output::Close(id));
                    self.end(Ending::PeerError(text::clean(&reason)));
                }
                Message::Hello(hello) => self.start(link, hello),
                other => self.violation(id, Violation::ExpectedHello(other.keyword())),
            },
            State::Live { step, .. } => {
                let step = *step;
                self.on_live(link, step, message)
            }
            State::Suspended {
                rejoin: Rejoin::Host(_),
                ..
            } => self.on_host_attempt(id, message),
            State::Suspended {
                rejoin: Rejoin::Guest(_, attempt),
                ..
            } => {
                let attempt = *attempt;
                self.on_guest_attempt(id, attempt, message)
            }
            State::Connecting(_)
            | State::Suspended {
                rejoin: Rejoin::Pause(_),
                ..
            }
            | State::Over { .. } => {}
        }
    }

    /// The HELLO that starts the game on `link`.
    fn start(&mut self, link: Link, hello: Hello) {
        let offered = self.config.extensions;
        let (settings, agreed, resume_key) = match self.config.role {
            Role::Host => {
                let mut agreed = offered.both(hello.extensions);
                // Without the guest's key nobody could prove to be it.
                agreed.resume &= hello.key.is_some();
                let key = hello.key.filter(|_| agreed.resume);
                (self.config.settings, agreed, key)
            }
            Role::Guest => {
                let Some(settings) = hello.settings else {
                    if hello.extensions.resume {
                        // Someone else's game, dropped and kept for them.
                        self.out.push_back(Output::Close(link.id));
                        return self.end(Ending::Disconnected(Disconnect::HostBusy));
                    }
                    return self.violation(link.id, Violation::NoSettings);
                };
                let mut agreed = offered.both(hello.extensions);
                match hello.id {
                    Some(id) => self.config.game_id = id,
                    // Without an id there is nothing to resume.
                    None => agreed.resume = false,
                }
                if let CardChoice::Given(card) = &self.config.card
                    && card.size() != settings.size()
                {
                    let violation = Violation::CardSize {
                        mine: card.size(),
                        game: settings.size(),
                    };
                    return self.violation(link.id, violation);
                }
                let key = agreed.resume.then(|| self.config.resume_key.clone());
                let reply = Message::Hello(Hello {
                    settings: None,
                    id: None,
                    key: key.clone(),
                    extensions: agreed,
                });
                self.send(link.id, reply);
                (settings, agreed, key)
            }
        };
        let card = match &self.config.card {
            CardChoice::Given(card) => card.clone(),
            CardChoice::Shuffled(seed) => {
                Card::shuffled(settings.size(), &mut StdRng::seed_from_u64(*seed))
            }
        };
        let game = Game {
            settings,
            agreed,
            board: Board::new(card.clone()),
            transcript: Transcript::default(),
            called: vec![false; usize::from(settings.max_number()) + 1],
            peer_commit: None,
            resume_key,
        };
        self.report(GameEvent::Joined(link.id));
        self.report(GameEvent::Started {
            settings,
            extensions: agreed,
            card,
        });
        let verify = agreed.verify;
        self.state = State::Live {
            game: Box::new(game),
            link,
            step: Step::At(Stage::Commit),
        };
        if verify {
            let commit = self.commit();
            self.send(link.id, commit);
            self.set_step(Step::At(Stage::Commit));
        } else {
            self.start_play();
        }
    }

    fn commit(&self) -> Message {
        let wire = self.board().map(|board| board.card().to_wire());
        let hash = verify::commitment(&self.config.salt, &wire.unwrap_or_default());
        Message::Commit(hash)
    }

    /// Moves the live game to `step`; the wait starts again.
    fn set_step(&mut self, new: Step) {
        let now = self.now;
        if let State::Live { link, step, .. } = &mut self.state {
            *step = new;
            link.since = now;
        }
    }

    fn start_play(&mut self) {
        let first = self.settings().map(|s| s.first());
        let turn = if first == Some(self.config.role) {
            Turn::Mine
        } else {
            Turn::Theirs { pending: None }
        };
        self.set_turn(turn);
    }

    fn set_turn(&mut self, turn: Turn) {
        self.set_step(Step::At(Stage::Play(turn)));
        let side = if turn == Turn::Mine {
            Side::Me
        } else {
            Side::Peer
        };
        self.report(GameEvent::Turn(side));
    }

    fn on_live(&mut self, link: Link, step: Step, message: Message) {
        let now = self.now;
        if let (Step::At(Stage::Play(_)), State::Live { link, .. }) = (step, &mut self.state) {
            // During play every line heard, chat included, restarts the
            // idle limit: the peer is there. Elsewhere only a new step does.
            link.since = now;
        }
        match message {
            Message::Chat(text) => {
                let text = text::clean(&text);
                return self.report(GameEvent::Chat {
                    from: Side::Peer,
                    text,
                });
            }
            Message::Error(reason) => {
                let reason = text::clean(&reason);
                return match step {
                    Step::At(Stage::Reveal(outcome)) => {
                        let why = format!("the other side reported: {reason}");
                        self.finish(link.id, outcome, Verification::Missing(why))
                    }
                    _ => {
                        self.out.push_back(Output::Close(link.id));
                        self.end(Ending::PeerError(reason))
                    }
                };
            }
            _ => {}
        }
        match step {
            Step::Recommit(stage) => match message {
                Message::Commit(hash) => {
                    let before = self.game().and_then(|game| game.peer_commit.clone());
                    if before.is_some_and(|before| before != hash) {
                        return self.violation(link.id, Violation::CommitChanged);
                    }
                    self.set_peer_commit(hash);
                    self.resume_into(stage);
                }
                other => self.violation(link.id, Violation::ExpectedCommit(other.keyword())),
            },
            Step::At(Stage::Commit) => match message {
                Message::Commit(hash) => {
                    self.set_peer_commit(hash);
                    self.start_play();
                }
                other => self.violation(link.id, Violation::ExpectedCommit(other.keyword())),
            },
            Step::At(Stage::Play(turn)) => self.on_play(link.id, turn, message),
            Step::At(Stage::Reveal(outcome)) => {
                let verification = match message {
                    Message::Reveal { salt, card } => self.check_reveal(&salt, &card),
                    other => {
                        Verification::Missing(format!("sent {} instead of REVEAL", other.keyword()))
                    }
                };
                self.finish(link.id, outcome, verification);
            }
        }
    }

    fn set_peer_commit(&mut self, hash: String) {
        if let State::Live { game, .. } = &mut self.state {
            game.peer_commit = Some(hash);
        }
    }

    fn on_play(&mut self, id: ConnId, turn: Turn, message: Message) {
        let violation = match (message, turn) {
            (Message::Flag(flag, k), Turn::Theirs { .. }) => return self.on_peer_call(id, flag, k),
            (Message::Flag(flag, number), Turn::Mine) => Violation::MyTurn { flag, number },
            (Message::Flag(flag, number), Turn::Verdict(mine)) => {
                Violation::AwaitingVerdict { flag, number, mine }
            }
            (Message::Answer(answer), Turn::Verdict(k)) => {
                let result = match answer {
                    Answer::Yield => GameResult::Win,
                    Answer::Tie => GameResult::Draw,
                    Answer::Bingo => {
                        return self.violation(id, Violation::BingoToFinal(k));
                    }
                };
                return self.decide(id, result, Side::Me, k, Flag::Final, answer);
            }
            (Message::Answer(Answer::Bingo), Turn::Theirs { pending: Some(k) }) => {
                return self.decide(id, GameResult::Loss, Side::Me, k, Flag::Call, Answer::Bingo);
            }
            (Message::Answer(answer), Turn::Theirs { pending: Some(k) }) => {
                Violation::VerdictToCall { answer, call: k }
            }
            (Message::Answer(answer), _) => Violation::NothingToAnswer(answer),
            (other, _) => Violation::Unexpected(other.keyword()),
        };
        self.violation(id, violation);
    }

    fn on_peer_call(&mut self, id: ConnId, flag: Flag, k: u16) {
        let checked = match self.game() {
            Some(game) => game.check_number(k),
            None => return,
        };
        if let Err(violation) = checked {
            return self.violation(id, violation);
        }
        let bingo = self.record(self.config.role.other(), k, flag);
        let (result, answer) = match (flag, bingo) {
            (Flag::Final, false) => (GameResult::Loss, Answer::Yield),
            (Flag::Final, true) => (GameResult::Draw, Answer::Tie),
            (Flag::Call, true) => (GameResult::Win, Answer::Bingo),
            (Flag::Call, false) => return self.set_turn(Turn::Mine),
        };
        self.send(id, Message::Answer(answer));
        self.decide(id, result, Side::Peer, k, flag, answer);
    }

    fn on_user_call(&mut self, k: u16) {
        let why = match &self.state {
            State::Live {
                step: Step::At(Stage::Play(Turn::Mine)),
                game,
                link,
            } => match game.check_number(k) {
                Ok(()) => {
                    let board = &game.board;
                    let flag =
                        if board.completed() + board.would_complete(k) >= game.settings.lines() {
                            Flag::Final
                        } else {
                            Flag::Call
                        };
                    let id = link.id;
                    self.record(self.config.role, k, flag);
                    self.send(id, Message::Flag(flag, k));
                    let turn = match flag {
                        Flag::Final => Turn::Verdict(k),
                        Flag::Call => Turn::Theirs { pending: Some(k) },
                    };
                    return self.set_turn(turn);
                }
                Err(violation) => violation.to_string(),
            },
            State::Live {
                step: Step::At(Stage::Play(_)),
                ..
            } => "it is not your turn".into(),
            State::Live {
                step: Step::At(Stage::Reveal(_)),
                ..
            }
            | State::Over { .. } => "the game is over".into(),
            State::Suspended { .. }
            | State::Live {
                step: Step::Recommit(_),
                ..
            } => "the connection is down".into(),
            _ => "the game has not started".into(),
        };
        self.report(GameEvent::Rejected(why));
    }

    /// Marks a call and reports it; returns whether this side now has bingo.
    fn record(&mut self, by: Role, k: u16, flag: Flag) -> bool {
        let State::Live { game, .. } = &mut self.state else {
            return false;
        };
        game.called[usize::from(k)] = true;
        game.transcript.calls.push(CallRecord {
            by,
            number: k,
            flag,
        });
        let new_lines = game.board.mark(k);
        let bingo = game.board.has_bingo(game.settings.lines());
        let completed = game.board.completed();
        let by = if by == self.config.role {
            Side::Me
        } else {
            Side::Peer
        };
        self.report(GameEvent::Called {
            by,
            number: k,
            flag,
            new_lines,
            completed,
        });
        bingo
    }

    fn decide(
        &mut self,
        id: ConnId,
        result: GameResult,
        caller: Side,
        number: u16,
        flag: Flag,
        answer: Answer,
    ) {
        let State::Live { game, .. } = &mut self.state else {
            return;
        };
        game.transcript.answer = Some(answer);
        let verify = game.agreed.verify;
        let outcome = Outcome {
            result,
            caller,
            number,
            flag,
            answer,
        };
        self.report(GameEvent::Decided(outcome));
        if verify {
            let reveal = self.reveal();
            self.send(id, reveal);
            self.set_step(Step::At(Stage::Reveal(outcome)));
        } else {
            self.finish(id, outcome, Verification::Unverified);
        }
    }

    /// This side's `REVEAL`.
    fn reveal(&self) -> Message {
        Message::Reveal {
            salt: self.config.salt.clone(),
            card: self
                .board()
                .map(|board| board.card().to_wire())
                .unwrap_or_default(),
        }
    }

    fn check_reveal(&self, salt: &str, card: &str) -> Verification {
        let Some(game) = self.game() else {
            return Verification::Missing("no game".into());
        };
        let commit = game.peer_commit.as_deref().unwrap_or("");
        let peer = self.config.role.other();
        match verify::check(&game.settings, peer, commit, salt, card, &game.transcript) {
            Ok(_) => Verification::Verified,
            Err(cheat) => Verification::Cheated(cheat),
        }
    }

    fn finish(&mut self, id: ConnId, outcome: Outcome, verification: Verification) {
        self.end(Ending::Result {
            outcome,
            verification,
        });
        self.out.push_back(Output::Close(id));
    }

    fn end(&mut self, ending: Ending) {
        let game = match std::mem::replace(&mut self.state, State::Waiting(None)) {
            State::Live { game, .. } | State::Suspended { game, .. } => Some(game),
            State::Over { game, .. } => game,
            _ => None,
        };
        self.state = State::Over {
            ending: ending.clone(),
            game,
        };
        self.report(GameEvent::Ended(ending));
    }

    /// `ERROR` and close: the game ends.
    fn violation(&mut self, id: ConnId, violation: Violation) {
        self.send(id, Message::Error(violation.to_string()));
        self.out.push_back(Output::Close(id));
        self.end(Ending::Violation(violation));
    }

    /// `ERROR` and close for one rejoin attempt: the game waits on.
    fn refuse(&mut self, id: ConnId, violation: Violation) {
        self.send(id, Message::Error(violation.to_string()));
        self.out.push_back(Output::Close(id));
        if let State::Suspended {
            rejoin: Rejoin::Host(links),
            ..
        } = &mut self.state
        {
            links.retain(|link| link.id != id);
        }
    }

    fn on_bad(&mut self, id: ConnId, violation: Violation) {
        if self.link_of(id).is_none() {
            return;
        }
        match &self.state {
            State::Live {
                step: Step::At(Stage::Reveal(outcome)),
                ..
            } => {
                let why = format!("bad REVEAL: {violation}");
                let outcome = *outcome;
                self.finish(id, outcome, Verification::Missing(why));
            }
            State::Suspended {
                rejoin: Rejoin::Host(_),
                ..
            } => self.refuse(id, violation),
            State::Suspended { .. } => self.retry_later(id),
            _ => self.violation(id, violation),
        }
    }

    fn on_host_attempt(&mut self, id: ConnId, message: Message) {
        match message {
            Message::Resume {
                id: game_id,
                seen,
                key: Some(key),
            } if game_id == self.config.game_id && self.key_matches(&key) => {
                let reconciled = match self.game() {
                    Some(game) => game.reconcile(Role::Host, seen),
                    None => return,
                };
                let resend = match reconciled {
                    Ok(resend) => resend,
                    Err(violation) => return self.refuse(id, violation),
                };
                let mine = self.game().map_or(0, Game::flags_seen);
                self.send(
                    id,
                    Message::Resume {
                        id: game_id,
                        seen: mine,
                        key: None,
                    },
                );
                self.rejoined(id, resend);
            }
            Message::Resume { .. } => self.refuse(id, Violation::NoSuchGame),
            Message::Hello(_) => self.refuse(id, Violation::Busy),
            Message::Chat(_) => {}
            Message::Error(_) => {
                self.out.push_back(Output::Close(id));
                if let State::Suspended {
                    rejoin: Rejoin::Host(links),
                    ..
                } = &mut self.state
                {
                    links.retain(|link| link.id != id);
                }
            }
            other => self.refuse(id, Violation::ExpectedResume(other.keyword())),
        }
    }

    /// Compares without stopping at the first difference: how long the
    /// comparison takes says nothing of the key.
    fn key_matches(&self, key: &str) -> bool {
        let Some(expected) = self.game().and_then(|game| game.resume_key.as_deref()) else {
            return false;
        };
        let (a, b) = (expected.as_bytes(), key.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }

    fn on_guest_attempt(&mut self, id: ConnId, attempt: Attempt, message: Message) {
        match (attempt, message) {
            (Attempt::Hello, Message::Hello(hello)) => {
                if hello.settings.is_some() {
                    // A fresh game: the host no longer has ours.
                    return self.give_up(Ending::Disconnected(Disconnect::GameGone));
                }
                if !hello.extensions.resume {
                    return self.retry_later(id);
                }
                let seen = self.game().map_or(0, Game::flags_seen);
                let resume = Message::Resume {
                    id: self.config.game_id.clone(),
                    seen,
                    key: Some(self.config.resume_key.clone()),
                };
                self.send(id, resume);
                let since = self.now;
                self.set_rejoin(Rejoin::Guest(Link { id, since }, Attempt::Resume));
            }
            (
                Attempt::Resume,
                Message::Resume {
                    id: game_id, seen, ..
                },
            ) if game_id == self.config.game_id => {
                let reconciled = match self.game() {
                    Some(game) => game.reconcile(Role::Guest, seen),
                    None => return,
                };
                match reconciled {
                    Ok(resend) => self.rejoined(id, resend),
                    Err(violation) => {
                        self.send(id, Message::Error(violation.to_string()));
                        self.give_up(Ending::Violation(violation));
                    }
                }
            }
            (_, Message::Chat(_)) => {}
            // Refused, garbled or out of place: this attempt failed.
            _ => self.retry_later(id),
        }
    }

    /// The rejoin attempt on `id` succeeded: the game goes on there.
    fn rejoined(&mut self, id: ConnId, resend: Option<Message>) {
        let now = self.now;
        let state = std::mem::replace(&mut self.state, State::Waiting(None));
        let State::Suspended {
            game,
            stage,
            rejoin,
            ..
        } = state
        else {
            self.state = state;
            return;
        };
        if let Rejoin::Host(links) = rejoin {
            for link in links.iter().filter(|link| link.id != id) {
                self.out.push_back(Output::Close(link.id));
            }
        }
        let verify = game.agreed.verify;
        let link = Link { id, since: now };
        let step = if verify {
            Step::Recommit(stage)
        } else {
            Step::At(stage)
        };
        self.state = State::Live { game, link, step };
        self.resumes += 1;
        self.report(GameEvent::Joined(id));
        self.report(GameEvent::Resumed);
        // The COMMIT may be what was lost: each side sends it again, and
        // goes on once it has the other's.
        if verify {
            let commit = self.commit();
            self.send(id, commit);
        }
        if let Some(message) = resend {
            self.send(id, message);
        }
        if !verify {
            self.resume_into(stage);
        }
    }

    /// Takes the game up again at `stage`.
    fn resume_into(&mut self, stage: Stage) {
        match stage {
            Stage::Commit => self.start_play(),
            Stage::Play(turn) => self.set_turn(turn),
            Stage::Reveal(outcome) => {
                // Ours may be lost; a second copy is ignored.
                if let Some(link) = self.live_link() {
                    let reveal = self.reveal();
                    self.send(link.id, reveal);
                }
                self.set_step(Step::At(Stage::Reveal(outcome)));
            }
        }
    }

    fn live_link(&self) -> Option<Link> {
        match &self.state {
            State::Live { link, .. } => Some(*link),
            _ => None,
        }
    }

    fn set_rejoin(&mut self, new: Rejoin) {
        if let State::Suspended { rejoin, .. } = &mut self.state {
            *rejoin = new;
        }
    }

    /// A guest's rejoin attempt failed: close it and try again shortly.
    fn retry_later(&mut self, id: ConnId) {
        self.out.push_back(Output::Close(id));
        let at = self.now + self.config.limits.retry;
        self.set_rejoin(Rejoin::Pause(at));
    }

    /// How long a dropped game waits in its stage.
    fn grace(&self) -> Duration {
        match &self.state {
            // Only the check is at stake: wait no longer than for a REVEAL.
            State::Suspended {
                stage: Stage::Reveal(_),
                ..
            }
            | State::Live {
                step: Step::At(Stage::Reveal(_)) | Step::Recommit(Stage::Reveal(_)),
                ..
            } => self.config.limits.close,
            _ => self.config.limits.resume_grace,
        }
    }

    /// The live connection dropped and `resume` is agreed: keep the game.
    fn suspend(&mut self) {
        let until = self.now + self.grace();
        let state = std::mem::replace(&mut self.state, State::Waiting(None));
        let State::Live { game, step, .. } = state else {
            self.state = state;
            return;
        };
        let (Step::At(stage) | Step::Recommit(stage)) = step;
        self.state = State::Suspended {
            game,
            stage,
            until,
            rejoin: Rejoin::Host(Vec::new()),
        };
        self.report(GameEvent::Suspended);
        if self.config.role == Role::Guest {
            self.report(GameEvent::Reconnecting);
            let link = self.connect();
            self.set_rejoin(Rejoin::Guest(link, Attempt::Connecting));
        }
    }

    /// Ends a suspended game: every rejoin attempt is closed, and a game
    /// whose result was known keeps it, unverified.
    fn give_up(&mut self, ending: Ending) {
        let State::Suspended { stage, rejoin, .. } = &self.state else {
            return;
        };
        let stage = *stage;
        let open: Vec<ConnId> = match rejoin {
            Rejoin::Host(links) => links.iter().map(|link| link.id).collect(),
            Rejoin::Guest(link, _) => vec![link.id],
            Rejoin::Pause(_) => Vec::new(),
        };
        for id in open {
            self.out.push_back(Output::Close(id));
        }
        match stage {
            Stage::Reveal(outcome) => self.end(Ending::Result {
                outcome,
                verification: Verification::Missing(ending.to_string()),
            }),
            Stage::Commit | Stage::Play(_) => self.end(ending),
        }
    }

    fn on_closed(&mut self, id: ConnId) {
        if self.link_of(id).is_none() {
            return;
        }
        match &mut self.state {
            // Someone connected and left without a word (a port probe): no
            // game has started, so the host waits for the next connection.
            State::Waiting(waiting) => *waiting = None,
            State::Greeting(_) => self.end(Ending::Disconnected(Disconnect::Closed)),
            State::Live { game, step, .. } => {
                if game.resume_key.is_some() {
                    self.suspend();
                } else if let Step::At(Stage::Reveal(outcome)) = step {
                    let outcome = *outcome;
                    let why = "the connection closed before REVEAL".to_owned();
                    self.finish(id, outcome, Verification::Missing(why));
                } else {
                    self.end(Ending::Disconnected(Disconnect::Closed));
                }
            }
            State::Suspended {
                rejoin: Rejoin::Host(links),
                ..
            } => links.retain(|link| link.id != id),
            State::Suspended { .. } => self.retry_later(id),
            State::Connecting(_) | State::Over { .. } => {}
        }
    }

    fn on_quit(&mut self) {
        match &self.state {
            State::Over { .. } => {}
            State::Waiting(None) => self.end(Ending::Left),
            State::Connecting(link) => {
                let id = link.id;
                self.out.push_back(Output::Close(id));
                self.end(Ending::Left);
            }
            State::Live {
                step: Step::At(Stage::Reveal(outcome)),
                link,
                ..
            } => {
                // The result stands; only the check is given up.
                let why = "left before the other side's REVEAL".to_owned();
                let (id, outcome) = (link.id, *outcome);
                self.finish(id, outcome, Verification::Missing(why));
            }
            State::Waiting(Some(link)) | State::Greeting(link) | State::Live { link, .. } => {
                let id = link.id;
                self.send(id, Message::Error(LEFT.into()));
                self.out.push_back(Output::Close(id));
                self.end(Ending::Left);
            }
            State::Suspended { .. } => self.give_up(Ending::Left),
        }
    }

    fn on_user_chat(&mut self, text: String) {
        let Some(link) = self.live_link() else {
            return self.report(GameEvent::Rejected("not connected".into()));
        };
        let mut text: String = text
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        while text.len() > MAX_CHAT {
            text.pop();
        }
        self.send(link.id, Message::Chat(text.clone()));
        self.report(GameEvent::Chat {
            from: Side::Me,
            text,
        });
    }
}
