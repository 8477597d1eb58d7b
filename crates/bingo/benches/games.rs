//! How fast the protocol runs without a network: whole auto-vs-auto games
//! through both state machines (every line formatted and parsed), and the
//! parsing of single lines.

use std::hint::black_box;
use std::time::Instant;

use bingo::session::{CardChoice, Config, Limits, Session};
use bingo::{Extensions, Message, Role, Settings, auto, frame, local};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use rand::SeedableRng;
use rand::rngs::StdRng;

fn pair(size: usize, lines: usize, extensions: Extensions, seed: u64) -> (Session, Session) {
    let settings = Settings::new(size, lines, Role::Host).unwrap();
    let config = |role, seed| Config {
        role,
        settings,
        card: CardChoice::Shuffled(seed),
        extensions,
        game_id: "bench".into(),
        resume_key: "00112233445566778899aabbccddeeff".into(),
        salt: "00112233445566778899aabbccddeeff".into(),
        limits: Limits::default(),
    };
    (
        Session::new(config(Role::Host, seed), Instant::now()),
        Session::new(config(Role::Guest, seed + 1), Instant::now()),
    )
}

fn games(c: &mut Criterion) {
    let cases = [
        ("game 5x5 L=5", 5, 5, Extensions::default()),
        ("game 5x5 L=5 verify", 5, 5, Extensions::ALL),
        ("game 15x15 L=12 verify", 15, 12, Extensions::ALL),
    ];
    for (name, size, lines, extensions) in cases {
        let mut seed = 0;
        c.bench_function(name, |b| {
            b.iter_batched(
                || {
                    seed += 2;
                    (
                        pair(size, lines, extensions, seed),
                        StdRng::seed_from_u64(seed),
                    )
                },
                |((mut host, mut guest), mut rng)| {
                    local::play(&mut host, &mut guest, Instant::now(), |_, board| {
                        auto::pick(board, &mut rng)
                    })
                },
                BatchSize::SmallInput,
            )
        });
    }
}

fn lines(c: &mut Criterion) {
    c.bench_function("parse CALL line", |b| {
        b.iter(|| Message::parse(black_box("CALL 17")))
    });
    c.bench_function("parse host HELLO", |b| {
        b.iter(|| {
            Message::parse(black_box(
                "HELLO bingo/1 size=5 lines=5 first=host id=0123456789abcdef verify resume",
            ))
        })
    });
    let chat = format!("CHAT {}\n", "x".repeat(1019));
    c.bench_function("frame 1024-byte line", |b| {
        b.iter(|| frame::next_line(black_box(chat.as_bytes())))
    });
}

criterion_group!(benches, games, lines);
criterion_main!(benches);
