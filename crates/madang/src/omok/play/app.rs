//! The terminal client's state: what the referee said and what the person
//! pressed, turned into a [`View`] and [`Command`]s. No I/O, and the time
//! is passed in, so every reaction can be tested directly.

use std::time::{Duration, Instant};

use crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEventKind,
};
use omok::player::{MoveError, Notice};
use ratatui::layout::{Position, Rect};
use renju::{Color, Point, Rule, SIZE};

use super::ui::{Stage, View, point_at};

const NOT_YOUR_TURN: &str = "Not your turn yet.";

/// What the person asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Command {
    /// Play this point.
    Play(Point),
    /// Start another game on a new connection.
    NewGame,
    /// Leave.
    Quit,
}

/// The client's state.
#[derive(Debug)]
pub(crate) struct App {
    /// What is on screen.
    pub(crate) view: View,
    turn_time: Duration,
    turn_started: Option<Instant>,
}

impl App {
    /// A client for the referee at `addr` playing `rule`, whose clock gives
    /// `turn_time` per move.
    pub(crate) fn new(addr: String, rule: Rule, turn_time: Duration) -> App {
        App {
            view: View::new(addr, rule),
            turn_time,
            turn_started: None,
        }
    }

    /// Clears the board for a new game, keeping the cursor.
    pub(crate) fn reset(&mut self) {
        let cursor = self.view.cursor;
        self.view = View::new(self.view.addr.clone(), self.view.rule);
        self.view.cursor = cursor;
        self.turn_started = None;
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
                self.view.forbidden = if game.side_to_move() == Color::Black {
                    let rule = game.rule();
                    let points = game.board().forbidden_points(rule);
                    points.into_iter().map(|(p, _)| p).collect()
                } else {
                    Vec::new()
                };
                self.view.game = game;
                self.view.stage = Stage::Playing;
                self.turn_started = Some(now);
                self.view.clock = Some(self.turn_time);
                if self.view.our_turn() {
                    self.view.message.clear();
                }
            }
            Notice::GameOver(outcome) => {
                self.view.game = outcome.game;
                self.view.forbidden.clear();
                self.view.input.clear();
                self.view.stage = Stage::Over(outcome.result, outcome.reason);
                self.view.clock = None;
                self.turn_started = None;
            }
        }
    }

    /// The connection failed; `why` says how.
    pub(crate) fn on_failure(&mut self, why: String) {
        self.view.stage = Stage::Failed(sentence(&why));
        self.view.clock = None;
        self.turn_started = None;
    }

    /// Our chosen point was refused locally.
    pub(crate) fn on_move_error(&mut self, error: MoveError) {
        self.view.message = match error {
            MoveError::NotOurTurn => NOT_YOUR_TURN.to_owned(),
            // Starts with the point, which stays in lower case (`h8`).
            MoveError::Illegal(e) => format!("{e}."),
        };
    }

    /// Counts the clock down to `now`.
    pub(crate) fn tick(&mut self, now: Instant) {
        if let Some(start) = self.turn_started {
            self.view.clock = Some(self.turn_time.saturating_sub(now - start));
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
                self.play(p)
            }
            _ => None,
        }
    }

    fn on_key(&mut self, key: KeyEvent) -> Option<Command> {
        if key.modifiers.contains(KeyModifiers::CONTROL) {
            return (key.code == KeyCode::Char('c')).then_some(Command::Quit);
        }
        let over = matches!(self.view.stage, Stage::Over(..) | Stage::Failed(_));
        match key.code {
            KeyCode::Char('q') => return Some(Command::Quit),
            KeyCode::Esc if self.view.input.is_empty() => return Some(Command::Quit),
            KeyCode::Esc => self.view.input.clear(),
            KeyCode::Char('n') if over && self.view.rematch => return Some(Command::NewGame),
            KeyCode::Up => self.step(0, 1),
            KeyCode::Down => self.step(0, -1),
            KeyCode::Left => self.step(-1, 0),
            KeyCode::Right => self.step(1, 0),
            KeyCode::Backspace => {
                self.view.input.pop();
                self.follow_input();
            }
            KeyCode::Char(c) if ('a'..='o').contains(&c.to_ascii_lowercase()) => {
                self.view.input = c.to_ascii_lowercase().to_string();
            }
            KeyCode::Char(c) if c.is_ascii_digit() && (1..3).contains(&self.view.input.len()) => {
                self.view.input.push(c);
                self.follow_input();
            }
            KeyCode::Enter if !self.view.input.is_empty() => {
                let typed = std::mem::take(&mut self.view.input);
                match typed.parse::<Point>() {
                    Ok(p) => {
                        self.view.cursor = p;
                        return self.play(p);
                    }
                    Err(_) => self.view.message = format!("{typed} is not a point (a1 to o15)."),
                }
            }
            KeyCode::Enter | KeyCode::Char(' ') => return self.play(self.view.cursor),
            _ => {}
        }
        None
    }

    /// Asks to play `p` if it is our turn, else says why not.
    fn play(&mut self, p: Point) -> Option<Command> {
        if self.view.our_turn() {
            return Some(Command::Play(p));
        }
        self.view.message = match self.view.stage {
            Stage::Playing => NOT_YOUR_TURN.to_owned(),
            Stage::Over(..) | Stage::Failed(_) => "The game is over.".to_owned(),
            Stage::Connecting | Stage::Waiting => "The game has not started yet.".to_owned(),
        };
        None
    }

    fn step(&mut self, dx: isize, dy: isize) {
        let c = self.view.cursor;
        let clamp = |v: isize| v.clamp(0, SIZE as isize - 1) as usize;
        let (x, y) = (clamp(c.x() as isize + dx), clamp(c.y() as isize + dy));
        self.view.cursor = Point::new(x, y).unwrap_or(c);
        self.view.input.clear();
    }

    /// Moves the cursor to the point being typed, once it is one.
    fn follow_input(&mut self) {
        if let Ok(p) = self.view.input.parse() {
            self.view.cursor = p;
        }
    }
}

