//! Drawing the terminal client: a pure function of a [`View`], so that it
//! can be checked cell by cell on ratatui's `TestBackend`.
//!
//! The board takes the left 51 columns (three per point, with row numbers
//! on both sides and column letters above and below), the side panel the
//! rest; the whole fits an 80 x 24 terminal.

use std::time::Duration;

use omok::frame::EndResult;
use omok::player::EndReport as EndReason;
use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color as Tint, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};
use renju::{Color, Game, GameResult, Point, Rule, SIZE};

/// Smallest terminal the layout fits.
pub(crate) const MIN_SIZE: (u16, u16) = (80, 24);

/// Columns per point.
const CELL: u16 = 3;
/// Width of the row numbers left of the board, with their space.
const LABEL: u16 = 3;
/// The board with its labels on both sides.
const BOARD_WIDTH: u16 = LABEL + CELL * SIZE as u16 + LABEL;
/// Rows above the first board row: the title and the column letters.
const BOARD_TOP: u16 = 2;

/// The marked star points of a 15 x 15 board.
const STARS: [(usize, usize); 5] = [(3, 3), (11, 3), (7, 7), (3, 11), (11, 11)];

/// Where the client stands, for the side panel.
#[derive(Debug, Clone)]
pub(crate) enum Stage {
    /// Connecting to the referee.
    Connecting,
    /// Seated; waiting for an opponent and the start.
    Waiting,
    /// The game is on.
    Playing,
    /// The game ended (the final position is the view's game).
    Over(EndResult, EndReason),
    /// The connection failed or was refused; the text says why.
    Failed(String),
}

/// Everything the screen shows.
#[derive(Debug, Clone)]
pub(crate) struct View {
    /// The referee's address, for the title.
    pub(crate) addr: String,
    /// The rule played.
    pub(crate) rule: Rule,
    /// Our colour, once seated.
    pub(crate) me: Option<Color>,
    /// The game as reported by the referee.
    pub(crate) game: Game,
    /// Black's forbidden points, filled in only while black is to move.
    pub(crate) forbidden: Vec<Point>,
    /// The point that Enter or Space would play.
    pub(crate) cursor: Point,
    /// Time left on the clock of the side to move.
    pub(crate) clock: Option<Duration>,
    /// Where the client stands.
    pub(crate) stage: Stage,
    /// A one-off message, such as why a point was refused.
    pub(crate) message: String,
    /// A point being typed, like `h8`.
    pub(crate) input: String,
    /// Whether `n` starts a new game once this one is over.
    pub(crate) rematch: bool,
}

impl View {
    /// The view before connecting.
    pub(crate) fn new(addr: String, rule: Rule) -> View {
        View {
            addr,
            rule,
            me: None,
            game: Game::new(rule),
            forbidden: Vec::new(),
            cursor: Point::CENTER,
            clock: None,
            stage: Stage::Connecting,
            message: String::new(),
            input: String::new(),
            rematch: true,
        }
    }

    /// Whether it is our move.
    pub(crate) fn our_turn(&self) -> bool {
        matches!(self.stage, Stage::Playing) && self.me == Some(self.game.side_to_move())
    }
}

/// Draws the whole screen.
pub(crate) fn render(frame: &mut Frame, view: &View) {
    let area = frame.area();
    if area.width < MIN_SIZE.0 || area.height < MIN_SIZE.1 {
        let text = format!(
            "Please make the terminal at least {}x{} (it is {}x{}).",
            MIN_SIZE.0, MIN_SIZE.1, area.width, area.height
        );
        frame.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }), area);
        return;
    }
    let board_area = Rect::new(area.x, area.y, BOARD_WIDTH, BOARD_TOP + SIZE as u16 + 1);
    frame.render_widget(Paragraph::new(board_lines(view)), board_area);
    let panel = Rect::new(
        area.x + BOARD_WIDTH + 1,
        area.y,
        area.width - BOARD_WIDTH - 1,
        area.height,
    );
    frame.render_widget(
        Paragraph::new(panel_lines(view))
            .wrap(Wrap { trim: false })
            .block(Block::bordered().title(" madang omok ")),
        panel,
    );
}

/// The board point under a screen position, for mouse clicks.
pub(crate) fn point_at(area: Rect, at: Position) -> Option<Point> {
    let left = area.x + LABEL;
    let top = area.y + BOARD_TOP;
    if at.x < left || at.y < top {
        return None;
    }
    let x = usize::from((at.x - left) / CELL);
    let row = usize::from(at.y - top);
    if x >= SIZE || row >= SIZE {
        return None;
    }
    Point::new(x, SIZE - 1 - row)
}

