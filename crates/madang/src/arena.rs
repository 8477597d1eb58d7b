//! `madang arena`: tournaments between engines (the `arena` crate), from
//! the command line or a TOML file, with a live progress bar, resume after
//! an interruption, and an offline report; on a database, games saved for
//! `madang serve` and workers on many machines ([`database`]).

// libc calls (signals to process groups, CPU affinity, limits) need unsafe;
// each block says why it is sound.
#![allow(unsafe_code)]

mod database;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::cli::parse_duration;
use anyhow::{Context, Result, bail};
use arena::clock::TimeControl;
use arena::entrant::{Entrant, EntrantKind};
use arena::game::{Adjudication, ResignRule};
use arena::openings::{OpeningFormat, parse_openings, standard};
use arena::schedule::Format;
use arena::stats::Sprt;
use arena::tournament::{Finish, Standings, Summary, Tournament, opening_lines};
use indicatif::{ProgressBar, ProgressStyle};
use renju::Rule;
use serde::Deserialize;

/// Arguments of `madang arena`.
#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    command: Option<Sub>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(clap::Subcommand)]
enum Sub {
    /// Checks that a Gomocup engine follows the protocol, command by
    /// command.
    Check(CheckArgs),
    /// Plays games of a tournament submitted to a database (`madang arena
    /// --database URL --submit ...`) until none is left.
    Worker(WorkerArgs),
    /// Shows a database tournament's progress, standings, Elo and SPRT.
    Status(StatusArgs),
}

/// Arguments of `madang arena worker`.
#[derive(clap::Args)]
struct WorkerArgs {
    /// The database holding the tournament: `postgres://…` for workers on
    /// several machines (a SQLite file serves the workers of one machine).
    #[arg(long)]
    database: String,
    /// The tournament's id, as `--submit` printed it.
    #[arg(long)]
    tournament: String,
    /// Games this worker plays at once.
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// A game whose worker has not heart-beaten for this long is taken
    /// from it and played again (workers heart-beat four times a lease);
    /// give every worker the same.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    lease: Duration,
    /// This worker's name in the database [default: HOST:PID].
    #[arg(long)]
    name: Option<String>,
}

/// Arguments of `madang arena status`.
#[derive(clap::Args)]
struct StatusArgs {
    /// The database holding the tournament.
    #[arg(long)]
    database: String,
    /// The tournament's id.
    tournament: String,
    /// Also write the HTML report, its SVG and summary.json in this
    /// directory.
    #[arg(long)]
    report: Option<PathBuf>,
}

/// Arguments of `madang arena check`.
#[derive(clap::Args)]
struct CheckArgs {
    /// The engine's command line.
    command: String,
    /// Time per move given to the engine.
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    turn_time: Duration,
    /// How long the engine may take to answer START.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    startup: Duration,
}

