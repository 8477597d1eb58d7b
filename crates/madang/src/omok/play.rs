//! `madang omok play`: Omok in the terminal for a person (ratatui and
//! crossterm).
//!
//! The screen is a pure function of [`ui::View`]; [`app::App`] turns what
//! the referee says and what the person presses into that view and into
//! commands; this module only owns the terminal and the connection and
//! races them in one `select!` loop.

mod app;
mod local;
mod ui;

use std::io;
use std::time::Duration;

use anyhow::{Context, Result};
use crossterm::event::{DisableMouseCapture, EnableMouseCapture, Event, EventStream};
use crossterm::execute;
use futures::{Stream, StreamExt};
use omok::player::Notice;
use omok_net::client::{ClientError, Connection};
use ratatui::backend::Backend;
use ratatui::layout::Rect;
use ratatui::{DefaultTerminal, Terminal};
use renju::Rule;
use tokio::time::{Instant, MissedTickBehavior};

use self::app::{App, Command};
use omok::duration::parse_duration;

/// How often the clock on screen is redrawn.
const CLOCK_TICK: Duration = Duration::from_millis(100);

/// Arguments of `madang omok play`.
#[derive(clap::Args)]
pub struct Args {
    /// The referee to join. Without it, a referee and a computer opponent
    /// start in this process.
    #[arg(long, value_name = "HOST:PORT")]
    connect: Option<String>,
    /// The referee's rule: renju, renju-simplified, freestyle or standard
    /// (the protocol does not carry it).
    #[arg(long, default_value = "renju")]
    rule: Rule,
    /// The referee's time per move, for the clock on screen.
    #[arg(long, default_value = "15s", value_parser = parse_duration, value_name = "DUR")]
    turn_time: Duration,
    /// Against the computer (no --connect): how long it thinks per move,
    /// at most the turn time less a safety margin.
    #[arg(long, default_value = "2s", value_parser = parse_duration, value_name = "DUR")]
    think_time: Duration,
}

/// Runs `madang omok play`.
pub fn run(args: Args) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let (addr, on_seated): (String, Box<dyn Fn()>) = match args.connect {
        Some(addr) => (addr, Box::new(|| {})),
        None => {
            let local = runtime.block_on(local::Local::start(
                args.rule,
                args.turn_time,
                args.think_time,
            ))?;
            (
                local.addr.to_string(),
                Box::new(move || local.person_seated()),
            )
        }
    };
    let mut app = App::new(addr, args.rule, args.turn_time);
    let mut screen = Screen::enter()?;
    let mut events = EventStream::new();
    runtime.block_on(play_games(
        &mut screen.terminal,
        &mut app,
        &mut events,
        &on_seated,
    ))
}

/// The terminal in raw mode on the alternate screen with mouse reporting;
/// put back as it was when dropped, and on panic.
struct Screen {
    terminal: DefaultTerminal,
}

impl Screen {
    fn enter() -> Result<Screen> {
        // Installed before ratatui's hook, which restores raw mode and the
        // main screen and then calls this one.
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let _ = execute!(io::stdout(), DisableMouseCapture);
            previous(info);
        }));
        let terminal = ratatui::try_init().context("the terminal client needs a terminal")?;
        let screen = Screen { terminal };
        execute!(io::stdout(), EnableMouseCapture).context("enabling the mouse")?;
        Ok(screen)
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = execute!(io::stdout(), DisableMouseCapture);
        ratatui::restore();
    }
}

/// Plays games until the person quits. `on_seated` runs whenever the
/// person gets a seat: local mode starts its computer opponent then, so
/// that the person plays black.
async fn play_games<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    events: &mut (impl Stream<Item = io::Result<Event>> + Unpin),
    on_seated: &dyn Fn(),
) -> Result<()>
where
    B::Error: Send + Sync + 'static,
{
    while play_game(terminal, app, events, on_seated).await? == Command::NewGame {
        app.reset();
    }
    Ok(())
}

