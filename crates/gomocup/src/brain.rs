//! The brain's side of the protocol as a sans-IO state machine.
//!
//! [`BrainProtocol::handle`] takes one line from the manager and returns
//! what to do: lines to send, or a position to think about
//! ([`Action::Think`]). When the engine has chosen, the caller reports the
//! move with [`BrainProtocol::played`], which records it and returns the
//! `x,y` line. No I/O and no clock here: the caller owns both.

use std::time::Duration;

use renju::{Game, Point, Rule};

use crate::{format_point, parse_point};

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

/// What the caller must do after a line.
#[derive(Clone, Debug)]
pub enum Action {
    /// Send this line to the manager.
    Send(String),
    /// Choose a move for the side to move in `game` within `budget`, then
    /// call [`BrainProtocol::played`].
    Think {
        /// The position.
        game: Box<Game>,
        /// Time for this move.
        budget: Duration,
    },
    /// A new game starts under `rule`: forget what was learnt.
    NewGame(Rule),
    /// The manager limits memory to this many bytes.
    MaxMemory(u64),
    /// The manager said `END`: exit.
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
    /// the board: the turn limit, and no more than a share of what is left
    /// of the match clock.
    pub fn budget(&self, stones: usize) -> Duration {
        let mut ms = self.timeout_turn;
        if self.timeout_match > 0 {
            let left = self.time_left.unwrap_or(self.timeout_match);
            // Expect about 25 more moves of ours, fewer as the board fills.
            let moves_left = (50u64.saturating_sub(stones as u64 / 2)).max(10) / 2;
            ms = ms.min(left / moves_left.max(1));
        }
        Duration::from_millis(ms.max(1))
    }
}

/// The brain's protocol state.
#[derive(Debug)]
pub struct BrainProtocol {
    about: About,
    info: Info,
    game: Option<Game>,
    /// Stones collected between `BOARD` and `DONE`: (point, field).
    board: Option<Vec<(Point, u8)>>,
}

impl BrainProtocol {
    /// A brain that introduces itself with `about`.
    pub fn new(about: About) -> BrainProtocol {
        BrainProtocol {
            about,
            info: Info::default(),
            game: None,
            board: None,
        }
    }

    /// The settings received so far.
    pub fn info(&self) -> &Info {
        &self.info
    }

    /// The current game, once started.
    pub fn game(&self) -> Option<&Game> {
        self.game.as_ref()
    }

    /// Handles one line from the manager.
    pub fn handle(&mut self, line: &str) -> Vec<Action> {
        let line = line.trim();
        if line.is_empty() {
            return Vec::new();
        }
        if self.board.is_some() {
            return self.board_line(line);
        }
        let (cmd, rest) = match line.split_once(char::is_whitespace) {
            Some((c, r)) => (c, r.trim()),
            None => (line, ""),
        };
        match cmd.to_ascii_uppercase().as_str() {
            "START" => self.start(rest.trim().parse().ok().map(|n: usize| (n, n))),
            "RECTSTART" => {
                let size = rest
                    .split_once(',')
                    .and_then(|(w, h)| Some((w.trim().parse().ok()?, h.trim().parse().ok()?)));
                self.start(size)
            }
            "RESTART" => {
                self.game = Some(Game::new(self.info.rule));
                vec![Action::NewGame(self.info.rule), send("OK")]
            }
            "INFO" => self.info_line(rest),
            "BEGIN" => match &self.game {
                Some(g) if g.moves().is_empty() => self.think(),
                Some(_) => vec![send("ERROR BEGIN on a board with stones")],
                None => not_started(),
            },
            "TURN" => self.turn(rest),
            "BOARD" => {
                if self.game.is_none() {
                    return not_started();
                }
                self.board = Some(Vec::new());
                Vec::new()
            }
            "TAKEBACK" => self.takeback(rest),
            "ABOUT" => {
                let a = &self.about;
                vec![Action::Send(format!(
                    "name=\"{}\", version=\"{}\", author=\"{}\", country=\"{}\"",
                    a.name, a.version, a.author, a.country
                ))]
            }
            "END" => vec![Action::Exit],
            _ => vec![Action::Send(format!("UNKNOWN command {cmd}"))],
        }
    }

    /// Records the engine's move and returns the line to send.
    pub fn played(&mut self, p: Point) -> Vec<Action> {
        if let Some(g) = &mut self.game {
            if let Err(e) = g.play(p) {
                return vec![Action::Send(format!("ERROR own move {p} refused: {e}"))];
            }
        }
        vec![Action::Send(format_point(p))]
    }

