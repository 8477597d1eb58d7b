//! One side of the protocol as a sans-IO state machine.
//!
//! A [`Session`] takes [`Event`]s (a line arrived, the idle timer fired, the
//! connection closed, the user called a number...) and answers with
//! [`Action`]s (send this message, close the connection, tell the user this).
//! The same type serves the host and the guest; they differ only in who
//! speaks first in the handshake and in their roles in `resume`.
//!
//! The session outlives a connection when `resume` is agreed: a drop in the
//! middle of the game suspends it, and the next connection (the guest
//! reconnecting) rejoins it with `RESUME`.

use std::time::Duration;

use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::card::{Board, Card};
use crate::message::{Answer, Extensions, Flag, Hello, MAX_CHAT, Message};
use crate::settings::{Role, Settings};
use crate::verify::{self, CallRecord, Transcript};

pub use crate::config::{CardChoice, Config, Limits};
pub use crate::event::{Action, Event, GameEvent};
pub use crate::outcome::{Ending, GameResult, Outcome, Side, Verification};

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

/// The phase a suspended game goes back to once resumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Resumable {
    /// Calling numbers.
    Play(Turn),
    /// The result is known; the REVEALs may have been lost.
    Reveal(Outcome),
}

/// Where a rejoining connection is in the `resume` handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rejoin {
    /// Guest: waiting for the host's HELLO.
    Hello,
    /// Waiting for the other side's `RESUME`.
    Resume,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Phase {
    /// Waiting for the other side's HELLO.
    Hello,
    /// Waiting for the other side's COMMIT (verify).
    Commit,
    /// Calling numbers.
    Play(Turn),
    /// The result is known; waiting for the other side's REVEAL (verify).
    Reveal(Outcome),
    /// The connection dropped; waiting for a new one (resume).
    Suspended(Resumable),
    /// A new connection is rejoining a suspended game.
    Rejoining(Resumable, Rejoin),
    /// Over; see [`Session::ending`].
    Done,
}

/// One side of a bingo game. See the module docs.
#[derive(Debug, Clone)]
pub struct Session {
    config: Config,
    settings: Option<Settings>,
    agreed: Extensions,
    board: Option<Board>,
    transcript: Transcript,
    called: Vec<bool>,
    peer_commit: Option<String>,
    phase: Phase,
    ending: Option<Ending>,
    resumes: usize,
    /// Counts the events that restart the idle limit; see
    /// [`Session::activity`].
    activity: u64,
}

impl Session {
    /// A session waiting for its first connection.
    pub fn new(config: Config) -> Session {
        Session {
            config,
            settings: None,
            agreed: Extensions::default(),
            board: None,
            transcript: Transcript::default(),
            called: Vec::new(),
            peer_commit: None,
            phase: Phase::Hello,
            ending: None,
            resumes: 0,
            activity: 0,
        }
    }

    /// This side's role.
    pub fn role(&self) -> Role {
        self.config.role
    }

    /// The agreed settings, once the handshake is done.
    pub fn settings(&self) -> Option<&Settings> {
        self.settings.as_ref()
    }

    /// The extensions both sides listed.
    pub fn extensions(&self) -> Extensions {
        self.agreed
    }

    /// The game id (host; the guest learns it from the HELLO).
    pub fn game_id(&self) -> &str {
        &self.config.game_id
    }

    /// This side's card with its marks, once the game has started.
    pub fn board(&self) -> Option<&Board> {
        self.board.as_ref()
    }

    /// Every call so far.
    pub fn calls(&self) -> &[CallRecord] {
        &self.transcript.calls
    }

    /// Whether this side may call now.
    pub fn is_my_turn(&self) -> bool {
        self.phase == Phase::Play(Turn::Mine)
    }

    /// Whether the game waits for a reconnection.
    pub fn is_suspended(&self) -> bool {
        matches!(self.phase, Phase::Suspended(_))
    }

    /// How the game ended, once it has.
    pub fn ending(&self) -> Option<&Ending> {
        self.ending.as_ref()
    }

    /// The configured time limits.
    pub fn limits(&self) -> &Limits {
        &self.config.limits
    }

    /// How many times the game was resumed on a new connection.
    pub fn resumes(&self) -> usize {
        self.resumes
    }