/// Plays one game on a new connection; returns how the person left it
/// ([`Command::NewGame`] or [`Command::Quit`]).
async fn play_game<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    events: &mut (impl Stream<Item = io::Result<Event>> + Unpin),
    on_seated: &dyn Fn(),
) -> Result<Command>
where
    B::Error: Send + Sync + 'static,
{
    // Show "Connecting..." while connecting.
    draw(terminal, app)?;
    let addr = app.view.addr.clone();
    let mut conn = match Connection::connect(addr.as_str(), app.view.rule).await {
        Ok(conn) => Some(conn),
        Err(e) => {
            app.on_failure(format!("Cannot reach {addr}: {e}"));
            None
        }
    };
    let mut clock = tokio::time::interval(CLOCK_TICK);
    clock.set_missed_tick_behavior(MissedTickBehavior::Skip);
    loop {
        let screen = draw(terminal, app)?;
        tokio::select! {
            notice = next_notice(&mut conn) => match notice {
                Ok(Some(notice)) => {
                    if let Notice::Seated(_) = notice {
                        on_seated();
                    }
                    app.on_notice(notice, Instant::now().into_std());
                }
                // The game is over: the referee closes, so do we.
                Ok(None) => conn = None,
                Err(e) => {
                    app.on_failure(e.to_string());
                    conn = None;
                }
            },
            event = events.next() => {
                let Some(event) = event else { return Ok(Command::Quit) };
                let event = event.context("reading the terminal")?;
                match app.on_event(event, screen) {
                    Some(Command::Play(p)) => {
                        if let Some(c) = conn.as_mut() {
                            match c.play(p).await {
                                Ok(()) => {}
                                Err(ClientError::Move(e)) => app.on_move_error(e),
                                Err(e) => {
                                    app.on_failure(e.to_string());
                                    conn = None;
                                }
                            }
                        }
                    }
                    Some(other) => return Ok(other),
                    None => {}
                }
            },
            now = clock.tick() => app.tick(now.into_std()),
        }
    }
}

fn draw<B: Backend>(terminal: &mut Terminal<B>, app: &App) -> Result<Rect>
where
    B::Error: Send + Sync + 'static,
{
    let frame = terminal
        .draw(|f| ui::render(f, &app.view))
        .context("drawing the screen")?;
    Ok(frame.area)
}

/// The connection's next notice; never resolves once it is gone.
async fn next_notice(conn: &mut Option<Connection>) -> Result<Option<Notice>, ClientError> {
    match conn {
        Some(conn) => conn.next_notice().await,
        None => std::future::pending().await,
    }
}

