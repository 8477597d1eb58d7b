//! `madang omok show`: steps through a recorded game in the terminal
//! (next, previous, first, last), or prints the board at a move as text
//! when the output is not a terminal.

use std::future::Future;
use std::io::{self, IsTerminal};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use crossterm::event::{Event, EventStream, KeyCode, KeyEventKind, KeyModifiers};
use futures::StreamExt;
use omok::records::{GameRecord, RecordError, shown};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color as Tint, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph};
use renju::{Board, Color, Point};

use super::play::ui::{BoardPic, board_lines, clip, layout, too_small};
use super::play::{Tty, signals};

/// Arguments of `madang omok show`.
#[derive(clap::Args)]
pub struct Args {
    /// A game's `.sgf` file, or a `games.jsonl` file (its last game unless
    /// `--game` names another).
    file: PathBuf,
    /// Start at this move (0 is the position before the first move);
    /// default the last.
    #[arg(long, value_name = "N")]
    r#move: Option<usize>,
    /// The id of the game to show from a `games.jsonl` file.
    #[arg(long, value_name = "ID", alias = "id")]
    game: Option<String>,
}

/// A recorded game as shown: stones set up before the first move, then
/// the moves with their colours.
#[derive(Debug, Clone, PartialEq)]
struct Replay {
    /// Lines above the board: the game, the players, the result.
    header: Vec<String>,
    setup: Vec<(Point, Color)>,
    moves: Vec<(Point, Color)>,
}

/// Reads the record into a [`Replay`]: the one place `show` touches the
/// records API.
fn replay(record: &GameRecord) -> Result<Replay> {
    let moves = record
        .moves
        .iter()
        .enumerate()
        .map(|(i, m)| (m.point, record.color_of_move(i)))
        .collect();
    let outcome = match record.winner {
        None => "draw".to_owned(),
        Some(winner) => format!("{winner} won"),
    };
    let id = if record.id.is_empty() {
        "-"
    } else {
        &record.id
    };
    let last = record
        .moves
        .last()
        .map_or_else(|| "-".to_owned(), |m| m.point.to_string());
    Ok(Replay {
        header: vec![
            format!("game {id} ({})", record.rule),
            format!("black (X) {}  vs  white (O) {}", record.black, record.white),
            format!(
                "{outcome} ({}) after {} moves, last {last}",
                record.reason,
                record.moves.len(),
            ),
        ]
        .into_iter()
        .map(|l| shown(&l))
        .collect(),
        setup: record.setup.clone(),
        moves,
    })
}

impl Replay {
    /// The board after the first `n` moves (setup stones included).
    fn board_at(&self, n: usize) -> Result<Board> {
        let mut board = Board::new();
        for &(p, c) in self
            .setup
            .iter()
            .chain(&self.moves[..n.min(self.moves.len())])
        {
            board
                .place(p, c)
                .with_context(|| format!("replaying the game: {p} is played twice"))?;
        }
        Ok(board)
    }

    /// The text printed when the output is not a terminal.
    fn text_at(&self, n: usize) -> Result<String> {
        let board = self.board_at(n)?;
        let last = match n.checked_sub(1).and_then(|i| self.moves.get(i)) {
            Some((p, c)) => format!(", last {p} ({c})"),
            None => String::new(),
        };
        Ok(format!(
            "{}\nmove {n} of {}{last}\n{board}\n",
            self.header.join("\n"),
            self.moves.len()
        ))
    }
}

/// Runs `madang omok show`.
pub fn run(args: Args) -> Result<()> {
    let record = GameRecord::read(&args.file, args.game.as_deref()).map_err(|e| match e {
        // Names the file itself.
        RecordError::Io { .. } => anyhow::Error::new(e),
        other => anyhow::Error::new(other).context(format!("reading {}", args.file.display())),
    })?;
    let replay = replay(&record)?;
    let total = replay.moves.len();
    let at = match args.r#move {
        Some(n) if n > total => bail!("--move {n}: the game has {total} moves"),
        Some(n) => n,
        None => total,
    };
    // Every move must replay before anything is shown.
    replay.board_at(total)?;
    if !io::stdout().is_terminal() {
        print!("{}", replay.text_at(at)?);
        return Ok(());
    }
    let mut tty = Tty::open()?;
    tty.runtime.block_on(async {
        let mut stop = std::pin::pin!(signals()?);
        review(
            &mut tty.screen.terminal,
            &replay,
            at,
            &mut tty.events,
            &mut stop,
        )
        .await
    })
}

