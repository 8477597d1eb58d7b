//! `arena check` against fake engines.

use std::time::{Duration, Instant};

use arena::check::{Verdict, check};

const FAKE: &str = env!("CARGO_BIN_EXE_arena-fake-engine");

fn verdicts(mode: &str) -> Vec<(&'static str, Verdict)> {
    // A second a move (a loaded test machine), but less for the late one.
    let turn = if mode.starts_with("late") { 300 } else { 1000 };
    let started = Instant::now();
    let items = check(
        &format!("{FAKE} {mode}"),
        Duration::from_millis(turn),
        Duration::from_secs(2),
    );
    assert!(started.elapsed() < Duration::from_secs(30));
    items.into_iter().map(|i| (i.command, i.verdict)).collect()
}

#[test]
fn a_good_engine_passes() {
    let v = verdicts("good");
    let names: Vec<_> = v.iter().map(|x| x.0).collect();
    assert_eq!(names, arena::check::CHECKED);
    assert!(v.iter().all(|x| x.1 == Verdict::Pass), "{v:?}");
}

#[test]
fn broken_engines_fail_where_they_break() {
    let v = verdicts("forbidden");
    assert!(v.contains(&("FORBIDDEN", Verdict::Fail)), "{v:?}");
    let v = verdicts("hang");
    assert!(v.contains(&("BEGIN", Verdict::Fail)), "{v:?}");
    let v = verdicts("ignore-end");
    assert!(v.contains(&("END", Verdict::Fail)), "{v:?}");
    let v = verdicts("late 400");
    assert!(v.contains(&("timing", Verdict::Fail)), "{v:?}");
    let v = verdicts("silent");
    assert_eq!(v, [("START", Verdict::Fail)]);
}
