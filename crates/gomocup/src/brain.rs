//! The brain's side of the protocol as a sans-IO state machine, in the
//! project's one shape: events in with the time
//! ([`BrainProtocol::handle`]), outputs polled
//! ([`BrainProtocol::poll_output`]), one deadline
//! ([`BrainProtocol::poll_timeout`], [`BrainProtocol::handle_timeout`]).
//!
//! The search runs elsewhere (the caller's thread): [`BrainOutput::Think`]
//! asks for it, [`BrainEvent::Moved`] reports its move (or
//! [`BrainEvent::Sent`], when the caller has sent it already from the
//! thread that found it, saving a hand-over). While it runs the
//! protocol still reads lines, so `END` exits and `STOP`/`YXSTOP` ask for
//! the best move now ([`BrainOutput::Stop`]); any other command waits until
//! the move has been sent, as it would with a brain that thinks on its
//! command loop. When the move's time is nearly up without an answer, the
//! timer asks for one at once ([`BrainOutput::TimeUp`]): the best move the
//! search has found so far, even if the search thread itself is still
//! waiting for a processor. No I/O and no clock here.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use renju::{Game, NUM_POINTS, Point, Rule};

use crate::{format_point, parse_point};

/// Commands kept while the brain thinks; more are refused, so that a
/// manager that floods a thinking brain cannot grow its memory.
pub const MAX_PENDING: usize = 256;

/// The longest time given to one move, whatever `INFO` says: longer
/// values are not a real limit, and would overflow the clock.
pub const MAX_TURN: Duration = Duration::from_secs(24 * 60 * 60);

/// The part of a move's time the timer keeps for answering when the
/// search has not: a tenth, at most 50 ms. (The engine plans to end well
/// before; see its safety margin.)
pub fn answer_reserve(budget: Duration) -> Duration {
    (budget / 10).min(Duration::from_millis(50))
}

/// The most search threads `INFO thread_num` can ask for; more are
/// capped (each thread costs memory and a manager's number is not checked).
pub const MAX_THREADS: usize = 256;

/// What the brain says about itself in answer to `ABOUT`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct About {
    /// Engine name.
    pub name: String,
    /// Engine version.
    pub version: String,
    /// Author.
    pub author: String,
    /// Country.
    pub country: String,
}

