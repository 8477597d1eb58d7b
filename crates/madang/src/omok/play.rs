//! `madang omok play`: Omok in the terminal for a person (ratatui and
//! crossterm).
//!
//! The screen is a pure function of [`ui::View`]; [`app::App`] turns what
//! the referee says and what the person presses into that view and into
//! commands; this module only owns the terminal and the connection and
//! races them in one `select!` loop.

mod app;
mod ui;

use std::io;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use crossterm::event::{DisableMouseCapture, EnableMouseCapture, EventStream};
use crossterm::execute;
use futures::StreamExt;
use omok::client::{ClientError, Connection};
use omok::player::Notice;
use ratatui::DefaultTerminal;
use ratatui::layout::Rect;
use renju::Rule;
use tokio::time::{Instant, MissedTickBehavior};

use self::app::{App, Command};
use super::bot::parse_duration;

/// How often the clock on screen is redrawn.
const CLOCK_TICK: Duration = Duration::from_millis(100);

/// Arguments of `madang omok play`.
#[derive(clap::Args)]
pub struct Args {
    /// The referee to join. Without it, a referee and a computer opponent
    /// start in this process.
    #[arg(long, value_name = "HOST:PORT")]
    connect: Option<String>,
    /// The referee's rule (the protocol does not carry it).
    #[arg(long, default_value = "renju")]
    rule: Rule,
    /// The referee's time per move, for the clock on screen.
    #[arg(long, default_value = "15s", value_parser = parse_duration, value_name = "DUR")]
    turn_time: Duration,
}

/// Runs `madang omok play`.
pub fn run(args: Args) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let (addr, on_seated): (String, Box<dyn Fn()>) = match args.connect {
        Some(addr) => (addr, Box::new(|| {})),
        None => bail!(
            "playing against the computer without --connect is not available in this build; \
             start a referee and a bot (`madang omok bot --connect HOST:PORT`), \
             then run `madang omok play --connect HOST:PORT`"
        ),
    };
    let mut app = App::new(addr, args.rule, args.turn_time);
    let mut screen = Screen::enter()?;
    runtime.block_on(play_games(&mut screen.terminal, &mut app, &on_seated))
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
async fn play_games(
    terminal: &mut DefaultTerminal,
    app: &mut App,
    on_seated: &dyn Fn(),
) -> Result<()> {
    let mut events = EventStream::new();
    while play_game(terminal, app, &mut events, on_seated).await? == Command::NewGame {
        app.reset();
    }
    Ok(())
}

/// Plays one game on a new connection; returns how the person left it
/// ([`Command::NewGame`] or [`Command::Quit`]).
async fn play_game(
    terminal: &mut DefaultTerminal,
    app: &mut App,
    events: &mut EventStream,
    on_seated: &dyn Fn(),
) -> Result<Command> {
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

fn draw(terminal: &mut DefaultTerminal, app: &App) -> Result<Rect> {
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