/// Arguments of a tournament run; every one may also come from the TOML
/// file, which the command line overrides.
#[derive(clap::Args)]
struct RunArgs {
    /// A TOML file describing the tournament (engines, time controls, ...).
    config: Option<PathBuf>,
    /// An entrant: `builtin`, `builtin:nodes=N,depth=N,threads=N,hash=MB`,
    /// or a Gomocup engine's command line. Repeat for each entrant.
    #[arg(short = 'e', long = "engine")]
    engines: Vec<String>,
    /// Continue the tournament saved in this directory (only
    /// `--concurrency` may differ from the first run).
    #[arg(long, conflicts_with_all = ["config", "engines"])]
    resume: Option<PathBuf>,
    /// Where results go [default: arena-results].
    #[arg(long)]
    out: Option<PathBuf>,
    /// The first entrant plays each other one (instead of everyone
    /// everyone).
    #[arg(long)]
    gauntlet: bool,
    /// Times every pairing plays every opening (each twice, colours swapped).
    #[arg(long)]
    rounds: Option<u32>,
    /// Rule [default: renju].
    #[arg(long, value_parser = parse_rule)]
    rule: Option<Rule>,
    /// Openings file [default: the 26 standard Renju openings].
    #[arg(long)]
    openings: Option<PathBuf>,
    /// Format of the openings file: rif, offset or pos (c-gomoku-cli's).
    #[arg(long)]
    openings_format: Option<OpeningFormat>,
    /// Every game starts from the empty board (needed by 3-byte clients,
    /// whose protocol has no openings).
    #[arg(long, conflicts_with = "openings")]
    no_openings: bool,
    /// Seed of the opening order [default: 1].
    #[arg(long)]
    seed: Option<u64>,
    /// Play only the first N games of the schedule.
    #[arg(long)]
    games: Option<usize>,
    /// Time per move [default: 1s unless a game time is given].
    #[arg(long, value_parser = parse_duration)]
    turn_time: Option<Duration>,
    /// Time for the whole game, per side.
    #[arg(long, value_parser = parse_duration)]
    game_time: Option<Duration>,
    /// Added to the game time after each move.
    #[arg(long, value_parser = parse_duration)]
    increment: Option<Duration>,
    /// How far a move may run past its budget before it loses [default:
    /// 100ms].
    #[arg(long, value_parser = parse_duration)]
    tolerance: Option<Duration>,
    /// After a timeout, how long to wait for the late move before the
    /// engine counts as stalled and is killed [default: 1s].
    #[arg(long, value_parser = parse_duration)]
    stall_grace: Option<Duration>,
    /// How long an engine may take to answer START [default: 10s].
    #[arg(long, value_parser = parse_duration)]
    startup: Option<Duration>,
    /// Adjudicate a draw once a game has this many moves.
    #[arg(long)]
    draw_after: Option<usize>,
    /// Adjudicate a win when both engines agree for MOVES moves that one
    /// side is SCORE or more ahead: `MOVES:SCORE`.
    #[arg(long, value_parser = parse_resign)]
    resign: Option<ResignRule>,
    /// Games played at once [default: 1].
    #[arg(long)]
    concurrency: Option<usize>,
    /// Pin each engine process to a core.
    #[arg(long)]
    pin: bool,
    /// Stop (SIGSTOP) the engine that is not on move.
    #[arg(long)]
    pause_idle: bool,
    /// Ignore engine output the protocol does not know (by default it
    /// loses the game as a protocol error; c-gomoku-cli ignores it).
    #[arg(long)]
    lenient_output: bool,
    /// Memory limit per engine process, MiB (over it loses).
    #[arg(long)]
    rss_limit: Option<u64>,
    /// Sequential probability ratio test between two entrants:
    /// `"elo0=0 elo1=5 alpha=0.05 beta=0.05"`; stops when decided.
    #[arg(long, value_parser = Sprt::parse)]
    sprt: Option<Sprt>,
    /// Also save every game in this database as it ends (`sqlite://PATH`,
    /// a file path, or `postgres://…`; the database of `madang serve`),
    /// under the tournament's id.
    #[arg(long)]
    database: Option<String>,
    /// Play nothing: create the tournament in `--database` for `madang
    /// arena worker` processes to play, and print its id.
    #[arg(long, requires = "database", conflicts_with = "resume")]
    submit: bool,
}

fn parse_rule(s: &str) -> Result<Rule, String> {
    s.parse::<Rule>()
        .map_err(|_| format!("unknown rule {s:?} (renju, renju-simplified, freestyle, standard)"))
}

fn parse_resign(s: &str) -> Result<ResignRule, String> {
    let err = || format!("expected MOVES:SCORE like 4:2000, got {s:?}");
    let (moves, score) = s.split_once(':').ok_or_else(err)?;
    Ok(ResignRule {
        moves: moves.parse().map_err(|_| err())?,
        score: score.parse().map_err(|_| err())?,
    })
}

/// The TOML file: the same settings as the options, and the engines.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    out: Option<PathBuf>,
    gauntlet: Option<bool>,
    rounds: Option<u32>,
    rule: Option<String>,
    openings: Option<PathBuf>,
    openings_format: Option<String>,
    no_openings: Option<bool>,
    seed: Option<u64>,
    games: Option<usize>,
    turn_time: Option<String>,
    game_time: Option<String>,
    increment: Option<String>,
    tolerance: Option<String>,
    stall_grace: Option<String>,
    startup: Option<String>,
    draw_after: Option<usize>,
    resign: Option<String>,
    concurrency: Option<usize>,
    pin: Option<bool>,
    pause_idle: Option<bool>,
    lenient_output: Option<bool>,
    rss_limit: Option<u64>,
    sprt: Option<String>,
    #[serde(default, rename = "engine")]
    engines: Vec<FileEngine>,
}