/// `s` as a sentence: capital first letter, final full stop.
fn sentence(s: &str) -> String {
    let mut chars = s.chars();
    let mut out: String = chars
        .next()
        .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect());
    if !out.ends_with(['.', '!', ')']) {
        out.push('.');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{MouseEvent, MouseEventKind};
    use omok::frame::EndResult;
    use omok::player::{EndReport as EndReason, Outcome};
    use renju::{Game, IllegalMove};

    fn pt(s: &str) -> Point {
        s.parse().unwrap()
    }

    fn key(app: &mut App, code: KeyCode) -> Option<Command> {
        app.on_event(
            Event::Key(KeyEvent::new(code, KeyModifiers::NONE)),
            Rect::new(0, 0, 80, 24),
        )
    }

    fn typed(app: &mut App, s: &str) -> Option<Command> {
        s.chars()
            .for_each(|c| assert_eq!(key(app, KeyCode::Char(c)), None));
        key(app, KeyCode::Enter)
    }

    fn game(moves: &[&str]) -> Game {
        Game::from_moves(Rule::Renju, moves.iter().map(|m| pt(m))).unwrap()
    }

    /// A client seated as `color` that has seen `moves`.
    fn app_with(color: Color, moves: &[&str], now: Instant) -> App {
        let mut app = App::new("x:1".into(), Rule::Renju, Duration::from_secs(15));
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
        assert_eq!(
            key(&mut app, KeyCode::Char(' ')),
            Some(Command::Play(pt("o1")))
        );
    }

    #[test]
    fn typing_a_point() {
        let mut app = app_with(Color::Black, &[], Instant::now());
        assert_eq!(typed(&mut app, "C12"), Some(Command::Play(pt("c12"))));
        assert_eq!(app.view.cursor, pt("c12"));
        assert!(app.view.input.is_empty());
        // Digits without a letter are ignored; a third digit too.
        assert_eq!(typed(&mut app, "5"), Some(Command::Play(pt("c12"))));
        key(&mut app, KeyCode::Char('d'));
        key(&mut app, KeyCode::Char('1'));
        key(&mut app, KeyCode::Char('0'));
        key(&mut app, KeyCode::Char('0'));
        assert_eq!(app.view.input, "d10");
        key(&mut app, KeyCode::Backspace);
        assert_eq!(app.view.input, "d1");
        assert_eq!(app.view.cursor, pt("d1"));
        assert_eq!(
            key(&mut app, KeyCode::Esc),
            None,
            "Esc clears the input first"
        );
        assert!(app.view.input.is_empty());
        assert_eq!(typed(&mut app, "a16"), None);
        assert_eq!(app.view.message, "a16 is not a point (a1 to o15).");
        assert_eq!(key(&mut app, KeyCode::Esc), Some(Command::Quit));
    }

    #[test]
    fn mouse_click_plays_the_point() {
        let mut app = app_with(Color::White, &["h8"], Instant::now());
        // a15 is the first cell of the first board row.
        let click = Event::Mouse(MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column: 4,
            row: 2,
            modifiers: KeyModifiers::NONE,
        });
        let screen = Rect::new(0, 0, 80, 24);
        assert_eq!(app.on_event(click, screen), Some(Command::Play(pt("a15"))));
        let outside = Event::Mouse(MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column: 70,
            row: 2,
            modifiers: KeyModifiers::NONE,
        });
        assert_eq!(app.on_event(outside, screen), None);
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
        assert_eq!(key(&mut app, KeyCode::Char('q')), Some(Command::Quit));
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(
            app.on_event(Event::Key(ctrl_c), Rect::new(0, 0, 80, 24)),
            Some(Command::Quit)
        );
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
        assert_eq!(app.view.clock, Some(Duration::from_secs(15)));
        app.tick(start + Duration::from_millis(2_500));
        assert_eq!(app.view.clock, Some(Duration::from_millis(12_500)));
        app.tick(start + Duration::from_secs(20));
        assert_eq!(app.view.clock, Some(Duration::ZERO));
        // The opponent's turn restarts it.
        let later = start + Duration::from_secs(3);
        app.on_notice(Notice::TheirTurn(game(&["h8"])), later);
        app.tick(later + Duration::from_secs(1));
        assert_eq!(app.view.clock, Some(Duration::from_secs(14)));
    }

    #[test]
    fn game_over_then_new_game() {
        let now = Instant::now();
        let mut app = app_with(Color::Black, &[], now);
        assert_eq!(key(&mut app, KeyCode::Char('n')), None, "n is a column");
        let g = game(&["h8", "a15"]);
        app.on_notice(
            Notice::GameOver(Outcome {
                color: Color::Black,
                result: EndResult::Lost,
                reason: EndReason::Timeout,
                game: g,
            }),
            now,
        );
        assert_eq!(app.view.clock, None);
        assert_eq!(app.view.game.moves().len(), 2);
        assert_eq!(key(&mut app, KeyCode::Enter), None);
        assert_eq!(app.view.message, "The game is over.");
        assert_eq!(key(&mut app, KeyCode::Char('n')), Some(Command::NewGame));
        app.reset();
        assert!(matches!(app.view.stage, Stage::Connecting));
        assert_eq!(app.view.game.moves().len(), 0);
    }
}
