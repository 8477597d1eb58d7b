//! Games for fitting the evaluation (`eval_tune`): node-limited self-play
//! from the 26 public Gomocup renju openings, each under a board symmetry
//! and with a few seeded random plies so that no two games are alike.
//!
//! Prints one game per line: the result (`B`, `W` or `D`), how many plies
//! the opening and the random plies took (positions before that are not
//! the engine's play), then the moves in RIF notation.
//!
//! ```text
//! cargo run --release -p engine --example eval_data -- --games 1500 --nodes 3000 --seed 1 > games.txt
//! ```

use std::io::Write;
use std::time::Duration;

use clap::Parser;
use engine::{Engine, EngineConfig, Player};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use renju::{Color, Game, GameResult, Point, Rule, SIZE, Symmetry};

/// The 26 openings, as offsets from the centre (c-gomoku-cli's `offset`
/// format), black first.
const OPENINGS: &str = include_str!("openings.txt");

#[derive(Parser)]
struct Args {
    /// Games to play.
    #[arg(long, default_value_t = 1000)]
    games: usize,
    /// Node limit per move.
    #[arg(long, default_value_t = 3000)]
    nodes: u64,
    /// Random plies after the opening.
    #[arg(long, default_value_t = 2)]
    random_plies: usize,
    /// Seed of the random plies.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

fn openings() -> Vec<Vec<Point>> {
    let centre = (SIZE / 2) as isize;
    OPENINGS
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let n: Vec<isize> = l
                .split(',')
                .map(|t| t.trim().parse().expect("an offset"))
                .collect();
            n.chunks(2)
                .map(|c| {
                    Point::new((centre + c[0]) as usize, (centre + c[1]) as usize)
                        .expect("on the board")
                })
                .collect()
        })
        .collect()
}

/// A legal point within two of a stone, at random.
fn random_ply(game: &Game, rng: &mut StdRng) -> Option<Point> {
    let near: Vec<Point> = game
        .legal_moves()
        .into_iter()
        .filter(|p| {
            game.moves()
                .iter()
                .any(|m| m.x().abs_diff(p.x()) <= 2 && m.y().abs_diff(p.y()) <= 2)
        })
        .collect();
    (!near.is_empty()).then(|| near[rng.random_range(0..near.len())])
}

fn main() -> std::io::Result<()> {
    let args = Args::parse();
    let openings = openings();
    let mut engine = Engine::with_config(
        Rule::Renju,
        EngineConfig {
            max_nodes: Some(args.nodes),
            hash_bytes: 16 << 20,
            ..EngineConfig::default()
        },
    );
    let mut out = std::io::stdout().lock();
    for g in 0..args.games {
        let mut rng = StdRng::seed_from_u64(args.seed.wrapping_mul(1_000_003) + g as u64);
        let sym = Symmetry::ALL[(g / openings.len()) % Symmetry::ALL.len()];
        let mut game = Game::new(Rule::Renju);
        for &p in &openings[g % openings.len()] {
            game.play(p.transform(sym)).expect("the openings are legal");
        }
        for _ in 0..args.random_plies {
            if let Some(p) = random_ply(&game, &mut rng) {
                game.play(p).expect("a legal point");
            }
        }
        let prefix = game.moves().len();
        engine.new_game(Rule::Renju).expect("a new game");
        while game.result().is_none() {
            // Only the node limit ends the search.
            let p = match engine.pick(&game, Duration::from_secs(60)) {
                Ok(p) => p,
                Err(_) => break,
            };
            game.play(p).expect("the engine plays legal moves");
        }
        let result = match game.result() {
            Some(GameResult::Win { winner, .. }) if *winner == Color::Black => "B",
            Some(GameResult::Win { .. }) => "W",
            _ => "D",
        };
        let moves: Vec<String> = game.moves().iter().map(Point::to_string).collect();
        writeln!(out, "{result} {prefix} {}", moves.join(" "))?;
        out.flush()?;
    }
    Ok(())
}