/// One `[[engine]]` of the TOML file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileEngine {
    name: Option<String>,
    /// A Gomocup engine's command line.
    command: Option<String>,
    /// The built-in engine's settings (`"nodes=500,depth=8"`, or `""`).
    builtin: Option<String>,
    /// A 3-byte protocol client's command line, with `{host}` and `{port}`.
    client: Option<String>,
    dir: Option<PathBuf>,
    #[serde(default)]
    options: BTreeMap<String, toml::Value>,
    turn_time: Option<String>,
    game_time: Option<String>,
    increment: Option<String>,
}

fn duration(field: &str, text: Option<&String>) -> Result<Option<Duration>> {
    text.map(|t| parse_duration(t).with_context(|| format!("`{field}`")))
        .transpose()
}

/// A readable default name for an entrant given on the command line.
fn default_name(spec: &str) -> String {
    let spec = spec.strip_prefix("client:").unwrap_or(spec);
    if spec.starts_with("builtin") {
        return spec.to_owned();
    }
    let program = spec.split_whitespace().next().unwrap_or(spec);
    Path::new(program)
        .file_stem()
        .map_or_else(|| program.to_owned(), |s| s.to_string_lossy().into_owned())
}

/// Makes names unique by numbering repeats (`x`, `x#2`, ...).
fn unique(names: &mut [String]) {
    for i in 1..names.len() {
        let base = names[i].clone();
        let mut n = 1;
        while names[..i].contains(&names[i]) {
            n += 1;
            names[i] = format!("{base}#{n}");
        }
    }
}

/// The tournament the arguments (and file) describe, and its directory.
fn tournament(args: &RunArgs) -> Result<(Tournament, PathBuf)> {
    let file: FileConfig = match &args.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            toml::from_str(&text).with_context(|| format!("in {}", path.display()))?
        }
        None => FileConfig::default(),
    };
    let turn = args
        .turn_time
        .or(duration("turn_time", file.turn_time.as_ref())?);
    let game = args
        .game_time
        .or(duration("game_time", file.game_time.as_ref())?);
    let increment = args
        .increment
        .or(duration("increment", file.increment.as_ref())?)
        .unwrap_or_default();
    let default_tc = TimeControl {
        turn: turn.or(if game.is_none() {
            Some(Duration::from_secs(1))
        } else {
            None
        }),
        game,
        increment,
    };
    let mut entrants = Vec::new();
    for (i, e) in file.engines.iter().enumerate() {
        let kind = match (&e.command, &e.builtin, &e.client) {
            (None, None, Some(client)) => EntrantKind::parse(&format!("client:{client}"))
                .map_err(anyhow::Error::msg)
                .with_context(|| format!("engine {}", i + 1))?,
            (Some(command), None, None) => EntrantKind::Gomocup {
                command: command.clone(),
                dir: e.dir.clone(),
                options: e
                    .options
                    .iter()
                    .map(|(k, v)| {
                        let v = match v {
                            toml::Value::String(s) => s.clone(),
                            other => other.to_string(),
                        };
                        (k.clone(), v)
                    })
                    .collect(),
            },
            (None, Some(settings), None) => EntrantKind::parse(&format!("builtin:{settings}"))
                .map_err(anyhow::Error::msg)
                .with_context(|| format!("engine {}", i + 1))?,
            _ => bail!(
                "engine {}: give one of `command`, `builtin` or `client`",
                i + 1
            ),
        };
        let tc = TimeControl {
            turn: duration("turn_time", e.turn_time.as_ref())?.or(default_tc.turn),
            game: duration("game_time", e.game_time.as_ref())?.or(default_tc.game),
            increment: duration("increment", e.increment.as_ref())?.unwrap_or(default_tc.increment),
        };
        let name = e.name.clone().unwrap_or_else(|| match &kind {
            EntrantKind::Gomocup { command, .. } | EntrantKind::Client { command } => {
                default_name(command)
            }
            EntrantKind::Builtin { .. } => "builtin".into(),
        });
        entrants.push(Entrant {
            name,
            kind,
            time: tc,
        });
    }
    for spec in &args.engines {
        entrants.push(Entrant {
            name: default_name(spec),
            kind: EntrantKind::parse(spec).map_err(anyhow::Error::msg)?,
            time: default_tc,
        });
    }
    let mut names: Vec<String> = entrants.iter().map(|e| e.name.clone()).collect();
    unique(&mut names);
    for (e, name) in entrants.iter_mut().zip(names) {
        e.name = name;
    }
    let rule = match (args.rule, &file.rule) {
        (Some(r), _) => r,
        (None, Some(r)) => parse_rule(r).map_err(anyhow::Error::msg)?,
        (None, None) => Rule::Renju,
    };
    let format = match (&args.openings_format, &file.openings_format) {
        (Some(f), _) => *f,
        (None, Some(f)) => f.parse().map_err(anyhow::Error::msg)?,
        (None, None) => OpeningFormat::Rif,
    };
    let openings = match args.openings.as_ref().or(file.openings.as_ref()) {
        _ if args.no_openings || file.no_openings == Some(true) => vec![Vec::new()],
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            parse_openings(&text, format, rule).with_context(|| path.display().to_string())?
        }
        None => standard(),
    };
    let sprt = match (&args.sprt, &file.sprt) {
        (Some(s), _) => Some(*s),
        (None, Some(s)) => Some(Sprt::parse(s).map_err(anyhow::Error::msg)?),
        (None, None) => None,
    };
    let resign = match (&args.resign, &file.resign) {
        (Some(r), _) => Some(*r),
        (None, Some(r)) => Some(parse_resign(r).map_err(anyhow::Error::msg)?),
        (None, None) => None,
    };
    let t = Tournament {
        entrants,
        format: if args.gauntlet || file.gauntlet == Some(true) {
            Format::Gauntlet
        } else {
            Format::RoundRobin
        },
        rounds: args.rounds.or(file.rounds).unwrap_or(1).max(1),
        rule,
        openings: opening_lines(&openings),
        seed: args.seed.or(file.seed).unwrap_or(1),
        max_games: args.games.or(file.games),
        tolerance: args
            .tolerance
            .or(duration("tolerance", file.tolerance.as_ref())?)
            .unwrap_or(Duration::from_millis(100)),
        stall_grace: args
            .stall_grace
            .or(duration("stall_grace", file.stall_grace.as_ref())?)
            .unwrap_or(Duration::from_secs(1)),
        startup: args
            .startup
            .or(duration("startup", file.startup.as_ref())?)
            .unwrap_or(Duration::from_secs(10)),
        adjudication: Adjudication {
            draw_after: args.draw_after.or(file.draw_after),
            resign,
        },
        pause_idle: args.pause_idle || file.pause_idle == Some(true),
        rss_limit_mb: args.rss_limit.or(file.rss_limit),
        pin: args.pin || file.pin == Some(true),
        lenient_output: args.lenient_output || file.lenient_output == Some(true),
        concurrency: args.concurrency.or(file.concurrency).unwrap_or(1).max(1),
        sprt,
    };
    let out = args
        .out
        .clone()
        .or(file.out)
        .unwrap_or_else(|| PathBuf::from("arena-results"));
    Ok((t, out))
}

