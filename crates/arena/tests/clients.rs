//! Programs written to the Omok document, seated by the arena: they hear
//! how every game ends (End), whether the table or the arena ended it.

use std::time::{Duration, Instant};

use arena::clock::TimeControl;
use arena::entrant::{Entrant, EntrantKind};
use arena::game::{Adjudication, GameOutcome, GameSetup, Termination, play};
use arena::watchdog::Watchdog;
use renju::{Color, Rule};

const CLIENT: &str = env!("CARGO_BIN_EXE_arena-fake-client");
const ENGINE: &str = env!("CARGO_BIN_EXE_arena-fake-engine");
const MS: Duration = Duration::from_millis(1);

/// A fresh log file for one client of one test, removed when dropped.
struct Log(std::path::PathBuf);

impl std::ops::Deref for Log {
    type Target = std::path::Path;

    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Log {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn log_path(test: &str) -> Log {
    let path = std::env::temp_dir().join(format!("arena-client-{test}-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&path);
    Log(path)
}

fn client(mode: &str, log: &std::path::Path) -> Entrant {
    let (mode, arg) = mode.split_once(' ').unwrap_or((mode, "0"));
    let command = format!(
        "client:{CLIENT} {mode} {arg} {} {{host}} {{port}}",
        log.display()
    );
    Entrant {
        name: format!("client-{mode}"),
        kind: EntrantKind::parse(&command).unwrap(),
        time: TimeControl::per_move(1000 * MS),
    }
}

fn engine(mode: &str) -> Entrant {
    Entrant {
        name: mode.to_owned(),
        kind: EntrantKind::parse(&format!("{ENGINE} {mode}")).unwrap(),
        time: TimeControl::per_move(1000 * MS),
    }
}

fn setup() -> GameSetup {
    GameSetup {
        rule: Rule::Freestyle,
        opening: Vec::new(),
        tolerance: 50 * MS,
        stall_grace: 1000 * MS,
        startup: 5000 * MS,
        adjudication: Adjudication::default(),
        pause_idle: false,
        rss_limit: None,
        cpus: [None, None],
        lenient_output: false,
    }
}

/// The frames a client wrote down.
fn frames(log: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The client's last line: its End frame.
fn end_of(log: &std::path::Path) -> String {
    frames(log).last().cloned().unwrap_or_default()
}

fn run(setup: &GameSetup, black: &Entrant, white: &Entrant) -> GameOutcome {
    let watchdog = Watchdog::new();
    play(setup, [black, white], &watchdog)
}

#[test]
fn a_five_is_the_tables_end() {
    let (b, w) = (log_path("five-b"), log_path("five-w"));
    let out = run(&setup(), &client("good", &b), &client("good", &w));
    assert_eq!(out.termination, Termination::Five, "{out:?}");
    let last = out.moves.last().unwrap().point.to_byte();
    let (winner, loser) = match out.winner {
        Some(Color::Black) => (&b, &w),
        _ => (&w, &b),
    };
    assert_eq!(end_of(winner), format!("end 1 {last}"));
    assert_eq!(end_of(loser), format!("end 0 {last}"));
    assert_eq!(frames(&b)[0], "connect 0");
    assert_eq!(frames(&w)[0], "connect 1");
}

#[test]
fn an_opponent_crash_is_a_win_by_error() {
    let w = log_path("crash");
    let out = run(&setup(), &engine("crash"), &client("good", &w));
    assert_eq!(out.termination, Termination::Crash, "{out:?}");
    assert_eq!(out.winner, Some(Color::White));
    assert_eq!(end_of(&w), "end 1 0");
}

#[test]
fn a_late_move_by_the_arenas_clock_is_a_timeout() {
    let b = log_path("late");
    let mut late = client("late 400", &b);
    late.time = TimeControl::per_move(200 * MS);
    let out = run(&setup(), &late, &engine("good"));
    assert_eq!(out.termination, Termination::Timeout, "{out:?}");
    assert_eq!(out.winner, Some(Color::White));
    assert_eq!(end_of(&b), "end 0 1");
}

#[test]
fn a_stalled_opponent_is_a_win_by_error() {
    let b = log_path("stall");
    let mut s = setup();
    s.stall_grace = 200 * MS;
    let mut hang = engine("hang");
    hang.time = TimeControl::per_move(200 * MS);
    let out = run(&s, &client("good", &b), &hang);
    assert_eq!(out.termination, Termination::Stall, "{out:?}");
    assert_eq!(out.winner, Some(Color::Black));
    assert_eq!(end_of(&b), "end 1 0");
}

#[test]
fn an_adjudicated_draw_is_a_draw() {
    let b = log_path("adjudicated");
    let mut s = setup();
    s.adjudication.draw_after = Some(6);
    let out = run(&s, &client("good", &b), &engine("good"));
    assert_eq!(out.termination, Termination::AdjudicatedDraw, "{out:?}");
    let last = out.moves.last().unwrap().point.to_byte();
    assert_eq!(end_of(&b), format!("end 2 {last}"));
}

#[test]
fn an_interrupted_tournament_ends_the_game_as_a_shutdown() {
    let b = log_path("shutdown");
    let mut hang = client("hang", &b);
    hang.time = TimeControl::per_move(Duration::from_secs(60));
    let opponent = engine("good");
    let watchdog = Watchdog::new();
    let s = setup();
    std::thread::scope(|scope| {
        let game = scope.spawn(|| play(&s, [&hang, &opponent], &watchdog));
        // The game has started once the client heard the start signal.
        let until = Instant::now() + Duration::from_secs(20);
        while !frames(&b).iter().any(|f| f.starts_with("update")) {
            assert!(Instant::now() < until, "the game never started");
            std::thread::yield_now();
        }
        watchdog.cancel();
        game.join().unwrap();
    });
    assert_eq!(end_of(&b), "end 2 0");
}
