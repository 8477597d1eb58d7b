//! A game between the person and the computer, as a sans-IO state machine:
//! the person's moves, undo, hints and resignation, the engine's answers and
//! the clock go in with the time they happened; searches to start and the
//! finished game come out of [`Versus::poll_output`]; [`Versus::poll_timeout`]
//! is the clock's next deadline. The rules and the result are `renju::Game`'s.
//!
//! The engine runs elsewhere (see `computer`); every request carries an id,
//! and an answer whose id is no longer awaited (after an undo, a new game or
//! a move that made a hint stale) is dropped.

use std::collections::VecDeque;
use std::time::{Duration, Instant, SystemTime};

use omok::clock::{Clock, TimeControl};
use omok::referee::EndReason;
use renju::{Color, Game, GameResult, Point, Rule};

use super::computer::{Analysis, Answer, Purpose, Request};

/// How a finished game ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// `winner` completed five, the last stone at this point.
    Five(Color, Point),
    /// This side's clock ran out.
    Time(Color),
    /// This side resigned.
    Resigned(Color),
    /// Nobody can win any more.
    Draw,
}

impl Ending {
    /// The winner, `None` for a draw.
    pub(crate) fn winner(self) -> Option<Color> {
        match self {
            Ending::Five(c, _) => Some(c),
            Ending::Time(c) | Ending::Resigned(c) => Some(!c),
            Ending::Draw => None,
        }
    }

    /// The reason as records name it.
    pub(crate) fn reason(self) -> EndReason {
        match self {
            Ending::Five(..) => EndReason::Five,
            Ending::Time(_) => EndReason::Timeout,
            Ending::Resigned(_) => EndReason::Resigned,
            Ending::Draw => EndReason::Draw,
        }
    }
}

/// A finished game, for its record.
#[derive(Debug, Clone)]
pub(crate) struct Finished {
    /// The final position.
    pub(crate) game: Game,
    /// The person's colour.
    pub(crate) person: Color,
    /// How it ended.
    pub(crate) ending: Ending,
    /// Time taken by each move, in order.
    pub(crate) times: Vec<Duration>,
    /// When the first move could be made (calendar time).
    pub(crate) started: SystemTime,
}

/// Something for the async layer to do.
#[derive(Debug, Clone)]
pub(crate) enum Output {
    /// Start this search on the engine thread.
    Think(Request),
    /// The game ended; record it.
    Ended(Finished),
}

/// Where the game stands.
#[derive(Debug, Clone)]
enum Phase {
    /// Set up and drawn, but no clock runs yet.
    Ready,
    /// The person is to move; a hint may be on its way.
    PersonToMove { since: Instant, hint: Option<u64> },
    /// The engine is thinking on request `id`.
    EngineToMove { since: Instant, id: u64 },
    /// Over.
    Over(Ending),
}

/// A refusal, in words for the screen.
pub(crate) type Refusal = String;

/// One game against the computer.
#[derive(Debug)]
pub(crate) struct Versus {
    game: Game,
    person: Color,
    think: Duration,
    clock: Option<Clock>,
    phase: Phase,
    times: Vec<Duration>,
    started: SystemTime,
    next_id: u64,
    /// The engine's latest analysis (its own move or a hint).
    analysis: Option<(Purpose, Analysis)>,
    outputs: VecDeque<Output>,
}

impl Versus {
    /// A game under `rule` with the person playing `person`, the engine
    /// thinking `think` per move, and an optional per-game clock.
    pub(crate) fn new(
        rule: Rule,
        person: Color,
        think: Duration,
        clock: Option<TimeControl>,
    ) -> Versus {
        Versus {
            game: Game::new(rule),
            person,
            think,
            clock: clock.map(Clock::new),
            phase: Phase::Ready,
            times: Vec::new(),
            started: SystemTime::UNIX_EPOCH,
            next_id: 0,
            analysis: None,
            outputs: VecDeque::new(),
        }
    }

