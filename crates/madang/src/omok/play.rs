//! `madang omok play`: Omok in the terminal for a person (ratatui and
//! crossterm), against the computer or on a referee (`--connect`).
//!
//! The screen is a pure function of [`ui::View`]; [`app::App`] turns what
//! the person presses, what the referee says and how the local game stands
//! into that view and into commands; [`versus::Versus`] is the game against
//! the computer, whose engine thinks on a thread of its own
//! ([`computer`]). This module only owns the terminal, the signals, the
//! connection and the engine thread, and races them in `select!` loops.

mod app;
mod computer;
mod record;
pub(crate) mod ui;
mod versus;

use std::future::Future;
use std::io;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use crossterm::event::{DisableMouseCapture, EnableMouseCapture, Event, EventStream};
use crossterm::execute;
use futures::{Stream, StreamExt};
use omok::clock::TimeControl;
use omok::player::Notice;
use omok_net::client::{ClientError, Connection};
use ratatui::backend::Backend;
use ratatui::layout::Rect;
use ratatui::{DefaultTerminal, Terminal};
use renju::{Color, Rule};
use tokio::signal::unix::{SignalKind, signal};
use tokio::time::{Instant, MissedTickBehavior};

use self::app::{App, Command};
use self::computer::{Computer, Level};
use self::versus::{Output, Versus};
use crate::cli::{RuleArg, parse_delay, parse_duration};
use crate::omok::addr::HostPort;

/// How often the clocks on screen are redrawn.
const CLOCK_TICK: Duration = Duration::from_millis(100);

/// The colour the person plays against the computer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ColorChoice {
    /// Black moves first.
    Black,
    /// White.
    White,
    /// Drawn at random.
    Random,
}

/// Arguments of `madang omok play`.
#[derive(clap::Args)]
pub struct Args {
    /// The referee to join (a host name or an IP address, with the port).
    /// Without it, you play the computer in this process.
    #[arg(long, value_name = "HOST:PORT")]
    connect: Option<HostPort>,
    /// The rule: renju, renju-simplified, freestyle or standard (on a
    /// referee, the referee's: the protocol does not carry it).
    #[arg(long, value_enum, default_value_t)]
    rule: RuleArg,
    /// On a referee: its time per move, for the clock on screen. Without it
    /// the Omok document's 15s is assumed, and the screen says so if the
    /// referee's turns turn out longer or shorter.
    #[arg(long, value_parser = parse_duration, value_name = "DUR", requires = "connect")]
    turn_time: Option<Duration>,
    /// Against the computer: your colour; `n` after a game swaps colours.
    #[arg(long, value_enum, default_value = "black", conflicts_with = "connect")]
    color: ColorChoice,
    /// Against the computer: its strength (beginner: 1 ply, 0.2s; easy: 3
    /// plies, 0.5s; medium: 6 plies, 1s; hard: 3s; max: 10s a move).
    #[arg(long, value_enum, default_value = "medium", conflicts_with = "connect")]
    level: Level,
    /// Against the computer: its time per move, instead of the level's.
    #[arg(long, value_parser = parse_duration, value_name = "DUR", conflicts_with = "connect")]
    think_time: Option<Duration>,
    /// Against the computer: a clock for the whole game, like `10m`, with an
    /// increment per move as `10m+5s`. Without it nobody plays on time.
    #[arg(long, value_parser = parse_time_control, value_name = "TIME[+INC]", conflicts_with = "connect")]
    clock: Option<TimeControl>,
    /// Against the computer: the clock's increment per move (as `+INC` in
    /// `--clock`).
    #[arg(long, value_parser = parse_duration, value_name = "DUR", requires = "clock")]
    increment: Option<Duration>,
    /// Against the computer: where finished games are saved (an SGF file
    /// each and a line in games.jsonl). Default: $XDG_DATA_HOME/madang/games
    /// or ~/.local/share/madang/games.
    #[arg(long, value_name = "DIR", conflicts_with = "connect")]
    record_dir: Option<PathBuf>,
}

