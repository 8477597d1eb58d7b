//! Drawing the terminal client: a pure function of a [`View`], so that it
//! can be checked cell by cell on ratatui's `TestBackend`.
//!
//! The board sits top left with its coordinates, the numbered move list
//! (and the engine's analysis, on request) below it, the side panel on the
//! right. At 80 x 24 a point is three columns by one row; a bigger terminal
//! gets bigger points ([`layout`]). The panel's lines are written to fit its
//! width, and messages are wrapped between words, so that no line is ever
//! broken by the terminal.

use std::time::Duration;

use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color as Tint, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};
use renju::{Board, Color, Game, GameResult, Point, Rule, SIZE};

use super::app::clock_text;

/// Smallest terminal the layout fits.
pub(crate) const MIN_SIZE: (u16, u16) = (80, 24);

/// Width of the row numbers beside the board, with their space.
const LABEL: u16 = 3;
/// Rows above the first board row: the title and the column letters.
const BOARD_TOP: u16 = 2;
/// Narrowest side panel, border included.
const PANEL_MIN: u16 = 28;
/// Fewest rows for the move list under the board.
const LIST_MIN: u16 = 4;
/// Point sizes (columns, rows), largest first; the last fits 80 x 24.
const SCALES: [(u16, u16); 3] = [(7, 3), (5, 2), (3, 1)];

/// The marked star points of a 15 x 15 board.
const STARS: [(usize, usize); 5] = [(3, 3), (11, 3), (7, 7), (3, 11), (11, 11)];

/// Who the person plays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Opponent {
    /// Whoever the referee at this address seats.
    Referee(String),
    /// The built-in engine, by this name.
    Computer(String),
}

/// Where the client stands, for the side panel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stage {
    /// Connecting to the referee.
    Connecting,
    /// Seated; waiting for an opponent and the start.
    Waiting,
    /// The game is on.
    Playing,
    /// The game ended (the final position is the view's game); the result
    /// in words.
    Over(String),
    /// The connection failed or was refused; the text says why.
    Failed(String),
}

/// A question waiting for its confirming key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Confirm {
    /// `q` again quits.
    Quit,
    /// `r` again resigns.
    Resign,
}

/// The clocks on screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClockView {
    /// No clock.
    None,
    /// The referee's time per move: what is left of the turn on screen.
    PerMove(Duration),
    /// An assumed time per move ran out without the referee ending the
    /// game: its time is longer; `elapsed` is the turn so far.
    Unknown {
        /// Time since the turn began.
        elapsed: Duration,
        /// The time per move that was assumed.
        assumed: Duration,
    },
    /// A per-game clock: each side's time left, and whose runs.
    PerGame {
        /// Black's time.
        black: Duration,
        /// White's time.
        white: Duration,
        /// The side whose clock runs.
        running: Option<Color>,
    },
}

/// The engine's analysis as shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AnalysisView {
    /// Whether it was a hint for the person (else the engine's own move).
    pub(crate) hint: bool,
    /// The side the score is for.
    pub(crate) side: Color,
    /// The move found.
    pub(crate) best: Point,
    /// The score for `side`.
    pub(crate) score: i32,
    /// Depth reached.
    pub(crate) depth: i32,
    /// The expected line.
    pub(crate) pv: Vec<Point>,
}

/// Everything the screen shows.
#[derive(Debug, Clone)]
pub(crate) struct View {
    /// Who the person plays.
    pub(crate) opponent: Opponent,
    /// The rule played.
    pub(crate) rule: Rule,
    /// Our colour, once seated.
    pub(crate) me: Option<Color>,
    /// The game so far.
    pub(crate) game: Game,
    /// Black's forbidden points, filled in only while black is to move.
    pub(crate) forbidden: Vec<Point>,
    /// The point that Enter or Space would play.
    pub(crate) cursor: Point,
    /// The clocks.
    pub(crate) clock: ClockView,
    /// Where the client stands.
    pub(crate) stage: Stage,
    /// A one-off message, such as why a point was refused.
    pub(crate) message: String,
    /// A point being typed, like `h8`.
    pub(crate) input: String,
    /// A question waiting for its confirming key.
    pub(crate) confirm: Option<Confirm>,
    /// Whether the computer is thinking (its move or a hint).
    pub(crate) thinking: bool,
    /// The engine's latest analysis.
    pub(crate) analysis: Option<AnalysisView>,
    /// Whether the analysis is shown (`v`).
    pub(crate) show_analysis: bool,
    /// Where the finished game was saved, or why it was not.
    pub(crate) saved: Option<String>,
}