/// Set by SIGINT, SIGTERM and SIGHUP.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

fn catch_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only stores to an atomic, which is
        // async-signal-safe.
        unsafe {
            libc::signal(
                sig,
                on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
    }
}

/// One line of progress: the score so far.
fn score_line(st: &Standings, t: &Tournament) -> String {
    if st.entrants.len() == 2 {
        let (a, b) = (&st.entrants[0], &st.entrants[1]);
        let mut line = format!(
            "{} {} - {} {}",
            a.name,
            a.wdl.points(),
            b.wdl.points(),
            b.name
        );
        if let Some(e) = arena::stats::elo_wdl(a.wdl) {
            line += &format!(", Elo {:+.0} ± {:.0}", e.elo, (e.high - e.low) / 2.0);
        }
        if let Some(s) = &t.sprt {
            line += &format!(", LLR {:.2}", st.sprt(s).llr);
        }
        return line;
    }
    let best = st
        .entrants
        .iter()
        .max_by(|x, y| x.wdl.points().total_cmp(&y.wdl.points()));
    best.map_or_else(String::new, |e| {
        format!("leader {} {}/{}", e.name, e.wdl.points(), e.wdl.games())
    })
}

fn print_summary(summary: &Summary) {
    println!(
        "{:<24} {:>6} {:>5} {:>5} {:>5} {:>7}  Elo vs field [95%], LOS",
        "entrant", "games", "+", "=", "-", "points"
    );
    for e in &summary.entrants {
        let s = &e.standing;
        let elo = e.elo.map_or_else(
            || "-".to_owned(),
            |x| {
                format!(
                    "{:+.1} [{:+.1}, {:+.1}], {:.1}%",
                    x.elo,
                    x.low,
                    x.high,
                    x.los * 100.0
                )
            },
        );
        println!(
            "{:<24} {:>6} {:>5} {:>5} {:>5} {:>7}  {elo}",
            s.name,
            s.wdl.games(),
            s.wdl.wins,
            s.wdl.draws,
            s.wdl.losses,
            e.points
        );
        let ends: Vec<String> = s
            .terminations
            .iter()
            .map(|(t, c)| format!("{} {}/{}/{}", t.name(), c.won, c.drawn, c.lost))
            .collect();
        println!(
            "    ends (won/drawn/lost): {}; moves over budget {} of {}, max overrun {} ms",
            ends.join(", "),
            s.moves_over_budget,
            s.moves,
            s.max_overrun_ms
        );
    }
    for p in &summary.pairs {
        if let Some(e) = &p.elo_pentanomial {
            let c = p.pentanomial.counts;
            println!(
                "{} vs {}: pairs {}-{}-{}-{}-{}, Elo {:+.1} [{:+.1}, {:+.1}]",
                p.a, p.b, c[0], c[1], c[2], c[3], c[4], e.elo, e.low, e.high
            );
        }
    }
    if let Some(s) = &summary.sprt {
        println!(
            "SPRT: LLR {:.3} in [{:.3}, {:.3}]: {:?}",
            s.llr, s.lower, s.upper, s.verdict
        );
    }
}