    /// The position.
    pub(crate) fn game(&self) -> &Game {
        &self.game
    }

    /// The person's colour.
    pub(crate) fn person(&self) -> Color {
        self.person
    }

    /// The clock, if the game has one.
    pub(crate) fn clock(&self) -> Option<&Clock> {
        self.clock.as_ref()
    }

    /// How the game ended, once over.
    pub(crate) fn ending(&self) -> Option<Ending> {
        match self.phase {
            Phase::Over(e) => Some(e),
            _ => None,
        }
    }

    /// Whether the engine is thinking about its move.
    pub(crate) fn engine_thinking(&self) -> bool {
        matches!(self.phase, Phase::EngineToMove { .. })
    }

    /// Whether a hint is on its way.
    pub(crate) fn hint_pending(&self) -> bool {
        matches!(self.phase, Phase::PersonToMove { hint: Some(_), .. })
    }

    /// Whether the game is under way (started and not over).
    pub(crate) fn in_progress(&self) -> bool {
        matches!(
            self.phase,
            Phase::PersonToMove { .. } | Phase::EngineToMove { .. }
        )
    }

    /// The engine's latest analysis and what it was for.
    pub(crate) fn analysis(&self) -> Option<&(Purpose, Analysis)> {
        self.analysis.as_ref()
    }

    /// Starts the game (and the clocks) at `now`, the calendar time being
    /// `wall` (for the record): call once the board has been drawn, so
    /// that no clock counts before the person sees it.
    pub(crate) fn begin(&mut self, now: Instant, wall: SystemTime) {
        if matches!(self.phase, Phase::Ready) {
            self.started = wall;
            self.next_turn(now);
        }
    }

    /// The person plays `p`.
    pub(crate) fn play(&mut self, p: Point, now: Instant) -> Result<(), Refusal> {
        let Phase::PersonToMove { since, .. } = self.phase else {
            return Err(self.why_not_now());
        };
        self.game.check(p).map_err(|e| format!("{e}."))?;
        self.place(p, since, now);
        Ok(())
    }

    /// Takes back the last pair of moves (the person's and the reply), or
    /// the person's move alone while the engine thinks about it.
    pub(crate) fn undo(&mut self, now: Instant) -> Result<(), Refusal> {
        let person_moves = self.person_moves();
        let count = match self.phase {
            Phase::EngineToMove { .. } if person_moves > 0 => 1,
            Phase::PersonToMove { .. } if person_moves > 0 => 2,
            Phase::EngineToMove { .. } | Phase::PersonToMove { .. } => {
                return Err("Nothing to take back yet.".into());
            }
            Phase::Ready | Phase::Over(_) => return Err(self.why_not_now()),
        };
        for _ in 0..count {
            self.game.undo();
            self.times.pop();
        }
        self.analysis = None;
        self.next_turn(now);
        Ok(())
    }

    /// Asks the engine which move it would play for the person.
    pub(crate) fn hint(&mut self) -> Result<(), Refusal> {
        let Phase::PersonToMove { since, hint } = self.phase else {
            return Err(self.why_not_now());
        };
        if hint.is_some() {
            return Err("The engine is still looking for a hint.".into());
        }
        let id = self.request(self.think);
        self.phase = Phase::PersonToMove {
            since,
            hint: Some(id),
        };
        Ok(())
    }

    /// The person resigns.
    pub(crate) fn resign(&mut self, now: Instant) -> Result<(), Refusal> {
        if !self.in_progress() {
            return Err(self.why_not_now());
        }
        self.end(Ending::Resigned(self.person), now);
        Ok(())
    }