    /// How long to wait for the next line (or, suspended, for a reconnection)
    /// before feeding [`Event::IdleTimeout`].
    pub fn idle_limit(&self) -> Duration {
        let limits = &self.config.limits;
        match self.phase {
            Phase::Hello | Phase::Commit | Phase::Rejoining(..) => limits.hello,
            Phase::Play(_) => limits.idle,
            Phase::Reveal(_) | Phase::Done => limits.close,
            Phase::Suspended(Resumable::Play(_)) => limits.resume_grace,
            // Only the check is at stake: wait no longer than for a REVEAL.
            Phase::Suspended(Resumable::Reveal(_)) => limits.close,
        }
    }

    /// Changes whenever the idle limit ([`Session::idle_limit`]) starts
    /// again: on every line heard and every call made during play (chat
    /// included: the peer is there), and otherwise only when the game moves
    /// to another phase, so that chat cannot stretch the handshake or the
    /// wait for REVEAL past their limits.
    pub fn activity(&self) -> u64 {
        self.activity
    }

    /// Feeds one event and returns what to do.
    pub fn handle(&mut self, event: Event) -> Vec<Action> {
        let phase_before = std::mem::discriminant(&self.phase);
        let in_play = matches!(self.phase, Phase::Play(_));
        let heard_or_called = matches!(event, Event::Line(_) | Event::BadFrame(_) | Event::Call(_));
        let out = self.dispatch(event);
        if (in_play && heard_or_called) || std::mem::discriminant(&self.phase) != phase_before {
            self.activity += 1;
        }
        out
    }

    fn dispatch(&mut self, event: Event) -> Vec<Action> {
        let mut out = Vec::new();
        match event {
            Event::Connected => self.on_connected(&mut out),
            Event::Line(line) => match Message::parse(&line) {
                Ok(message) => self.on_message(message, &mut out),
                Err(error) => self.on_bad_line(error.to_string(), &mut out),
            },
            Event::BadFrame(error) => self.on_bad_line(error.to_string(), &mut out),
            Event::IdleTimeout => self.on_timeout(&mut out),
            Event::Closed => self.on_closed(&mut out),
            Event::Call(k) => self.on_user_call(k, &mut out),
            Event::Chat(text) => self.on_user_chat(text, &mut out),
            Event::Quit => self.on_quit(&mut out),
        }
        out
    }

    fn on_connected(&mut self, out: &mut Vec<Action>) {
        match (self.config.role, &self.phase) {
            (Role::Host, Phase::Hello) => out.push(Action::Send(self.host_hello())),
            (Role::Host, Phase::Suspended(state)) => {
                let state = *state;
                out.push(Action::Send(self.host_hello()));
                self.phase = Phase::Rejoining(state, Rejoin::Resume);
            }
            (Role::Guest, Phase::Suspended(state)) => {
                self.phase = Phase::Rejoining(*state, Rejoin::Hello);
            }
            _ => {}
        }
    }

    fn host_hello(&self) -> Message {
        let offered = self.config.extensions;
        Message::Hello(Hello {
            settings: Some(self.config.settings),
            id: offered.resume.then(|| self.config.game_id.clone()),
            extensions: offered,
        })
    }

    fn on_message(&mut self, message: Message, out: &mut Vec<Action>) {
        match message {
            Message::Chat(text) if self.phase != Phase::Done => {
                out.push(Action::Report(GameEvent::Chat {
                    from: Side::Peer,
                    text,
                }));
                return;
            }
            Message::Error(reason) => {
                self.on_peer_error(reason, out);
                return;
            }
            _ => {}
        }
        match self.phase.clone() {
            Phase::Hello => match message {
                Message::Hello(hello) => self.on_hello(hello, out),
                other => self.violation(format!("expected HELLO, got {}", other.keyword()), out),
            },
            Phase::Commit => match message {
                Message::Commit(hash) => {
                    self.peer_commit = Some(hash);
                    self.start_play(out);
                }
                other => self.violation(
                    format!(
                        "expected COMMIT before the first call, got {}",
                        other.keyword()
                    ),
                    out,
                ),
            },
            Phase::Play(turn) => self.on_play(turn, message, out),
            Phase::Reveal(outcome) => {
                let verification = match message {
                    Message::Reveal { salt, card } => self.check_reveal(&salt, &card),
                    other => {
                        Verification::Missing(format!("sent {} instead of REVEAL", other.keyword()))
                    }
                };
                self.finish(outcome, verification, out);
            }
            Phase::Rejoining(state, stage) => self.on_rejoin(state, stage, message, out),
            Phase::Suspended(_) | Phase::Done => {}
        }
    }

