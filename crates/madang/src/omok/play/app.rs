//! The terminal client's state: what the referee or the local game said
//! and what the person pressed, turned into a [`View`] and [`Command`]s. No
//! I/O, and the time is passed in, so every reaction can be tested directly.

use std::time::{Duration, Instant};

use crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEventKind,
};
use omok::frame::EndResult;
use omok::player::{EndReport as EndReason, MoveError, Notice};
use ratatui::layout::{Position, Rect};
use renju::{Color, Point, Rule, SIZE};

use super::computer::Purpose;
use super::ui::{AnalysisView, ClockView, Confirm, Opponent, Stage, View, point_at};
use super::versus::{Ending, Versus};

const NOT_YOUR_TURN: &str = "Not your turn yet.";

/// What the person asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Command {
    /// Play this point.
    Play(Point),
    /// Take back the last pair of moves (against the computer).
    Undo,
    /// Ask the engine for a move (against the computer).
    Hint,
    /// Give the game up (against the computer; confirmed).
    Resign,
    /// Start another game (colours swapped against the computer).
    NewGame,
    /// Leave (confirmed while a game is in progress).
    Quit,
}

/// What the client knows of the referee's clock (`--connect`).
#[derive(Debug, Clone, Copy)]
struct TurnClock {
    /// The time per move on screen.
    turn_time: Duration,
    /// Whether it was given with `--turn-time` or only assumed.
    assumed: bool,
    /// When the turn on screen began.
    started: Option<Instant>,
    /// Whether the first turn is still on (the check of an assumed time).
    first_turn: bool,
}

/// The client's state.
#[derive(Debug)]
pub(crate) struct App {
    /// What is on screen.
    pub(crate) view: View,
    turn: TurnClock,
}

impl App {
    /// A client for the referee at `addr` playing `rule`; `turn_time` is the
    /// referee's time per move if the person gave it, else it is assumed to
    /// be the document's 15 s and checked on the first turn.
    pub(crate) fn remote(addr: String, rule: Rule, turn_time: Option<Duration>) -> App {
        App {
            view: View::new(Opponent::Referee(addr), rule),
            turn: TurnClock {
                turn_time: turn_time.unwrap_or(DEFAULT_TURN_TIME),
                assumed: turn_time.is_none(),
                started: None,
                first_turn: true,
            },
        }
    }

    /// A client for a game against the computer called `name`.
    pub(crate) fn local(name: String, rule: Rule) -> App {
        let mut app = App::remote(String::new(), rule, None);
        app.view = View::new(Opponent::Computer(name), rule);
        app
    }

    /// Whether this client plays the computer.
    fn is_local(&self) -> bool {
        matches!(self.view.opponent, Opponent::Computer(_))
    }

    /// Clears the board for a new game, keeping the cursor and the panels.
    pub(crate) fn reset(&mut self) {
        let fresh = View::new(self.view.opponent.clone(), self.view.rule);
        let old = std::mem::replace(&mut self.view, fresh);
        self.view.cursor = old.cursor;
        self.view.show_analysis = old.show_analysis;
        self.turn.started = None;
        self.turn.first_turn = true;
    }

    /// The referee told us something, at `now`.
    pub(crate) fn on_notice(&mut self, notice: Notice, now: Instant) {
        match notice {
            Notice::Seated(color) => {
                self.view.me = Some(color);
                self.view.stage = Stage::Waiting;
            }
            Notice::Refused { seated } => {
                self.on_failure(format!(
                    "the referee has no free seat ({seated} players seated)"
                ));
            }
            Notice::OurTurn(game) | Notice::TheirTurn(game) => {
                if self.turn.started.is_some() {
                    self.turn.first_turn = false;
                }
                self.view.set_game(game);
                self.view.stage = Stage::Playing;
                self.turn.started = Some(now);
                self.view.clock = ClockView::PerMove(self.turn.turn_time);
                if self.view.our_turn() {
                    self.view.message.clear();
                }
            }
            Notice::GameOver(outcome) => {
                let moves = outcome.game.moves().len();
                let mut text = result_text(outcome.result, outcome.reason, moves);
                if let Some(warning) = self.turn_time_check(outcome.reason, now) {
                    text = format!("{text} {warning}");
                }
                self.view.set_game(outcome.game);
                self.view.forbidden.clear();
                self.view.input.clear();
                self.view.confirm = None;
                self.view.stage = Stage::Over(text);
                self.view.clock = ClockView::None;
                self.turn.started = None;
            }
        }
    }

