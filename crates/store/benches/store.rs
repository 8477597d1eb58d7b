//! What a record costs: saving a game (each save is committed to disk before
//! it returns), a worker's claim and finish of a tournament game, and a page
//! of a player's recent games among 10,000. SQLite on a temporary file
//! always; PostgreSQL too when `MADANG_TEST_POSTGRES` holds a URL.

use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use omok::records::{GameRecord, MoveRecord};
use serde_json::json;
use store::{NewJob, RecentFilter, Store};
use tokio::runtime::Runtime;

fn record(black: &str, white: &str) -> GameRecord {
    GameRecord {
        id: "bench".to_owned(),
        rule: renju::Rule::Renju,
        black: black.to_owned(),
        white: white.to_owned(),
        started_unix_ms: 1_700_000_000_000,
        setup: Vec::new(),
        // A long game: 60 moves.
        moves: (0..60)
            .map(|i| MoveRecord {
                point: renju::Point::new(i % 15, i / 15).expect("on the board"),
                millis: Some(1500),
            })
            .collect(),
        winner: Some(renju::Color::Black),
        reason: omok::referee::EndReason::Five,
    }
}

fn bench_backend(c: &mut Criterion, rt: &Runtime, name: &str, url: &str) {
    let store = rt.block_on(Store::open(url)).unwrap();
    let game = record("ann", "bob");
    let mut group = c.benchmark_group(name);
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(5));
    group.bench_function("save_omok", |b| {
        b.iter(|| rt.block_on(store.save_omok(&game)).unwrap());
    });
    let job = [NewJob {
        pairing: json!([0, 1]),
        opening: "h8".to_owned(),
    }];
    group.bench_function("claim_and_finish", |b| {
        b.iter_batched(
            || {
                rt.block_on(store.create_tournament(&json!({}), &job))
                    .unwrap()
            },
            |tournament| {
                rt.block_on(async {
                    let job = store.claim_next(&tournament, "w").await.unwrap().unwrap();
                    store.finish(&job, &game, &json!("1-0")).await.unwrap()
                })
            },
            BatchSize::PerIteration,
        );
    });
    // 10,000 games among 100 players; a page of one player's 20 newest.
    let player = format!("p-{:x}", rand::random::<u64>());
    rt.block_on(async {
        for i in 0..10_000 {
            let black = if i % 100 == 0 {
                player.clone()
            } else {
                format!("other-{}", i % 99)
            };
            store.save_omok(&record(&black, "x")).await.unwrap();
        }
    });
    let filter = RecentFilter {
        player: Some(player),
        ..RecentFilter::default()
    };
    group.bench_function("recent_of_a_player", |b| {
        b.iter(|| {
            let page = rt.block_on(store.recent(&filter)).unwrap();
            assert_eq!(page.games.len(), 20);
        });
    });
    group.finish();
    rt.block_on(store.close());
}

fn bench(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    bench_backend(c, &rt, "sqlite", &url);
    if let Ok(url) = std::env::var("MADANG_TEST_POSTGRES") {
        bench_backend(c, &rt, "postgres", &url);
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