/// The review loop: one key, one redraw, until `q` or a signal.
async fn review(
    terminal: &mut ratatui::DefaultTerminal,
    replay: &Replay,
    mut at: usize,
    events: &mut EventStream,
    stop: &mut (impl Future<Output = ()> + Unpin),
) -> Result<()> {
    loop {
        terminal
            .draw(|f| render(f, replay, at))
            .context("drawing the screen")?;
        let event = tokio::select! {
            event = events.next() => event,
            () = &mut *stop => return Ok(()),
        };
        let Some(event) = event else { return Ok(()) };
        let Event::Key(key) = event.context("reading the terminal")? else {
            continue;
        };
        if key.kind == KeyEventKind::Release {
            continue;
        }
        let ctrl_c =
            key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c');
        match step(key.code, at, replay.moves.len()) {
            _ if ctrl_c => return Ok(()),
            Some(n) => at = n,
            None => return Ok(()),
        }
    }
}

/// Where a key takes the review from move `at` of `total`; `None` quits.
fn step(key: KeyCode, at: usize, total: usize) -> Option<usize> {
    Some(match key {
        KeyCode::Right | KeyCode::Char('n' | ' ') | KeyCode::Enter => (at + 1).min(total),
        KeyCode::Left | KeyCode::Char('p') | KeyCode::Backspace => at.saturating_sub(1),
        KeyCode::Home | KeyCode::Char('g') => 0,
        KeyCode::End | KeyCode::Char('G') => total,
        KeyCode::Up | KeyCode::PageUp => at.saturating_sub(10),
        KeyCode::Down | KeyCode::PageDown => (at + 10).min(total),
        KeyCode::Char('q') | KeyCode::Esc => return None,
        _ => at,
    })
}

/// Draws the board at move `at`, the move list and the keys.
fn render(frame: &mut Frame, replay: &Replay, at: usize) {
    let area = frame.area();
    let Some(l) = layout(area) else {
        too_small(frame);
        return;
    };
    // Checked in `run`: every prefix of the game replays.
    let board = replay.board_at(at).unwrap_or_default();
    let last = at.checked_sub(1).map(|i| replay.moves[i].0);
    let pic = BoardPic {
        board: &board,
        last,
        cursor: None,
        forbidden: &[],
        winning: &[],
    };
    let title = format!(" move {at} of {}", replay.moves.len());
    frame.render_widget(Paragraph::new(board_lines(title, &pic, &l)), l.board);
    let width = usize::from(l.list.width);
    let header: Vec<Line> = replay
        .header
        .iter()
        .map(|h| Line::raw(clip(h, width)))
        .collect();
    frame.render_widget(Paragraph::new(header), l.list);

    let inner = Rect::new(
        l.panel.x + 1,
        l.panel.y + 1,
        l.panel.width.saturating_sub(2),
        l.panel.height.saturating_sub(2),
    );
    frame.render_widget(Block::bordered().title(" madang show "), l.panel);
    let key = Style::new().fg(Tint::DarkGray);
    let help = [
        "Right/n next  Left/p back",
        "Home/g first  End/G last",
        "Up/Down ten moves",
        "q, Esc or Ctrl-C quits",
    ];
    let rows = usize::from(inner.height).saturating_sub(help.len() + 1);
    // The list scrolls to keep the current move in sight.
    let first = at.saturating_sub(rows.saturating_sub(1) / 2 + 1);
    let first = first.min(replay.moves.len().saturating_sub(rows));
    let mut lines: Vec<Line> = replay
        .moves
        .iter()
        .enumerate()
        .skip(first)
        .take(rows)
        .map(|(i, (p, c))| {
            let text = format!("{:>3}. {:<4} {c}", i + 1, p.to_string());
            if i + 1 == at {
                Line::styled(text, Style::new().fg(Tint::LightGreen).bold())
            } else {
                Line::raw(text)
            }
        })
        .collect();
    lines.resize(rows + 1, Line::raw(""));
    lines.extend(help.iter().map(|h| Line::styled(*h, key)));
    frame.render_widget(Paragraph::new(lines), inner);
}