fn board_lines(view: &View) -> Vec<Line<'static>> {
    let dim = Style::new().fg(Tint::DarkGray);
    let letters: String = (0..SIZE)
        .map(|x| format!(" {} ", (b'a' + x as u8) as char))
        .collect();
    let letters = Line::from(vec![
        Span::raw(" ".repeat(LABEL as usize)),
        Span::styled(letters, dim),
    ]);
    let title = Line::styled(
        format!(" Omok ({} rule)", view.rule),
        Style::new().add_modifier(Modifier::BOLD),
    );
    let mut lines = vec![title, letters.clone()];
    let winning: Vec<Point> = match view.game.result() {
        Some(GameResult::Win { line, .. }) => line.clone(),
        _ => Vec::new(),
    };
    for y in (0..SIZE).rev() {
        let mut spans = vec![Span::styled(format!("{:>2} ", y + 1), dim)];
        for x in 0..SIZE {
            let p = Point::new(x, y).expect("on the board");
            spans.extend(cell(view, p, winning.contains(&p)));
        }
        spans.push(Span::styled(format!(" {}", y + 1), dim));
        lines.push(Line::from(spans));
    }
    lines.push(letters);
    lines
}

/// The three characters of one point: a stone or mark in the middle,
/// brackets for the cursor, parentheses for the last move.
fn cell(view: &View, p: Point, winning: bool) -> [Span<'static>; 3] {
    let (mark, mut style) = match view.game.board().get(p) {
        Some(Color::Black) => ("X", Style::new().fg(Tint::Yellow).bold()),
        Some(Color::White) => ("O", Style::new().fg(Tint::LightCyan).bold()),
        None if view.forbidden.contains(&p) => ("#", Style::new().fg(Tint::Red)),
        None if STARS.contains(&(p.x(), p.y())) => ("+", Style::new().fg(Tint::DarkGray)),
        None => (".", Style::new().fg(Tint::DarkGray)),
    };
    if winning {
        style = style.add_modifier(Modifier::REVERSED);
    }
    let (open, close, frame) = if p == view.cursor {
        ("[", "]", Style::new().fg(Tint::LightMagenta).bold())
    } else if Some(p) == view.game.last_move() {
        ("(", ")", Style::new().fg(Tint::LightGreen).bold())
    } else {
        (" ", " ", Style::new())
    };
    [
        Span::styled(open, frame),
        Span::styled(mark, style),
        Span::styled(close, frame),
    ]
}

fn panel_lines(view: &View) -> Vec<Line<'static>> {
    let key = Style::new().fg(Tint::DarkGray);
    let row =
        |k: &str, v: String| Line::from(vec![Span::styled(format!("{k:<7}"), key), Span::raw(v)]);
    let mut lines = vec![
        row("Server", view.addr.clone()),
        row("Rule", view.rule.name().to_owned()),
        row(
            "You",
            match view.me {
                Some(Color::Black) => "black (X)".to_owned(),
                Some(Color::White) => "white (O)".to_owned(),
                None => "not seated yet".to_owned(),
            },
        ),
    ];
    let to_move = view.game.side_to_move();
    let stone = |c: Color| if c == Color::Black { "X" } else { "O" };
    match &view.stage {
        Stage::Connecting => lines.push(Line::raw("Connecting...")),
        Stage::Waiting => lines.push(Line::raw("Waiting for an opponent...")),
        Stage::Playing => {
            let who = if view.our_turn() {
                Span::styled(
                    format!("yours ({})", stone(to_move)),
                    Style::new().fg(Tint::LightGreen).bold(),
                )
            } else {
                Span::raw(format!("{to_move} ({})", stone(to_move)))
            };
            lines.push(Line::from(vec![
                Span::styled(format!("{:<7}", "Turn"), key),
                who,
            ]));
            if let Some(t) = view.clock {
                let style = if t < Duration::from_secs(5) {
                    Style::new().fg(Tint::LightRed).bold()
                } else {
                    Style::new()
                };
                let text = format!("{}.{}s", t.as_secs(), t.subsec_millis() / 100);
                lines.push(Line::from(vec![
                    Span::styled(format!("{:<7}", "Clock"), key),
                    Span::styled(text, style),
                ]));
            }
        }
        Stage::Over(result, reason) => lines.push(Line::styled(
            result_text(*result, *reason, moves_played(view)),
            Style::new().fg(Tint::LightYellow).bold(),
        )),
        Stage::Failed(why) => {
            lines.push(Line::styled(why.clone(), Style::new().fg(Tint::LightRed)))
        }
    }
    let moves = moves_played(view);
    lines.push(row(
        "Moves",
        match view.game.last_move() {
            Some(p) => format!("{moves}, last {p} ({})", !to_move),
            None => "0".to_owned(),
        },
    ));
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        view.message.clone(),
        Style::new().fg(Tint::LightRed),
    ));
    lines.push(row("Point", format!("{}_", view.input)));
    lines.push(Line::raw(""));
    let help: &[&str] = match view.stage {
        Stage::Over(..) | Stage::Failed(_) if view.rematch => &["n      new game", "q/Esc  quit"],
        Stage::Over(..) | Stage::Failed(_) => &["q/Esc  quit"],
        _ => &[
            "arrows move, Enter play",
            "click a point to play",
            "or type h8 and Enter",
            "q/Esc  quit",
        ],
    };
    lines.extend(help.iter().map(|h| Line::styled(*h, key)));
    lines.push(Line::raw(""));
    lines.push(Line::styled("X black  O white", key));
    lines.push(Line::styled("# forbidden for black", key));
    lines.push(Line::styled("( ) last move  [ ] cursor", key));
    lines
}