    fn on_hello(&mut self, hello: Hello, out: &mut Vec<Action>) {
        let offered = self.config.extensions;
        match self.config.role {
            Role::Host => {
                self.settings = Some(self.config.settings);
                self.agreed = offered.both(hello.extensions);
            }
            Role::Guest => {
                let Some(settings) = hello.settings else {
                    return self.violation(
                        "the host's HELLO must give size, lines and first".into(),
                        out,
                    );
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
                    let reason = format!(
                        "my card is {0}x{0} but the game is {1}x{1}",
                        card.size(),
                        settings.size()
                    );
                    return self.violation(reason, out);
                }
                self.settings = Some(settings);
                self.agreed = agreed;
                out.push(Action::Send(Message::Hello(Hello {
                    settings: None,
                    id: None,
                    extensions: agreed,
                })));
            }
        }
        let settings = self.settings.expect("set above");
        let card = match &self.config.card {
            CardChoice::Given(card) => card.clone(),
            CardChoice::Shuffled(seed) => {
                Card::shuffled(settings.size(), &mut StdRng::seed_from_u64(*seed))
            }
        };
        self.called = vec![false; usize::from(settings.max_number()) + 1];
        self.board = Some(Board::new(card.clone()));
        out.push(Action::Report(GameEvent::Started {
            settings,
            extensions: self.agreed,
            card: card.clone(),
        }));
        if self.agreed.verify {
            let hash = verify::commitment(&self.config.salt, &card.to_wire());
            out.push(Action::Send(Message::Commit(hash)));
            self.phase = Phase::Commit;
        } else {
            self.start_play(out);
        }
    }

    fn start_play(&mut self, out: &mut Vec<Action>) {
        let settings = self.settings.expect("play starts after HELLO");
        let turn = if settings.first() == self.config.role {
            Turn::Mine
        } else {
            Turn::Theirs { pending: None }
        };
        self.set_turn(turn, out);
    }

    fn set_turn(&mut self, turn: Turn, out: &mut Vec<Action>) {
        self.phase = Phase::Play(turn);
        let side = if turn == Turn::Mine {
            Side::Me
        } else {
            Side::Peer
        };
        out.push(Action::Report(GameEvent::Turn(side)));
    }

    fn on_play(&mut self, turn: Turn, message: Message, out: &mut Vec<Action>) {
        match (message, turn) {
            (Message::Flag(flag, k), Turn::Theirs { .. }) => self.on_peer_call(flag, k, out),
            (Message::Flag(flag, k), Turn::Mine) => self.violation(
                format!("{} {k} out of turn: it is my turn to call", flag.keyword()),
                out,
            ),
            (Message::Flag(flag, k), Turn::Verdict(mine)) => self.violation(
                format!(
                    "{} {k} out of turn: expected YIELD or TIE after FINAL {mine}",
                    flag.keyword()
                ),
                out,
            ),
            (Message::Answer(answer), Turn::Verdict(k)) => match answer {
                Answer::Yield => {
                    self.decide(GameResult::Win, Side::Me, k, Flag::Final, answer, out)
                }
                Answer::Tie => self.decide(GameResult::Draw, Side::Me, k, Flag::Final, answer, out),
                Answer::Bingo => self.violation(format!("BINGO does not answer FINAL {k}"), out),
            },
            (Message::Answer(Answer::Bingo), Turn::Theirs { pending: Some(k) }) => self.decide(
                GameResult::Loss,
                Side::Me,
                k,
                Flag::Call,
                Answer::Bingo,
                out,
            ),
            (Message::Answer(answer), Turn::Theirs { pending: Some(k) }) => self.violation(
                format!(
                    "{} answers FINAL, but my last call was CALL {k}",
                    answer.keyword()
                ),
                out,
            ),
            (Message::Answer(answer), _) => {
                self.violation(format!("{} with no call to answer", answer.keyword()), out)
            }
            (other, _) => self.violation(
                format!("unexpected {} during the game", other.keyword()),
                out,
            ),
        }
    }

