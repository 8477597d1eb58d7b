//! The clock: the engine stops searching when a move's time is up.
//!
//! Wall-clock time on a shared machine includes whatever else runs, so
//! this test counts the processor time of the searching thread instead:
//! it grows only while the search runs, so it can exceed the budget only if
//! the engine kept searching past its deadline, however loaded the machine
//! is. (How late the answer arrives on a loaded machine is a benchmark
//! figure, not a unit test.)

use std::time::{Duration, Instant};

use engine::{Control, Engine, EngineConfig, Player};
use renju::{Game, Point, Rule};

/// The processor time the calling thread has used so far, from
/// `/proc/thread-self/stat` (user and system time, in the kernel's fixed
/// 100 ticks per second).
fn thread_cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").expect("Linux /proc");
    // The command name, in parentheses, may hold spaces: count after it.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .expect("a stat line")
        .1
        .split_whitespace()
        .collect();
    // Fields 14 (utime) and 15 (stime) of proc(5); field 3 is the first here.
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    Duration::from_millis(ticks * 10)
}

/// A midgame position, white to move.
fn midgame() -> Game {
    let moves: Vec<Point> = "h8 h9 i9 g7 j10 k11 i10 i8 g9 j8 h10 f10 k8"
        .split_whitespace()
        .map(|s| s.parse().unwrap())
        .collect();
    Game::from_moves(Rule::Renju, moves).unwrap()
}

#[test]
fn stops_searching_when_the_budget_is_spent() {
    let mut game = midgame();
    // One thread: the search runs on this thread, so its time is counted.
    let mut engine = Engine::new(Rule::Renju);
    let budget = Duration::from_millis(100);
    // One tick of the kernel's accounting.
    let tick = Duration::from_millis(10);
    for _ in 0..6 {
        if game.result().is_some() {
            break;
        }
        let before = thread_cpu_time();
        let p = engine.pick(&game, budget).unwrap();
        let used = thread_cpu_time() - before;
        assert!(used <= budget + tick, "searched for {used:?}");
        game.play(p).unwrap();
    }
}

#[test]
fn a_stop_from_another_thread_ends_the_search() {
    let game = Game::from_moves(Rule::Renju, ["h8".parse().unwrap()]).unwrap();
    let mut engine = Engine::new(Rule::Renju);
    // Stopped before the search starts: it must not run its ten minutes.
    let control = Control::new();
    control.stop();
    let before = thread_cpu_time();
    let outcome = engine
        .analyse_until(&game, Instant::now(), Duration::from_secs(600), &control)
        .unwrap();
    assert!(game.check(outcome.best).is_ok());
    assert!(control.is_stopped());
    let used = thread_cpu_time() - before;
    assert!(used < Duration::from_secs(5), "searched for {used:?}");
}

#[test]
fn the_search_publishes_the_best_move_of_each_iteration() {
    let game = midgame();
    // One thread and a depth limit: the last iteration completes, and its
    // move is the answer.
    let mut engine = Engine::with_config(
        Rule::Renju,
        EngineConfig {
            max_depth: Some(6),
            ..EngineConfig::default()
        },
    );
    let control = Control::new();
    let outcome = engine
        .analyse_until(&game, Instant::now(), Duration::from_secs(600), &control)
        .unwrap();
    assert_eq!(outcome.depth, 6, "{outcome:?}");
    assert_eq!(control.best(), Some(outcome.best));
    assert!(control.is_stopped());
}
