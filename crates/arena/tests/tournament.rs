//! Whole tournaments between node-limited built-in engines (deterministic
//! games): standings, files, SPRT stop, and resume after an interruption.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use arena::clock::TimeControl;
use arena::entrant::{Entrant, EntrantKind};
use arena::game::Adjudication;
use arena::openings::standard;
use arena::records::read_results;
use arena::schedule::Format;
use arena::stats::{Sprt, SprtVerdict};
use arena::tournament::{Finish, Tournament, opening_lines, run};
use renju::Rule;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("arena-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn builtin(name: &str, nodes: u64) -> Entrant {
    Entrant {
        name: name.into(),
        kind: EntrantKind::parse(&format!("builtin:nodes={nodes},hash=1")).unwrap(),
        time: TimeControl::per_move(Duration::from_secs(5)),
    }
}

fn tournament(max_games: usize) -> Tournament {
    Tournament {
        entrants: vec![builtin("strong", 400), builtin("weak", 60)],
        format: Format::RoundRobin,
        rounds: 1,
        rule: Rule::Renju,
        openings: opening_lines(&standard()),
        seed: 42,
        max_games: Some(max_games),
        tolerance: Duration::from_millis(100),
        stall_grace: Duration::from_millis(500),
        startup: Duration::from_secs(5),
        adjudication: Adjudication {
            draw_after: Some(60),
            resign: None,
        },
        pause_idle: false,
        rss_limit_mb: None,
        pin: false,
        lenient_output: false,
        concurrency: 2,
        sprt: None,
    }
}

/// What must be identical between two runs (not the times).
fn games(dir: &std::path::Path) -> Vec<(usize, String, Vec<String>)> {
    let mut lines: Vec<_> = read_results(dir)
        .unwrap()
        .into_iter()
        .map(|l| {
            (
                l.index,
                l.result,
                l.moves.into_iter().map(|m| m.point).collect(),
            )
        })
        .collect();
    lines.sort();
    lines
}

#[test]
fn resume_after_an_interruption_plays_the_same_games() {
    let t = tournament(8);
    let whole = dir("whole");
    let (finish, summary) = run(&t, &whole, &AtomicBool::new(false), &mut |_, _| {}).unwrap();
    assert_eq!(finish, Finish::Complete);
    assert_eq!(summary.games, 8);
    let files = std::fs::read_dir(whole.join("games")).unwrap().count();
    assert_eq!(files, 16, "an SGF and a PSQ per game");

    let cut = dir("cut");
    let interrupt = AtomicBool::new(false);
    let mut seen = 0;
    let (finish, _) = run(&t, &cut, &interrupt, &mut |_, _| {
        seen += 1;
        if seen == 3 {
            interrupt.store(true, Ordering::SeqCst);
        }
    })
    .unwrap();
    assert_eq!(finish, Finish::Interrupted);
    let kept = read_results(&cut).unwrap().len();
    assert!((3..8).contains(&kept), "{kept} games kept");
    // Resumed with another concurrency: the same games all the same.
    let mut more = t.clone();
    more.concurrency = 1;
    let (finish, summary) = run(&more, &cut, &AtomicBool::new(false), &mut |_, _| {}).unwrap();
    assert_eq!(finish, Finish::Complete);
    assert_eq!(summary.games, 8);
    assert_eq!(games(&whole), games(&cut));
    // A finished tournament resumed plays nothing more.
    let (_, again) = run(&t, &cut, &AtomicBool::new(false), &mut |_, _| {}).unwrap();
    assert_eq!(again.games, 8);
    // Another tournament is refused in the same directory.
    let mut other = t.clone();
    other.seed = 7;
    assert!(run(&other, &cut, &AtomicBool::new(false), &mut |_, _| {}).is_err());
    for d in [whole, cut] {
        std::fs::remove_dir_all(d).unwrap();
    }
}

#[test]
fn standings_and_summary_add_up() {
    let t = tournament(4);
    let d = dir("summary");
    let (_, summary) = run(&t, &d, &AtomicBool::new(false), &mut |_, _| {}).unwrap();
    let a = &summary.entrants[0].standing;
    let b = &summary.entrants[1].standing;
    assert_eq!(a.wdl.games(), 4);
    assert_eq!(a.wdl.wins, b.wdl.losses);
    assert_eq!(a.wdl.draws, b.wdl.draws);
    assert_eq!(summary.pairs.len(), 1);
    assert_eq!(summary.pairs[0].pentanomial.pairs(), 2);
    let ended: u32 = a
        .terminations
        .values()
        .map(|c| c.won + c.lost + c.drawn)
        .sum();
    assert_eq!(ended, 4);
    assert!(d.join("summary.json").exists());
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn sprt_stops_early() {
    let mut t = tournament(52);
    // The 400-node engine against a 1-node one: H1 comes after about 35
    // games (a sweep needs 17 pairs at elo1 = 50, and this pair of engines
    // draws or loses a few). These games take milliseconds, quicker than
    // recording them: the run must still stop within a game per worker of
    // the verdict, not play on to the end.
    t.entrants[1] = builtin("weak", 1);
    let sprt = Sprt::parse("elo0=0 elo1=50 alpha=0.1 beta=0.1").unwrap();
    t.sprt = Some(sprt);
    let d = dir("sprt");
    let mut decided_at = None;
    let (finish, summary) = run(&t, &d, &AtomicBool::new(false), &mut |_, standings| {
        if decided_at.is_none() && standings.sprt(&sprt).verdict != SprtVerdict::Continue {
            decided_at = Some(standings.games);
        }
    })
    .unwrap();
    assert!(
        finish == Finish::SprtDecided(SprtVerdict::H1),
        "{finish:?} {summary:?}"
    );
    let decided_at = decided_at.expect("the verdict was reported");
    assert!(decided_at < 52, "{decided_at}");
    assert!(
        summary.games <= decided_at + t.concurrency as u32,
        "{} games, decided after {decided_at}",
        summary.games
    );
    std::fs::remove_dir_all(d).unwrap();
}