    /// The engine answered.
    pub(crate) fn on_answer(&mut self, answer: Answer, now: Instant) {
        match self.phase {
            Phase::EngineToMove { since, id } if id == answer.id => match answer.analysis {
                Ok(analysis) => {
                    let best = analysis.best;
                    self.analysis = Some((Purpose::Move, analysis));
                    if self.game.check(best).is_ok() {
                        self.place(best, since, now);
                    } else {
                        // Never happens with the built-in engine; if it did,
                        // the engine forfeits rather than the game hanging.
                        self.end(Ending::Resigned(!self.person), now);
                    }
                }
                Err(_) => self.end(Ending::Resigned(!self.person), now),
            },
            Phase::PersonToMove {
                since,
                hint: Some(id),
            } if id == answer.id => {
                if let Ok(analysis) = answer.analysis {
                    self.analysis = Some((Purpose::Hint, analysis));
                }
                self.phase = Phase::PersonToMove { since, hint: None };
            }
            _ => {}
        }
    }

    /// When [`Versus::handle_timeout`] must be called: a clock running out.
    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        if self.in_progress() {
            self.clock.as_ref()?.deadline()
        } else {
            None
        }
    }

    /// Time passed to `now`: a side whose clock ran out loses.
    pub(crate) fn handle_timeout(&mut self, now: Instant) {
        if !self.in_progress() {
            return;
        }
        if let Some(side) = self.clock.as_ref().and_then(|c| c.flagged(now)) {
            self.end(Ending::Time(side), now);
        }
    }

    /// The next thing to do.
    pub(crate) fn poll_output(&mut self) -> Option<Output> {
        self.outputs.pop_front()
    }

    fn person_moves(&self) -> usize {
        let n = self.game.moves().len();
        match self.person {
            Color::Black => n.div_ceil(2),
            Color::White => n / 2,
        }
    }

    fn why_not_now(&self) -> Refusal {
        match self.phase {
            Phase::Ready => "The game has not started yet.",
            Phase::EngineToMove { .. } => "The computer is thinking.",
            Phase::Over(_) => "The game is over.",
            Phase::PersonToMove { .. } => "It is your move.",
        }
        .into()
    }

    fn request(&mut self, budget: Duration) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.outputs.push_back(Output::Think(Request {
            id,
            game: self.game.clone(),
            budget,
        }));
        id
    }

    /// Places `p` for the side to move, whose turn began at `since`.
    fn place(&mut self, p: Point, since: Instant, now: Instant) {
        let mover = self.game.side_to_move();
        if self
            .clock
            .as_ref()
            .is_some_and(|c| c.flagged(now).is_some())
        {
            // The flag fell before the move arrived.
            self.end(Ending::Time(mover), now);
            return;
        }
        let result = match self.game.play(p) {
            Ok(result) => result.cloned(),
            // Checked by the callers.
            Err(_) => return,
        };
        self.times.push(now.saturating_duration_since(since));
        if let Some(clock) = &mut self.clock {
            clock.moved(now);
        }
        match result {
            Some(GameResult::Win { winner, .. }) => self.end(Ending::Five(winner, p), now),
            Some(GameResult::Draw) => self.end(Ending::Draw, now),
            None => self.next_turn(now),
        }
    }

    /// Hands the turn to the side to move in the position.
    fn next_turn(&mut self, now: Instant) {
        let side = self.game.side_to_move();
        if let Some(clock) = &mut self.clock
            && clock.running() != Some(side)
        {
            clock.start(side, now);
        }
        self.phase = if side == self.person {
            Phase::PersonToMove {
                since: now,
                hint: None,
            }
        } else {
            // Never more than a twentieth of what is left, so the engine
            // does not lose on time against a fast clock.
            let budget = match self.clock.as_ref().and_then(|c| c.left(side, now)) {
                Some(left) => self.think.min(left / 20),
                None => self.think,
            };
            let id = self.request(budget);
            Phase::EngineToMove { since: now, id }
        };
    }

    fn end(&mut self, ending: Ending, now: Instant) {
        if let Some(clock) = &mut self.clock {
            clock.stop(now);
        }
        self.phase = Phase::Over(ending);
        self.outputs.push_back(Output::Ended(Finished {
            game: self.game.clone(),
            person: self.person,
            ending,
            times: self.times.clone(),
            started: self.started,
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(s: &str) -> Point {
        s.parse().unwrap()
    }

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    /// The search the game asked for, if any.
    fn think(v: &mut Versus) -> Option<Request> {
        let mut found = None;
        while let Some(out) = v.poll_output() {
            if let Output::Think(r) = out {
                found = Some(r);
            }
        }
        found
    }

    fn person_to_move(v: &Versus) -> bool {
        v.in_progress() && !v.engine_thinking()
    }

    fn answer(id: u64, best: &str) -> Answer {
        Answer {
            id,
            analysis: Ok(Analysis {
                best: pt(best),
                score: 10,
                depth: 3,
                nodes: 100,
                pv: vec![pt(best)],
            }),
        }
    }

    #[test]
    fn nothing_runs_before_begin_then_the_computer_opens_as_black() {
        let t0 = Instant::now();
        let clock = TimeControl::PerGame {
            base_ms: 60_000,
            increment_ms: 0,
        };
        let mut v = Versus::new(Rule::Renju, Color::White, secs(1), Some(clock));
        assert!(think(&mut v).is_none());
        assert_eq!(v.poll_timeout(), None);
        assert_eq!(
            v.play(pt("h8"), t0).unwrap_err(),
            "The game has not started yet."
        );
        v.begin(t0 + secs(5), SystemTime::UNIX_EPOCH);
        let r = think(&mut v).expect("the engine moves first");
        assert!(v.engine_thinking());
        assert_eq!(r.budget, secs(1).min(secs(3)));
        assert_eq!(
            v.play(pt("h8"), t0).unwrap_err(),
            "The computer is thinking."
        );
        v.on_answer(answer(r.id, "h8"), t0 + secs(6));
        assert!(person_to_move(&v));
        assert_eq!(
            v.clock().unwrap().left(Color::Black, t0 + secs(9)),
            Some(secs(59))
        );
        assert_eq!(
            v.clock().unwrap().left(Color::White, t0 + secs(9)),
            Some(secs(57))
        );
    }

    #[test]
    fn undo_takes_back_a_pair_or_the_move_being_answered() {
        let t0 = Instant::now();
        let mut v = Versus::new(Rule::Renju, Color::Black, secs(1), None);
        v.begin(t0, SystemTime::UNIX_EPOCH);
        assert_eq!(v.undo(t0).unwrap_err(), "Nothing to take back yet.");
        v.play(pt("h8"), t0).unwrap();
        let r = think(&mut v).unwrap();
        v.on_answer(answer(r.id, "h9"), t0);
        v.play(pt("i8"), t0).unwrap();
        // Undo while it thinks: our i8 goes, its late answer is ignored.
        let late = think(&mut v).unwrap();
        v.undo(t0).unwrap();
        assert_eq!(v.game().moves(), [pt("h8"), pt("h9")]);
        v.on_answer(answer(late.id, "j8"), t0);
        assert_eq!(v.game().moves().len(), 2);
        assert!(person_to_move(&v));
        // Undo on our turn: the pair goes.
        v.undo(t0).unwrap();
        assert!(v.game().moves().is_empty());
        assert!(person_to_move(&v));
        assert!(think(&mut v).is_none());
    }

    #[test]
    fn undo_as_white_keeps_the_computers_opening() {
        let t0 = Instant::now();
        let mut v = Versus::new(Rule::Renju, Color::White, secs(1), None);
        v.begin(t0, SystemTime::UNIX_EPOCH);
        assert_eq!(v.undo(t0).unwrap_err(), "Nothing to take back yet.");
        assert!(v.engine_thinking());
        let r = think(&mut v).unwrap();
        v.on_answer(answer(r.id, "h8"), t0);
        assert_eq!(v.undo(t0).unwrap_err(), "Nothing to take back yet.");
        v.play(pt("h9"), t0).unwrap();
        let r = think(&mut v).unwrap();
        v.on_answer(answer(r.id, "i8"), t0);
        v.undo(t0).unwrap();
        assert_eq!(v.game().moves(), [pt("h8")]);
        assert!(person_to_move(&v));
    }

    #[test]
    fn hints_are_for_the_person_and_go_stale() {
        let t0 = Instant::now();
        let mut v = Versus::new(Rule::Renju, Color::Black, secs(1), None);
        v.begin(t0, SystemTime::UNIX_EPOCH);
        v.hint().unwrap();
        let r = think(&mut v).unwrap();
        assert!(v.hint_pending());
        assert_eq!(
            v.hint().unwrap_err(),
            "The engine is still looking for a hint."
        );
        v.on_answer(answer(r.id, "h8"), t0);
        assert_eq!(v.analysis().unwrap().1.best, pt("h8"));
        // A hint that arrives after the person moved is dropped.
        v.hint().unwrap();
        let stale = think(&mut v).unwrap();
        v.play(pt("g7"), t0).unwrap();
        let mv = think(&mut v).unwrap();
        v.on_answer(answer(stale.id, "a1"), t0);
        assert!(v.engine_thinking());
        v.on_answer(answer(mv.id, "h8"), t0);
        assert_eq!(v.game().moves(), [pt("g7"), pt("h8")]);
    }

    #[test]
    fn the_clock_flags_in_simulated_time() {
        let t0 = Instant::now();
        let clock = TimeControl::PerGame {
            base_ms: 10_000,
            increment_ms: 1_000,
        };
        let mut v = Versus::new(Rule::Renju, Color::Black, secs(1), Some(clock));
        v.begin(t0, SystemTime::UNIX_EPOCH);
        assert_eq!(v.poll_timeout(), Some(t0 + secs(10)));
        v.play(pt("h8"), t0 + secs(4)).unwrap();
        let r = think(&mut v).unwrap();
        // The engine gets at most a twentieth of its 10 s.
        assert_eq!(r.budget, Duration::from_millis(500));
        v.on_answer(answer(r.id, "h9"), t0 + secs(5));
        assert_eq!(v.poll_timeout(), Some(t0 + secs(5 + 7)));
        v.handle_timeout(t0 + secs(11));
        assert!(person_to_move(&v));
        v.handle_timeout(t0 + secs(12));
        assert_eq!(v.ending(), Some(Ending::Time(Color::Black)));
        assert_eq!(v.ending().unwrap().winner(), Some(Color::White));
        let ended = std::iter::from_fn(|| v.poll_output())
            .find_map(|o| match o {
                Output::Ended(f) => Some(f),
                Output::Think(_) => None,
            })
            .unwrap();
        assert_eq!(ended.times, [secs(4), secs(1)]);
        assert_eq!(v.poll_timeout(), None);
    }

    #[test]
    fn five_ends_the_game_and_resigning_is_recorded() {
        let t0 = Instant::now();
        let mut v = Versus::new(Rule::Renju, Color::Black, secs(1), None);
        v.begin(t0, SystemTime::UNIX_EPOCH);
        for (ours, theirs) in [("h8", "a1"), ("i8", "a2"), ("j8", "a3"), ("k8", "a4")] {
            v.play(pt(ours), t0).unwrap();
            let r = think(&mut v).unwrap();
            v.on_answer(answer(r.id, theirs), t0);
        }
        assert_eq!(v.play(pt("a1"), t0).unwrap_err(), "a1 is occupied.");
        v.play(pt("l8"), t0).unwrap();
        assert_eq!(v.ending(), Some(Ending::Five(Color::Black, pt("l8"))));
        assert_eq!(v.resign(t0).unwrap_err(), "The game is over.");

        let mut v = Versus::new(Rule::Renju, Color::Black, secs(1), None);
        v.begin(t0, SystemTime::UNIX_EPOCH);
        v.resign(t0).unwrap();
        assert_eq!(v.ending(), Some(Ending::Resigned(Color::Black)));
        assert_eq!(v.ending().unwrap().reason(), EndReason::Resigned);
    }
}