/// Parses `--clock`: `10m` or `10m+5s` (a base above zero, an optional
/// increment), each side's time for the whole game.
fn parse_time_control(text: &str) -> Result<TimeControl, String> {
    let parse = |part: &str| parse_delay(part).map_err(|e| e.to_string());
    let (base, increment) = match text.split_once('+') {
        Some((base, inc)) => (parse(base)?, parse(inc)?),
        None => (parse(text)?, Duration::ZERO),
    };
    // The clock counts whole milliseconds.
    let base_ms = millis(base);
    if base_ms == 0 {
        return Err("a game clock needs some time, like 10m or 5m+3s".to_owned());
    }
    Ok(TimeControl::PerGame {
        base_ms,
        increment_ms: millis(increment),
    })
}

/// Whole milliseconds, as [`TimeControl`] holds them.
fn millis(d: Duration) -> u64 {
    d.as_millis().try_into().unwrap_or(u64::MAX)
}

/// How games against the computer are set up.
#[derive(Debug, Clone)]
struct LocalSettings {
    rule: Rule,
    first_color: Color,
    level: Level,
    think: Duration,
    clock: Option<TimeControl>,
    record_dir: PathBuf,
}

impl LocalSettings {
    fn engine_name(&self) -> String {
        format!("madang {}", self.level.name())
    }
}

/// Runs `madang omok play`.
pub fn run(args: Args) -> Result<()> {
    let mut tty = Tty::open()?;
    let (screen, events) = (&mut tty.screen, &mut tty.events);
    let saved = tty.runtime.block_on(async {
        let mut stop = std::pin::pin!(signals()?);
        match args.connect {
            Some(addr) => {
                let mut app = App::remote(addr.to_string(), Rule::from(args.rule), args.turn_time);
                play_remote(&mut screen.terminal, &mut app, events, &mut stop).await?;
                Ok(Vec::new())
            }
            None => {
                let settings = LocalSettings {
                    rule: Rule::from(args.rule),
                    first_color: match args.color {
                        ColorChoice::Black => Color::Black,
                        ColorChoice::White => Color::White,
                        ColorChoice::Random if rand::random::<bool>() => Color::Black,
                        ColorChoice::Random => Color::White,
                    },
                    level: args.level,
                    think: args.think_time.unwrap_or(args.level.think_time()),
                    clock: args.clock.map(|c| match (c, args.increment) {
                        (TimeControl::PerGame { base_ms, .. }, Some(increment)) => {
                            TimeControl::PerGame {
                                base_ms,
                                increment_ms: millis(increment),
                            }
                        }
                        _ => c,
                    }),
                    record_dir: args.record_dir.unwrap_or_else(record::default_dir),
                };
                play_local(&mut screen.terminal, &settings, events, &mut stop).await
            }
        }
    })?;
    // Once the screen is back, the paths stay in the person's scrollback.
    drop(tty);
    for path in saved {
        println!("saved {}", path.display());
    }
    Ok(())
}

/// Resolves when SIGTERM, SIGHUP or SIGINT arrives, so that the screen is
/// put back as it was before the process ends.
pub(crate) fn signals() -> Result<impl Future<Output = ()>> {
    let mut term = signal(SignalKind::terminate()).context("handling SIGTERM")?;
    let mut hup = signal(SignalKind::hangup()).context("handling SIGHUP")?;
    let mut int = signal(SignalKind::interrupt()).context("handling SIGINT")?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = hup.recv() => {}
            _ = int.recv() => {}
        }
    })
}

/// A full-screen terminal session: the runtime its loop runs on, the
/// screen, and the terminal's events.
pub(crate) struct Tty {
    /// A single-threaded runtime: the loops are light.
    pub(crate) runtime: tokio::runtime::Runtime,
    /// The terminal, in full-screen mode until dropped.
    pub(crate) screen: Screen,
    /// Keys, clicks and resizes.
    pub(crate) events: EventStream,
}

