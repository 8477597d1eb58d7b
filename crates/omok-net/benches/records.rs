//! Durable records at game end: how long a table waits for its record to
//! be on disk before it may send End, alone and with 1,000 tables ending in
//! the same instant (group commit), on the disk the target directory is on.

use std::time::{Duration, SystemTime};

use criterion::{Criterion, criterion_group, criterion_main};
use omok::records::GameRecord;
use omok::referee::{EndReason, GameSummary};
use omok_net::recorder::Recorder;
use renju::{Color, Rule};

fn record(n: usize) -> GameRecord {
    let moves = ["h8", "a1", "i8", "a2", "j8", "a3", "k8", "a4", "l8"]
        .iter()
        .map(|s| (s.parse().unwrap(), Duration::from_millis(120)))
        .collect();
    let summary = GameSummary {
        rule: Rule::Renju,
        moves,
        winner: Some(Color::Black),
        reason: EndReason::Five,
    };
    GameRecord::new(
        format!("bench-{n}"),
        &summary,
        ["127.0.0.1:40000".into(), "127.0.0.1:40001".into()],
        SystemTime::now(),
    )
}

fn bench(c: &mut Criterion) {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("records-bench");
    let _ = std::fs::remove_dir_all(&dir);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let recorder = Recorder::open(&dir).unwrap();
    let mut group = c.benchmark_group("records");
    group.sample_size(10);
    group.bench_function("one game, until durable", |b| {
        b.iter(|| runtime.block_on(async { recorder.record(record(0)).await.unwrap().unwrap() }))
    });
    group.bench_function("1000 games ending together, until all durable", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let committed: Vec<_> = (0..1000).map(|n| recorder.record(record(n))).collect();
                for c in committed {
                    c.await.unwrap().unwrap();
                }
            })
        })
    });
    group.finish();
    runtime.block_on(recorder.finish()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);
