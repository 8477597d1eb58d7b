//! The clock: a 100 ms budget is kept while other processes load both
//! cores.

use std::process::{Child, Command};
use std::time::{Duration, Instant};

use engine::{Engine, Player};
use renju::{Game, Point, Rule};

/// Busy-looping child processes, killed when dropped.
struct Load(Vec<Child>);

impl Load {
    fn start(n: usize) -> Load {
        Load(
            (0..n)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .spawn()
                        .expect("spawn a busy loop")
                })
                .collect(),
        )
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[test]
fn keeps_a_100ms_budget_under_load() {
    let moves: Vec<Point> = "h8 h9 i9 g7 j10 k11 i10 i8 g9 j8 h10 f10 k8"
        .split_whitespace()
        .map(|s| s.parse().unwrap())
        .collect();
    let mut game = Game::from_moves(Rule::Renju, moves).unwrap();
    let mut engine = Engine::new(Rule::Renju);
    let budget = Duration::from_millis(100);
    let _load = Load::start(2);
    for _ in 0..6 {
        if game.result().is_some() {
            break;
        }
        let start = Instant::now();
        let p = engine.pick(&game, budget).unwrap();
        let took = start.elapsed();
        assert!(took <= budget, "took {took:?}");
        game.play(p).unwrap();
    }
}