#[cfg(test)]
mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;

    fn sample() -> Replay {
        let text = "(;FF[4]GM[4]SZ[15]RU[4]GN[g1]PB[ann]PW[bob\u{1b}[2J]RE[B+]GC[rule renju; reason five]\n;B[hh];W[hg];B[ih];W[ig];B[jh];W[jg];B[kh];W[kg];B[lh])";
        replay(&GameRecord::from_sgf(text).unwrap()).unwrap()
    }

    fn screen(replay: &Replay, at: usize) -> String {
        let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
        terminal.draw(|f| render(f, replay, at)).unwrap();
        let buf = terminal.backend().buffer().clone();
        (0..buf.area.height)
            .map(|y| (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect())
            .collect::<Vec<String>>()
            .join("\n")
    }

    #[test]
    fn stepping_through_the_moves() {
        assert_eq!(step(KeyCode::Right, 0, 9), Some(1));
        assert_eq!(step(KeyCode::Char('n'), 9, 9), Some(9));
        assert_eq!(step(KeyCode::Left, 0, 9), Some(0));
        assert_eq!(step(KeyCode::Char('p'), 5, 9), Some(4));
        assert_eq!(step(KeyCode::Home, 5, 9), Some(0));
        assert_eq!(step(KeyCode::End, 5, 9), Some(9));
        assert_eq!(step(KeyCode::Down, 5, 9), Some(9));
        assert_eq!(step(KeyCode::Char('x'), 5, 9), Some(5));
        assert_eq!(step(KeyCode::Char('q'), 5, 9), None);

        let r = sample();
        let at3 = screen(&r, 3);
        assert!(at3.contains(" move 3 of 9"), "{at3}");
        assert!(at3.contains("  3. i8   black"), "{at3}");
        // The third stone is the last move; the fourth is not on yet.
        assert!(at3.contains(" 8  .  .  .  .  .  .  .  X (X) .  ."), "{at3}");
        assert!(at3.contains(" 9  .  .  .  .  .  .  .  O  .  ."), "{at3}");
        assert!(at3.contains("Right/n next  Left/p back"), "{at3}");
        // The name's escape sequence is shown harmless.
        assert!(at3.contains("bob?[2J"), "{at3}");
        let end = screen(&r, 9);
        assert!(end.contains("black won (five)"), "{end}");
        assert!(end.contains("(X)"), "{end}");
        let start = screen(&r, 0);
        assert!(start.contains(" move 0 of 9"), "{start}");
        assert!(
            start.contains(" 8  .  .  .  .  .  .  .  +  .  .  ."),
            "{start}"
        );
    }

    #[test]
    fn text_at_a_move_and_setup_stones() {
        let mut r = sample();
        let text = r.text_at(2).unwrap();
        assert!(text.starts_with("game g1 (renju)\n"), "{text}");
        assert!(text.contains("move 2 of 9, last h9 (white)\n"), "{text}");
        assert!(text.contains(" 9 . . . . . . . O"), "{text}");
        assert!(!text.contains(" 8 . . . . . . . X X"), "{text}");
        // Setup stones are on the board from move 0.
        r.setup = vec![("a1".parse().unwrap(), Color::White)];
        let text = r.text_at(0).unwrap();
        assert!(text.contains(" 1 O . ."), "{text}");
        r.setup = vec![("h8".parse().unwrap(), Color::White)];
        assert!(r.board_at(1).is_err());
    }
}