    /// A first turn lost on time after a time other than the assumed one
    /// means the referee's turn time is not ours: say so.
    fn turn_time_check(&self, reason: EndReason, now: Instant) -> Option<String> {
        let started = self.turn.started?;
        if reason != EndReason::Timeout || !self.turn.assumed || !self.turn.first_turn {
            return None;
        }
        let took = now.saturating_duration_since(started);
        let assumed = self.turn.turn_time;
        let off = took.abs_diff(assumed);
        (off > Duration::from_secs(1)).then(|| {
            format!(
                "The referee's time per move is about {:.0}s, not the {}s assumed: \
                 give --turn-time.",
                took.as_secs_f64(),
                assumed.as_secs()
            )
        })
    }

    /// The connection failed; `why` says how.
    pub(crate) fn on_failure(&mut self, why: String) {
        self.view.stage = Stage::Failed(sentence(&why));
        self.view.clock = ClockView::None;
        self.view.confirm = None;
        self.turn.started = None;
    }

    /// Our chosen point was refused locally.
    pub(crate) fn on_move_error(&mut self, error: MoveError) {
        self.view.message = match error {
            MoveError::NotOurTurn => NOT_YOUR_TURN.to_owned(),
            // Starts with the point, which stays in lower case (`h8`).
            MoveError::Illegal(e) => format!("{e}."),
        };
    }

    /// Counts the referee's clock down to `now`. When an assumed turn time
    /// runs out and the referee has not ended the game, its time is longer:
    /// the screen says so rather than showing a clock at zero.
    pub(crate) fn tick(&mut self, now: Instant) {
        if let Some(start) = self.turn.started {
            let elapsed = now.saturating_duration_since(start);
            let left = self.turn.turn_time.saturating_sub(elapsed);
            self.view.clock = ClockView::PerMove(left);
            if left.is_zero()
                && self.turn.assumed
                && elapsed > self.turn.turn_time + Duration::from_secs(1)
            {
                self.view.clock = ClockView::Unknown {
                    elapsed,
                    assumed: self.turn.turn_time,
                };
            }
        }
    }

    /// Shows the local game `versus` as it stands at `now`.
    pub(crate) fn show_local(&mut self, versus: &Versus, now: Instant) {
        let game = versus.game().clone();
        self.view.me = Some(versus.person());
        self.view.set_game(game);
        self.view.thinking = versus.engine_thinking() || versus.hint_pending();
        let left = |side| versus.clock().and_then(|c| c.left(side, now));
        self.view.clock = match (left(Color::Black), left(Color::White)) {
            (Some(black), Some(white)) => ClockView::PerGame {
                black,
                white,
                running: versus.clock().and_then(|c| c.running()),
            },
            _ => ClockView::None,
        };
        self.view.analysis = versus.analysis().map(|(purpose, a)| AnalysisView {
            hint: *purpose == Purpose::Hint,
            side: if *purpose == Purpose::Hint {
                versus.person()
            } else {
                !versus.person()
            },
            best: a.best,
            score: a.score,
            depth: a.depth,
            pv: a.pv.clone(),
        });
        match versus.ending() {
            Some(ending) => {
                if !matches!(self.view.stage, Stage::Over(_)) {
                    self.view.input.clear();
                    self.view.confirm = None;
                    self.view.forbidden.clear();
                }
                self.view.stage = Stage::Over(ending_text(ending, versus.person()));
            }
            None if versus.in_progress() => self.view.stage = Stage::Playing,
            None => self.view.stage = Stage::Waiting,
        }
    }

    /// Shows the hint of the latest analysis: the cursor goes to it.
    pub(crate) fn follow_hint(&mut self) {
        if let Some(a) = &self.view.analysis
            && a.hint
        {
            self.view.cursor = a.best;
            self.view.message = format!("Hint: {}.", a.best);
        }
    }