impl View {
    /// The view before the game.
    pub(crate) fn new(opponent: Opponent, rule: Rule) -> View {
        View {
            opponent,
            rule,
            me: None,
            game: Game::new(rule),
            forbidden: Vec::new(),
            cursor: Point::CENTER,
            clock: ClockView::None,
            stage: Stage::Connecting,
            message: String::new(),
            input: String::new(),
            confirm: None,
            thinking: false,
            analysis: None,
            show_analysis: false,
            saved: None,
        }
    }

    /// Shows `game`, with black's forbidden points when black is to move.
    pub(crate) fn set_game(&mut self, game: Game) {
        self.forbidden = if game.side_to_move() == Color::Black && game.result().is_none() {
            let points = game.board().forbidden_points(game.rule());
            points.into_iter().map(|(p, _)| p).collect()
        } else {
            Vec::new()
        };
        self.game = game;
    }

    /// Whether it is our move.
    pub(crate) fn our_turn(&self) -> bool {
        matches!(self.stage, Stage::Playing)
            && !self.thinking_of_own_move()
            && self.me == Some(self.game.side_to_move())
    }

    fn thinking_of_own_move(&self) -> bool {
        // A hint keeps the person's turn; only the engine's own move takes it.
        self.thinking && self.me != Some(self.game.side_to_move())
    }

    fn local(&self) -> bool {
        matches!(self.opponent, Opponent::Computer(_))
    }
}

/// Where things go on a screen of a given size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Columns per point.
    pub(crate) cell_w: u16,
    /// Rows per point.
    pub(crate) cell_h: u16,
    /// The board with its labels.
    pub(crate) board: Rect,
    /// The move list and analysis under the board.
    pub(crate) list: Rect,
    /// The side panel.
    pub(crate) panel: Rect,
}

/// The largest board that fits `area` with the panel and the move list, or
/// `None` below 80 x 24.
pub(crate) fn layout(area: Rect) -> Option<Layout> {
    SCALES.iter().find_map(|&(cell_w, cell_h)| {
        let board_w = 2 * LABEL + cell_w * SIZE as u16;
        let board_h = BOARD_TOP + cell_h * (SIZE as u16 - 1) + 2;
        if area.width < board_w + 1 + PANEL_MIN || area.height < board_h + LIST_MIN {
            return None;
        }
        Some(Layout {
            cell_w,
            cell_h,
            board: Rect::new(area.x, area.y, board_w, board_h),
            list: Rect::new(area.x, area.y + board_h, board_w, area.height - board_h),
            panel: Rect::new(
                area.x + board_w + 1,
                area.y,
                area.width - board_w - 1,
                area.height,
            ),
        })
    })
}

/// Draws the whole screen.
pub(crate) fn render(frame: &mut Frame, view: &View) {
    let area = frame.area();
    let Some(layout) = layout(area) else {
        too_small(frame);
        return;
    };
    let winning: Vec<Point> = match view.game.result() {
        Some(GameResult::Win { line, .. }) => line.clone(),
        _ => Vec::new(),
    };
    let pic = BoardPic {
        board: view.game.board(),
        last: view.game.last_move(),
        cursor: Some(view.cursor),
        forbidden: &view.forbidden,
        winning: &winning,
    };
    let title = format!(" Omok ({} rule)", view.rule);
    frame.render_widget(
        Paragraph::new(board_lines(title, &pic, &layout)),
        layout.board,
    );
    frame.render_widget(
        Paragraph::new(list_lines(view, layout.list.width, layout.list.height)),
        layout.list,
    );
    let inner = layout.panel.width.saturating_sub(2) as usize;
    frame.render_widget(
        Paragraph::new(panel_lines(view, inner)).block(Block::bordered().title(" madang omok ")),
        layout.panel,
    );
}