    fn start(&mut self, size: Option<(usize, usize)>) -> Vec<Action> {
        match size {
            Some((15, 15)) => {
                self.game = Some(Game::new(self.info.rule));
                vec![Action::NewGame(self.info.rule), send("OK")]
            }
            Some((w, h)) => vec![Action::Send(format!(
                "ERROR unsupported board size {w}x{h}: only 15x15 is played"
            ))],
            None => vec![send("ERROR expected a board size")],
        }
    }

    fn info_line(&mut self, rest: &str) -> Vec<Action> {
        let (key, value) = match rest.split_once(char::is_whitespace) {
            Some((k, v)) => (k.to_ascii_lowercase(), v.trim()),
            None => return Vec::new(),
        };
        let number = value.parse::<i64>().ok();
        // Negative or unreadable values are ignored: INFO has no reply.
        let n = number.and_then(|n| u64::try_from(n).ok());
        match (key.as_str(), n) {
            ("timeout_turn", Some(n)) => self.info.timeout_turn = n,
            ("timeout_match", Some(n)) => self.info.timeout_match = n,
            ("time_left", Some(n)) => self.info.time_left = Some(n),
            ("max_memory", Some(n)) => {
                self.info.max_memory = n;
                return vec![Action::MaxMemory(n)];
            }
            ("rule", Some(n)) => {
                let rule = u32::try_from(n).ok().and_then(Rule::from_gomocup_code);
                let Some(rule) = rule else {
                    return vec![Action::Send(format!(
                        "ERROR unsupported rule {n} (0 freestyle, 1 standard, 4 renju)"
                    ))];
                };
                if rule != self.info.rule {
                    self.info.rule = rule;
                    // A rule change applies to the game in progress only if
                    // it has not started; otherwise from the next game.
                    if self.game.as_ref().is_some_and(|g| g.moves().is_empty()) {
                        self.game = Some(Game::new(rule));
                        return vec![Action::NewGame(rule)];
                    }
                }
            }
            _ => {}
        }
        Vec::new()
    }

    fn turn(&mut self, rest: &str) -> Vec<Action> {
        let Some(game) = &mut self.game else {
            return not_started();
        };
        let Some(p) = parse_point(rest) else {
            return vec![Action::Send(format!("ERROR bad coordinates {rest:?}"))];
        };
        if let Err(e) = game.play(p) {
            return vec![Action::Send(format!(
                "ERROR move {} refused: {e}",
                rest.trim()
            ))];
        }
        if game.result().is_some() {
            return vec![send("ERROR the game is over")];
        }
        self.think()
    }

    fn takeback(&mut self, rest: &str) -> Vec<Action> {
        let Some(game) = &mut self.game else {
            return not_started();
        };
        match parse_point(rest) {
            Some(p) if game.last_move() == Some(p) => {
                game.undo();
                vec![send("OK")]
            }
            _ => vec![Action::Send(format!(
                "ERROR cannot take back {:?}",
                rest.trim()
            ))],
        }
    }