impl Tty {
    /// Starts the runtime and takes over the terminal.
    pub(crate) fn open() -> Result<Tty> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("starting the async runtime")?;
        let screen = Screen::enter()?;
        Ok(Tty {
            runtime,
            screen,
            events: EventStream::new(),
        })
    }
}

/// The terminal in raw mode on the alternate screen with mouse reporting;
/// put back as it was when dropped, and on panic.
pub(crate) struct Screen {
    /// The terminal to draw on.
    pub(crate) terminal: DefaultTerminal,
}

impl Screen {
    /// Takes over the terminal.
    pub(crate) fn enter() -> Result<Screen> {
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

/// Plays games against the computer until the person quits, swapping
/// colours for each new game; returns the SGF files saved.
async fn play_local<B: Backend>(
    terminal: &mut Terminal<B>,
    settings: &LocalSettings,
    events: &mut (impl Stream<Item = io::Result<Event>> + Unpin),
    stop: &mut (impl Future<Output = ()> + Unpin),
) -> Result<Vec<PathBuf>>
where
    B::Error: Send + Sync + 'static,
{
    let mut saved = Vec::new();
    let mut app = App::local(settings.engine_name(), settings.rule);
    let mut person = settings.first_color;
    loop {
        let versus = Versus::new(settings.rule, person, settings.think, settings.clock);
        // A fresh engine thread per game: answers of the last game's
        // searches can never reach this one.
        let computer = Computer::start(settings.rule, settings.level);
        let game = Game {
            versus,
            computer,
            saved: &mut saved,
        };
        match local_game(terminal, &mut app, game, settings, events, stop).await? {
            Command::NewGame => {
                person = !person;
                app.reset();
            }
            _ => return Ok(saved),
        }
    }
}

/// A game against the computer: its state, its engine thread, and where
/// its record's path goes.
struct Game<'a> {
    versus: Versus,
    computer: Computer,
    saved: &'a mut Vec<PathBuf>,
}

/// One game against the computer; returns how the person left it
/// ([`Command::NewGame`] or [`Command::Quit`]).
async fn local_game<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    game: Game<'_>,
    settings: &LocalSettings,
    events: &mut (impl Stream<Item = io::Result<Event>> + Unpin),
    stop: &mut (impl Future<Output = ()> + Unpin),
) -> Result<Command>
where
    B::Error: Send + Sync + 'static,
{
    let Game {
        mut versus,
        mut computer,
        saved,
    } = game;
    let now = || Instant::now().into_std();
    app.show_local(&versus, now());
    draw(terminal, app)?;
    // Only now that the board is on screen does any clock start.
    versus.begin(now(), std::time::SystemTime::now());
    let mut tick = tokio::time::interval(CLOCK_TICK);
    tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    loop {
        while let Some(output) = versus.poll_output() {
            match output {
                Output::Think(request) => computer.ask(request),
                Output::Ended(finished) => {
                    let name = settings.engine_name();
                    app.view.saved =
                        Some(match record::save(&settings.record_dir, &finished, &name) {
                            Ok(path) => {
                                let shown = format!("Saved {}", path.display());
                                saved.push(path);
                                shown
                            }
                            Err(e) => format!("Not saved: {e:#}"),
                        });
                }
            }
        }
        app.show_local(&versus, now());
        let screen = draw(terminal, app)?;
        let deadline = versus.poll_timeout().map(Instant::from_std);
        tokio::select! {
            Some(answer) = computer.answers.recv() => {
                let hinting = versus.hint_pending();
                versus.on_answer(answer, now());
                if hinting && !versus.hint_pending() {
                    app.show_local(&versus, now());
                    app.follow_hint();
                }
            }
            event = events.next() => {
                let Some(event) = event else { return Ok(Command::Quit) };
                let event = event.context("reading the terminal")?;
                let done = match app.on_event(event, screen) {
                    Some(Command::Play(p)) => versus.play(p, now()).map(|()| app.view.message.clear()),
                    Some(Command::Undo) => versus.undo(now()).map(|()| app.view.message = "Taken back.".into()),
                    Some(Command::Hint) => versus.hint().map(|()| app.view.message = "Looking for a hint...".into()),
                    Some(Command::Resign) => versus.resign(now()),
                    Some(other) => return Ok(other),
                    None => Ok(()),
                };
                if let Err(refusal) = done {
                    app.view.message = refusal;
                }
            }
            () = sleep_until(deadline) => versus.handle_timeout(now()),
            _ = tick.tick() => {}
            () = &mut *stop => return Ok(Command::Quit),
        }
    }
}