    /// A terminal event; `screen` is the area last drawn, for clicks.
    pub(crate) fn on_event(&mut self, event: Event, screen: Rect) -> Option<Command> {
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => self.on_key(key),
            Event::Mouse(m) if m.kind == MouseEventKind::Down(MouseButton::Left) => {
                let p = point_at(screen, Position::new(m.column, m.row))?;
                self.view.cursor = p;
                self.view.input.clear();
                self.view.confirm = None;
                self.play(p)
            }
            _ => None,
        }
    }

    fn in_progress(&self) -> bool {
        matches!(self.view.stage, Stage::Playing | Stage::Waiting)
    }

    fn on_key(&mut self, key: KeyEvent) -> Option<Command> {
        let ctrl_c =
            key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c');
        if let Some(confirm) = self.view.confirm.take() {
            let confirmed = match confirm {
                Confirm::Quit => key.code == KeyCode::Char('q') || ctrl_c,
                Confirm::Resign => key.code == KeyCode::Char('r'),
            };
            if confirmed {
                self.view.message.clear();
                return Some(match confirm {
                    Confirm::Quit => Command::Quit,
                    Confirm::Resign => Command::Resign,
                });
            }
            self.view.message = match confirm {
                Confirm::Quit => "Not quitting: the game goes on.",
                Confirm::Resign => "Not resigning: the game goes on.",
            }
            .into();
            return None;
        }
        if ctrl_c {
            return self.ask_quit();
        }
        if key.modifiers.contains(KeyModifiers::CONTROL) {
            return None;
        }
        if key.code == KeyCode::Esc {
            self.view.input.clear();
            self.view.message.clear();
            return None;
        }
        if !self.view.input.is_empty() {
            return self.on_typing(key.code);
        }
        let over = matches!(self.view.stage, Stage::Over(_) | Stage::Failed(_));
        let local = self.is_local();
        match key.code {
            KeyCode::Char('q') => return self.ask_quit(),
            KeyCode::Char('n') if over => return Some(Command::NewGame),
            KeyCode::Char('u') if local => return Some(Command::Undo),
            KeyCode::Char('t') if local => return Some(Command::Hint),
            KeyCode::Char('v') if local => {
                self.view.show_analysis = !self.view.show_analysis;
            }
            KeyCode::Char('r') if local && self.in_progress() => {
                self.view.confirm = Some(Confirm::Resign);
                self.view.message = "Really resign? Press r.".into();
            }
            KeyCode::Up => self.step(0, 1),
            KeyCode::Down => self.step(0, -1),
            KeyCode::Left => self.step(-1, 0),
            KeyCode::Right => self.step(1, 0),
            KeyCode::Char(c) if is_column(c) && !over => {
                self.view.input = c.to_ascii_lowercase().to_string();
                self.view.message.clear();
            }
            KeyCode::Enter | KeyCode::Char(' ') => return self.play(self.view.cursor),
            KeyCode::Char(c @ ('u' | 't' | 'v' | 'r')) if !local => {
                self.refuse(c, "only against the computer.");
            }
            KeyCode::Char(c) if over => self.refuse(c, "the game is over (n new game, q quit)."),
            KeyCode::Char(c) => self.refuse(c, "type a column letter a to o first."),
            _ => {}
        }
        None
    }

    /// A key while a point is being typed: only what edits or plays it.
    fn on_typing(&mut self, code: KeyCode) -> Option<Command> {
        match code {
            KeyCode::Char(c) if is_column(c) => {
                self.view.input = c.to_ascii_lowercase().to_string();
                self.follow_input();
            }
            KeyCode::Char(c) if c.is_ascii_digit() && self.view.input.len() < 3 => {
                self.view.input.push(c);
                self.follow_input();
            }
            KeyCode::Backspace => {
                self.view.input.pop();
                self.follow_input();
            }
            KeyCode::Enter => {
                let typed = std::mem::take(&mut self.view.input);
                match typed.parse::<Point>() {
                    Ok(p) => {
                        self.view.cursor = p;
                        return self.play(p);
                    }
                    Err(_) => self.view.message = format!("{typed} is not a point (a1 to o15)."),
                }
            }
            KeyCode::Char(c) => self.refuse(c, "Enter plays the point, Esc clears it."),
            other => {
                let name = match other {
                    KeyCode::Up | KeyCode::Down | KeyCode::Left | KeyCode::Right => "arrow",
                    _ => "key",
                };
                self.view.message = format!(
                    "{} refused while typing: Enter plays the point, Esc clears it.",
                    capitalised(name)
                );
            }
        }
        None
    }

    fn refuse(&mut self, c: char, what_works: &str) {
        let shown: String = if c.is_control() { "?".into() } else { c.into() };
        self.view.message = format!("Key {shown} refused: {what_works}");
    }

    fn ask_quit(&mut self) -> Option<Command> {
        if !self.in_progress() {
            return Some(Command::Quit);
        }
        self.view.confirm = Some(Confirm::Quit);
        self.view.message = "Really quit? Press q.".into();
        None
    }

    /// Asks to play `p` if it is our turn, else says why not.
    fn play(&mut self, p: Point) -> Option<Command> {
        if self.view.our_turn() {
            return Some(Command::Play(p));
        }
        self.view.message = match self.view.stage {
            Stage::Playing if self.view.thinking => "The computer is thinking.".to_owned(),
            Stage::Playing => NOT_YOUR_TURN.to_owned(),
            Stage::Over(_) | Stage::Failed(_) => "The game is over.".to_owned(),
            Stage::Connecting | Stage::Waiting => "The game has not started yet.".to_owned(),
        };
        None
    }

    fn step(&mut self, dx: isize, dy: isize) {
        let c = self.view.cursor;
        let clamp = |v: isize| v.clamp(0, SIZE as isize - 1) as usize;
        let (x, y) = (clamp(c.x() as isize + dx), clamp(c.y() as isize + dy));
        self.view.cursor = Point::new(x, y).unwrap_or(c);
    }

    /// Moves the cursor to the point being typed, once it is one.
    fn follow_input(&mut self) {
        if let Ok(p) = self.view.input.parse() {
            self.view.cursor = p;
        }
    }
}