/// The client as a person uses it: keys and clicks in, an 80x24 screen
/// out, against a scripted referee over loopback TCP. The test waits for
/// what the screen shows before pressing the next key, as a person would.
#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crossterm::event::{
        KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
    };
    use futures::channel::mpsc;
    use ratatui::backend::{ClearType, TestBackend, WindowSize};
    use ratatui::buffer::Cell;
    use ratatui::layout::{Position, Size};
    use renju::Point;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;
    use tokio::sync::watch;

    use super::*;

    /// A `TestBackend` that publishes the screen's text after every frame.
    struct Observed {
        inner: TestBackend,
        screen: watch::Sender<String>,
    }

    impl Backend for Observed {
        type Error = <TestBackend as Backend>::Error;

        fn draw<'a, I>(&mut self, content: I) -> Result<(), Self::Error>
        where
            I: Iterator<Item = (u16, u16, &'a Cell)>,
        {
            self.inner.draw(content)
        }
        fn hide_cursor(&mut self) -> Result<(), Self::Error> {
            self.inner.hide_cursor()
        }
        fn show_cursor(&mut self) -> Result<(), Self::Error> {
            self.inner.show_cursor()
        }
        fn get_cursor_position(&mut self) -> Result<Position, Self::Error> {
            self.inner.get_cursor_position()
        }
        fn set_cursor_position<P: Into<Position>>(&mut self, p: P) -> Result<(), Self::Error> {
            self.inner.set_cursor_position(p)
        }
        fn clear(&mut self) -> Result<(), Self::Error> {
            self.inner.clear()
        }
        fn clear_region(&mut self, clear_type: ClearType) -> Result<(), Self::Error> {
            self.inner.clear_region(clear_type)
        }
        fn size(&self) -> Result<Size, Self::Error> {
            self.inner.size()
        }
        fn window_size(&mut self) -> Result<WindowSize, Self::Error> {
            self.inner.window_size()
        }
        fn flush(&mut self) -> Result<(), Self::Error> {
            let buf = self.inner.buffer();
            let text = (0..buf.area.height)
                .map(|y| (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect())
                .collect::<Vec<String>>()
                .join("\n");
            self.screen.send_replace(text);
            self.inner.flush()
        }
    }

    fn pt(s: &str) -> Point {
        s.parse().unwrap()
    }

    fn key(c: KeyCode) -> io::Result<Event> {
        Ok(Event::Key(KeyEvent::new(c, KeyModifiers::NONE)))
    }

    fn typed(s: &str) -> Vec<io::Result<Event>> {
        s.chars()
            .map(|c| key(KeyCode::Char(c)))
            .chain([key(KeyCode::Enter)])
            .collect()
    }

    #[tokio::test]
    async fn a_game_by_keys_and_mouse() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        // The referee: we are white; black plays h8, i8, j8; we answer with
        // a typed point, a mouse click and the arrows; then black leaves.
        let referee = tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut f = [0u8; 3];
            let mut expect = async |s: &mut tokio::net::TcpStream, want: [u8; 3]| {
                s.read_exact(&mut f).await.unwrap();
                assert_eq!(f, want);
            };
            expect(&mut s, [0, 0, 0]).await;
            s.write_all(&[0, 1, 1]).await.unwrap();
            expect(&mut s, [1, 0, 1]).await;
            s.write_all(&[2, 1, 0, 2, 0, pt("h8").to_byte()])
                .await
                .unwrap();
            for (ours, black) in [("h9", "i8"), ("a15", "j8"), ("b15", "")] {
                let p = pt(ours).to_byte();
                expect(&mut s, [3, 0, p]).await;
                s.write_all(&[2, 1, p]).await.unwrap();
                if !black.is_empty() {
                    s.write_all(&[2, 0, pt(black).to_byte()]).await.unwrap();
                }
            }
            s.write_all(&[4, 1, 0]).await.unwrap();
            s.shutdown().await.unwrap();
            let mut rest = Vec::new();
            s.read_to_end(&mut rest).await.unwrap();
        });

        let (screen_tx, mut screen) = watch::channel(String::new());
        let backend = Observed {
            inner: TestBackend::new(80, 24),
            screen: screen_tx,
        };
        let mut terminal = Terminal::new(backend).unwrap();
        let mut app = App::new(addr, Rule::Renju, Duration::from_secs(15));
        let (keys, mut events) = mpsc::unbounded();
        let person = async move {
            let mut wait_for = async |text: &str| {
                let found = tokio::time::timeout(
                    Duration::from_secs(10),
                    screen.wait_for(|s| s.contains(text)),
                )
                .await
                .map(|shown| shown.map(|s| s.clone()));
                let last = screen.borrow().clone();
                found
                    .unwrap_or_else(|_| panic!("waiting for {text:?}:\n{last}"))
                    .unwrap()
            };
            let press = |events: Vec<io::Result<Event>>| {
                for e in events {
                    keys.unbounded_send(e).unwrap();
                }
            };
            let shown = wait_for("Turn   yours (O)").await;
            assert!(shown.contains("You    white (O)"));
            // An occupied point is refused with the reason.
            press(typed("h8"));
            wait_for("h8 is occupied.").await;
            press(typed("h9"));
            wait_for("Moves  3, last i8 (black)").await;
            // a15 is the first point of the top row.
            press(vec![Ok(Event::Mouse(MouseEvent {
                kind: MouseEventKind::Down(MouseButton::Left),
                column: 4,
                row: 2,
                modifiers: KeyModifiers::NONE,
            }))]);
            let shown = wait_for("Moves  5, last j8 (black)").await;
            assert!(shown.contains("15 [O] .  ."), "{shown}");
            press(vec![key(KeyCode::Right), key(KeyCode::Enter)]);
            let shown = wait_for("You won: the opponent").await;
            assert!(shown.contains("n      new game"), "{shown}");
            press(vec![key(KeyCode::Char('q'))]);
        };
        let ui = play_games(&mut terminal, &mut app, &mut events, &|| {});
        let (result, ()) = tokio::join!(ui, person);
        result.unwrap();
        referee.await.unwrap();
        assert_eq!(app.view.game.moves().len(), 6);
    }
}