/// Asks for a bigger terminal, when [`layout`] finds none.
pub(crate) fn too_small(frame: &mut Frame) {
    let area = frame.area();
    let text = format!(
        "Please make the terminal at least {}x{} (it is {}x{}). q quits.",
        MIN_SIZE.0, MIN_SIZE.1, area.width, area.height
    );
    frame.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }), area);
}

/// The board point under a screen position, for mouse clicks.
pub(crate) fn point_at(area: Rect, at: Position) -> Option<Point> {
    let l = layout(area)?;
    let left = l.board.x + LABEL;
    let top = l.board.y + BOARD_TOP;
    if at.x < left || at.y < top {
        return None;
    }
    let x = usize::from((at.x - left) / l.cell_w);
    let row = usize::from((at.y - top) / l.cell_h);
    if x >= SIZE || row >= SIZE {
        return None;
    }
    Point::new(x, SIZE - 1 - row)
}

/// What the board shows: the stones and the marks on them.
pub(crate) struct BoardPic<'a> {
    /// The stones.
    pub(crate) board: &'a Board,
    /// The last stone placed, in parentheses.
    pub(crate) last: Option<Point>,
    /// The cursor, in brackets.
    pub(crate) cursor: Option<Point>,
    /// Points marked `#` (black's forbidden points).
    pub(crate) forbidden: &'a [Point],
    /// Stones shown reversed (the winning five).
    pub(crate) winning: &'a [Point],
}

/// The board with its title and coordinates, points `l.cell_w` columns by
/// `l.cell_h` rows.
pub(crate) fn board_lines(title: String, pic: &BoardPic, l: &Layout) -> Vec<Line<'static>> {
    let dim = Style::new().fg(Tint::DarkGray);
    let half = usize::from(l.cell_w / 2);
    let letters: String = (0..SIZE)
        .map(|x| {
            let letter = (b'a' + x as u8) as char;
            format!(
                "{:half$}{letter}{:rest$}",
                "",
                "",
                rest = usize::from(l.cell_w) - half - 1
            )
        })
        .collect();
    let letters = Line::from(vec![
        Span::raw(" ".repeat(LABEL as usize)),
        Span::styled(letters, dim),
    ]);
    let title = Line::styled(title, Style::new().add_modifier(Modifier::BOLD));
    let mut lines = vec![title, letters.clone()];
    let pad = " ".repeat(half - 1);
    for y in (0..SIZE).rev() {
        let mut spans = vec![Span::styled(format!("{:>2} ", y + 1), dim)];
        for x in 0..SIZE {
            let p = Point::new(x, y).expect("on the board");
            spans.push(Span::raw(pad.clone()));
            spans.extend(cell(pic, p));
            spans.push(Span::raw(pad.clone()));
        }
        spans.push(Span::styled(format!(" {}", y + 1), dim));
        lines.push(Line::from(spans));
        if y > 0 {
            lines.extend((1..l.cell_h).map(|_| Line::raw("")));
        }
    }
    lines.push(letters);
    lines
}