    fn on_peer_call(&mut self, flag: Flag, k: u16, out: &mut Vec<Action>) {
        if let Err(reason) = self.check_number(k) {
            return self.violation(reason, out);
        }
        let bingo = self.record(Role::other(self.config.role), k, flag, out);
        match (flag, bingo) {
            (Flag::Final, false) => self.answer(GameResult::Loss, k, flag, Answer::Yield, out),
            (Flag::Final, true) => self.answer(GameResult::Draw, k, flag, Answer::Tie, out),
            (Flag::Call, true) => self.answer(GameResult::Win, k, flag, Answer::Bingo, out),
            (Flag::Call, false) => self.set_turn(Turn::Mine, out),
        }
    }

    fn answer(
        &mut self,
        result: GameResult,
        k: u16,
        flag: Flag,
        answer: Answer,
        out: &mut Vec<Action>,
    ) {
        out.push(Action::Send(Message::Answer(answer)));
        self.decide(result, Side::Peer, k, flag, answer, out);
    }

    fn on_user_call(&mut self, k: u16, out: &mut Vec<Action>) {
        if self.phase != Phase::Play(Turn::Mine) {
            let why = match self.phase {
                Phase::Play(_) => "it is not your turn",
                Phase::Suspended(_) | Phase::Rejoining(..) => "the connection is down",
                Phase::Hello | Phase::Commit => "the game has not started",
                Phase::Reveal(_) | Phase::Done => "the game is over",
            };
            out.push(Action::Report(GameEvent::Rejected(why.into())));
            return;
        }
        if let Err(reason) = self.check_number(k) {
            out.push(Action::Report(GameEvent::Rejected(reason)));
            return;
        }
        let target = self.settings.map_or(usize::MAX, |s| s.lines());
        let board = self.board.as_ref().expect("play starts after the board");
        let flag = if board.completed() + board.would_complete(k) >= target {
            Flag::Final
        } else {
            Flag::Call
        };
        self.record(self.config.role, k, flag, out);
        out.push(Action::Send(Message::Flag(flag, k)));
        let turn = match flag {
            Flag::Final => Turn::Verdict(k),
            Flag::Call => Turn::Theirs { pending: Some(k) },
        };
        self.set_turn(turn, out);
    }

    fn check_number(&self, k: u16) -> Result<(), String> {
        let max = self.settings.map_or(0, |s| s.max_number());
        if k == 0 || k > max {
            Err(format!("number {k} is out of range 1..{max}"))
        } else if self.called[usize::from(k)] {
            Err(format!("number {k} was already called"))
        } else {
            Ok(())
        }
    }

    /// Marks a call and reports it; returns whether this side now has bingo.
    fn record(&mut self, by: Role, k: u16, flag: Flag, out: &mut Vec<Action>) -> bool {
        self.called[usize::from(k)] = true;
        self.transcript.calls.push(CallRecord {
            by,
            number: k,
            flag,
        });
        let target = self.settings.map_or(usize::MAX, |s| s.lines());
        let board = self.board.as_mut().expect("play starts after the board");
        let new_lines = board.mark(k);
        let bingo = board.has_bingo(target);
        out.push(Action::Report(GameEvent::Called {
            by: if by == self.config.role {
                Side::Me
            } else {
                Side::Peer
            },
            number: k,
            flag,
            new_lines,
            completed: board.completed(),
        }));
        bingo
    }

    fn decide(
        &mut self,
        result: GameResult,
        caller: Side,
        number: u16,
        flag: Flag,
        answer: Answer,
        out: &mut Vec<Action>,
    ) {
        self.transcript.answer = Some(answer);
        let outcome = Outcome {
            result,
            caller,
            number,
            flag,
            answer,
        };
        out.push(Action::Report(GameEvent::Decided(outcome)));
        if self.agreed.verify {
            out.push(Action::Send(self.reveal()));
            self.phase = Phase::Reveal(outcome);
        } else {
            self.finish(outcome, Verification::Unverified, out);
        }
    }

    /// This side's `REVEAL`.
    fn reveal(&self) -> Message {
        let board = self.board.as_ref().expect("revealed after play");
        Message::Reveal {
            salt: self.config.salt.clone(),
            card: board.card().to_wire(),
        }
    }

