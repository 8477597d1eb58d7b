//! `madang match`: two engines play each other in-process.
//!
//! Each side is the built-in engine at given settings or an external
//! Gomocup engine (the same driver as the bot's `--brain`). Openings from a
//! file are each played twice with colours swapped. A player that fails
//! (crashes, breaks the protocol, runs over its time or plays an illegal
//! move) loses that game.

use std::fmt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::cli::parse_duration;
use anyhow::{Context, Result, bail};
use engine::{Engine, EngineConfig, Player};
use gomocup::ExternalBrain;
use renju::notation::{format_points, parse_moves};
use renju::{Color, Game, GameResult, Point, Rule};

/// Arguments of `madang match`.
#[derive(clap::Args)]
pub struct Args {
    /// Player A: `builtin`, `builtin:depth=N,nodes=N,threads=N,hash=MB`, or
    /// the command line of a Gomocup engine.
    #[arg(short = 'a', long = "player-a", default_value = "builtin")]
    player_a: String,
    /// Player B, as player A.
    #[arg(short = 'b', long = "player-b", default_value = "builtin")]
    player_b: String,
    /// Number of games (default: every opening twice, or 2 without openings).
    #[arg(long)]
    games: Option<usize>,
    /// Time per move, e.g. `1s`, `200ms`, `1.5s`.
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    turn_time: Duration,
    /// Openings: one line of RIF moves each (`#` comments).
    #[arg(long)]
    openings: Option<PathBuf>,
    /// Rule: renju, renju-simplified, freestyle or standard.
    #[arg(long, default_value = "renju")]
    rule: Rule,
}

/// Builds a player from its description.
fn player(spec: &str, rule: Rule) -> Result<Box<dyn Player>> {
    let Some(settings) = spec.strip_prefix("builtin") else {
        let brain = ExternalBrain::spawn(spec).with_context(|| format!("starting {spec:?}"))?;
        return Ok(Box::new(brain));
    };
    let mut config = EngineConfig::default();
    for kv in settings
        .trim_start_matches(':')
        .split(',')
        .filter(|s| !s.is_empty())
    {
        let (k, v) = kv
            .split_once('=')
            .with_context(|| format!("expected key=value in {spec:?}"))?;
        let n: u64 = v.parse().with_context(|| format!("bad number in {kv:?}"))?;
        match k {
            "depth" => config.max_depth = Some(n as i32),
            "nodes" => config.max_nodes = Some(n),
            "threads" => config.threads = (n as usize).max(1),
            "hash" => config.hash_bytes = (n as usize) << 20,
            _ => bail!("unknown setting {k:?} (depth, nodes, threads, hash)"),
        }
    }
    Ok(Box::new(Engine::with_config(rule, config)))
}

fn read_openings(path: &PathBuf) -> Result<Vec<Vec<Point>>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut openings = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let moves = parse_moves(line)
            .ok()
            .and_then(|m| m.into_iter().collect::<Option<Vec<Point>>>())
            .with_context(|| format!("{}:{}: not a list of moves", path.display(), i + 1))?;
        openings.push(moves);
    }
    if openings.is_empty() {
        bail!("{} holds no openings", path.display());
    }
    Ok(openings)
}

/// How one game ended, from player A's side.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Score {
    Win,
    Loss,
    Draw,
}

struct Played {
    moves: Vec<Point>,
    /// The winner's colour, if any.
    winner: Option<Color>,
    how: String,
    /// Longest time each colour took for a move.
    slowest: [Duration; 2],
    /// Moves of each colour that took longer than the turn time.
    late: [u32; 2],
}

/// Plays one game: `players[0]` black, `players[1]` white.
fn play_game(
    mut players: [&mut dyn Player; 2],
    rule: Rule,
    opening: &[Point],
    turn_time: Duration,
) -> Result<Played> {
    let mut game = Game::from_moves(rule, opening.iter().copied())
        .map_err(|e| anyhow::anyhow!("opening {}: {e}", format_points(opening.to_vec())))?;
    for p in players.iter_mut() {
        p.new_game(rule)?;
    }
    let mut slowest = [Duration::ZERO; 2];
    let mut late = [0; 2];
    loop {
        if let Some(result) = game.result() {
            let (winner, how) = match result {
                GameResult::Win { winner, .. } => (Some(*winner), "five".to_owned()),
                GameResult::Draw => (None, "board full".to_owned()),
            };
            return Ok(Played {
                moves: game.moves().to_vec(),
                winner,
                how,
                slowest,
                late,
            });
        }
        let side = game.side_to_move();
        let started = Instant::now();
        let picked = players[side.index()].pick(&game, turn_time);
        let took = started.elapsed();
        slowest[side.index()] = slowest[side.index()].max(took);
        if took > turn_time {
            late[side.index()] += 1;
            tracing::warn!(?took, %side, "move over the turn time");
        }
        let failure = match picked {
            Ok(p) => match game.play(p) {
                Ok(_) => None,
                Err(e) => Some(format!("illegal move: {e}")),
            },
            Err(e) => Some(e.to_string()),
        };
        if let Some(why) = failure {
            return Ok(Played {
                moves: game.moves().to_vec(),
                winner: Some(!side),
                how: format!("{side} failed: {why}"),
                slowest,
                late,
            });
        }
    }
}