/// The three characters of one point: a stone or mark in the middle,
/// brackets for the cursor, parentheses for the last move.
fn cell(pic: &BoardPic, p: Point) -> [Span<'static>; 3] {
    let (mark, mut style) = match pic.board.get(p) {
        Some(Color::Black) => ("X", Style::new().fg(Tint::Yellow).bold()),
        Some(Color::White) => ("O", Style::new().fg(Tint::LightCyan).bold()),
        None if pic.forbidden.contains(&p) => ("#", Style::new().fg(Tint::Red)),
        None if STARS.contains(&(p.x(), p.y())) => ("+", Style::new().fg(Tint::DarkGray)),
        None => (".", Style::new().fg(Tint::DarkGray)),
    };
    if pic.winning.contains(&p) {
        style = style.add_modifier(Modifier::REVERSED);
    }
    let (open, close, frame) = if Some(p) == pic.cursor {
        ("[", "]", Style::new().fg(Tint::LightMagenta).bold())
    } else if Some(p) == pic.last {
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

/// Under the board: the engine's analysis (when shown) and the numbered
/// move list, the latest moves last.
fn list_lines(view: &View, width: u16, height: u16) -> Vec<Line<'static>> {
    let key = Style::new().fg(Tint::DarkGray);
    let width = usize::from(width);
    let mut lines = Vec::new();
    if view.show_analysis {
        match &view.analysis {
            Some(a) => {
                let whose = if a.hint { "hint" } else { "engine" };
                let text = format!(
                    "{whose}: {} for {}, eval {}, depth {}",
                    a.best,
                    a.side,
                    score_text(a.score),
                    a.depth
                );
                lines.push(Line::raw(clip(&text, width)));
                let pv: Vec<String> = a.pv.iter().map(Point::to_string).collect();
                lines.push(Line::raw(clip(&format!("line: {}", pv.join(" ")), width)));
            }
            None => lines.push(Line::styled("analysis: none yet (t asks for a hint)", key)),
        }
    }
    const ENTRY: usize = 8;
    let per_row = (width / ENTRY).max(1);
    let entries: Vec<String> = view
        .game
        .moves()
        .iter()
        .enumerate()
        .map(|(i, p)| format!("{:>3}.{:<4}", i + 1, p.to_string()))
        .collect();
    let rows: Vec<String> = entries.chunks(per_row).map(|c| c.concat()).collect();
    let room = usize::from(height).saturating_sub(lines.len());
    let skip = rows.len().saturating_sub(room);
    lines.extend(rows.into_iter().skip(skip).map(Line::raw));
    lines
}

/// An engine score in words: `+35`, `-120`, `win`, `loss`.
fn score_text(score: i32) -> String {
    if score > engine::WIN_BOUND {
        "win found".into()
    } else if score < -engine::WIN_BOUND {
        "loss found".into()
    } else {
        format!("{score:+}")
    }
}

fn panel_lines(view: &View, width: usize) -> Vec<Line<'static>> {
    let key = Style::new().fg(Tint::DarkGray);
    let row = move |k: &str, v: String| {
        Line::from(vec![
            Span::styled(format!("{k:<7}"), key),
            Span::raw(clip(&v, width.saturating_sub(7))),
        ])
    };
    let stone = |c: Color| if c == Color::Black { "X" } else { "O" };
    let mut lines = vec![row(
        "You",
        match view.me {
            Some(c) => format!("{c} ({})", stone(c)),
            None => "not seated yet".to_owned(),
        },
    )];
    lines.push(match &view.opponent {
        Opponent::Referee(addr) => row("Server", addr.clone()),
        Opponent::Computer(name) => row("Versus", name.clone()),
    });
    lines.push(row("Rule", view.rule.name().to_owned()));
    let to_move = view.game.side_to_move();
    let mut warning = None;
    match &view.stage {
        Stage::Connecting => lines.push(Line::raw("Connecting...")),
        Stage::Waiting if view.local() => lines.push(Line::raw("Starting...")),
        Stage::Waiting => lines.push(Line::raw("Waiting for an opponent...")),
        Stage::Playing => {
            let who = if view.our_turn() {
                Span::styled(
                    format!("yours ({})", stone(to_move)),
                    Style::new().fg(Tint::LightGreen).bold(),
                )
            } else if view.thinking_of_own_move() {
                Span::raw(format!("{to_move} ({}), thinking", stone(to_move)))
            } else {
                Span::raw(format!("{to_move} ({})", stone(to_move)))
            };
            lines.push(Line::from(vec![
                Span::styled(format!("{:<7}", "Turn"), key),
                who,
            ]));
        }
        Stage::Over(text) => lines.extend(
            wrap(text, width)
                .into_iter()
                .map(|l| Line::styled(l, Style::new().fg(Tint::LightYellow).bold())),
        ),
        Stage::Failed(why) => lines.extend(
            wrap(why, width)
                .into_iter()
                .map(|l| Line::styled(l, Style::new().fg(Tint::LightRed))),
        ),
    }
    let urgent = |t: Duration| {
        if t < Duration::from_secs(5) {
            Style::new().fg(Tint::LightRed).bold()
        } else {
            Style::new()
        }
    };
    match view.clock {
        ClockView::None => {}
        ClockView::PerMove(t) => lines.push(Line::from(vec![
            Span::styled(format!("{:<7}", "Clock"), key),
            Span::styled(clock_text(t, false), urgent(t)),
        ])),
        ClockView::Unknown { elapsed, assumed } => {
            lines.push(row("Clock", format!("{} used", clock_text(elapsed, false))));
            warning = Some(format!(
                "The referee allows more than the {}s assumed: give --turn-time.",
                assumed.as_secs()
            ));
        }
        ClockView::PerGame {
            black,
            white,
            running,
        } => {
            for (side, left) in [(Color::Black, black), (Color::White, white)] {
                let name = if side == Color::Black {
                    "Black"
                } else {
                    "White"
                };
                let mark = if running == Some(side) { " <" } else { "" };
                lines.push(Line::from(vec![
                    Span::styled(format!("{name:<7}"), key),
                    Span::styled(format!("{}{mark}", clock_text(left, true)), urgent(left)),
                ]));
            }
        }
    }
    let moves = view.game.moves().len();
    lines.push(row(
        "Moves",
        match view.game.last_move() {
            Some(p) => format!("{moves}, last {p} ({})", !to_move),
            None => "0".to_owned(),
        },
    ));
    if let Some(saved) = &view.saved {
        lines.extend(wrap(saved, width).into_iter().map(|l| Line::styled(l, key)));
    }
    lines.push(Line::raw(""));
    for text in warning.iter().chain([&view.message]) {
        lines.extend(
            wrap(text, width)
                .into_iter()
                .map(|l| Line::styled(l, Style::new().fg(Tint::LightRed))),
        );
    }
    if !matches!(view.stage, Stage::Over(_) | Stage::Failed(_)) {
        lines.push(row("Point", format!("{}_", view.input)));
    }
    lines.push(Line::raw(""));
    lines.extend(help(view).iter().map(|h| Line::styled(*h, key)));
    lines.push(Line::styled("X black O white # forbid.", key));
    lines.push(Line::styled("( ) last move  [ ] cursor", key));
    lines
}

