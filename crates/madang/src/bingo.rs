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

use crate::cli::parse_duration;
use anyhow::{Context, Result, bail};
use bingo::session::{CardChoice, Limits};
use bingo::{Card, Ending, Extensions, Role, Settings, Verification};
use bingo_net::{Controller, HostOptions, Update, Updates, UserInput};
use clap::Subcommand;
use tokio::net::TcpListener;
use tokio::runtime::Runtime;
use tokio::sync::mpsc;

/// Updates held for the printer or the screen before chat is dropped.
const UPDATES: usize = 256;

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
    #[arg(long, default_value = "127.0.0.1:7000", value_parser = crate::omok::addr::listen_addr)]
    addr: std::net::SocketAddr,
    /// Card size n (the card holds 1..n²).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u8).range(1..=15))]
    size: u8,
    /// Complete lines needed for bingo (1 to 2n+2).
    #[arg(long, default_value_t = 5)]
    lines: u8,
    /// Who calls first.
    #[arg(long, default_value = "host", value_parser = ["host", "guest"])]
    first: String,
    /// Games to serve, one after another (with --auto; in the terminal UI,
    /// `n` after a game starts the next).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    games: u32,
    /// How long a dropped game is kept for the guest to resume.
    #[arg(long, default_value = "60s", value_parser = parse_duration, value_name = "DUR")]
    resume_grace: Duration,
    #[command(flatten)]
    common: Common,
}

#[derive(clap::Args)]
struct JoinArgs {
    /// The host, as HOST:PORT (a host name or an IP address).
    addr: crate::omok::addr::HostPort,
    /// How long to keep trying to reconnect after a drop.
    #[arg(long, default_value = "60s", value_parser = parse_duration, value_name = "DUR")]
    resume_grace: Duration,
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
    /// Silence from the other side before giving up mid-game.
    #[arg(long, default_value = "10m", value_parser = parse_duration, value_name = "DUR")]
    idle_limit: Duration,
    /// How long to wait for the other side's HELLO.
    #[arg(long, default_value = "30s", value_parser = parse_duration, value_name = "DUR")]
    hello_limit: Duration,
}

