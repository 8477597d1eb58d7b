//! Standings from results however they come: workers finish games out of
//! order, and a game recorded twice (a resumed run) counts once.

use std::time::Duration;

use arena::clock::TimeControl;
use arena::entrant::{Entrant, EntrantKind};
use arena::game::{Adjudication, Termination};
use arena::records::ResultLine;
use arena::schedule::Format;
use arena::tournament::Tournament;
use renju::Rule;

fn settings() -> Tournament {
    let entrant = |name: &str| Entrant {
        name: name.into(),
        kind: EntrantKind::parse("builtin").unwrap(),
        time: TimeControl::per_move(Duration::from_secs(1)),
    };
    Tournament {
        entrants: vec![entrant("a"), entrant("b")],
        format: Format::RoundRobin,
        rounds: 1,
        rule: Rule::Renju,
        openings: vec![String::new(); 2],
        seed: 1,
        max_games: None,
        tolerance: Duration::ZERO,
        stall_grace: Duration::ZERO,
        startup: Duration::from_secs(1),
        adjudication: Adjudication::default(),
        pause_idle: false,
        rss_limit_mb: None,
        pin: false,
        lenient_output: false,
        concurrency: 1,
        sprt: None,
    }
}

/// The result of scheduled game `index` as a win of `result`.
fn line(t: &Tournament, index: usize, result: &str) -> ResultLine {
    let p = t.schedule()[index];
    ResultLine {
        index,
        round: p.round,
        opening: p.opening,
        black: p.black,
        white: p.white,
        black_name: t.entrants[p.black].name.clone(),
        white_name: t.entrants[p.white].name.clone(),
        result: result.into(),
        termination: Termination::Five,
        detail: String::new(),
        opening_moves: 0,
        timeout_overrun_ms: None,
        moves: Vec::new(),
    }
}

#[test]
fn order_and_repeats_do_not_change_the_standings() {
    let t = settings();
    assert_eq!(t.schedule().len(), 4);
    let results = [
        line(&t, 0, "black"),
        line(&t, 1, "black"),
        line(&t, 2, "white"),
        line(&t, 3, "draw"),
    ];
    let in_order = t.standings(&results);
    assert_eq!(in_order.games, 4);
    // a plays black in games 0 and 2: it wins 0, loses 1 and 2, draws 3;
    // its opening pairs score 2 and 1 half-points.
    let a = &in_order.entrants[0].wdl;
    assert_eq!((a.wins, a.draws, a.losses), (1, 1, 2));
    assert_eq!(in_order.pairs[0][1].counts, [0, 1, 1, 0, 0]);
    let shuffled = [
        results[3].clone(),
        results[1].clone(),
        results[3].clone(),
        results[0].clone(),
        results[2].clone(),
        results[1].clone(),
    ];
    assert_eq!(t.standings(&shuffled), in_order);
    // Lines beyond the schedule (another tournament's) are not counted.
    let mut extra = results.to_vec();
    extra.push(line(&t, 3, "black"));
    extra[4].index = 9;
    assert_eq!(t.standings(&extra), in_order);
}
