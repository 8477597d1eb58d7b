//! `madang brain`: the engine as a Gomocup (Piskvork) brain on stdin/stdout.
//!
//! The protocol state machine is `gomocup::BrainProtocol`; this module only
//! moves lines between it, the engine and the standard streams.

use std::collections::VecDeque;
use std::io::{BufRead, Write};

use anyhow::{Context, Result};
use engine::{Engine, EngineConfig, Player};
use gomocup::{About, Action, BrainProtocol};
use renju::Rule;

/// Arguments of `madang brain`.
#[derive(clap::Args)]
pub struct Args {
    /// Search threads.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Transposition table size in MiB (lowered to fit the manager's
    /// `max_memory`).
    #[arg(long, default_value_t = 64)]
    hash_mb: usize,
    /// Node limit per move, for reproducible engine-against-engine tests
    /// (the manager's clock still applies).
    #[arg(long)]
    nodes: Option<u64>,
}

/// Memory the brain needs besides its transposition table.
const BASE_MEMORY: u64 = 8 << 20;

/// Runs `madang brain`.
pub fn run(args: Args) -> Result<()> {
    let config = EngineConfig {
        threads: args.threads.max(1),
        hash_bytes: args.hash_mb << 20,
        max_nodes: args.nodes,
        ..EngineConfig::default()
    };
    let engine = Engine::with_config(Rule::Renju, config);
    serve(std::io::stdin().lock(), std::io::stdout().lock(), engine)
}

/// Plays the protocol over `input` and `output` until `END` or the end of
/// the input.
fn serve(input: impl BufRead, mut output: impl Write, mut engine: Engine) -> Result<()> {
    let wanted_hash = engine.config().hash_bytes;
    let mut protocol = BrainProtocol::new(About {
        name: "madang".to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        author: "madang project".to_owned(),
        country: "KR".to_owned(),
    });
    for line in input.lines() {
        let line = line.context("reading the manager's commands")?;
        let mut actions: VecDeque<Action> = protocol.handle(&line).into();
        while let Some(action) = actions.pop_front() {
            match action {
                Action::Send(s) => {
                    writeln!(output, "{s}")?;
                    output.flush()?;
                }
                Action::Think { game, budget } => match engine.analyse(&game, budget) {
                    Ok(o) => {
                        writeln!(
                            output,
                            "MESSAGE depth {} score {} nodes {} ({:?})",
                            o.depth, o.score, o.nodes, o.reason
                        )?;
                        actions.extend(protocol.played(o.best));
                    }
                    Err(e) => {
                        writeln!(output, "ERROR {e}")?;
                        output.flush()?;
                    }
                },
                Action::NewGame(rule) => engine.new_game(rule)?,
                Action::MaxMemory(bytes) => {
                    // 0 means no limit.
                    let cap = if bytes == 0 {
                        wanted_hash
                    } else {
                        (bytes.saturating_sub(BASE_MEMORY) / 2) as usize
                    };
                    let hash = wanted_hash.min(cap);
                    if hash != engine.config().hash_bytes {
                        engine.set_hash_bytes(hash);
                    }
                }
                Action::Exit => return Ok(()),
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn talk(input: &str) -> Vec<String> {
        let engine = Engine::with_config(
            Rule::Renju,
            EngineConfig {
                max_nodes: Some(500),
                hash_bytes: 1 << 20,
                ..EngineConfig::default()
            },
        );
        let mut out = Vec::new();
        serve(input.as_bytes(), &mut out, engine).unwrap();
        String::from_utf8(out)
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with("MESSAGE"))
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn plays_a_short_session() {
        let out = talk(
            "START 15\nINFO max_memory 20000000\nINFO rule 4\nINFO timeout_turn 2000\n\
             BEGIN\nTURN 8,8\nEND\nTURN 1,1\n",
        );
        assert_eq!(out[0], "OK");
        assert_eq!(out[1], "7,7");
        assert!(gomocup::parse_point(&out[2]).is_some(), "{out:?}");
        // Nothing after END.
        assert_eq!(out.len(), 3);
    }

    #[test]
    fn refuses_other_board_sizes() {
        let out = talk("START 20\nSTART 15\n");
        assert!(out[0].starts_with("ERROR"));
        assert_eq!(out[1], "OK");
    }
}