/// Sleeps until `deadline`; never resolves without one.
async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

/// Plays games on the referee until the person quits.
async fn play_remote<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    events: &mut (impl Stream<Item = io::Result<Event>> + Unpin),
    stop: &mut (impl Future<Output = ()> + Unpin),
) -> Result<()>
where
    B::Error: Send + Sync + 'static,
{
    while remote_game(terminal, app, events, stop).await? == Command::NewGame {
        app.reset();
    }
    Ok(())
}

/// Plays one game on a new connection; returns how the person left it
/// ([`Command::NewGame`] or [`Command::Quit`]).
async fn remote_game<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    events: &mut (impl Stream<Item = io::Result<Event>> + Unpin),
    stop: &mut (impl Future<Output = ()> + Unpin),
) -> Result<Command>
where
    B::Error: Send + Sync + 'static,
{
    // Show "Connecting..." while connecting.
    draw(terminal, app)?;
    let ui::Opponent::Referee(addr) = app.view.opponent.clone() else {
        return Ok(Command::Quit);
    };
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
                Ok(Some(notice)) => app.on_notice(notice, Instant::now().into_std()),
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
                    Some(c @ (Command::NewGame | Command::Quit)) => return Ok(c),
                    // Undo, hints and resigning are for games against the
                    // computer; the app never asks for them here.
                    Some(Command::Undo | Command::Hint | Command::Resign) | None => {}
                }
            },
            now = clock.tick() => app.tick(now.into_std()),
            () = &mut *stop => return Ok(Command::Quit),
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
/// out, against a scripted referee over loopback TCP or against the
/// engine. The tests wait for what the screen shows before pressing the
/// next key, as a person would.
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

    fn terminal() -> (Terminal<Observed>, watch::Receiver<String>) {
        let (screen_tx, screen) = watch::channel(String::new());
        let backend = Observed {
            inner: TestBackend::new(80, 24),
            screen: screen_tx,
        };
        (Terminal::new(backend).unwrap(), screen)
    }

    /// Waits until the screen shows `text`, and returns the screen.
    async fn wait_for(screen: &mut watch::Receiver<String>, text: &str) -> String {
        let found = tokio::time::timeout(
            Duration::from_secs(20),
            screen.wait_for(|s| s.contains(text)),
        )
        .await
        .map(|shown| shown.map(|s| s.clone()));
        let last = screen.borrow().clone();
        found
            .unwrap_or_else(|_| panic!("waiting for {text:?}:\n{last}"))
            .unwrap()
    }

    fn pt(s: &str) -> Point {
        s.parse().unwrap()
    }

    /// Queues terminal events, as if typed.
    fn send(keys: &mpsc::UnboundedSender<io::Result<Event>>, events: Vec<io::Result<Event>>) {
        for e in events {
            keys.unbounded_send(e).unwrap();
        }
    }

    fn key(c: KeyCode) -> io::Result<Event> {
        Ok(Event::Key(KeyEvent::new(c, KeyModifiers::NONE)))
    }

    fn ch(c: char) -> io::Result<Event> {
        key(KeyCode::Char(c))
    }

    fn typed(s: &str) -> Vec<io::Result<Event>> {
        s.chars().map(ch).chain([key(KeyCode::Enter)]).collect()
    }

    #[tokio::test]
    async fn a_game_on_a_referee_by_keys_and_mouse() {
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

        let (mut terminal, mut screen) = terminal();
        let mut app = App::remote(addr, Rule::Renju, Some(Duration::from_secs(15)));
        let (keys, mut events) = mpsc::unbounded();
        let person = async move {
            let press = |events: Vec<io::Result<Event>>| send(&keys, events);
            let shown = wait_for(&mut screen, "Turn   yours (O)").await;
            assert!(shown.contains("You    white (O)"));
            // An occupied point is refused with the reason.
            press(typed("h8"));
            wait_for(&mut screen, "h8 is occupied.").await;
            press(typed("h9"));
            wait_for(&mut screen, "Moves  3, last i8 (black)").await;
            // a15 is the first point of the top row.
            press(vec![Ok(Event::Mouse(MouseEvent {
                kind: MouseEventKind::Down(MouseButton::Left),
                column: 4,
                row: 2,
                modifiers: KeyModifiers::NONE,
            }))]);
            let shown = wait_for(&mut screen, "Moves  5, last j8 (black)").await;
            assert!(shown.contains("15 [O] .  ."), "{shown}");
            press(vec![key(KeyCode::Right), key(KeyCode::Enter)]);
            let shown = wait_for(&mut screen, "You won: the opponent").await;
            assert!(shown.contains("n new game"), "{shown}");
            press(vec![ch('q')]);
        };
        let mut stop = std::future::pending::<()>();
        let ui = play_remote(&mut terminal, &mut app, &mut events, &mut stop);
        let (result, ()) = tokio::join!(ui, person);
        result.unwrap();
        referee.await.unwrap();
        assert_eq!(app.view.game.moves().len(), 6);
    }

    #[test]
    fn time_controls() {
        assert_eq!(
            parse_time_control("10m+5s"),
            Ok(TimeControl::PerGame {
                base_ms: 600_000,
                increment_ms: 5_000
            })
        );
        assert_eq!(
            parse_time_control("90s"),
            Ok(TimeControl::PerGame {
                base_ms: 90_000,
                increment_ms: 0
            })
        );
        assert_eq!(
            parse_time_control("0s+5s").unwrap_err(),
            "a game clock needs some time, like 10m or 5m+3s"
        );
        assert!(parse_time_control("0.5ms").is_err());
        assert!(parse_time_control("10").is_err());
        assert!(parse_time_control("10m+").is_err());
    }

    /// The per-game clock in simulated time: nothing runs until the board
    /// is drawn, then the person's 10 s run out while the screen counts
    /// them down, and the loss is recorded.
    #[tokio::test(start_paused = true)]
    async fn the_game_clock_runs_out_in_simulated_time() {
        let dir = std::env::temp_dir().join(format!("madang-play-clock-{}", std::process::id()));
        let settings = LocalSettings {
            rule: Rule::Renju,
            first_color: Color::Black,
            level: Level::Beginner,
            think: Duration::from_millis(200),
            clock: Some(TimeControl::PerGame {
                base_ms: 10_000,
                increment_ms: 2_000,
            }),
            record_dir: dir.clone(),
        };
        let (mut terminal, mut screen) = terminal();
        let (keys, mut events) = mpsc::unbounded();
        let start = Instant::now();
        let person = async move {
            let shown = wait_for(&mut screen, "Black  0:10 <").await;
            assert!(shown.contains("White  0:10"), "{shown}");
            let shown = wait_for(&mut screen, "Black  0:05").await;
            assert!(shown.contains("Turn   yours (X)"), "{shown}");
            let shown = wait_for(&mut screen, "You lost on time.").await;
            assert!(shown.contains("Black  0:00.0"), "{shown}");
            assert!(shown.contains("Saved "), "{shown}");
            keys.unbounded_send(ch('q')).unwrap();
        };
        let mut stop = std::future::pending::<()>();
        let ui = play_local(&mut terminal, &settings, &mut events, &mut stop);
        let (saved, ()) = tokio::join!(ui, person);
        assert_eq!(saved.unwrap().len(), 1);
        // Ten simulated seconds, to the clock's tick.
        let took = start.elapsed();
        assert!(
            took >= Duration::from_secs(10) && took < Duration::from_millis(10_200),
            "{took:?}"
        );
        let games = std::fs::read_to_string(dir.join("games.jsonl")).unwrap();
        assert!(games.contains("\"reason\":\"timeout\""), "{games}");
        assert!(games.contains("\"winner\":\"white\""), "{games}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[tokio::test]
    async fn against_the_computer_hint_analysis_undo_resign_and_swap() {
        let dir = std::env::temp_dir().join(format!("madang-play-local-{}", std::process::id()));
        let settings = LocalSettings {
            rule: Rule::Renju,
            first_color: Color::White,
            level: Level::Beginner,
            think: Duration::from_millis(200),
            clock: None,
            record_dir: dir.clone(),
        };
        let (mut terminal, mut screen) = terminal();
        let (keys, mut events) = mpsc::unbounded();
        let person = async move {
            let press = |events: Vec<io::Result<Event>>| send(&keys, events);
            // We chose white: the computer opens.
            let shown = wait_for(&mut screen, "Turn   yours (O)").await;
            assert!(shown.contains("Versus madang beginner"), "{shown}");
            assert!(shown.contains("Moves  1, last "), "{shown}");
            // A hint moves the cursor to the engine's suggestion.
            press(vec![ch('t')]);
            let shown = wait_for(&mut screen, "Hint: ").await;
            press(vec![ch('v')]);
            let shown2 = wait_for(&mut screen, "line: ").await;
            assert!(shown2.contains("hint: "), "{shown}\n{shown2}");
            // Enter plays the hinted point; the computer answers.
            press(vec![key(KeyCode::Enter)]);
            let shown = wait_for(&mut screen, "Moves  3, last").await;
            assert!(shown.contains("  1."), "{shown}");
            assert!(shown.contains("engine: "), "{shown}");
            // Undo takes back the pair.
            press(vec![ch('u')]);
            wait_for(&mut screen, "Moves  1, last").await;
            wait_for(&mut screen, "Taken back.").await;
            // q asks, Esc goes on; r asks, r resigns.
            press(vec![ch('q')]);
            wait_for(&mut screen, "Really quit? Press q.").await;
            press(vec![key(KeyCode::Esc)]);
            wait_for(&mut screen, "Not quitting").await;
            press(vec![ch('r')]);
            wait_for(&mut screen, "Really resign? Press r.").await;
            press(vec![ch('r')]);
            let shown = wait_for(&mut screen, "You resigned.").await;
            assert!(shown.contains("Saved "), "{shown}");
            assert!(shown.contains("n new game (swap colours)"), "{shown}");
            // A new game with colours swapped: we are black now.
            press(vec![ch('n')]);
            wait_for(&mut screen, "You    black (X)").await;
            wait_for(&mut screen, "Turn   yours (X)").await;
            press(vec![ch('q'), ch('q')]);
        };
        let mut stop = std::future::pending::<()>();
        let ui = play_local(&mut terminal, &settings, &mut events, &mut stop);
        let (result, ()) = tokio::join!(ui, person);
        result.unwrap();
        let games = std::fs::read_to_string(dir.join("games.jsonl")).unwrap();
        assert_eq!(games.lines().count(), 1, "{games}");
        assert!(games.contains("\"reason\":\"resignation\""), "{games}");
        assert!(games.contains("\"white\":\"you\""), "{games}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
