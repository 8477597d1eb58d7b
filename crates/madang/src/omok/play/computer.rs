//! The computer opponent of `madang omok play`: the built-in engine on a
//! thread of its own, so that the screen stays responsive (undo, quit) while
//! it thinks. Requests go in through a channel and answers come back
//! tagged with the request's id; an answer nobody waits for any more (after
//! an undo) is simply dropped by the game.

use std::sync::mpsc as std_mpsc;
use std::thread;
use std::time::Duration;

use engine::{Engine, EngineConfig, Player};
use renju::{Game, Point, Rule};
use tokio::sync::mpsc;

/// Named strengths: how long and how deep the engine thinks per move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Level {
    /// One ply: it sees fives and fours, little else.
    Beginner,
    /// Three plies.
    Easy,
    /// Six plies, at most a second.
    Medium,
    /// No depth limit, three seconds a move.
    Hard,
    /// No depth limit, ten seconds a move.
    Max,
}

impl Level {
    /// Time per move unless `--think-time` says otherwise.
    pub(crate) fn think_time(self) -> Duration {
        Duration::from_millis(match self {
            Level::Beginner => 200,
            Level::Easy => 500,
            Level::Medium => 1_000,
            Level::Hard => 3_000,
            Level::Max => 10_000,
        })
    }

    /// The deepest iteration.
    pub(crate) fn max_depth(self) -> Option<i32> {
        match self {
            Level::Beginner => Some(1),
            Level::Easy => Some(3),
            Level::Medium => Some(6),
            Level::Hard | Level::Max => None,
        }
    }

    /// The name shown and recorded.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Level::Beginner => "beginner",
            Level::Easy => "easy",
            Level::Medium => "medium",
            Level::Hard => "hard",
            Level::Max => "max",
        }
    }
}

/// Why the engine is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// Its own move.
    Move,
    /// A suggestion for the person.
    Hint,
}

/// One search to run.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    /// Echoed in the answer.
    pub(crate) id: u64,
    /// The position, side to move included.
    pub(crate) game: Game,
    /// Time for the search.
    pub(crate) budget: Duration,
}

/// What the engine thinks of a position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Analysis {
    /// The move it chose.
    pub(crate) best: Point,
    /// Its score for the side to move; beyond [`engine::WIN_BOUND`] a win
    /// (or loss) is found.
    pub(crate) score: i32,
    /// Deepest completed iteration.
    pub(crate) depth: i32,
    /// Nodes searched.
    pub(crate) nodes: u64,
    /// The expected line, starting with `best`.
    pub(crate) pv: Vec<Point>,
}

/// The engine's reply to a [`Request`].
#[derive(Debug, Clone)]
pub(crate) struct Answer {
    /// The request's id.
    pub(crate) id: u64,
    /// The analysis, or why there is none (no legal move).
    pub(crate) analysis: Result<Analysis, String>,
}

/// Plies of expected line shown after the best move.
const PV_PLIES: usize = 4;
/// Node allowance of each follow-up search that extends the line: the
/// engine reports no line of its own, so the line is the best move
/// followed by quick searches of the positions it leads to.
const PV_NODES: u64 = 20_000;

/// The engine thread's handle: send requests, receive answers.
pub(crate) struct Computer {
    requests: std_mpsc::Sender<Request>,
    /// Answers in the order the requests were sent.
    pub(crate) answers: mpsc::UnboundedReceiver<Answer>,
}

impl Computer {
    /// Starts the engine thread for `rule` at `level`. The thread ends
    /// when this handle is dropped (after its current search).
    pub(crate) fn start(rule: Rule, level: Level) -> Computer {
        let (requests, inbox) = std_mpsc::channel::<Request>();
        let (outbox, answers) = mpsc::unbounded_channel();
        thread::Builder::new()
            .name("engine".into())
            .spawn(move || {
                let config = EngineConfig {
                    max_depth: level.max_depth(),
                    ..EngineConfig::default()
                };
                let mut engine = Engine::with_config(rule, config);
                let mut follow = Engine::with_config(
                    rule,
                    EngineConfig {
                        max_nodes: Some(PV_NODES),
                        hash_bytes: 4 << 20,
                        ..EngineConfig::default()
                    },
                );
                for request in inbox {
                    let analysis = analyse(&mut engine, &mut follow, &request);
                    let answer = Answer {
                        id: request.id,
                        analysis,
                    };
                    if outbox.send(answer).is_err() {
                        break;
                    }
                }
            })
            .expect("spawning the engine thread");
        Computer { requests, answers }
    }

    /// Queues a search. The requests are bounded by the game: at most one
    /// move and one hint are outstanding at a time.
    pub(crate) fn ask(&self, request: Request) {
        // The thread only stops when this handle is dropped.
        let _ = self.requests.send(request);
    }
}

fn analyse(
    engine: &mut Engine,
    follow: &mut Engine,
    request: &Request,
) -> Result<Analysis, String> {
    let outcome = engine
        .analyse(&request.game, request.budget)
        .map_err(|e| e.to_string())?;
    let mut pv = vec![outcome.best];
    let mut line = request.game.clone();
    let mut next = outcome.best;
    while pv.len() <= PV_PLIES {
        match line.play(next) {
            Ok(None) => {}
            Ok(Some(_)) | Err(_) => break,
        }
        match follow.pick(&line, Duration::from_millis(200)) {
            Ok(p) => {
                pv.push(p);
                next = p;
            }
            Err(_) => break,
        }
    }
    pv.truncate(PV_PLIES + 1);
    Ok(Analysis {
        best: outcome.best,
        score: outcome.score,
        depth: outcome.depth,
        nodes: outcome.nodes,
        pv,
    })
}