fn moves_played(view: &View) -> usize {
    view.game.moves().len()
}

/// The result in words, for a person, after `n` moves.
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

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::buffer::Buffer;
    use renju::notation::parse_moves;

    fn pt(s: &str) -> Point {
        s.parse().unwrap()
    }

    fn draw(view: &View) -> Buffer {
        let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
        terminal.draw(|f| render(f, view)).unwrap();
        terminal.backend().buffer().clone()
    }

    fn line(buf: &Buffer, y: u16) -> String {
        (0..buf.area.width)
            .map(|x| buf[(x, y)].symbol())
            .collect::<String>()
    }

    fn text(buf: &Buffer) -> String {
        (0..buf.area.height)
            .map(|y| line(buf, y))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The screen cell of the middle of a point.
    fn at(p: &str) -> (u16, u16) {
        let p = pt(p);
        (
            LABEL + CELL * p.x() as u16 + 1,
            BOARD_TOP + (SIZE - 1 - p.y()) as u16,
        )
    }

    fn playing(moves: &str, me: Color) -> View {
        let mut v = View::new("127.0.0.1:9000".into(), Rule::Renju);
        v.game = Game::from_moves(
            Rule::Renju,
            parse_moves(moves).unwrap().into_iter().flatten(),
        )
        .unwrap();
        v.me = Some(me);
        v.stage = Stage::Playing;
        v.clock = Some(Duration::from_millis(12_345));
        if v.game.side_to_move() == Color::Black {
            v.forbidden = v
                .game
                .board()
                .forbidden_points(Rule::Renju)
                .into_iter()
                .map(|(p, _)| p)
                .collect();
        }
        v
    }

    #[test]
    fn board_with_coordinates_stones_and_last_move() {
        let mut v = playing("h8 h9 i8", Color::White);
        v.cursor = pt("a1");
        let buf = draw(&v);
        let screen = text(&buf);
        assert!(
            line(&buf, 1).starts_with("    a  b  c  d  e  f  g  h  i "),
            "{screen}"
        );
        assert!(line(&buf, 1).contains(" o "));
        assert!(line(&buf, BOARD_TOP).starts_with("15  .  . "), "{screen}");
        assert!(
            line(&buf, BOARD_TOP + 14).starts_with(" 1 [.] "),
            "{screen}"
        );
        assert_eq!(line(&buf, BOARD_TOP + 15)[..51], line(&buf, 1)[..51]);
        let sym = |p: &str| {
            let (x, y) = at(p);
            [
                buf[(x - 1, y)].symbol(),
                buf[(x, y)].symbol(),
                buf[(x + 1, y)].symbol(),
            ]
            .concat()
        };
        assert_eq!(sym("h8"), " X ");
        assert_eq!(sym("h9"), " O ");
        // The last move in parentheses, the cursor in brackets.
        assert_eq!(sym("i8"), "(X)");
        assert_eq!(sym("a1"), "[.]");
        assert_eq!(sym("d4"), " + ");
        assert!(screen.contains("Turn   yours (O)"), "{screen}");
        assert!(screen.contains("Clock  12.3s"), "{screen}");
        assert!(screen.contains("white (O)"));
        assert!(screen.contains("3, last i8 (black)"), "{screen}");
        assert_eq!(buf[at("h8")].fg, Tint::Yellow);
    }

    #[test]
    fn forbidden_points_shown_while_black_is_to_move() {
        // Black to move; h8 would be a double-three.
        let v = playing("g8 a1 i8 a3 h7 a5 h9 a7", Color::White);
        assert!(v.forbidden.contains(&pt("h8")));
        let buf = draw(&v);
        assert_eq!(buf[at("h8")].symbol(), "#");
        assert_eq!(buf[at("h8")].fg, Tint::Red);
        let screen = text(&buf);
        assert!(screen.contains("Turn   black (X)"), "{screen}");
        assert!(screen.contains("# forbidden for black"));

        // White to move: no marks.
        let v = playing("g8 a1 i8 a3 h7 a5 h9 a7 o15", Color::White);
        assert!(v.forbidden.is_empty());
        assert_eq!(draw(&v)[at("h8")].symbol(), "+");
    }

    #[test]
    fn clock_urgent_and_result_with_winning_line() {
        let mut v = playing("h8 a15 i8", Color::Black);
        v.clock = Some(Duration::from_millis(4_900));
        let buf = draw(&v);
        assert!(text(&buf).contains("Turn   white (O)"));
        assert!(text(&buf).contains("Clock  4.9s"));
        let (x, y) = (0..24)
            .find_map(|y| line(&buf, y).find("4.9s").map(|x| (x, y)))
            .unwrap();
        let x = line(&buf, y)[..x].chars().count() as u16;
        assert_eq!(buf[(x, y)].fg, Tint::LightRed);

        let game = Game::from_moves(
            Rule::Renju,
            parse_moves("h8 a15 i8 b15 j8 c15 k8 d15 l8")
                .unwrap()
                .into_iter()
                .flatten(),
        )
        .unwrap();
        v.game = game;
        v.stage = Stage::Over(EndResult::Won, EndReason::Five(pt("l8")));
        v.clock = None;
        let buf = draw(&v);
        let screen = text(&buf);
        assert!(screen.contains("You won with five at l8,"), "{screen}");
        assert!(screen.contains("after 9 moves."), "{screen}");
        assert!(screen.contains("n      new game"));
        for p in ["h8", "i8", "j8", "k8", "l8"] {
            assert!(buf[at(p)].modifier.contains(Modifier::REVERSED), "{p}");
        }
        assert!(!buf[at("a15")].modifier.contains(Modifier::REVERSED));
    }

    #[test]
    fn waiting_message_input_and_small_terminal() {
        let mut v = View::new("host:9".into(), Rule::RenjuSimplified);
        v.stage = Stage::Waiting;
        v.me = Some(Color::Black);
        v.input = "h1".into();
        v.message = "h8 is occupied".into();
        let screen = text(&draw(&v));
        assert!(screen.contains("Waiting for an opponent"));
        assert!(screen.contains("renju-simplified"));
        assert!(screen.contains("h8 is occupied"));
        assert!(screen.contains("Point  h1_"), "{screen}");

        let mut terminal = Terminal::new(TestBackend::new(60, 20)).unwrap();
        terminal.draw(|f| render(f, &v)).unwrap();
        let small = text(terminal.backend().buffer());
        assert!(small.contains("at least 80x24"), "{small}");
    }

    #[test]
    fn clicks_map_to_points() {
        let area = Rect::new(0, 0, 80, 24);
        for p in ["a1", "h8", "o15", "a15", "o1"] {
            let (x, y) = at(p);
            for dx in [0, 1, 2] {
                let pos = Position::new(x - 1 + dx, y);
                assert_eq!(point_at(area, pos), Some(pt(p)), "{p} {dx}");
            }
        }
        assert_eq!(point_at(area, Position::new(1, 5)), None);
        assert_eq!(point_at(area, Position::new(10, 0)), None);
        assert_eq!(point_at(area, Position::new(10, 1)), None);
        assert_eq!(point_at(area, Position::new(60, 5)), None);
        assert_eq!(point_at(area, Position::new(10, BOARD_TOP + 15)), None);
    }
}