/// The keys that work now, each line at most 26 columns.
fn help(view: &View) -> &'static [&'static str] {
    let over = matches!(view.stage, Stage::Over(_) | Stage::Failed(_));
    match (view.confirm, over, view.local()) {
        (Some(Confirm::Quit), ..) => &["q/Ctrl-C  quit: yes", "other     go on"],
        (Some(Confirm::Resign), ..) => &["r         resign: yes", "other     go on"],
        (None, true, true) => &[
            "n new game (swap colours)",
            "v analysis on/off",
            "q/Ctrl-C quit",
        ],
        (None, true, false) => &["n new game", "q/Ctrl-C quit"],
        (None, false, true) => &[
            "arrows+Enter, click, or",
            "type h8+Enter; Esc clears",
            "u undo  t hint  v analysis",
            "r resign (asks again)",
            "q/Ctrl-C quit (asks again)",
        ],
        (None, false, false) => &[
            "arrows+Enter, click, or",
            "type h8+Enter; Esc clears",
            "q/Ctrl-C quit (asks again)",
        ],
    }
}

/// `text` cut to `width` characters, with `…` when cut.
pub(crate) fn clip(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `text` in lines of at most `width` characters, broken between words (a
/// word longer than a line is cut).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    for word in text.split_whitespace() {
        let mut word: String = word.to_owned();
        loop {
            let needed = current.chars().count() + usize::from(!current.is_empty());
            if needed + word.chars().count() <= width {
                if !current.is_empty() {
                    current.push(' ');
                }
                current.push_str(&word);
                break;
            }
            if !current.is_empty() {
                lines.push(std::mem::take(&mut current));
                continue;
            }
            let head: String = word.chars().take(width.max(1)).collect();
            word = word.chars().skip(width.max(1)).collect();
            lines.push(head);
            if word.is_empty() {
                break;
            }
        }
    }
    if !current.is_empty() {
        lines.push(current);
    }
    lines
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

    fn draw_at(view: &View, w: u16, h: u16) -> Buffer {
        let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
        terminal.draw(|f| render(f, view)).unwrap();
        terminal.backend().buffer().clone()
    }

    fn draw(view: &View) -> Buffer {
        draw_at(view, 80, 24)
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

    /// The screen cell of the middle of a point at 80 x 24.
    fn at(p: &str) -> (u16, u16) {
        let p = pt(p);
        (
            LABEL + 3 * p.x() as u16 + 1,
            BOARD_TOP + (SIZE - 1 - p.y()) as u16,
        )
    }

    fn game(moves: &str) -> Game {
        Game::from_moves(
            Rule::Renju,
            parse_moves(moves).unwrap().into_iter().flatten(),
        )
        .unwrap()
    }

    fn playing(moves: &str, me: Color) -> View {
        let mut v = View::new(Opponent::Referee("127.0.0.1:9000".into()), Rule::Renju);
        v.set_game(game(moves));
        v.me = Some(me);
        v.stage = Stage::Playing;
        v.clock = ClockView::PerMove(Duration::from_millis(12_345));
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
        // The numbered move list under the board.
        assert!(screen.contains("  1.h8    2.h9    3.i8"), "{screen}");
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
        assert!(screen.contains("# forbid."));

        // White to move: no marks.
        let v = playing("g8 a1 i8 a3 h7 a5 h9 a7 o15", Color::White);
        assert!(v.forbidden.is_empty());
        assert_eq!(draw(&v)[at("h8")].symbol(), "+");
    }

    #[test]
    fn clock_urgent_and_result_with_winning_line() {
        let mut v = playing("h8 a15 i8", Color::Black);
        v.clock = ClockView::PerMove(Duration::from_millis(4_900));
        let buf = draw(&v);
        assert!(text(&buf).contains("Turn   white (O)"));
        assert!(text(&buf).contains("Clock  4.9s"));
        let (x, y) = (0..24)
            .find_map(|y| line(&buf, y).find("4.9s").map(|x| (x, y)))
            .unwrap();
        let x = line(&buf, y)[..x].chars().count() as u16;
        assert_eq!(buf[(x, y)].fg, Tint::LightRed);

        v.set_game(game("h8 a15 i8 b15 j8 c15 k8 d15 l8"));
        v.stage = Stage::Over("You won with five at l8, after 9 moves.".into());
        v.clock = ClockView::None;
        let buf = draw(&v);
        let screen = text(&buf);
        assert!(screen.contains("You won with five at l8,"), "{screen}");
        assert!(screen.contains("n new game"));
        for p in ["h8", "i8", "j8", "k8", "l8"] {
            assert!(buf[at(p)].modifier.contains(Modifier::REVERSED), "{p}");
        }
        assert!(!buf[at("a15")].modifier.contains(Modifier::REVERSED));
    }

    #[test]
    fn per_game_clocks_as_minutes_and_seconds() {
        let mut v = playing("h8", Color::White);
        v.opponent = Opponent::Computer("madang medium".into());
        v.clock = ClockView::PerGame {
            black: Duration::from_secs(598),
            white: Duration::from_millis(8_250),
            running: Some(Color::White),
        };
        let screen = text(&draw(&v));
        assert!(screen.contains("Black  9:58 "), "{screen}");
        assert!(screen.contains("White  0:08.2 <"), "{screen}");
        assert!(screen.contains("Versus madang medium"), "{screen}");
        assert!(screen.contains("u undo  t hint  v analysis"), "{screen}");
    }

    #[test]
    fn analysis_panel_shows_eval_and_line() {
        let mut v = playing("h8 h9", Color::Black);
        v.opponent = Opponent::Computer("madang easy".into());
        v.analysis = Some(AnalysisView {
            hint: false,
            side: Color::White,
            best: pt("h9"),
            score: -35,
            depth: 5,
            pv: ["h9", "i8", "g10"].map(pt).to_vec(),
        });
        assert!(!text(&draw(&v)).contains("eval"));
        v.show_analysis = true;
        let screen = text(&draw(&v));
        assert!(
            screen.contains("engine: h9 for white, eval -35, depth 5"),
            "{screen}"
        );
        assert!(screen.contains("line: h9 i8 g10"), "{screen}");
    }

    #[test]
    fn the_panel_never_wraps_at_80x24() {
        // Every state with its longest texts: each panel line fits inside
        // the border, so the terminal never breaks one.
        let mut v = playing("h8 h9 i8", Color::Black);
        v.opponent = Opponent::Computer("madang medium".into());
        v.message = "h8 is forbidden for black (double-four).".into();
        v.input = "h12".into();
        v.clock = ClockView::PerGame {
            black: Duration::from_secs(36_000),
            white: Duration::from_secs(1),
            running: Some(Color::Black),
        };
        for stage in [
            Stage::Playing,
            Stage::Over("You won: the computer ran out of time.".into()),
            Stage::Over("Draw: no winning move is left.".into()),
            Stage::Failed("Cannot reach localhost:9000: connection refused (os error 111).".into()),
        ] {
            if matches!(stage, Stage::Over(_)) {
                v.saved = Some(
                    "Saved /home/someone/.local/share/madang/games/1795346172903-local.sgf".into(),
                );
            }
            v.stage = stage;
            let lines = panel_lines(&v, 26);
            for l in &lines {
                assert!(l.width() <= 26, "{l:?}");
            }
            assert!(lines.len() <= 22, "{} lines: {lines:?}", lines.len());
            let screen = text(&draw(&v));
            assert!(screen.contains("double-four)."), "{screen}");
        }
        for text in [
            "Key q refused: Enter plays the point, Esc clears it.",
            "The referee allows more than the 15s assumed: give --turn-time.",
        ] {
            for l in wrap(text, 26) {
                assert!(l.chars().count() <= 26, "{l}");
            }
        }
        assert_eq!(wrap("aaaa bb", 4), ["aaaa", "bb"]);
        assert_eq!(wrap("abcdefgh", 3), ["abc", "def", "gh"]);
        for h in [
            help(&v),
            help(&View::new(Opponent::Referee("x:1".into()), Rule::Renju)),
        ] {
            assert!(h.iter().all(|l| l.chars().count() <= 26));
        }
    }

    #[test]
    fn quit_confirmation_names_its_key() {
        let mut v = playing("h8", Color::White);
        v.confirm = Some(Confirm::Quit);
        v.message = "Really quit? Press q.".into();
        let screen = text(&draw(&v));
        assert!(screen.contains("Really quit? Press q."), "{screen}");
        assert!(screen.contains("q/Ctrl-C  quit: yes"), "{screen}");
        assert!(screen.contains("other     go on"), "{screen}");
    }

    #[test]
    fn a_bigger_terminal_gets_a_bigger_board() {
        let mut v = playing("h8 h9", Color::Black);
        v.cursor = pt("a1");
        let l = layout(Rect::new(0, 0, 120, 40)).unwrap();
        assert_eq!((l.cell_w, l.cell_h), (5, 2));
        let buf = draw_at(&v, 120, 40);
        let screen = text(&buf);
        // h8 is column 7, row 7 from the top.
        let (x, y) = (LABEL + 5 * 7 + 2, BOARD_TOP + 2 * 7);
        assert_eq!(buf[(x, y)].symbol(), "X", "{screen}");
        assert_eq!(buf[(x, y - 2)].symbol(), "O", "{screen}");
        assert_eq!(point_at(buf.area, Position::new(x, y)), Some(pt("h8")));
        assert_eq!(
            point_at(buf.area, Position::new(x + 2, y + 1)),
            Some(pt("h8"))
        );
        assert!(line(&buf, 1).starts_with("     a    b    c"), "{screen}");
        assert_eq!(layout(Rect::new(0, 0, 160, 60)).unwrap().cell_w, 7);
        assert_eq!(layout(Rect::new(0, 0, 80, 24)).unwrap().cell_w, 3);
        assert_eq!(layout(Rect::new(0, 0, 79, 24)), None);
    }

    #[test]
    fn waiting_message_input_and_small_terminal() {
        let mut v = View::new(Opponent::Referee("host:9".into()), Rule::RenjuSimplified);
        v.stage = Stage::Waiting;
        v.me = Some(Color::Black);
        v.input = "h1".into();
        v.message = "h8 is occupied".into();
        let screen = text(&draw(&v));
        assert!(screen.contains("Waiting for an opponent"));
        assert!(screen.contains("renju-simplified"));
        assert!(screen.contains("h8 is occupied"));
        assert!(screen.contains("Point  h1_"), "{screen}");

        let small = text(&draw_at(&v, 60, 20));
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
