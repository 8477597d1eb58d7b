//! Speed of the forbidden test: a full-board scan of midgame positions
//! (the 81 published cases plus positions from random play-outs).

use criterion::{Criterion, criterion_group, criterion_main};
use renju::{Board, Color, Game, Point, Rule};
use std::hint::black_box;

fn published_cases() -> Vec<Board> {
    let text = include_str!("../tests/data/renju-forbidden.txt");
    let mut boards = Vec::new();
    for block in text.split("\n\n") {
        let mut board = Board::new();
        let mut any = false;
        for line in block.lines() {
            let (key, value) = match line.split_once(':') {
                Some(kv) => kv,
                None => continue,
            };
            let color = match key.trim() {
                "black" => Color::Black,
                "white" => Color::White,
                _ => continue,
            };
            for t in value.split_whitespace() {
                board.place(t.parse().unwrap(), color).unwrap();
                any = true;
            }
        }
        if any {
            boards.push(board);
        }
    }
    boards
}

/// Random legal play-outs of 20 to 60 moves near the centre (fixed seed).
fn playouts(n: usize) -> Vec<Board> {
    let mut seed = 0x5eed_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut boards = Vec::new();
    while boards.len() < n {
        let mut game = Game::new(Rule::Renju);
        let len = 20 + (next() % 41) as usize;
        while game.moves().len() < len && game.result().is_none() {
            let p = Point::new(3 + (next() % 9) as usize, 3 + (next() % 9) as usize).unwrap();
            let _ = game.play(p);
        }
        if game.result().is_none() {
            boards.push(game.board().clone());
        }
    }
    boards
}

fn bench(c: &mut Criterion) {
    let cases = published_cases();
    let random = playouts(200);
    for (name, boards) in [("81 cases", &cases), ("random play-outs", &random)] {
        for rule in [Rule::Renju, Rule::RenjuSimplified] {
            c.bench_function(
                &format!("forbidden_points/{rule}/{name} (per position)"),
                |b| {
                    let mut i = 0;
                    b.iter(|| {
                        i = (i + 1) % boards.len();
                        black_box(boards[i].forbidden_points(rule))
                    })
                },
            );
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