/// Wins, losses and draws of player A.
#[derive(Default)]
struct Tally {
    wins: u32,
    losses: u32,
    draws: u32,
}

impl Tally {
    fn add(&mut self, s: Score) {
        match s {
            Score::Win => self.wins += 1,
            Score::Loss => self.losses += 1,
            Score::Draw => self.draws += 1,
        }
    }

    fn points(&self) -> f64 {
        f64::from(self.wins) + 0.5 * f64::from(self.draws)
    }

    fn games(&self) -> u32 {
        self.wins + self.losses + self.draws
    }
}

impl fmt::Display for Tally {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.games().max(1);
        write!(
            f,
            "+{} -{} ={} ({:.1}/{} = {:.1}%)",
            self.wins,
            self.losses,
            self.draws,
            self.points(),
            self.games(),
            100.0 * self.points() / f64::from(n)
        )
    }
}

/// Runs `madang match`.
pub fn run(args: Args) -> Result<()> {
    let openings = match &args.openings {
        Some(path) => read_openings(path)?,
        None => vec![Vec::new()],
    };
    let games = args.games.unwrap_or(2 * openings.len());
    let mut a = player(&args.player_a, args.rule)?;
    let mut b = player(&args.player_b, args.rule)?;
    let (name_a, name_b) = (a.name(), b.name());
    println!(
        "match: A = {name_a} ({}), B = {name_b} ({}), rule {}, {} per move, {games} games",
        args.player_a,
        args.player_b,
        args.rule,
        humanize(args.turn_time)
    );
    let mut tally = Tally::default();
    let mut by_colour = [Tally::default(), Tally::default()];
    let mut slowest = [Duration::ZERO; 2];
    let mut late = [0; 2];
    for n in 0..games {
        let opening = &openings[(n / 2) % openings.len()];
        // A is black in even games, white in odd ones.
        let a_colour = if n % 2 == 0 {
            Color::Black
        } else {
            Color::White
        };
        let span = tracing::info_span!("game", n = n + 1);
        let _enter = span.enter();
        let played = if a_colour == Color::Black {
            play_game([a.as_mut(), b.as_mut()], args.rule, opening, args.turn_time)?
        } else {
            play_game([b.as_mut(), a.as_mut()], args.rule, opening, args.turn_time)?
        };
        let score = match played.winner {
            None => Score::Draw,
            Some(c) if c == a_colour => Score::Win,
            Some(_) => Score::Loss,
        };
        tally.add(score);
        by_colour[a_colour.index()].add(score);
        let (ia, ib) = (a_colour.index(), (!a_colour).index());
        slowest[0] = slowest[0].max(played.slowest[ia]);
        slowest[1] = slowest[1].max(played.slowest[ib]);
        late[0] += played.late[ia];
        late[1] += played.late[ib];
        let result = match played.winner {
            Some(c) if c == a_colour => format!("A ({c}) wins"),
            Some(c) => format!("B ({c}) wins"),
            None => "draw".to_owned(),
        };
        let opening_text = if opening.is_empty() {
            "(none)".to_owned()
        } else {
            format_points(opening.to_vec())
        };
        println!(
            "game {}: A {a_colour}, opening {opening_text}: {result} by {} after {} moves: {}",
            n + 1,
            played.how,
            played.moves.len(),
            format_points(played.moves)
        );
    }
    println!("A as black: {}", by_colour[0]);
    println!("A as white: {}", by_colour[1]);
    println!(
        "total for A ({name_a}) against B ({name_b}): {tally}, draws {}",
        tally.draws
    );
    println!(
        "longest move: A {}, B {}; moves over {}: A {}, B {}",
        humanize(slowest[0]),
        humanize(slowest[1]),
        humanize(args.turn_time),
        late[0],
        late[1]
    );
    Ok(())
}

fn humanize(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{}ms", d.as_millis())
    } else {
        format!("{:.2}s", d.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_specs() {
        assert!(player("builtin", Rule::Renju).is_ok());
        assert!(player("builtin:depth=3,nodes=1000,threads=2,hash=1", Rule::Renju).is_ok());
        assert!(player("builtin:speed=3", Rule::Renju).is_err());
        assert!(player("builtin:depth", Rule::Renju).is_err());
    }

    #[test]
    fn plays_a_game_to_the_end() {
        let cfg = EngineConfig {
            max_nodes: Some(200),
            hash_bytes: 1 << 20,
            ..EngineConfig::default()
        };
        let mut a = Engine::with_config(Rule::Renju, cfg.clone());
        let mut b = Engine::with_config(Rule::Renju, cfg);
        let opening: Vec<Point> = ["h8", "h9", "f10"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        let played = play_game(
            [&mut a, &mut b],
            Rule::Renju,
            &opening,
            Duration::from_secs(10),
        )
        .unwrap();
        assert!(played.moves.starts_with(&opening));
        let replay = Game::from_moves(Rule::Renju, played.moves.iter().copied()).unwrap();
        assert!(replay.result().is_some());
    }
}
