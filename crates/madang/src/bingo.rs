//! `madang bingo`: host or join a two-player bingo game over TCP.
//!
//! The protocol lives in the `bingo` crate and the networking in `bingo-net`;
//! this module reads the command line and shows the game, either in a
//! terminal UI ([`tui`], rendered by [`view`]) or, with `--auto`, as one
//! printed line per event ([`auto`]).

mod auto;
mod tui;
mod view;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use bingo::session::{CardChoice, Limits};
use bingo::{Card, Ending, Extensions, Role, Settings, Verification};
use bingo_net::{Controller, HostOptions, Update};
use clap::Subcommand;
use tokio::net::TcpListener;
use tokio::runtime::Runtime;
use tokio::sync::mpsc;

/// Arguments of `madang bingo`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Wait for a guest and play (the paper's server).
    Host(HostArgs),
    /// Connect to a host and play (the paper's client).
    Join(JoinArgs),
}

#[derive(clap::Args)]
struct HostArgs {
    /// Address to listen on (port 0 picks a free port; the address is printed).
    #[arg(long, default_value = "0.0.0.0:7000")]
    addr: String,
    /// Card size n (the card holds 1..n²).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u8).range(1..=15))]
    size: u8,
    /// Complete lines needed for bingo (1 to 2n+2).
    #[arg(long, default_value_t = 5)]
    lines: u8,
    /// Who calls first.
    #[arg(long, default_value = "host", value_parser = ["host", "guest"])]
    first: String,
    /// Games to serve, one after another.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    games: u32,
    /// Seconds a dropped game is kept for the guest to resume.
    #[arg(long, default_value_t = 60.0)]
    resume_grace: f64,
    #[command(flatten)]
    common: Common,
}

#[derive(clap::Args)]
struct JoinArgs {
    /// The host, as HOST:PORT.
    addr: String,
    /// Seconds to keep trying to reconnect after a drop.
    #[arg(long, default_value_t = 60.0)]
    resume_grace: f64,
    #[command(flatten)]
    common: Common,
}

#[derive(clap::Args)]
struct Common {
    /// Card file: n lines of n numbers separated by spaces.
    #[arg(long)]
    card: Option<PathBuf>,
    /// Seed for the shuffled card and the automatic player's tie breaks.
    #[arg(long)]
    seed: Option<u64>,
    /// Play without a person: print one line per event and the result.
    #[arg(long)]
    auto: bool,
    /// Do not offer the verify extension (commit and reveal).
    #[arg(long)]
    no_verify: bool,
    /// Do not offer the resume extension.
    #[arg(long)]
    no_resume: bool,
    /// Seconds of silence from the other side before giving up mid-game.
    #[arg(long, default_value_t = 600.0)]
    idle_limit: f64,
    /// Seconds to wait for the other side's HELLO.
    #[arg(long, default_value_t = 30.0)]
    hello_limit: f64,
}

impl Common {
    fn card(&self, seed: u64) -> Result<CardChoice> {
        match &self.card {
            None => Ok(CardChoice::Shuffled(seed)),
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                let card = Card::parse(&text)
                    .with_context(|| format!("{} is not a card", path.display()))?;
                Ok(CardChoice::Given(card))
            }
        }
    }

    fn extensions(&self) -> Extensions {
        Extensions {
            verify: !self.no_verify,
            resume: !self.no_resume,
        }
    }

    fn limits(&self, resume_grace: f64) -> Result<Limits> {
        Ok(Limits {
            hello: seconds(self.hello_limit, "--hello-limit")?,
            idle: seconds(self.idle_limit, "--idle-limit")?,
            resume_grace: seconds(resume_grace, "--resume-grace")?,
            ..Limits::default()
        })
    }
}

fn seconds(value: f64, flag: &str) -> Result<Duration> {
    Duration::try_from_secs_f64(value)
        .with_context(|| format!("{flag} must be a number of seconds"))
}

