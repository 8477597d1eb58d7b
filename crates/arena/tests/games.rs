//! Games against deliberately broken Gomocup engines: every termination
//! classified, nothing hangs, no process left behind.

use std::time::{Duration, Instant};

use arena::clock::TimeControl;
use arena::entrant::{Entrant, EntrantKind};
use arena::game::{Adjudication, GameOutcome, GameSetup, Termination, play};
use arena::watchdog::Watchdog;
use renju::{Color, Point, Rule};

const FAKE: &str = env!("CARGO_BIN_EXE_arena-fake-engine");
const MS: Duration = Duration::from_millis(1);

fn marker(test: &str) -> String {
    format!("marker-{test}-{}", std::process::id())
}

fn fake(mode: &str, marker: &str) -> Entrant {
    // The numeric argument comes second, the marker third.
    let (mode, arg) = mode.split_once(' ').unwrap_or((mode, "0"));
    Entrant {
        name: mode.to_owned(),
        kind: EntrantKind::parse(&format!("{FAKE} {mode} {arg} {marker}")).unwrap(),
        // Generous: the machine running the tests may be loaded; the tests
        // of time set their own.
        time: TimeControl::per_move(1000 * MS),
    }
}

fn builtin() -> Entrant {
    Entrant {
        name: "builtin".into(),
        kind: EntrantKind::parse("builtin:nodes=300,hash=1").unwrap(),
        time: TimeControl::per_move(1000 * MS),
    }
}

fn setup(rule: Rule, opening: &str) -> GameSetup {
    GameSetup {
        rule,
        opening: opening
            .split_whitespace()
            .map(|s| s.parse::<Point>().unwrap())
            .collect(),
        tolerance: 50 * MS,
        stall_grace: 300 * MS,
        startup: 2000 * MS,
        adjudication: Adjudication::default(),
        pause_idle: false,
        rss_limit: None,
        cpus: [None, None],
        lenient_output: false,
    }
}

/// Processes whose command line holds `marker` (zombies have none).
fn leftovers(marker: &str) -> usize {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    dir.filter_map(|e| e.ok())
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
        })
        .count()
}

fn run(setup: &GameSetup, black: &Entrant, white: &Entrant, marker: &str) -> GameOutcome {
    let watchdog = Watchdog::new();
    let started = Instant::now();
    let outcome = play(setup, [black, white], &watchdog);
    drop(watchdog);
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the game took too long"
    );
    // SIGKILL takes effect asynchronously: give the kernel a moment.
    let until = Instant::now() + Duration::from_secs(5);
    while leftovers(marker) > 0 && Instant::now() < until {
        std::thread::yield_now();
    }
    assert_eq!(leftovers(marker), 0, "processes left behind: {outcome:?}");
    outcome
}

#[test]
fn fakes_play_a_whole_game() {
    let m = marker("whole");
    let out = run(
        &setup(Rule::Freestyle, ""),
        &fake("good", &m),
        &builtin(),
        &m,
    );
    assert!(
        matches!(out.termination, Termination::Five | Termination::Draw),
        "{out:?}"
    );
    assert!(out.moves.len() >= 9);
    assert!(out.moves.iter().all(|mv| mv.budget == Some(1000 * MS)));
}

#[test]
fn a_hung_engine_is_stalled_and_killed() {
    let m = marker("hang");
    let started = Instant::now();
    let out = run(
        &setup(Rule::Renju, "h8 h9 f10"),
        &fake("hang", &m),
        &builtin(),
        &m,
    );
    assert_eq!(out.termination, Termination::Stall, "{out:?}");
    assert_eq!(out.winner, Some(Color::White));
    // Budget, tolerance and grace: 1.35 s, not seconds more.
    assert!(started.elapsed() < Duration::from_secs(6));
}

#[test]
fn forked_children_are_killed_too() {
    let m = marker("fork");
    let out = run(
        &setup(Rule::Renju, "h8 h9"),
        &fake("fork", &m),
        &builtin(),
        &m,
    );
    assert_eq!(out.termination, Termination::Stall, "{out:?}");
}

#[test]
fn children_escaping_the_session_are_killed_too() {
    let m = marker("setsid");
    let out = run(
        &setup(Rule::Freestyle, ""),
        &fake("setsid", &m),
        &builtin(),
        &m,
    );
    assert!(
        matches!(out.termination, Termination::Five | Termination::Draw),
        "{out:?}"
    );
}