    fn check_reveal(&self, salt: &str, card: &str) -> Verification {
        let settings = self.settings.expect("reveal after play");
        let commit = self.peer_commit.as_deref().unwrap_or("");
        let peer = self.config.role.other();
        match verify::check(&settings, peer, commit, salt, card, &self.transcript) {
            Ok(_) => Verification::Verified,
            Err(cheat) => Verification::Cheated(cheat),
        }
    }

    fn finish(&mut self, outcome: Outcome, verification: Verification, out: &mut Vec<Action>) {
        self.end(
            Ending::Result {
                outcome,
                verification,
            },
            out,
        );
        out.push(Action::Close);
    }

    fn end(&mut self, ending: Ending, out: &mut Vec<Action>) {
        self.phase = Phase::Done;
        self.ending = Some(ending.clone());
        out.push(Action::Report(GameEvent::Ended(ending)));
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

    fn on_rejoin(
        &mut self,
        state: Resumable,
        stage: Rejoin,
        message: Message,
        out: &mut Vec<Action>,
    ) {
        let mine = self.flags_seen();
        match (self.config.role, stage, message) {
            (Role::Guest, Rejoin::Hello, Message::Hello(hello)) => {
                if hello.id.as_deref() != Some(self.config.game_id.as_str()) {
                    // Another game: not ours to disturb with an ERROR.
                    out.push(Action::Close);
                    return self.give_up(state, "the host no longer has this game".into(), out);
                }
                out.push(Action::Send(Message::Resume {
                    id: self.config.game_id.clone(),
                    seen: mine,
                }));
                self.phase = Phase::Rejoining(state, Rejoin::Resume);
            }
            (role, Rejoin::Resume, Message::Resume { id, seen }) => {
                if id != self.config.game_id {
                    return self.refuse_rejoin(state, format!("no game {id} to resume"), out);
                }
                // Each flag waits for the one before it, so at most one can
                // be in flight: the last, sent by the side that has one more.
                let resend = if seen + 1 == mine {
                    match self.last_flag_from(role) {
                        Some(message) => Some(message),
                        None => {
                            let reason = format!("cannot resume after {seen} flags");
                            return self.refuse_rejoin(state, reason, out);
                        }
                    }
                } else if seen == mine || seen == mine + 1 {
                    None
                } else {
                    let reason =
                        format!("cannot resume: {seen} flags seen, {mine} sent and received");
                    return self.refuse_rejoin(state, reason, out);
                };
                if role == Role::Host {
                    out.push(Action::Send(Message::Resume { id, seen: mine }));
                }
                out.extend(resend.map(Action::Send));
                self.resumes += 1;
                out.push(Action::Report(GameEvent::Resumed));
                match state {
                    Resumable::Play(turn) => self.set_turn(turn, out),
                    Resumable::Reveal(outcome) => {
                        // Ours may be lost; a second copy is ignored.
                        out.push(Action::Send(self.reveal()));
                        self.phase = Phase::Reveal(outcome);
                    }
                }
            }
            (_, _, other) => self.refuse_rejoin(
                state,
                format!("expected RESUME, got {}", other.keyword()),
                out,
            ),
        }
    }

    /// A rejoining connection that does not resume the game: the host turns
    /// it away and keeps waiting; the guest gives up.
    fn refuse_rejoin(&mut self, state: Resumable, reason: String, out: &mut Vec<Action>) {
        out.push(Action::Send(Message::Error(reason.clone())));
        out.push(Action::Close);
        match self.config.role {
            Role::Host => self.phase = Phase::Suspended(state),
            Role::Guest => self.give_up(state, reason, out),
        }
    }

    /// Ends a game that could not be resumed: unfinished, or finished but
    /// not verified.
    fn give_up(&mut self, state: Resumable, reason: String, out: &mut Vec<Action>) {
        match state {
            Resumable::Play(_) => self.end(Ending::Disconnected(reason), out),
            Resumable::Reveal(outcome) => {
                let verification = Verification::Missing(reason);
                self.end(
                    Ending::Result {
                        outcome,
                        verification,
                    },
                    out,
                );
            }
        }
    }

    fn on_bad_line(&mut self, reason: String, out: &mut Vec<Action>) {
        match self.phase.clone() {
            Phase::Done | Phase::Suspended(_) => {}
            Phase::Reveal(outcome) => self.finish(
                outcome,
                Verification::Missing(format!("bad REVEAL: {reason}")),
                out,
            ),
            Phase::Rejoining(state, _) => self.refuse_rejoin(state, reason, out),
            _ => self.violation(reason, out),
        }
    }

    fn violation(&mut self, reason: String, out: &mut Vec<Action>) {
        out.push(Action::Send(Message::Error(reason.clone())));
        self.end(Ending::Error { reason, sent: true }, out);
        out.push(Action::Close);
    }

    fn on_peer_error(&mut self, reason: String, out: &mut Vec<Action>) {
        match self.phase.clone() {
            Phase::Done => {}
            Phase::Reveal(outcome) => self.finish(
                outcome,
                Verification::Missing(format!("the other side reported: {reason}")),
                out,
            ),
            Phase::Rejoining(state, _) => {
                out.push(Action::Close);
                match self.config.role {
                    Role::Host => self.phase = Phase::Suspended(state),
                    Role::Guest => self.give_up(state, format!("the host reported: {reason}"), out),
                }
            }
            _ => {
                self.end(
                    Ending::Error {
                        reason,
                        sent: false,
                    },
                    out,
                );
                out.push(Action::Close);
            }
        }
    }

    fn on_timeout(&mut self, out: &mut Vec<Action>) {
        let secs = self.idle_limit().as_secs_f64();
        match self.phase.clone() {
            Phase::Done => {}
            Phase::Reveal(outcome) => self.finish(
                outcome,
                Verification::Missing(format!("no REVEAL within {secs} s")),
                out,
            ),
            Phase::Suspended(state) => self.give_up(
                state,
                format!("connection lost and not resumed within {secs} s"),
                out,
            ),
            Phase::Rejoining(state, _) => {
                self.refuse_rejoin(state, format!("no message for {secs} s"), out)
            }
            _ => self.violation(format!("no message for {secs} s"), out),
        }
    }

    fn on_closed(&mut self, out: &mut Vec<Action>) {
        match self.phase.clone() {
            Phase::Done | Phase::Suspended(_) => {}
            // Someone connected and left without a word (a port probe): no
            // game has started, so the host waits for the next connection.
            Phase::Hello if self.config.role == Role::Host => {}
            Phase::Play(turn) if self.agreed.resume => self.suspend(Resumable::Play(turn), out),
            Phase::Reveal(outcome) if self.agreed.resume => {
                self.suspend(Resumable::Reveal(outcome), out)
            }
            Phase::Rejoining(state, _) => self.suspend(state, out),
            Phase::Reveal(outcome) => self.finish(
                outcome,
                Verification::Missing("the connection closed before REVEAL".into()),
                out,
            ),
            _ => self.end(
                Ending::Disconnected("the connection closed mid-game".into()),
                out,
            ),
        }
    }

    fn suspend(&mut self, state: Resumable, out: &mut Vec<Action>) {
        self.phase = Phase::Suspended(state);
        out.push(Action::Report(GameEvent::Suspended));
    }

    fn on_quit(&mut self, out: &mut Vec<Action>) {
        match self.phase.clone() {
            Phase::Done => {}
            // The result stands; only the check is given up.
            Phase::Reveal(outcome) => self.finish(
                outcome,
                Verification::Missing("left before the other side's REVEAL".into()),
                out,
            ),
            Phase::Suspended(state) => {
                self.give_up(state, "left while the connection was down".into(), out)
            }
            _ => self.violation("the player left the game".into(), out),
        }
    }

    fn on_user_chat(&mut self, text: String, out: &mut Vec<Action>) {
        if matches!(
            self.phase,
            Phase::Done | Phase::Suspended(_) | Phase::Rejoining(..)
        ) {
            out.push(Action::Report(GameEvent::Rejected("not connected".into())));
            return;
        }
        let mut text: String = text
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        while text.len() > MAX_CHAT {
            text.pop();
        }
        out.push(Action::Send(Message::Chat(text.clone())));
        out.push(Action::Report(GameEvent::Chat {
            from: Side::Me,
            text,
        }));
    }
}