/// One line telling how a game ended.
fn game_text(line: &arena::records::ResultLine) -> String {
    format!(
        "game {}: {} (black) - {} (white): {} by {}, {} moves{}",
        line.index + 1,
        line.black_name,
        line.white_name,
        line.result,
        line.termination.name(),
        line.moves.len(),
        if line.termination.is_fault() {
            format!(" ({})", line.detail)
        } else {
            String::new()
        }
    )
}

/// Writes the HTML report and its SVG curve into `dir`.
fn write_report(
    dir: &Path,
    t: &Tournament,
    standings: &Standings,
    summary: &Summary,
) -> Result<()> {
    let title = format!(
        "madang arena: {}",
        t.entrants
            .iter()
            .map(|e| e.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let html = dir.join("report.html");
    std::fs::write(&html, arena::report::html(&title, standings, summary))
        .with_context(|| format!("writing {}", html.display()))?;
    let svg = dir.join("score.svg");
    std::fs::write(&svg, arena::report::svg(standings))
        .with_context(|| format!("writing {}", svg.display()))?;
    Ok(())
}

/// Runs `madang arena`.
pub fn run(args: Args) -> Result<()> {
    crate::logging::init("warn");
    match args.command {
        Some(Sub::Check(check)) => return run_check(&check),
        Some(Sub::Worker(worker)) => return run_worker(worker),
        Some(Sub::Status(status)) => return run_status(&status),
        None => {}
    }
    if args.run.submit {
        let (t, _) = tournament(&args.run)?;
        let url = args.run.database.as_deref().unwrap_or_default();
        let db = database::Db::open(url)?;
        let id = db.submit(&t)?;
        db.close();
        println!("{id}");
        eprintln!(
            "tournament {id}: {} games; play them with `madang arena worker --database URL --tournament {id}`",
            t.schedule().len()
        );
        return Ok(());
    }
    let (t, dir) = match &args.run.resume {
        Some(dir) => {
            let mut t = Tournament::load(dir)?;
            // The one setting a resumed run may change: it changes no game.
            if let Some(n) = args.run.concurrency {
                t.concurrency = n.max(1);
            }
            (t, dir.clone())
        }
        None => tournament(&args.run)?,
    };
    if args.run.resume.is_none() && dir.join(arena::tournament::SETTINGS).exists() {
        // The same settings continue; others are refused by `run`.
        eprintln!("{} exists: continuing its games", dir.display());
    }
    let total = t.schedule().len();
    let already = arena::records::read_results(&dir).map_or(0, |r| r.len().min(total));
    println!(
        "arena: {} entrants, {} games ({} already played), results in {}",
        t.entrants.len(),
        total,
        already,
        dir.display()
    );
    catch_signals();
    let bar = ProgressBar::new(total as u64).with_position(already as u64);
    bar.set_style(
        ProgressStyle::with_template("[{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
            .expect("a valid template"),
    );
    let mut on_game = |line: &arena::records::ResultLine, st: &Standings| {
        bar.inc(1);
        let text = game_text(line);
        if bar.is_hidden() {
            println!("{text}");
        } else {
            bar.println(text);
        }
        bar.set_message(score_line(st, &t));
    };
    let db = args
        .run
        .database
        .as_deref()
        .map(database::Db::open)
        .transpose()?;
    let mut sink = db.as_ref().map(|db| db.local_sink(&t, &dir)).transpose()?;
    if let Some(sink) = &sink {
        println!(
            "games saved in the database under tournament {}",
            sink.tournament()
        );
    }
    let outcome = arena::tournament::run_to(
        &t,
        &dir,
        sink.as_mut()
            .map(|s| s as &mut dyn arena::records::ResultSink),
        &INTERRUPTED,
        &mut on_game,
    );
    drop(sink);
    if let Some(db) = db {
        db.close();
    }
    let (finish, summary) = outcome?;
    bar.finish_and_clear();
    print_summary(&summary);
    // The report needs the curves: rebuild them from the results.
    let standings = t.standings(&arena::records::read_results(&dir)?);
    write_report(&dir, &t, &standings, &summary)?;
    println!(
        "summary: {}, report: {}",
        dir.join(arena::tournament::SUMMARY).display(),
        dir.join("report.html").display()
    );
    match finish {
        Finish::Complete => Ok(()),
        Finish::SprtDecided(v) => {
            println!("SPRT decided ({v:?}) after {} games", summary.games);
            Ok(())
        }
        Finish::Interrupted => bail!(
            "interrupted after {} games: continue with `madang arena --resume {}`",
            summary.games,
            dir.display()
        ),
    }
}

fn run_worker(args: WorkerArgs) -> Result<()> {
    let config = database::WorkerConfig {
        tournament: args.tournament,
        concurrency: args.concurrency.max(1),
        lease: args.lease,
        name: args.name.unwrap_or_else(database::default_worker_name),
    };
    let db = database::Db::open(&args.database)?;
    catch_signals();
    let outcome = database::work(&db, &config);
    db.close();
    let (played, verdict) = outcome?;
    let why = verdict.map_or_else(
        || "nothing left to play".to_owned(),
        |v| format!("the SPRT has decided ({v:?})"),
    );
    println!("worker {}: {played} games played; {why}", config.name);
    Ok(())
}

fn run_status(args: &StatusArgs) -> Result<()> {
    let db = database::Db::open(&args.database)?;
    let status = database::status(&db, &args.tournament);
    db.close();
    let status = status?;
    let (done, claimed, pending) = &status.counts;
    println!(
        "tournament {}: {} games: {done} played, {} being played, {pending} pending",
        args.tournament,
        status.summary.scheduled,
        claimed.len()
    );
    for c in claimed {
        println!("    {c}");
    }
    print_summary(&status.summary);
    if let Some(dir) = &args.report {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        write_report(dir, &status.settings, &status.standings, &status.summary)?;
        let path = dir.join(arena::tournament::SUMMARY);
        std::fs::write(&path, serde_json::to_string_pretty(&status.summary)?)
            .with_context(|| format!("writing {}", path.display()))?;
        println!("report: {}", dir.join("report.html").display());
    }
    Ok(())
}

fn run_check(args: &CheckArgs) -> Result<()> {
    let report = arena::check::check(&args.command, args.turn_time, args.startup);
    let mut failed = false;
    for item in &report {
        println!(
            "{:<10} {:<5} {}",
            item.command,
            item.verdict.label(),
            item.detail
        );
        failed |= item.verdict == arena::check::Verdict::Fail;
    }
    if failed {
        bail!("the engine failed the check");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_made_unique() {
        let mut names = vec!["a".to_owned(), "a".into(), "b".into(), "a".into()];
        unique(&mut names);
        assert_eq!(names, ["a", "a#2", "b", "a#3"]);
        assert_eq!(default_name("/x/y/pbrain-rapfi --t 1"), "pbrain-rapfi");
        assert_eq!(default_name("builtin:nodes=5"), "builtin:nodes=5");
    }

    #[test]
    fn resign_rule_parses() {
        assert_eq!(
            parse_resign("4:2000"),
            Ok(ResignRule {
                moves: 4,
                score: 2000
            })
        );
        assert!(parse_resign("4").is_err());
    }
}