#[test]
fn a_hung_engine_that_escaped_its_session_is_killed_with_its_children() {
    let m = marker("setsid-hang");
    let out = run(
        &setup(Rule::Renju, "h8 h9"),
        &fake("setsid", &m),
        &fake("hang", &m),
        &m,
    );
    assert_eq!(out.termination, Termination::Stall, "{out:?}");
}

#[test]
fn a_crash_is_a_crash() {
    let m = marker("crash");
    let out = run(
        &setup(Rule::Renju, "h8 h9"),
        &fake("crash", &m),
        &builtin(),
        &m,
    );
    assert_eq!(out.termination, Termination::Crash, "{out:?}");
    assert_eq!(out.winner, Some(Color::White));
}

#[test]
fn a_late_answer_is_a_timeout_with_its_overrun() {
    let m = marker("late");
    // 200 ms budget, 50 ms tolerance: 400 ms is 200 ms over.
    let mut late = fake("late 400", &m);
    late.time = TimeControl::per_move(200 * MS);
    let mut s = setup(Rule::Renju, "h8 h9");
    // Late, not stalled, even on a loaded machine.
    s.stall_grace = 3000 * MS;
    let out = run(&s, &late, &builtin(), &m);
    assert_eq!(out.termination, Termination::Timeout, "{out:?}");
    assert!(out.detail.contains("over its 200 ms"), "{}", out.detail);
    let overrun = out.timeout_overrun.expect("a late answer");
    assert!(overrun >= 200 * MS, "{overrun:?}");
}

#[test]
fn overruns_within_the_tolerance_are_measured() {
    let m = marker("slightly-late");
    let mut s = setup(Rule::Freestyle, "h8 h9");
    // A tolerance wide enough for a loaded machine: the point is the
    // measurement of a 100 ms overrun, not the limit.
    s.tolerance = 2000 * MS;
    s.adjudication.draw_after = Some(6);
    let mut late = fake("late 300", &m);
    late.time = TimeControl::per_move(200 * MS);
    let out = run(&s, &late, &builtin(), &m);
    assert_eq!(out.termination, Termination::AdjudicatedDraw, "{out:?}");
    assert_eq!(out.moves.len(), 6);
    let late: Vec<_> = out.moves.iter().step_by(2).skip(1).collect();
    assert_eq!(late.len(), 2);
    for mv in late {
        assert_eq!(mv.budget, Some(200 * MS));
        assert!(
            mv.overrun >= 100 * MS && mv.overrun == mv.took - 200 * MS,
            "{mv:?}"
        );
    }
}

#[test]
fn illegal_moves() {
    let m = marker("illegal");
    for mode in ["occupied", "offboard"] {
        let out = run(
            &setup(Rule::Renju, "h8 h9"),
            &fake(mode, &m),
            &builtin(),
            &m,
        );
        assert_eq!(out.termination, Termination::Illegal, "{mode}: {out:?}");
        assert_eq!(out.winner, Some(Color::White));
        assert_eq!(out.moves.len(), 2, "the refused move is not recorded");
    }
}

#[test]
fn a_forbidden_move_loses_for_black() {
    let m = marker("forbidden");
    // j8 makes two open threes for black.
    let s = setup(Rule::Renju, "h8 a1 i8 a3 j9 a5 j10 o15");
    let out = run(&s, &fake("forbidden", &m), &builtin(), &m);
    assert_eq!(out.termination, Termination::Forbidden, "{out:?}");
    assert_eq!(out.winner, Some(Color::White));
}

#[test]
fn garbage_and_errors_are_protocol_errors() {
    let m = marker("garbage");
    for mode in ["garbage", "error"] {
        let out = run(&setup(Rule::Renju, "h8"), &builtin(), &fake(mode, &m), &m);
        assert_eq!(out.termination, Termination::Protocol, "{mode}: {out:?}");
        assert_eq!(out.winner, Some(Color::Black));
    }
}

#[test]
fn an_engine_ignoring_end_is_killed_after_the_game() {
    let m = marker("ignore-end");
    let mut s = setup(Rule::Freestyle, "");
    s.adjudication.draw_after = Some(4);
    let out = run(&s, &fake("ignore-end", &m), &fake("good", &m), &m);
    assert_eq!(out.termination, Termination::AdjudicatedDraw, "{out:?}");
}

#[test]
fn silence_at_start_is_a_stall() {
    let m = marker("silent");
    let mut s = setup(Rule::Renju, "");
    s.startup = 300 * MS;
    let out = run(&s, &builtin(), &fake("silent", &m), &m);
    assert_eq!(out.termination, Termination::Stall, "{out:?}");
    assert_eq!(out.winner, Some(Color::Black));
}

