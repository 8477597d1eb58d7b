//! `madang match`: two engines play each other, game after game, on the
//! arena's game runner (the referee table, the clocks, every termination
//! told apart), without files or a network. `madang arena` is the full
//! tool; this one prints each game and the tally.
//!
//! Without `--openings` the games use the 26 standard Renju openings, in
//! an order the seed decides: the same seed plays the same games.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::cli::{RuleArg, parse_duration};
use anyhow::{Context, Result};
use arena::clock::TimeControl;
use arena::entrant::{Entrant, EntrantKind};
use arena::game::{Adjudication, GameSetup, play};
use arena::openings::{OpeningFormat, parse_openings, standard};
use arena::schedule::{Format, schedule};
use arena::watchdog::Watchdog;
use renju::notation::format_points;
use renju::{Color, Rule};

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
    /// Number of games (default: every opening twice).
    #[arg(long)]
    games: Option<usize>,
    /// Time per move, e.g. `1s`, `200ms`, `1.5s`.
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    turn_time: Duration,
    /// How far a move may run past the turn time before it loses.
    #[arg(long, default_value = "100ms", value_parser = parse_duration)]
    tolerance: Duration,
    /// Openings, one per line (`#` comments) [default: the 26 standard
    /// Renju openings].
    #[arg(long)]
    openings: Option<PathBuf>,
    /// Format of the openings file: rif, offset or pos (c-gomoku-cli's).
    #[arg(long, default_value = "rif")]
    openings_format: OpeningFormat,
    /// Seed of the opening order: the same seed plays the same games.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Rule: renju, renju-simplified, freestyle or standard.
    #[arg(long, value_enum, default_value_t)]
    rule: RuleArg,
    /// Ignore engine output the protocol does not know (by default it
    /// loses the game as a protocol error).
    #[arg(long)]
    lenient_output: bool,
}

/// Wins, losses and draws of player A.
#[derive(Default)]
struct Tally {
    wins: u32,
    losses: u32,
    draws: u32,
}

impl Tally {
    fn add(&mut self, winner: Option<Color>, a_colour: Color) {
        match winner {
            None => self.draws += 1,
            Some(c) if c == a_colour => self.wins += 1,
            Some(_) => self.losses += 1,
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
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            parse_openings(&text, args.openings_format, Rule::from(args.rule))
                .with_context(|| path.display().to_string())?
        }
        None => standard(),
    };
    let games = args.games.unwrap_or(2 * openings.len());
    let entrant = |name: &str, spec: &str| -> Result<Entrant> {
        Ok(Entrant {
            name: name.into(),
            kind: EntrantKind::parse(spec).map_err(anyhow::Error::msg)?,
            time: TimeControl::per_move(args.turn_time),
        })
    };
    let players = [entrant("A", &args.player_a)?, entrant("B", &args.player_b)?];
    println!(
        "match: A = {}, B = {}, rule {}, {} per move (tolerance {}), {games} games, seed {}",
        args.player_a,
        args.player_b,
        Rule::from(args.rule),
        humanize(args.turn_time),
        humanize(args.tolerance),
        args.seed
    );
    let rounds = games.div_ceil(2 * openings.len()) as u32;
    let mut pairings = schedule(Format::RoundRobin, 2, rounds, openings.len(), args.seed);
    pairings.truncate(games);
    let watchdog = Watchdog::new();
    let mut tally = Tally::default();
    let mut by_colour = [Tally::default(), Tally::default()];
    let mut slowest = [Duration::ZERO; 2];
    let mut over = [0u32; 2];
    for p in &pairings {
        let a_colour = if p.black == 0 {
            Color::Black
        } else {
            Color::White
        };
        let setup = GameSetup {
            rule: Rule::from(args.rule),
            opening: openings[p.opening].clone(),
            tolerance: args.tolerance,
            stall_grace: Duration::from_secs(1),
            startup: Duration::from_secs(30),
            adjudication: Adjudication::default(),
            pause_idle: false,
            rss_limit: None,
            cpus: [None, None],
            lenient_output: args.lenient_output,
        };
        let span = tracing::info_span!("game", n = p.index + 1);
        let _enter = span.enter();
        let outcome = play(&setup, [&players[p.black], &players[p.white]], &watchdog);
        tally.add(outcome.winner, a_colour);
        by_colour[a_colour.index()].add(outcome.winner, a_colour);
        for (i, m) in outcome.moves.iter().enumerate().skip(setup.opening.len()) {
            // Index 0 is A's figures, 1 B's.
            let colour = if i % 2 == 0 {
                Color::Black
            } else {
                Color::White
            };
            let who = usize::from(colour != a_colour);
            slowest[who] = slowest[who].max(m.took);
            over[who] += u32::from(!m.overrun.is_zero());
        }
        let result = match outcome.winner {
            Some(c) if c == a_colour => format!("A ({c}) wins"),
            Some(c) => format!("B ({c}) wins"),
            None => "draw".to_owned(),
        };
        let detail = if outcome.termination.is_fault() {
            format!(" ({})", outcome.detail)
        } else {
            String::new()
        };
        println!(
            "game {}: A {a_colour}, opening {}: {result} by {}{detail} after {} moves: {}",
            p.index + 1,
            format_points(setup.opening.iter().copied()),
            outcome.termination.name(),
            outcome.moves.len(),
            format_points(outcome.moves.iter().map(|m| m.point))
        );
    }
    println!("A as black: {}", by_colour[0]);
    println!("A as white: {}", by_colour[1]);
    println!(
        "total for A ({}) against B ({}): {tally}, draws {}",
        args.player_a, args.player_b, tally.draws
    );
    println!(
        "longest move: A {}, B {}; moves over {}: A {}, B {}",
        humanize(slowest[0]),
        humanize(slowest[1]),
        humanize(args.turn_time),
        over[0],
        over[1]
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