/// The Omok document's time per move, assumed on a referee when
/// `--turn-time` is not given.
const DEFAULT_TURN_TIME: Duration = Duration::from_secs(15);

fn is_column(c: char) -> bool {
    ('a'..='o').contains(&c.to_ascii_lowercase())
}

fn capitalised(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}

/// `s` as a sentence: capital first letter, final full stop.
fn sentence(s: &str) -> String {
    let mut out = capitalised(s);
    if !out.ends_with(['.', '!', ')']) {
        out.push('.');
    }
    out
}

/// A referee's result in words, for a person, after `n` moves.
fn result_text(result: EndResult, reason: EndReason, n: usize) -> String {
    let text = match (result, reason) {
        (EndResult::Won, EndReason::Five(p)) => format!("You won with five at {p}"),
        (EndResult::Lost, EndReason::Five(p)) => format!("You lost to five at {p}"),
        (EndResult::Won, EndReason::Timeout) => "You won: the opponent ran out of time".into(),
        (EndResult::Lost, EndReason::Timeout) => "You lost on time".into(),
        (EndResult::Won, _) => "You won: the opponent broke the rules or left".into(),
        (EndResult::Lost, _) => "You lost: illegal move or connection error".into(),
        (EndResult::Draw, _) => "Draw: no winning move is left".into(),
    };
    format!("{text}, after {n} moves.")
}

/// A local game's result in words, for the person playing `me`.
fn ending_text(ending: Ending, me: Color) -> String {
    let won = ending.winner() == Some(me);
    match ending {
        Ending::Five(_, p) if won => format!("You won with five at {p}."),
        Ending::Five(_, p) => format!("You lost to five at {p}."),
        Ending::Time(_) if won => "You won: the computer ran out of time.".into(),
        Ending::Time(_) => "You lost on time.".into(),
        Ending::Resigned(_) if won => "You won: the computer gave up.".into(),
        Ending::Resigned(_) => "You resigned.".into(),
        Ending::Draw => "Draw: no winning move is left.".into(),
    }
}

