//! Engine speed: nodes per second of the full search at a fixed node count,
//! and time to solve VCF positions.
//!
//! Run with `cargo bench -p engine`; the throughput lines are nodes per
//! second (search) and positions per second (VCF).

use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use engine::{Engine, EngineConfig, Player, Reason};
use renju::{Game, Point, Rule};

/// Middle-game positions from engine matches (RIF moves), none decided by
/// the root solvers.
const MIDGAMES: [&str; 4] = [
    "h8 h9 g10 g9 e9 g7 j9 e7 d7 g5 g6 e3 f4",
    "h8 h9 f9 e11 e8 g10 e6 e10 e12 g11",
    "h8 h9 f10 e11 j6 i7 f11 f8 k6 e9",
    "h8 h9 g9 g10 i8 f10 j8 g8 i10 e10 d10 f9",
];

/// Positions from engine games where the side to move wins by continuous
/// fours (four to six fours deep), found by the engine at the root.
const VCFS: [&str; 8] = [
    "h8 h9 f10 g9 f9 f11 g10 e8 e10 d10 i9 j10 g8 d11",
    "h8 h9 g10 g8 e6 f9 e9 i10 j11 j9 e10 h11 k8 g12 f13 i9 g9 i12",
    "h8 h9 g10 g9 g7 i9 j9 j11 f8 i10 g8 i8 i11 h6 e8 d8 f9 i6 i7 d7 e10 d11 f11 d9 d10 d5 d6 k12 l13 e7",
    "h8 h9 f9 f11 g10 e10 e8 h11 f6 e11 g11 g12 h13 e12 d7 c6 e14 d9 c8 i10 j9 d12 f12 d11 d13",
    "h8 h9 g9 g10 i8 f10 j8 g8 i10 e10 d10 f9 d11 f11 k8 l8 f12 f7 f8 e6 d5 d9 g12 c8 b7 e12 d13 h7 i6 e8",
    "h8 h9 g9 f11 f8 g10 i8 g8 h10 i11 i7 j6 e7 d6 i9 i10 f7 j11 k12 g7 f10 e11 j8 g11 h11 e12 d13 d11 c11 e10 f9 f6 k7 l6 i6 i5 e9 g14 d9 c9 c10",
    "h8 h9 g8 g9 f9 f8 e10 h7 e7 f10 j7 e9 k8 g11 j8 i8 d8 j9 k10 g6 f5 h12 i13 h10 c12 d11 i11",
    "h8 h9 f7 f6 i7 k5 g9 f10 f8 e7 h6 d8 g5 j8 g7 b10 c9 e9",
];

fn game(moves: &str) -> Game {
    let moves = moves
        .split_whitespace()
        .map(|s| s.parse::<Point>().unwrap());
    Game::from_moves(Rule::Renju, moves).unwrap()
}

fn engine(nodes: u64) -> Engine {
    Engine::with_config(
        Rule::Renju,
        EngineConfig {
            max_nodes: Some(nodes),
            hash_bytes: 16 << 20,
            ..EngineConfig::default()
        },
    )
}

fn search(c: &mut Criterion) {
    const NODES: u64 = 200_000;
    let mut group = c.benchmark_group("search");
    group.sample_size(10);
    for (i, moves) in MIDGAMES.iter().enumerate() {
        let g = game(moves);
        // Count the nodes actually searched (a decided position stops early).
        let nodes = engine(NODES)
            .analyse(&g, Duration::from_secs(60))
            .unwrap()
            .nodes;
        group.throughput(Throughput::Elements(nodes));
        let mut e = engine(NODES);
        group.bench_function(format!("midgame {i} ({nodes} nodes)"), |b| {
            b.iter(|| {
                e.new_game(Rule::Renju).unwrap();
                e.analyse(&g, Duration::from_secs(60)).unwrap()
            })
        });
    }
    group.finish();
}

fn vcf(c: &mut Criterion) {
    let mut group = c.benchmark_group("vcf");
    group.sample_size(20);
    let games: Vec<Game> = VCFS.iter().map(|m| game(m)).collect();
    for g in &games {
        let o = engine(1_000_000)
            .analyse(g, Duration::from_secs(60))
            .unwrap();
        assert_eq!(o.reason, Reason::Vcf, "{o:?}");
    }
    group.throughput(Throughput::Elements(games.len() as u64));
    let mut e = engine(1_000_000);
    group.bench_function("solve set", |b| {
        b.iter(|| {
            for g in &games {
                e.new_game(Rule::Renju).unwrap();
                e.analyse(g, Duration::from_secs(60)).unwrap();
            }
        })
    });
    group.finish();
}

criterion_group!(benches, search, vcf);
criterion_main!(benches);