impl Common {
    fn card(&self, seed: u64) -> Result<CardChoice> {
        match &self.card {
            None => Ok(CardChoice::Shuffled(seed)),
            Some(path) => {
                // The io error names neither the path nor the action.
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

    fn limits(&self, resume_grace: Duration) -> Limits {
        Limits {
            hello: self.hello_limit,
            idle: self.idle_limit,
            resume_grace,
            ..Limits::default()
        }
    }
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
        run_tui(&runtime, args.command, seed)?
    };
    // Leaving while the host waited for a guest plays nothing and fails
    // nothing.
    if endings == [Ending::Left] {
        return Ok(());
    }
    let failed = endings.iter().filter(|ending| !is_clean(ending)).count();
    if failed > 0 {
        bail!("{failed} of {} games did not end cleanly", endings.len());
    }
    Ok(())
}

/// `--auto`: plays and prints one line per event, `result: ...` last.
fn run_auto(runtime: &Runtime, command: Command, seed: u64) -> Result<Vec<Ending>> {
    let (mut updates, updates_rx) = Updates::channel(UPDATES);
    runtime.block_on(async {
        let printer = tokio::spawn(auto::print(updates_rx));
        let mut controller = Controller::auto(seed);
        let setup = Setup::new(&command, seed).await;
        let endings = match setup {
            Ok(setup) => Ok(setup.play(&mut controller, &mut updates, false).await),
            Err(error) => Err(error),
        };
        drop(updates);
        // The printer ends once every update is out.
        printer.await.context("the printer failed")?;
        if let Err(error) = &endings {
            println!("result: error {error:#}");
        }
        endings
    })
}

/// The terminal UI, with the games on the runtime's threads: after each
/// game the player may start another or leave.
fn run_tui(runtime: &Runtime, command: Command, seed: u64) -> Result<Vec<Ending>> {
    let role = match command {
        Command::Host(_) => Role::Host,
        Command::Join(_) => Role::Guest,
    };
    let (mut updates, updates_rx) = Updates::channel(UPDATES);
    let (input, input_rx) = mpsc::unbounded_channel();
    let game = runtime.spawn(async move {
        let mut controller = Controller::Person(input_rx);
        match Setup::new(&command, seed).await {
            Ok(setup) => Ok(setup.play(&mut controller, &mut updates, true).await),
            Err(error) => {
                let message = format!("{error:#}");
                updates.send(Update::Failed(message)).await;
                Err(error)
            }
        }
    });
    tui::run(role, updates_rx, input)?;
    // The UI has sent Quit: a game under way ends with ERROR at once, and
    // its connection closes within the close limit.
    runtime.block_on(async {
        match tokio::time::timeout(Duration::from_secs(5), game).await {
            Ok(joined) => joined.context("the game task failed")?,
            Err(_) => bail!("the game did not finish closing"),
        }
    })
}

/// A game's ends, ready to play: the bound listener, or the address.
enum Setup {
    Host(TcpListener, HostOptions),
    Join(String, CardChoice, Extensions, Limits),
}

impl Setup {
    async fn new(command: &Command, seed: u64) -> Result<Setup> {
        match command {
            Command::Host(args) => {
                let first: Role = args.first.parse()?;
                let settings =
                    Settings::new(usize::from(args.size), usize::from(args.lines), first)?;
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
                    limits: args.common.limits(args.resume_grace),
                    games: args.games as usize,
                };
                let listener = TcpListener::bind(&args.addr)
                    .await
                    .with_context(|| format!("cannot listen on {}", args.addr))?;
                Ok(Setup::Host(listener, options))
            }
            Command::Join(args) => Ok(Setup::Join(
                args.addr.to_string(),
                args.common.card(seed)?,
                args.common.extensions(),
                args.common.limits(args.resume_grace),
            )),
        }
    }

    /// A shuffled card is shuffled afresh for each game a person asks for.
    fn reshuffle(&mut self) {
        let card = match self {
            Setup::Host(_, options) => &mut options.card,
            Setup::Join(_, card, ..) => card,
        };
        if let CardChoice::Shuffled(seed) = card {
            *seed = seed.wrapping_add(1);
        }
    }

    /// Plays the games: all of `--games` for a program; for a `person`, one
    /// at a time until the player leaves instead of asking for another.
    async fn play(
        mut self,
        controller: &mut Controller,
        updates: &mut Updates,
        person: bool,
    ) -> Vec<Ending> {
        let mut endings = Vec::new();
        loop {
            if !endings.is_empty() {
                self.reshuffle();
            }
            let mut played = match &self {
                Setup::Host(listener, options) => {
                    let options = HostOptions {
                        games: if person { 1 } else { options.games },
                        ..options.clone()
                    };
                    match bingo_net::serve(listener, &options, controller, updates).await {
                        Ok(played) => played,
                        Err(error) => {
                            updates.send(Update::Failed(error.to_string())).await;
                            return endings;
                        }
                    }
                }
                Setup::Join(addr, card, extensions, limits) => {
                    let ending = bingo_net::join(
                        addr,
                        card.clone(),
                        *extensions,
                        *limits,
                        controller,
                        updates,
                    )
                    .await;
                    vec![ending]
                }
            };
            let left = played.contains(&Ending::Left);
            endings.append(&mut played);
            if left || !person || !another_game(controller).await {
                return endings;
            }
        }
    }
}

/// Whether the person asks for another game (rather than leaving).
async fn another_game(controller: &mut Controller) -> bool {
    let Controller::Person(input) = controller else {
        return false;
    };
    loop {
        match input.recv().await {
            Some(UserInput::NewGame) => return true,
            Some(UserInput::Quit) | None => return false,
            // Keys pressed for the game just over.
            Some(_) => {}
        }
    }
}

/// A game ended cleanly with a result nobody was caught lying about.
fn is_clean(ending: &Ending) -> bool {
    matches!(ending, Ending::Result { verification, .. } if !matches!(verification, Verification::Cheated(_)))
}