/// A per-move clock reading for the remote panel (`12.3s`), or a per-game
/// one as `m:ss`, with tenths under ten seconds (`0:09.4`).
pub(crate) fn clock_text(d: Duration, per_game: bool) -> String {
    let secs = d.as_secs();
    if !per_game {
        format!("{secs}.{}s", d.subsec_millis() / 100)
    } else if secs < 10 {
        format!("0:0{secs}.{}", d.subsec_millis() / 100)
    } else {
        format!("{}:{:02}", secs / 60, secs % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{MouseEvent, MouseEventKind};
    use omok::player::Outcome;
    use renju::{Game, IllegalMove};

    fn pt(s: &str) -> Point {
        s.parse().unwrap()
    }

    #[test]
    fn per_game_clock_readings() {
        let secs = Duration::from_secs;
        assert_eq!(clock_text(secs(600), true), "10:00");
        assert_eq!(clock_text(secs(65), true), "1:05");
        assert_eq!(clock_text(Duration::from_millis(9_450), true), "0:09.4");
        assert_eq!(clock_text(Duration::ZERO, true), "0:00.0");
    }

    fn key(app: &mut App, code: KeyCode) -> Option<Command> {
        app.on_event(
            Event::Key(KeyEvent::new(code, KeyModifiers::NONE)),
            Rect::new(0, 0, 80, 24),
        )
    }

    fn ch(app: &mut App, c: char) -> Option<Command> {
        key(app, KeyCode::Char(c))
    }

    fn typed(app: &mut App, s: &str) -> Option<Command> {
        s.chars().for_each(|c| assert_eq!(ch(app, c), None));
        key(app, KeyCode::Enter)
    }

    fn game(moves: &[&str]) -> Game {
        Game::from_moves(Rule::Renju, moves.iter().map(|m| pt(m))).unwrap()
    }

    /// A client seated as `color` that has seen `moves`.
    fn app_with(color: Color, moves: &[&str], now: Instant) -> App {
        let mut app = App::remote("x:1".into(), Rule::Renju, Some(Duration::from_secs(15)));
        app.on_notice(Notice::Seated(color), now);
        let g = game(moves);
        let notice = if g.side_to_move() == color {
            Notice::OurTurn(g)
        } else {
            Notice::TheirTurn(g)
        };
        app.on_notice(notice, now);
        app
    }

    fn over(app: &mut App, reason: EndReason, now: Instant) {
        app.on_notice(
            Notice::GameOver(Outcome {
                color: Color::Black,
                result: EndResult::Lost,
                reason,
                game: game(&["h8", "a15"]),
            }),
            now,
        );
    }

    #[test]
    fn arrows_enter_and_space() {
        let now = Instant::now();
        let mut app = app_with(Color::Black, &[], now);
        assert_eq!(app.view.cursor, pt("h8"));
        key(&mut app, KeyCode::Up);
        key(&mut app, KeyCode::Left);
        assert_eq!(key(&mut app, KeyCode::Enter), Some(Command::Play(pt("g9"))));
        for _ in 0..20 {
            key(&mut app, KeyCode::Down);
            key(&mut app, KeyCode::Right);
        }
        assert_eq!(app.view.cursor, pt("o1"));
        assert_eq!(ch(&mut app, ' '), Some(Command::Play(pt("o1"))));
    }

    #[test]
    fn typing_a_point_and_refused_keys() {
        let mut app = app_with(Color::Black, &[], Instant::now());
        assert_eq!(typed(&mut app, "C12"), Some(Command::Play(pt("c12"))));
        assert_eq!(app.view.cursor, pt("c12"));
        assert!(app.view.input.is_empty());
        // Digits without a letter are refused, and said to be.
        assert_eq!(ch(&mut app, '5'), None);
        assert_eq!(
            app.view.message,
            "Key 5 refused: type a column letter a to o first."
        );
        for c in "d100".chars() {
            ch(&mut app, c);
        }
        assert_eq!(app.view.input, "d10");
        assert!(app.view.message.contains("refused"), "{}", app.view.message);
        // Command keys are refused while typing, not lost in silence.
        assert_eq!(ch(&mut app, 'q'), None);
        assert_eq!(
            app.view.message,
            "Key q refused: Enter plays the point, Esc clears it."
        );
        key(&mut app, KeyCode::Up);
        assert!(app.view.message.starts_with("Arrow refused while typing"));
        assert_eq!(app.view.input, "d10");
        key(&mut app, KeyCode::Backspace);
        assert_eq!(app.view.input, "d1");
        assert_eq!(app.view.cursor, pt("d1"));
        // Esc clears the input and never quits.
        assert_eq!(key(&mut app, KeyCode::Esc), None);
        assert!(app.view.input.is_empty());
        assert_eq!(key(&mut app, KeyCode::Esc), None);
        assert_eq!(typed(&mut app, "a16"), None);
        assert_eq!(app.view.message, "a16 is not a point (a1 to o15).");
    }

    #[test]
    fn quitting_a_game_in_progress_asks_first() {
        let now = Instant::now();
        let mut app = app_with(Color::Black, &[], now);
        assert_eq!(ch(&mut app, 'q'), None);
        assert_eq!(app.view.confirm, Some(Confirm::Quit));
        assert!(app.view.message.contains("Really quit? Press q."));
        // Any other key, Esc included, cancels and does nothing else.
        assert_eq!(key(&mut app, KeyCode::Enter), None);
        assert_eq!(app.view.confirm, None);
        assert_eq!(app.view.message, "Not quitting: the game goes on.");
        ch(&mut app, 'q');
        assert_eq!(key(&mut app, KeyCode::Esc), None);
        assert_eq!(app.view.confirm, None);
        ch(&mut app, 'q');
        assert_eq!(ch(&mut app, 'q'), Some(Command::Quit));
        // Ctrl-C asks too, and a second Ctrl-C confirms.
        let ctrl_c = || Event::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
        let screen = Rect::new(0, 0, 80, 24);
        assert_eq!(app.on_event(ctrl_c(), screen), None);
        assert_eq!(app.on_event(ctrl_c(), screen), Some(Command::Quit));
        // Once the game is over, q quits at once.
        over(&mut app, EndReason::Five(pt("a15")), now);
        assert_eq!(ch(&mut app, 'q'), Some(Command::Quit));
    }

    #[test]
    fn mouse_click_plays_the_point() {
        let mut app = app_with(Color::White, &["h8"], Instant::now());
        // a15 is the first cell of the first board row.
        let click = |column, row| {
            Event::Mouse(MouseEvent {
                kind: MouseEventKind::Down(MouseButton::Left),
                column,
                row,
                modifiers: KeyModifiers::NONE,
            })
        };
        let screen = Rect::new(0, 0, 80, 24);
        assert_eq!(
            app.on_event(click(4, 2), screen),
            Some(Command::Play(pt("a15")))
        );
        assert_eq!(app.on_event(click(70, 2), screen), None);
    }

    #[test]
    fn not_our_turn_and_refused_points() {
        let now = Instant::now();
        let mut app = app_with(Color::White, &[], now);
        assert_eq!(key(&mut app, KeyCode::Enter), None);
        assert_eq!(app.view.message, "Not your turn yet.");
        app.on_notice(Notice::OurTurn(game(&["h8"])), now);
        assert!(app.view.message.is_empty());
        app.on_move_error(MoveError::Illegal(IllegalMove::Occupied(pt("h8"))));
        assert_eq!(app.view.message, "h8 is occupied.");
        app.on_failure("protocol error: the referee closed the connection".into());
        assert!(matches!(&app.view.stage, Stage::Failed(m)
            if m == "Protocol error: the referee closed the connection."));
        assert_eq!(ch(&mut app, 'q'), Some(Command::Quit));
    }

    #[test]
    fn forbidden_points_only_when_black_moves() {
        let now = Instant::now();
        let moves = ["g8", "a1", "i8", "a3", "h7", "a5", "h9", "a7"];
        let app = app_with(Color::White, &moves, now);
        assert!(app.view.forbidden.contains(&pt("h8")));
        let mut moves = moves.to_vec();
        moves.push("o15");
        let app = app_with(Color::White, &moves, now);
        assert!(app.view.forbidden.is_empty());
    }

    #[test]
    fn clock_counts_down_from_the_update() {
        let start = Instant::now();
        let mut app = app_with(Color::Black, &[], start);
        assert_eq!(app.view.clock, ClockView::PerMove(Duration::from_secs(15)));
        app.tick(start + Duration::from_millis(2_500));
        assert_eq!(
            app.view.clock,
            ClockView::PerMove(Duration::from_millis(12_500))
        );
        app.tick(start + Duration::from_secs(20));
        assert_eq!(app.view.clock, ClockView::PerMove(Duration::ZERO));
        // The opponent's turn restarts it.
        let later = start + Duration::from_secs(3);
        app.on_notice(Notice::TheirTurn(game(&["h8"])), later);
        app.tick(later + Duration::from_secs(1));
        assert_eq!(app.view.clock, ClockView::PerMove(Duration::from_secs(14)));
    }

    #[test]
    fn an_assumed_turn_time_that_is_wrong_is_called_out() {
        let t0 = Instant::now();
        // Longer than assumed: past 15 s the clock shows the time taken.
        let mut app = App::remote("x:1".into(), Rule::Renju, None);
        app.on_notice(Notice::Seated(Color::Black), t0);
        app.on_notice(Notice::OurTurn(game(&[])), t0);
        app.tick(t0 + Duration::from_secs(17));
        assert_eq!(
            app.view.clock,
            ClockView::Unknown {
                elapsed: Duration::from_secs(17),
                assumed: Duration::from_secs(15)
            }
        );
        // Shorter than assumed: the first turn lost on time says so.
        let mut app = App::remote("x:1".into(), Rule::Renju, None);
        app.on_notice(Notice::Seated(Color::Black), t0);
        app.on_notice(Notice::OurTurn(game(&[])), t0);
        over(&mut app, EndReason::Timeout, t0 + Duration::from_secs(5));
        let Stage::Over(text) = &app.view.stage else {
            panic!("{:?}", app.view.stage)
        };
        assert!(
            text.contains("time per move is about 5s, not the 15s assumed: give --turn-time"),
            "{text}"
        );
        // Given explicitly, it is trusted.
        let mut app = app_with(Color::Black, &[], t0);
        over(&mut app, EndReason::Timeout, t0 + Duration::from_secs(5));
        assert!(matches!(&app.view.stage, Stage::Over(t) if !t.contains("assumed")));
    }

    #[test]
    fn game_over_then_new_game() {
        let now = Instant::now();
        let mut app = app_with(Color::Black, &[], now);
        assert_eq!(ch(&mut app, 'n'), None, "n is a column");
        over(&mut app, EndReason::Timeout, now);
        assert_eq!(app.view.clock, ClockView::None);
        assert_eq!(app.view.game.moves().len(), 2);
        assert_eq!(key(&mut app, KeyCode::Enter), None);
        assert_eq!(app.view.message, "The game is over.");
        assert_eq!(ch(&mut app, 'a'), None);
        assert_eq!(
            app.view.message,
            "Key a refused: the game is over (n new game, q quit)."
        );
        assert_eq!(ch(&mut app, 'n'), Some(Command::NewGame));
        app.reset();
        assert!(matches!(app.view.stage, Stage::Connecting));
        assert_eq!(app.view.game.moves().len(), 0);
    }

    #[test]
    fn computer_keys_only_against_the_computer() {
        let mut app = app_with(Color::Black, &[], Instant::now());
        assert_eq!(ch(&mut app, 'u'), None);
        assert_eq!(
            app.view.message,
            "Key u refused: only against the computer."
        );
        let mut local = App::local("madang easy".into(), Rule::Renju);
        local.view.stage = Stage::Playing;
        assert_eq!(ch(&mut local, 'u'), Some(Command::Undo));
        assert_eq!(ch(&mut local, 't'), Some(Command::Hint));
        assert!(!local.view.show_analysis);
        ch(&mut local, 'v');
        assert!(local.view.show_analysis);
        assert_eq!(ch(&mut local, 'r'), None);
        assert_eq!(local.view.confirm, Some(Confirm::Resign));
        assert_eq!(ch(&mut local, 'r'), Some(Command::Resign));
    }
}