#[test]
fn an_engine_that_cannot_start_crashes() {
    let m = marker("missing");
    let missing = Entrant {
        name: "missing".into(),
        kind: EntrantKind::parse("/nonexistent/pbrain").unwrap(),
        time: TimeControl::per_move(200 * MS),
    };
    let out = run(&setup(Rule::Renju, ""), &missing, &builtin(), &m);
    assert_eq!(out.termination, Termination::Crash, "{out:?}");
}

#[test]
fn paused_engines_still_play() {
    let m = marker("paused");
    let mut s = setup(Rule::Freestyle, "");
    s.pause_idle = true;
    s.adjudication.draw_after = Some(10);
    let out = run(&s, &fake("good", &m), &fake("good", &m), &m);
    assert_eq!(out.termination, Termination::AdjudicatedDraw, "{out:?}");
}

#[test]
fn memory_past_the_limit_loses() {
    let m = marker("hog");
    let mut s = setup(Rule::Renju, "h8 h9");
    s.rss_limit = Some(64 << 20);
    let mut hog = fake("hog 200", &m);
    hog.time = TimeControl::per_move(Duration::from_secs(10));
    let out = run(&s, &hog, &builtin(), &m);
    assert_eq!(out.termination, Termination::Memory, "{out:?}");
    assert_eq!(out.winner, Some(Color::White));
}

#[test]
fn memory_of_children_counts() {
    let m = marker("hog-child");
    let mut s = setup(Rule::Renju, "h8 h9");
    s.rss_limit = Some(64 << 20);
    let mut hog = fake("hog-child 200", &m);
    hog.time = TimeControl::per_move(Duration::from_secs(10));
    let out = run(&s, &hog, &builtin(), &m);
    assert_eq!(out.termination, Termination::Memory, "{out:?}");
    assert_eq!(out.winner, Some(Color::White));
}

#[test]
fn agreeing_evaluations_adjudicate_a_win() {
    let m = marker("resign");
    let mut s = setup(Rule::Freestyle, "");
    s.adjudication.resign = Some(arena::game::ResignRule {
        moves: 2,
        score: 1000,
    });
    let out = run(&s, &fake("eval -5000", &m), &fake("eval 5000", &m), &m);
    assert_eq!(out.termination, Termination::Resign, "{out:?}");
    assert_eq!(out.winner, Some(Color::White));
    // Both had reported by white's first move; two agreeing moves later.
    assert_eq!(out.moves.len(), 3);
    // Disagreement never adjudicates.
    s.adjudication.draw_after = Some(8);
    let out = run(&s, &fake("eval 5000", &m), &fake("eval 5000", &m), &m);
    assert_eq!(out.termination, Termination::AdjudicatedDraw, "{out:?}");
}

#[test]
fn the_game_clock_runs_out() {
    let m = marker("game-clock");
    let mut s = setup(Rule::Freestyle, "");
    s.tolerance = Duration::ZERO;
    s.stall_grace = 3000 * MS;
    let mut slow = fake("late 300", &m);
    // No per-move limit: 1 s for the game, 100 ms back per move. The
    // budgets run about 1000, 800, 600, 400, 200 ms: the fifth is late.
    slow.time = TimeControl {
        turn: None,
        game: Some(1000 * MS),
        increment: 100 * MS,
    };
    let out = run(&s, &slow, &builtin(), &m);
    assert_eq!(out.termination, Termination::Timeout, "{out:?}");
    assert_eq!(out.winner, Some(Color::White));
    let budgets: Vec<_> = out.moves.iter().step_by(2).map(|mv| mv.budget).collect();
    assert!(budgets.len() >= 2, "{out:?}");
    assert_eq!(budgets[0], Some(1000 * MS));
    // Each later budget is what was left: the earlier ones minus the time
    // taken plus the increment.
    let first = out.moves[0];
    assert_eq!(budgets[1], Some(1000 * MS - first.took + 100 * MS));
}

#[test]
fn lenient_output_ignores_garbage() {
    let m = marker("lenient");
    let mut s = setup(Rule::Renju, "h8");
    s.lenient_output = true;
    // The garbage is ignored; no move ever follows it.
    let out = run(&s, &builtin(), &fake("garbage", &m), &m);
    assert_eq!(out.termination, Termination::Stall, "{out:?}");
}