/// Runs `madang bingo`.
pub fn run(args: Args) -> Result<()> {
    crate::logging::init("error");
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let common = match &args.command {
        Command::Host(host) => &host.common,
        Command::Join(join) => &join.common,
    };
    let (auto, seed) = (common.auto, common.seed.unwrap_or_else(rand::random));
    let endings = if auto {
        run_auto(&runtime, args.command, seed)?
    } else {
        match run_tui(&runtime, args.command, seed)? {
            Some(endings) => endings,
            // Left while the host waited for a guest: nothing was played.
            None => return Ok(()),
        }
    };
    let failed = endings.iter().filter(|ending| !is_clean(ending)).count();
    if failed > 0 {
        bail!("{failed} of {} games did not end cleanly", endings.len());
    }
    Ok(())
}

/// `--auto`: plays and prints one line per event, `result: ...` last.
fn run_auto(runtime: &Runtime, command: Command, seed: u64) -> Result<Vec<Ending>> {
    let (updates, updates_rx) = mpsc::unbounded_channel();
    runtime.block_on(async {
        let printer = tokio::spawn(auto::print(updates_rx));
        let endings = play(&command, seed, Controller::auto(seed), updates).await;
        // The printer ends once every update is out.
        printer.await.context("the printer failed")?;
        if let Err(error) = &endings {
            println!("result: error {error:#}");
        }
        endings
    })
}

/// The terminal UI, with the game on the runtime's threads. Returns `None`
/// when the player left before any game was under way.
fn run_tui(runtime: &Runtime, command: Command, seed: u64) -> Result<Option<Vec<Ending>>> {
    let role = match command {
        Command::Host(_) => Role::Host,
        Command::Join(_) => Role::Guest,
    };
    let (updates, updates_rx) = mpsc::unbounded_channel();
    let (input, input_rx) = mpsc::unbounded_channel();
    let mut game = runtime.spawn(async move {
        let controller = Controller::Person(input_rx);
        let endings = play(&command, seed, controller, updates.clone()).await;
        if let Err(error) = &endings {
            let _ = updates.send(Update::Failed(format!("{error:#}")));
        }
        endings
    });
    let playing = tui::run(role, updates_rx, input)?;
    // The UI sent Quit: a game under way ends with ERROR at once; a host
    // waiting for a guest has nothing to finish.
    let grace = if playing || game.is_finished() {
        Duration::from_secs(3)
    } else {
        Duration::ZERO
    };
    let joined = runtime.block_on(async { tokio::time::timeout(grace, &mut game).await });
    match joined {
        Ok(joined) => Ok(Some(joined.context("the game task failed")??)),
        Err(_) => {
            game.abort();
            Ok(None)
        }
    }
}

/// A game ended cleanly with a result nobody was caught lying about.
fn is_clean(ending: &Ending) -> bool {
    matches!(ending, Ending::Result { verification, .. } if !matches!(verification, Verification::Cheated(_)))
}

async fn play(
    command: &Command,
    seed: u64,
    mut controller: Controller,
    updates: mpsc::UnboundedSender<Update>,
) -> Result<Vec<Ending>> {
    match command {
        Command::Host(args) => {
            let first: Role = args.first.parse()?;
            let settings = Settings::new(usize::from(args.size), usize::from(args.lines), first)?;
            let card = args.common.card(seed)?;
            if let CardChoice::Given(card) = &card
                && card.size() != settings.size()
            {
                bail!(
                    "the card is {0}x{0} but --size is {1}",
                    card.size(),
                    settings.size()
                );
            }
            let options = HostOptions {
                settings,
                card,
                extensions: args.common.extensions(),
                limits: args.common.limits(args.resume_grace)?,
                games: args.games as usize,
            };
            let listener = TcpListener::bind(&args.addr)
                .await
                .with_context(|| format!("cannot listen on {}", args.addr))?;
            Ok(bingo_net::serve(&listener, &options, &mut controller, &updates).await?)
        }
        Command::Join(args) => {
            let ending = bingo_net::join(
                &args.addr,
                args.common.card(seed)?,
                args.common.extensions(),
                args.common.limits(args.resume_grace)?,
                &mut controller,
                &updates,
            )
            .await
            .with_context(|| format!("cannot play at {}", args.addr))?;
            Ok(vec![ending])
        }
    }
}