/// What happens to the brain.
#[derive(Clone, Copy, Debug)]
pub enum BrainEvent<'a> {
    /// A line from the manager.
    Line(&'a str),
    /// A line from the manager that could not be read; the text says why
    /// (too long, not UTF-8) and is sent back in an `ERROR`.
    Unreadable(&'a str),
    /// The search asked for by [`BrainOutput::Think`] chose this move.
    Moved(Point),
    /// The search asked for by [`BrainOutput::Think`] chose this move, and
    /// the caller has sent it to the manager already, from the thread that
    /// found it: on a loaded machine the hand-over to the thread that
    /// feeds this protocol can wait for a processor past the move's time.
    /// Recorded as [`BrainEvent::Moved`] is, without sending it again.
    Sent(Point),
    /// The search asked for by [`BrainOutput::Think`] found no move; the
    /// text says why.
    NoMove(&'a str),
}

/// What the caller must do.
#[derive(Clone, Debug)]
pub enum BrainOutput {
    /// Send this line to the manager.
    Send(String),
    /// Start choosing a move for the side to move in `game` within
    /// `budget`, and report it with [`BrainEvent::Moved`] (or send it and
    /// report [`BrainEvent::Sent`]); meanwhile keep
    /// feeding lines.
    Think {
        /// The position.
        game: Box<Game>,
        /// Time for this move.
        budget: Duration,
        /// When the move's time began: the arrival of the command that
        /// asked for it, which may have waited for the previous move.
        since: Instant,
    },
    /// End the search now with the best move found so far (still reported
    /// with [`BrainEvent::Moved`]).
    Stop,
    /// The move's time is nearly up (all but its [`answer_reserve`]) and
    /// the search has not answered: it is late, or its thread waits for a
    /// processor. End it, and report at once the best move it has found so
    /// far with [`BrainEvent::Moved`], without waiting for it; its own
    /// report comes later and is no longer this protocol's. A caller with
    /// no move at all may wait for the search, as after
    /// [`BrainOutput::Stop`].
    TimeUp,
    /// A new game starts under `rule`: forget what was learnt.
    NewGame(Rule),
    /// The manager limits memory to this many bytes.
    MaxMemory(u64),
    /// The manager asks for this many search threads (`INFO thread_num`,
    /// at least 1, at most [`MAX_THREADS`]), from the next move on.
    Threads(usize),
    /// The manager said `END`: exit (a search in progress was told to
    /// stop just before).
    Exit,
}

/// The time limits and settings the manager sent with `INFO`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Info {
    /// Time per move in milliseconds (0: play at once).
    pub timeout_turn: u64,
    /// Time for the whole game in milliseconds (0: no limit).
    pub timeout_match: u64,
    /// Time left in the game in milliseconds.
    pub time_left: Option<u64>,
    /// Memory limit in bytes (0: no limit).
    pub max_memory: u64,
    /// The rule in force.
    pub rule: Rule,
}

impl Default for Info {
    fn default() -> Self {
        Info {
            timeout_turn: 30_000,
            timeout_match: 0,
            time_left: None,
            max_memory: 0,
            rule: Rule::Renju,
        }
    }
}

impl Info {
    /// The time to spend on the next move, given how many stones are on
    /// the board: the turn limit, no more than a share of what is left of
    /// the match clock, and never more than [`MAX_TURN`].
    pub fn budget(&self, stones: usize) -> Duration {
        let mut ms = self.timeout_turn;
        if self.timeout_match > 0 {
            let left = self.time_left.unwrap_or(self.timeout_match);
            // Expect about 25 more moves of ours, fewer as the board fills.
            let moves_left = (50u64.saturating_sub(stones as u64 / 2)).max(10) / 2;
            ms = ms.min(left / moves_left.max(1));
        }
        Duration::from_millis(ms.max(1)).min(MAX_TURN)
    }
}

/// A command that arrived while the brain was thinking (a line with the
/// time it arrived: a `TURN`'s time runs from then).
#[derive(Debug)]
enum Pending {
    Line(String, Instant),
    Unreadable(String),
}

/// Where the protocol is, with the data of that state.
#[derive(Debug)]
enum State {
    /// No `START` yet.
    NoGame,
    /// A game is on and the brain is not thinking.
    Playing(Game),
    /// Between `BOARD` and `DONE`: the stones listed so far (point, field),
    /// and the game to keep if the list turns out wrong.
    Board {
        game: Game,
        stones: Vec<(Point, u8)>,
    },
    /// A search is running for `game`. `deadline` is when the timer asks
    /// for its move, `None` once it was told to stop; `pending` holds the
    /// commands to run after the move.
    Thinking {
        game: Game,
        deadline: Option<Instant>,
        pending: VecDeque<Pending>,
    },
    /// `END` was received: nothing more happens.
    Ended,
}

/// The brain's protocol state.
#[derive(Debug)]
pub struct BrainProtocol {
    about: About,
    info: Info,
    state: State,
    outputs: VecDeque<BrainOutput>,
}

impl BrainProtocol {
    /// A brain that introduces itself with `about`.
    pub fn new(about: About) -> BrainProtocol {
        BrainProtocol {
            about,
            info: Info::default(),
            state: State::NoGame,
            outputs: VecDeque::new(),
        }
    }

    /// The settings received so far.
    pub fn info(&self) -> &Info {
        &self.info
    }

    /// The current game, once started (during a search: the position
    /// being searched).
    pub fn game(&self) -> Option<&Game> {
        match &self.state {
            State::Playing(game) | State::Board { game, .. } | State::Thinking { game, .. } => {
                Some(game)
            }
            State::NoGame | State::Ended => None,
        }
    }

    /// Feeds one event at time `now`.
    pub fn handle(&mut self, event: BrainEvent<'_>, now: Instant) {
        match event {
            BrainEvent::Line(line) => self.line(line, now),
            BrainEvent::Unreadable(why) => self.unreadable(why),
            BrainEvent::Moved(p) => self.moved(Ok(p), false),
            BrainEvent::Sent(p) => self.moved(Ok(p), true),
            BrainEvent::NoMove(why) => self.moved(Err(why), false),
        }
    }

    /// The next thing to do, if any.
    pub fn poll_output(&mut self) -> Option<BrainOutput> {
        self.outputs.pop_front()
    }

    /// When [`BrainProtocol::handle_timeout`] is next due: the end of the
    /// current move's time.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match &self.state {
            State::Thinking { deadline, .. } => *deadline,
            _ => None,
        }
    }

    /// The timer: a search still running when its move's time is nearly
    /// up must answer now ([`BrainOutput::TimeUp`]).
    pub fn handle_timeout(&mut self, now: Instant) {
        if let State::Thinking { deadline, .. } = &mut self.state
            && deadline.is_some_and(|d| d <= now)
        {
            *deadline = None;
            self.outputs.push_back(BrainOutput::TimeUp);
        }
    }

    fn line(&mut self, line: &str, now: Instant) {
        let line = line.trim();
        if line.is_empty() {
            return;
        }
        let (cmd, rest) = match line.split_once(char::is_whitespace) {
            Some((c, r)) => (c.to_ascii_uppercase(), r.trim()),
            None => (line.to_ascii_uppercase(), ""),
        };
        match &mut self.state {
            State::Ended => return,
            State::Thinking {
                deadline, pending, ..
            } => {
                match cmd.as_str() {
                    "END" => self.end(),
                    "STOP" | "YXSTOP" => {
                        if deadline.take().is_some() {
                            self.outputs.push_back(BrainOutput::Stop);
                        }
                    }
                    _ if pending.len() >= MAX_PENDING => self.send(format!(
                        "ERROR more than {MAX_PENDING} commands while thinking: {cmd} dropped"
                    )),
                    _ => pending.push_back(Pending::Line(line.to_owned(), now)),
                }
                return;
            }
            State::Board { .. } => {
                match cmd.as_str() {
                    "END" => self.end(),
                    "DONE" => self.board_done(now),
                    _ => self.board_line(line),
                }
                return;
            }
            State::NoGame | State::Playing(_) => {}
        }
        match cmd.as_str() {
            "START" => self.start(rest.parse().ok().map(|n: usize| (n, n))),
            "RECTSTART" => {
                let size = rest
                    .split_once(',')
                    .and_then(|(w, h)| Some((w.trim().parse().ok()?, h.trim().parse().ok()?)));
                self.start(size)
            }
            "RESTART" => match self.state {
                State::Playing(_) => self.new_game(),
                _ => self.not_started(),
            },
            "INFO" => self.info_line(rest),
            "BEGIN" => match &self.state {
                State::Playing(g) if g.moves().is_empty() => self.think(now),
                State::Playing(_) => self.send("ERROR BEGIN on a board with stones".to_owned()),
                _ => self.not_started(),
            },
            "TURN" => self.turn(rest, now),
            "BOARD" => match std::mem::replace(&mut self.state, State::NoGame) {
                State::Playing(game) => {
                    self.state = State::Board {
                        game,
                        stones: Vec::new(),
                    }
                }
                other => {
                    self.state = other;
                    self.not_started();
                }
            },
            "TAKEBACK" => self.takeback(rest),
            "ABOUT" => {
                let a = &self.about;
                let about = format!(
                    "name=\"{}\", version=\"{}\", author=\"{}\", country=\"{}\"",
                    a.name, a.version, a.author, a.country
                );
                self.send(about);
            }
            "END" => self.end(),
            // Nothing to stop: the move was sent already.
            "STOP" | "YXSTOP" => {}
            _ => self.send(format!("UNKNOWN command {cmd}")),
        }
    }

    fn unreadable(&mut self, why: &str) {
        match &mut self.state {
            State::Ended => {}
            State::Thinking { pending, .. } if pending.len() < MAX_PENDING => {
                pending.push_back(Pending::Unreadable(why.to_owned()));
            }
            _ => self.send(format!("ERROR {why}")),
        }
    }

    /// The search's move (or why it has none), which the caller has `sent`
    /// already or not; then the commands that came meanwhile, each at the
    /// time it arrived.
    fn moved(&mut self, result: Result<Point, &str>, sent: bool) {
        let (mut game, pending) = match std::mem::replace(&mut self.state, State::NoGame) {
            State::Thinking { game, pending, .. } => (game, pending),
            other => {
                // A search that was given up on (after END).
                self.state = other;
                return;
            }
        };
        match result {
            Ok(p) => match game.play(p) {
                Ok(_) if sent => {}
                Ok(_) => self.send(format_point(p)),
                Err(e) => self.send(format!("ERROR own move {p} refused: {e}")),
            },
            Err(why) => self.answer_anyway(&game, why),
        }
        self.state = State::Playing(game);
        // Run what arrived meanwhile; a command that starts a new search
        // queues the rest again.
        for command in pending {
            match command {
                Pending::Line(line, arrived) => self.line(&line, arrived),
                Pending::Unreadable(why) => self.unreadable(&why),
            }
        }
    }

    /// Answers a turn the brain has no move for. A manager waits for a
    /// point and counts anything else as a loss on time, even where the
    /// rules call the game over (black left with only forbidden points: a
    /// draw under `rules.md`, a forbidden move to the manager). So the brain
    /// says why and answers a point: a legal one if there is one (the
    /// search failed), else any empty one.
    fn answer_anyway(&mut self, game: &Game, why: &str) {
        let point = game
            .legal_moves()
            .into_iter()
            .next()
            .or_else(|| Point::all().find(|&p| game.board().is_empty(p)));
        match point {
            Some(p) => {
                self.send(format!("MESSAGE {why}: answering {}", format_point(p)));
                self.send(format_point(p));
            }
            None => self.send(format!("ERROR {why}")),
        }
    }

    fn send(&mut self, line: String) {
        self.outputs.push_back(BrainOutput::Send(line));
    }

    fn not_started(&mut self) {
        self.send("ERROR no game: send START first".to_owned());
    }

    fn end(&mut self) {
        if let State::Thinking { .. } = self.state {
            self.outputs.push_back(BrainOutput::Stop);
        }
        self.state = State::Ended;
        self.outputs.push_back(BrainOutput::Exit);
    }

    fn new_game(&mut self) {
        self.state = State::Playing(Game::new(self.info.rule));
        self.outputs.push_back(BrainOutput::NewGame(self.info.rule));
        self.send("OK".to_owned());
    }

    fn start(&mut self, size: Option<(usize, usize)>) {
        match size {
            Some((15, 15)) => self.new_game(),
            Some((w, h)) => self.send(format!(
                "ERROR unsupported board size {w}x{h}: only 15x15 is played"
            )),
            None => self.send("ERROR expected a board size".to_owned()),
        }
    }

    fn info_line(&mut self, rest: &str) {
        let (key, value) = match rest.split_once(char::is_whitespace) {
            Some((k, v)) => (k.to_ascii_lowercase(), v.trim()),
            None => return,
        };
        // Negative or unreadable values are ignored: INFO has no reply.
        let n = value.parse::<u64>().ok();
        match (key.as_str(), n) {
            ("timeout_turn", Some(n)) => self.info.timeout_turn = n,
            ("timeout_match", Some(n)) => self.info.timeout_match = n,
            ("time_left", Some(n)) => self.info.time_left = Some(n),
            ("max_memory", Some(n)) => {
                self.info.max_memory = n;
                self.outputs.push_back(BrainOutput::MaxMemory(n));
            }
            // 0 would be no thread at all: ignored like a bad value.
            ("thread_num", Some(n)) if n > 0 => {
                let n = usize::try_from(n).unwrap_or(usize::MAX).min(MAX_THREADS);
                self.outputs.push_back(BrainOutput::Threads(n));
            }
            ("rule", Some(n)) => {
                let Some(rule) = u32::try_from(n).ok().and_then(Rule::from_gomocup_code) else {
                    self.send(format!(
                        "ERROR unsupported rule {n} (0 freestyle, 1 standard, 4 renju)"
                    ));
                    return;
                };
                if rule != self.info.rule {
                    self.info.rule = rule;
                    // A rule change applies to the game in progress only if
                    // it has not started; otherwise from the next game.
                    if let State::Playing(g) = &self.state
                        && g.moves().is_empty()
                    {
                        self.state = State::Playing(Game::new(rule));
                        self.outputs.push_back(BrainOutput::NewGame(rule));
                    }
                }
            }
            _ => {}
        }
    }

    fn turn(&mut self, rest: &str, now: Instant) {
        let State::Playing(game) = &mut self.state else {
            return self.not_started();
        };
        let Some(p) = parse_point(rest) else {
            return self.send(format!("ERROR bad coordinates {rest:?}"));
        };
        if let Err(e) = game.play(p) {
            return self.send(format!("ERROR move {rest} refused: {e}"));
        }
        if game.result().is_some() {
            let game = game.clone();
            return self.answer_anyway(&game, "the game is over");
        }
        self.think(now);
    }

    fn takeback(&mut self, rest: &str) {
        let State::Playing(game) = &mut self.state else {
            return self.not_started();
        };
        match parse_point(rest) {
            Some(p) if game.last_move() == Some(p) => {
                game.undo();
                self.send("OK".to_owned());
            }
            _ => self.send(format!("ERROR cannot take back {rest:?}")),
        }
    }

    fn board_line(&mut self, line: &str) {
        let State::Board { stones, .. } = &mut self.state else {
            return;
        };
        let stone = line
            .rsplit_once(',')
            .and_then(|(xy, field)| Some((parse_point(xy)?, field.trim().parse::<u8>().ok()?)));
        match stone {
            Some((p, field @ 1..=3)) if stones.len() < NUM_POINTS => stones.push((p, field)),
            Some(_) if stones.len() >= NUM_POINTS => {
                self.send(format!("ERROR BOARD lists more than {NUM_POINTS} stones"));
            }
            _ => self.send(format!("ERROR bad BOARD line {line:?}")),
        }
    }

    fn board_done(&mut self, now: Instant) {
        let State::Board { game, stones } = std::mem::replace(&mut self.state, State::NoGame)
        else {
            return;
        };
        match self.rebuild(&stones) {
            Ok(rebuilt) => {
                if rebuilt.result().is_some() {
                    self.answer_anyway(&rebuilt, "the game is over");
                    self.state = State::Playing(rebuilt);
                } else {
                    self.state = State::Playing(rebuilt);
                    self.think(now);
                }
            }
            Err(e) => {
                self.state = State::Playing(game);
                self.send(format!("ERROR {e}"));
            }
        }
    }

    /// The game behind a `BOARD` list. Stones come in the order played,
    /// field 1 ours and 2 the opponent's (3, a continuous game's stone, is
    /// counted as the opponent's). Black is the side with more stones, or
    /// we are when the counts are equal (it is our turn).
    fn rebuild(&self, stones: &[(Point, u8)]) -> Result<Game, String> {
        let own: Vec<Point> = stones.iter().filter(|s| s.1 == 1).map(|s| s.0).collect();
        let opp: Vec<Point> = stones.iter().filter(|s| s.1 != 1).map(|s| s.0).collect();
        let (black, white) = match own.len() as isize - opp.len() as isize {
            0 => (own, opp),
            -1 => (opp, own),
            _ => {
                return Err(format!(
                    "{} own and {} opponent stones",
                    own.len(),
                    opp.len()
                ));
            }
        };
        let mut moves = Vec::with_capacity(stones.len());
        for (i, &b) in black.iter().enumerate() {
            moves.push(b);
            if let Some(&w) = white.get(i) {
                moves.push(w);
            }
        }
        let game = Game::from_moves(self.info.rule, moves.iter().copied());
        if let Ok(g) = game {
            return Ok(g);
        }
        // The interleaving may order black's stones differently from the
        // real game; try the listed order before giving up.
        let listed = stones.iter().map(|s| s.0);
        Game::from_moves(self.info.rule, listed)
            .ok()
            .filter(|g| {
                g.moves()
                    .iter()
                    .enumerate()
                    .all(|(i, p)| black.contains(p) == (i % 2 == 0))
            })
            .ok_or_else(|| "the BOARD position is not legal".to_owned())
    }

    /// Starts a search for the game in [`State::Playing`].
    fn think(&mut self, now: Instant) {
        let game = match std::mem::replace(&mut self.state, State::NoGame) {
            State::Playing(game) => game,
            other => {
                self.state = other;
                return;
            }
        };
        let budget = self.info.budget(game.moves().len());
        self.outputs.push_back(BrainOutput::Think {
            game: Box::new(game.clone()),
            budget,
            since: now,
        });
        self.state = State::Thinking {
            game,
            deadline: now.checked_add(budget - answer_reserve(budget)),
            pending: VecDeque::new(),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use renju::Color;

    /// A brain under test, on a simulated clock.
    struct Brain {
        protocol: BrainProtocol,
        now: Instant,
    }

    impl Brain {
        fn new() -> Brain {
            Brain {
                protocol: BrainProtocol::new(About {
                    name: "t".into(),
                    version: "1".into(),
                    author: "a".into(),
                    country: "KR".into(),
                }),
                now: Instant::now(),
            }
        }

        fn event(&mut self, event: BrainEvent<'_>) -> Vec<BrainOutput> {
            self.protocol.handle(event, self.now);
            std::iter::from_fn(|| self.protocol.poll_output()).collect()
        }

        fn line(&mut self, line: &str) -> Vec<BrainOutput> {
            self.event(BrainEvent::Line(line))
        }

        /// Moves the clock on, running the timer when it is due.
        fn advance(&mut self, by: Duration) -> Vec<BrainOutput> {
            self.now += by;
            if self.protocol.poll_timeout().is_some_and(|t| t <= self.now) {
                self.protocol.handle_timeout(self.now);
            }
            std::iter::from_fn(|| self.protocol.poll_output()).collect()
        }
    }

    fn sent(outputs: &[BrainOutput]) -> Vec<String> {
        outputs
            .iter()
            .filter_map(|a| match a {
                BrainOutput::Send(s) => Some(s.clone()),
                _ => None,
            })
            .collect()
    }

    fn think(outputs: &[BrainOutput]) -> (Game, Duration) {
        outputs
            .iter()
            .find_map(|a| match a {
                BrainOutput::Think { game, budget, .. } => Some((game.as_ref().clone(), *budget)),
                _ => None,
            })
            .expect("a Think output")
    }

    fn stops(outputs: &[BrainOutput]) -> usize {
        outputs
            .iter()
            .filter(|a| matches!(a, BrainOutput::Stop))
            .count()
    }

    #[test]
    fn start_sizes() {
        let mut b = Brain::new();
        assert_eq!(sent(&b.line("START 15")), ["OK"]);
        assert!(sent(&b.line("START 20"))[0].starts_with("ERROR"));
        assert_eq!(sent(&b.line("RECTSTART 15,15")), ["OK"]);
        assert!(sent(&b.line("RECTSTART 20,15"))[0].starts_with("ERROR"));
        assert!(sent(&b.line("START x"))[0].starts_with("ERROR"));
    }

    #[test]
    fn a_move_the_caller_sent_is_recorded_without_a_second_line() {
        let mut b = Brain::new();
        b.line("START 15");
        b.line("BEGIN");
        // A command that came during the search runs after the move.
        assert!(b.line("ABOUT").is_empty());
        let out = sent(&b.event(BrainEvent::Sent(Point::CENTER)));
        assert_eq!(out.len(), 1, "{out:?}");
        assert!(out[0].starts_with("name="), "{out:?}");
        let (g, _) = think(&b.line("TURN 8,8"));
        assert_eq!(g.moves(), [Point::CENTER, Point::new(8, 8).unwrap()]);
        assert!(
            b.event(BrainEvent::Sent(Point::new(0, 0).unwrap()))
                .is_empty()
        );
        // Not thinking: a late report changes nothing.
        assert!(
            b.event(BrainEvent::Sent(Point::new(1, 1).unwrap()))
                .is_empty()
        );
        assert_eq!(b.protocol.game().map(|g| g.moves().len()), Some(3));
    }

    #[test]
    fn a_turn_that_came_during_the_search_keeps_its_arrival_time() {
        let ms = Duration::from_millis;
        let mut b = Brain::new();
        b.line("START 15");
        b.line("INFO timeout_turn 1000");
        think(&b.line("BEGIN"));
        // The caller sent the move before telling the protocol, and the
        // manager's next TURN came first.
        b.now += ms(5);
        let arrived = b.now;
        assert!(b.line("TURN 8,8").is_empty());
        b.now += ms(300);
        let out = b.event(BrainEvent::Sent(Point::CENTER));
        let since = out.iter().find_map(|o| match o {
            BrainOutput::Think { since, .. } => Some(*since),
            _ => None,
        });
        assert_eq!(since, Some(arrived));
        assert_eq!(b.protocol.poll_timeout(), Some(arrived + ms(950)));
    }

    #[test]
    fn begin_turn_and_moves() {
        let mut b = Brain::new();
        b.line("START 15");
        b.line("INFO timeout_turn 1000");
        let (g, budget) = think(&b.line("BEGIN"));
        assert!(g.moves().is_empty());
        assert_eq!(budget, Duration::from_millis(1000));
        assert_eq!(sent(&b.event(BrainEvent::Moved(Point::CENTER))), ["7,7"]);
        let (g, _) = think(&b.line("TURN 8,8"));
        assert_eq!(g.moves().len(), 2);
        assert_eq!(g.side_to_move(), Color::Black);
        b.event(BrainEvent::Moved(Point::new(0, 0).unwrap()));
        // An occupied point is refused.
        assert!(sent(&b.line("TURN 8,8"))[0].starts_with("ERROR"));
        assert!(sent(&b.line("TURN 99,1"))[0].starts_with("ERROR"));
        // So is a move the search got wrong, and the brain stays usable.
        b.line("TURN 9,9");
        let out = b.event(BrainEvent::Moved(Point::CENTER));
        assert!(sent(&out)[0].starts_with("ERROR own move"), "{out:?}");
        // Without a move from the search the brain still answers a legal
        // point: a manager would count silence as a loss on time.
        b.line("TURN 10,10");
        let out = b.event(BrainEvent::NoMove("the search failed"));
        let out = sent(&out);
        assert!(out[0].starts_with("MESSAGE the search failed"), "{out:?}");
        assert_eq!(out[1], "1,0");
    }

    /// Game 20 of session 6's fixed-time self-play (renju): after 224
    /// stones black's only empty point, 2,5, is forbidden. The brain used to
    /// answer `ERROR` and the manager scored it a loss on time; now it says
    /// why and answers the point (a forbidden move to the manager).
    #[test]
    fn answers_a_point_when_black_has_only_forbidden_points() {
        const STONES: &str = concat!(
            "7,7 7,6 7,8 6,7 8,7 9,6 8,5 8,6 6,6 8,8 9,7 10,7 10,6 7,5 11,5 11,8 9,5 12,8 10,4 ",
            "12,9 13,10 12,6 12,5 10,5 10,8 13,3 7,3 8,4 9,3 12,7 12,10 10,9 11,9 13,11 9,10 11,6 ",
            "9,4 9,2 9,11 13,6 14,5 9,9 7,9 7,10 10,3 8,3 8,9 13,8 14,9 10,11 11,10 10,10 10,12 ",
            "11,11 12,12 8,10 11,12 9,12 10,1 8,2 11,2 12,1 11,3 11,4 10,2 10,0 12,2 13,1 13,2 ",
            "14,2 8,0 10,13 6,9 13,7 5,10 4,11 13,4 12,3 14,11 14,7 11,7 14,12 4,9 5,9 6,11 7,12 ",
            "7,11 8,11 11,14 12,4 3,10 3,8 6,10 6,12 8,12 9,13 2,11 1,12 4,10 2,10 12,13 5,6 5,5 ",
            "4,8 12,14 12,11 10,14 9,14 6,5 2,8 1,8 2,6 2,7 3,7 1,5 3,9 1,11 4,4 3,5 6,4 4,5 5,4 ",
            "7,4 1,9 3,4 4,12 3,11 7,13 8,13 4,6 0,10 3,6 1,6 1,4 4,7 7,2 3,12 5,2 6,2 3,13 4,2 ",
            "3,3 0,9 4,13 5,13 0,7 0,11 0,12 8,1 2,3 13,5 4,3 1,3 2,2 2,4 1,13 5,3 13,14 3,2 5,14 ",
            "5,8 0,4 1,1 6,14 0,13 0,0 7,14 7,1 0,1 3,1 7,0 2,0 0,5 5,0 14,1 2,1 6,1 9,0 13,0 ",
            "11,0 3,0 1,0 2,14 12,0 6,0 1,14 4,0 14,0 4,1 5,1 9,1 11,1 0,2 1,2 0,3 6,3 14,3 14,4 ",
            "0,6 14,6 1,7 5,7 0,8 6,8 9,8 14,8 2,9 13,9 1,10 14,10 5,11 2,12 5,12 13,12 2,13 6,13 ",
            "11,13 13,13 14,13 0,14 3,14 4,14 8,14 14,14",
        );
        let mut b = Brain::new();
        b.line("INFO rule 4");
        b.line("START 15");
        b.line("BOARD");
        // Stones alternate from black, and black is to move: ours first.
        for (i, p) in STONES.split(' ').enumerate() {
            assert!(b.line(&format!("{p},{}", 1 + i % 2)).is_empty());
        }
        let out = b.line("DONE");
        let out = sent(&out);
        assert!(out[0].starts_with("MESSAGE the game is over"), "{out:?}");
        assert_eq!(out[1], "2,5");
    }

    #[test]
    fn board_rebuilds_the_game() {
        let mut b = Brain::new();
        b.line("INFO rule 4");
        b.line("START 15");
        assert!(b.line("BOARD").is_empty());
        for l in ["7,7,2", "8,8,1", "6,6,2"] {
            assert!(b.line(l).is_empty());
        }
        let (g, _) = think(&b.line("DONE"));
        assert_eq!(g.moves().len(), 3);
        assert_eq!(g.side_to_move(), Color::White);
        assert_eq!(g.rule(), Rule::Renju);
        assert_eq!(g.board().get(Point::new(8, 8).unwrap()), Some(Color::White));
        b.event(BrainEvent::Moved(Point::new(1, 1).unwrap()));
        // An impossible count of stones is an error, and the game is kept.
        b.line("BOARD");
        b.line("1,1,1");
        b.line("2,2,1");
        assert!(sent(&b.line("DONE"))[0].starts_with("ERROR"));
        assert_eq!(b.protocol.game().unwrap().moves().len(), 4);
    }

    #[test]
    fn board_lists_are_bounded() {
        let mut b = Brain::new();
        b.line("START 15");
        b.line("BOARD");
        for p in Point::all() {
            assert!(b.line(&format!("{},{},2", p.x(), p.y())).is_empty());
        }
        let out = b.line("0,0,1");
        assert!(sent(&out)[0].contains("more than 225 stones"), "{out:?}");
        assert!(sent(&b.line("DONE"))[0].starts_with("ERROR"));
    }

    #[test]
    fn info_rules_memory_and_budget() {
        let mut b = Brain::new();
        b.line("START 15");
        for (code, rule) in [
            (0, Rule::Freestyle),
            (1, Rule::Standard),
            (2, Rule::Renju),
            (4, Rule::Renju),
        ] {
            let a = b.line(&format!("INFO rule {code}"));
            assert_eq!(b.protocol.info().rule, rule);
            assert!(sent(&a).is_empty());
        }
        assert!(sent(&b.line("INFO rule 9"))[0].starts_with("ERROR"));
        assert!(matches!(
            b.line("INFO max_memory 83886080")[..],
            [BrainOutput::MaxMemory(83_886_080)]
        ));
        // c-gomoku-cli's `-each thread=N`; nonsense is ignored, excess capped.
        assert!(matches!(
            b.line("INFO thread_num 2")[..],
            [BrainOutput::Threads(2)]
        ));
        assert!(matches!(
            b.line("INFO THREAD_NUM 100000000000")[..],
            [BrainOutput::Threads(MAX_THREADS)]
        ));
        for bad in ["0", "-2", "two", ""] {
            assert!(
                b.line(&format!("INFO thread_num {bad}")).is_empty(),
                "{bad}"
            );
        }
        b.line("INFO timeout_turn 5000");
        b.line("INFO timeout_match 100000");
        b.line("INFO time_left 20000");
        b.line("INFO game_type 1");
        b.line("INFO folder /tmp");
        let info = b.protocol.info();
        assert_eq!(info.budget(0), Duration::from_millis(800));
        b.line("INFO time_left 900000");
        assert_eq!(b.protocol.info().budget(0), Duration::from_millis(5000));
        // A limit beyond any real one is capped, not overflowed.
        b.line("INFO timeout_match 0");
        b.line(&format!("INFO timeout_turn {}", u64::MAX));
        let (_, budget) = think(&b.line("BEGIN"));
        assert_eq!(budget, MAX_TURN);
    }

    #[test]
    fn about_takeback_end_and_unknown() {
        let mut b = Brain::new();
        assert_eq!(
            sent(&b.line("ABOUT")),
            ["name=\"t\", version=\"1\", author=\"a\", country=\"KR\""]
        );
        b.line("START 15");
        b.line("TURN 7,7");
        b.event(BrainEvent::Moved(Point::new(8, 8).unwrap()));
        assert!(sent(&b.line("TAKEBACK 7,7"))[0].starts_with("ERROR"));
        assert_eq!(sent(&b.line("TAKEBACK 8,8")), ["OK"]);
        assert_eq!(sent(&b.line("TAKEBACK 7,7")), ["OK"]);
        assert!(b.protocol.game().unwrap().moves().is_empty());
        assert!(sent(&b.line("FOO"))[0].starts_with("UNKNOWN"));
        // STOP with nothing to stop says nothing.
        assert!(b.line("STOP").is_empty());
        assert!(matches!(b.line("END")[..], [BrainOutput::Exit]));
        assert!(b.line("ABOUT").is_empty(), "nothing after END");
    }

    #[test]
    fn restart_clears_the_board() {
        let mut b = Brain::new();
        assert!(sent(&b.line("RESTART"))[0].starts_with("ERROR"));
        b.line("START 15");
        b.line("TURN 7,7");
        b.event(BrainEvent::Moved(Point::new(8, 8).unwrap()));
        let a = b.line("RESTART");
        assert_eq!(sent(&a), ["OK"]);
        assert!(b.protocol.game().unwrap().moves().is_empty());
    }

    /// A brain thinking about its reply to 7,7 with 30 s for it.
    fn thinking() -> Brain {
        let mut b = Brain::new();
        b.line("START 15");
        b.line("INFO timeout_turn 30000");
        think(&b.line("TURN 7,7"));
        b
    }

    #[test]
    fn end_while_thinking_stops_and_exits_at_once() {
        let mut b = thinking();
        assert!(b.advance(Duration::from_secs(2)).is_empty());
        assert!(matches!(
            b.line("END")[..],
            [BrainOutput::Stop, BrainOutput::Exit]
        ));
        // The abandoned search's move is not sent.
        assert!(b.event(BrainEvent::Moved(Point::CENTER)).is_empty());
        assert_eq!(b.protocol.poll_timeout(), None);
    }

    #[test]
    fn stop_asks_for_the_move_now() {
        let mut b = thinking();
        assert_eq!(stops(&b.line("YXSTOP")), 1);
        // Asked once only, and the timer has nothing left to do.
        assert!(b.line("STOP").is_empty());
        assert_eq!(b.protocol.poll_timeout(), None);
        let p = Point::new(7, 8).unwrap();
        assert_eq!(sent(&b.event(BrainEvent::Moved(p))), ["7,8"]);
    }

    #[test]
    fn the_timer_asks_a_late_search_for_its_move_before_the_time_is_up() {
        let ms = Duration::from_millis;
        for (turn, asked) in [(1000, 950), (200, 180), (15_000, 14_950)] {
            let mut b = Brain::new();
            b.line("START 15");
            b.line(&format!("INFO timeout_turn {turn}"));
            assert_eq!(think(&b.line("BEGIN")).1, ms(turn));
            assert_eq!(b.protocol.poll_timeout(), Some(b.now + ms(asked)));
            assert!(b.advance(ms(asked - 1)).is_empty());
            let time_up = b.advance(ms(1));
            assert!(matches!(time_up[..], [BrainOutput::TimeUp]), "{time_up:?}");
            assert_eq!(b.protocol.poll_timeout(), None);
            assert!(b.advance(Duration::from_secs(5)).is_empty());
            assert_eq!(sent(&b.event(BrainEvent::Moved(Point::CENTER))), ["7,7"]);
        }
    }

    #[test]
    fn commands_wait_for_the_move() {
        let mut b = Brain::new();
        b.line("START 15");
        think(&b.line("BEGIN"));
        assert!(b.line("ABOUT").is_empty());
        assert!(b.event(BrainEvent::Unreadable("not UTF-8")).is_empty());
        assert!(b.line("TURN 8,8").is_empty());
        assert!(b.line("ABOUT").is_empty());
        let out = b.event(BrainEvent::Moved(Point::CENTER));
        // The move, then what waited, in order, up to the next search.
        let lines = sent(&out);
        assert_eq!(lines.len(), 3, "{out:?}");
        assert_eq!(lines[0], "7,7");
        assert!(lines[1].starts_with("name="));
        assert_eq!(lines[2], "ERROR not UTF-8");
        assert_eq!(think(&out).0.moves().len(), 2);
        let out = b.event(BrainEvent::Moved(Point::new(0, 0).unwrap()));
        assert_eq!(sent(&out)[0], "0,0");
        assert!(sent(&out)[1].starts_with("name="));
    }

    #[test]
    fn a_flood_while_thinking_is_bounded() {
        let mut b = Brain::new();
        b.line("START 15");
        think(&b.line("BEGIN"));
        for _ in 0..MAX_PENDING {
            assert!(b.line("ABOUT").is_empty());
        }
        assert!(sent(&b.line("ABOUT"))[0].contains("dropped"));
        let out = b.event(BrainEvent::Moved(Point::CENTER));
        assert_eq!(sent(&out).len(), 1 + MAX_PENDING);
    }

    #[test]
    fn unreadable_lines_get_an_error() {
        let mut b = Brain::new();
        let out = b.event(BrainEvent::Unreadable("line longer than 64 KiB"));
        assert_eq!(sent(&out), ["ERROR line longer than 64 KiB"]);
        assert_eq!(sent(&b.line("START 15")), ["OK"]);
    }
}
