//! The referee's own cost per move, without sockets: a whole scripted game
//! through the [`Table`] state machine, under each renju rule set (black's
//! moves go through the forbidden-point test).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use omok::referee::{Table, TableAction, TableConfig};
use renju::{Color, Point, Rule};

/// Black's five on row 8 against white's stones in column a.
const GAME: [&str; 9] = ["h8", "a1", "i8", "a2", "j8", "a3", "k8", "a4", "l8"];

fn one_game(rule: Rule, moves: &[u8]) -> usize {
    let now = Instant::now();
    let mut table = Table::new(TableConfig {
        rule,
        ..TableConfig::default()
    });
    let mut actions = 0;
    for seat in Color::ALL {
        table.handle_seat(seat, now).unwrap();
        table.handle_frame(seat, [1, 0, 1], now);
    }
    for (i, &p) in moves.iter().enumerate() {
        let seat = if i % 2 == 0 {
            Color::Black
        } else {
            Color::White
        };
        table.handle_frame(seat, [3, 0, p], now + Duration::from_millis(i as u64));
        while let Some(a) = table.poll_action() {
            actions += usize::from(matches!(a, TableAction::Send(..)));
        }
    }
    actions
}

fn bench(c: &mut Criterion) {
    let moves: Vec<u8> = GAME
        .iter()
        .map(|s| s.parse::<Point>().unwrap().to_byte())
        .collect();
    for rule in [Rule::Renju, Rule::RenjuSimplified] {
        c.bench_function(&format!("table: 9-move game, {}", rule.name()), |b| {
            b.iter(|| one_game(black_box(rule), black_box(&moves)))
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