    fn board_line(&mut self, line: &str) -> Vec<Action> {
        if line.eq_ignore_ascii_case("DONE") {
            let stones = self.board.take().unwrap_or_default();
            return match self.rebuild(&stones) {
                Ok(game) => {
                    let over = game.result().is_some();
                    self.game = Some(game);
                    if over {
                        vec![send("ERROR the game is over")]
                    } else {
                        self.think()
                    }
                }
                Err(e) => vec![Action::Send(format!("ERROR {e}"))],
            };
        }
        let stone = line
            .rsplit_once(',')
            .and_then(|(xy, field)| Some((parse_point(xy)?, field.trim().parse::<u8>().ok()?)));
        match stone {
            Some((p, field @ 1..=3)) => {
                if let Some(b) = &mut self.board {
                    b.push((p, field));
                }
                Vec::new()
            }
            _ => vec![Action::Send(format!("ERROR bad BOARD line {line:?}"))],
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

    fn think(&self) -> Vec<Action> {
        let Some(game) = &self.game else {
            return not_started();
        };
        let budget = self.info.budget(game.moves().len());
        vec![Action::Think {
            game: Box::new(game.clone()),
            budget,
        }]
    }
}

fn send(s: &str) -> Action {
    Action::Send(s.to_owned())
}

fn not_started() -> Vec<Action> {
    vec![send("ERROR no game: send START first")]
}

#[cfg(test)]
mod tests {
    use super::*;
    use renju::Color;

    fn brain() -> BrainProtocol {
        BrainProtocol::new(About {
            name: "t".into(),
            version: "1".into(),
            author: "a".into(),
            country: "KR".into(),
        })
    }

    fn sent(actions: &[Action]) -> Vec<String> {
        actions
            .iter()
            .filter_map(|a| match a {
                Action::Send(s) => Some(s.clone()),
                _ => None,
            })
            .collect()
    }

    fn think(actions: &[Action]) -> (Game, Duration) {
        actions
            .iter()
            .find_map(|a| match a {
                Action::Think { game, budget } => Some((game.as_ref().clone(), *budget)),
                _ => None,
            })
            .expect("a Think action")
    }

    #[test]
    fn start_sizes() {
        let mut b = brain();
        assert_eq!(sent(&b.handle("START 15")), ["OK"]);
        assert!(sent(&b.handle("START 20"))[0].starts_with("ERROR"));
        assert_eq!(sent(&b.handle("RECTSTART 15,15")), ["OK"]);
        assert!(sent(&b.handle("RECTSTART 20,15"))[0].starts_with("ERROR"));
        assert!(sent(&b.handle("START x"))[0].starts_with("ERROR"));
    }

    #[test]
    fn begin_turn_and_moves() {
        let mut b = brain();
        b.handle("START 15");
        b.handle("INFO timeout_turn 1000");
        let (g, budget) = think(&b.handle("BEGIN"));
        assert!(g.moves().is_empty());
        assert_eq!(budget, Duration::from_millis(1000));
        assert_eq!(sent(&b.played(Point::CENTER)), ["7,7"]);
        let (g, _) = think(&b.handle("TURN 8,8"));
        assert_eq!(g.moves().len(), 2);
        assert_eq!(g.side_to_move(), Color::Black);
        // An occupied point is refused.
        assert!(sent(&b.handle("TURN 8,8"))[0].starts_with("ERROR"));
        assert!(sent(&b.handle("TURN 99,1"))[0].starts_with("ERROR"));
    }

    #[test]
    fn board_rebuilds_the_game() {
        let mut b = brain();
        b.handle("INFO rule 4");
        b.handle("START 15");
        assert!(b.handle("BOARD").is_empty());
        for l in ["7,7,2", "8,8,1", "6,6,2"] {
            assert!(b.handle(l).is_empty());
        }
        let (g, _) = think(&b.handle("DONE"));
        assert_eq!(g.moves().len(), 3);
        assert_eq!(g.side_to_move(), Color::White);
        assert_eq!(g.rule(), Rule::Renju);
        assert_eq!(g.board().get(Point::new(8, 8).unwrap()), Some(Color::White));
        // An impossible count of stones is an error.
        b.handle("BOARD");
        b.handle("1,1,1");
        b.handle("2,2,1");
        assert!(sent(&b.handle("DONE"))[0].starts_with("ERROR"));
    }

    #[test]
    fn info_rules_memory_and_budget() {
        let mut b = brain();
        b.handle("START 15");
        for (code, rule) in [
            (0, Rule::Freestyle),
            (1, Rule::Standard),
            (2, Rule::Renju),
            (4, Rule::Renju),
        ] {
            let a = b.handle(&format!("INFO rule {code}"));
            assert_eq!(b.info().rule, rule);
            assert!(sent(&a).is_empty());
        }
        assert!(sent(&b.handle("INFO rule 9"))[0].starts_with("ERROR"));
        assert!(matches!(
            b.handle("INFO max_memory 83886080")[..],
            [Action::MaxMemory(83_886_080)]
        ));
        b.handle("INFO timeout_turn 5000");
        b.handle("INFO timeout_match 100000");
        b.handle("INFO time_left 20000");
        b.handle("INFO game_type 1");
        b.handle("INFO folder /tmp");
        assert_eq!(b.info().budget(0), Duration::from_millis(800));
        b.handle("INFO time_left 900000");
        assert_eq!(b.info().budget(0), Duration::from_millis(5000));
    }

    #[test]
    fn about_takeback_end_and_unknown() {
        let mut b = brain();
        assert_eq!(
            sent(&b.handle("ABOUT")),
            ["name=\"t\", version=\"1\", author=\"a\", country=\"KR\""]
        );
        b.handle("START 15");
        b.handle("TURN 7,7");
        assert_eq!(sent(&b.handle("TAKEBACK 7,7")), ["OK"]);
        assert!(b.game().unwrap().moves().is_empty());
        assert!(sent(&b.handle("TAKEBACK 7,7"))[0].starts_with("ERROR"));
        assert!(sent(&b.handle("FOO"))[0].starts_with("UNKNOWN"));
        assert!(matches!(b.handle("END")[..], [Action::Exit]));
    }

    #[test]
    fn restart_clears_the_board() {
        let mut b = brain();
        b.handle("START 15");
        b.handle("TURN 7,7");
        let a = b.handle("RESTART");
        assert_eq!(sent(&a), ["OK"]);
        assert!(b.game().unwrap().moves().is_empty());
    }
}
