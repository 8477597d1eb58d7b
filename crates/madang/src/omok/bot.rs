//! `madang omok bot`: a program player for the 3-byte referee.
//!
//! It connects, plays one game per connection with an engine behind
//! [`engine::Player`] (the built-in engine, or an external Gomocup engine),
//! prints each game's result, and reconnects for the next game.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::cli::{RuleArg, parse_duration};
use anyhow::{Context, Result, anyhow, bail};
use engine::{Engine, Player};
use gomocup::ExternalBrain;
use omok::frame::EndResult;
use omok::player::{Limits, Notice, Outcome, Phase};
use omok_net::client::{CONNECT_TIMEOUT, Connection};
use renju::{Game, Rule};
use tracing::{Instrument, info, info_span, warn};

/// The smallest safety margin kept from the turn time for the network and
/// the referee's reading of the Put.
const MIN_MARGIN: Duration = Duration::from_millis(300);

/// How long a refused bot keeps asking for a seat (the referee may still be
/// closing the previous game's connections).
const SEAT_RETRY_FOR: Duration = Duration::from_secs(10);
/// How long a seated bot waits quietly before saying it waits for an
/// opponent.
const WAITING_NOTICE_AFTER: Duration = Duration::from_secs(1);
/// Pause between two requests for a seat.
const SEAT_RETRY_EVERY: Duration = Duration::from_millis(250);

/// Arguments of `madang omok bot`.
#[derive(clap::Args)]
pub struct Args {
    /// The referee to play on.
    #[arg(long, value_name = "HOST:PORT")]
    connect: crate::omok::addr::HostPort,
    /// Games to play, one connection each.
    #[arg(long, default_value_t = 1, value_name = "N")]
    games: u64,
    /// The referee's time per move (the protocol does not carry it).
    #[arg(long, default_value = "15s", value_parser = parse_duration, value_name = "DUR")]
    turn_time: Duration,
    /// Thinking time per move [default: the turn time less a margin of
    /// 10 %, at least 300 ms].
    #[arg(long, value_parser = parse_duration, value_name = "DUR")]
    think_time: Option<Duration>,
    /// The referee's rule: renju, renju-simplified, freestyle or standard
    /// (the protocol does not carry it).
    #[arg(long, value_enum, default_value_t)]
    rule: RuleArg,
    /// Play with an external Gomocup engine instead of the built-in one,
    /// e.g. "pbrain-rapfi".
    #[arg(long, value_name = "CMD")]
    brain: Option<String>,
    /// Give up on a referee that takes longer than this to accept the
    /// connection, answer Connect or acknowledge a move (the opponent gets
    /// the turn time and this much more).
    #[arg(long, default_value = "10s", value_parser = parse_duration, value_name = "DUR")]
    reply_timeout: Duration,
}

/// Runs `madang omok bot`.
pub fn run(args: Args) -> Result<()> {
    crate::logging::init("warn");
    let player = make_player(&args)?;
    let think = think_time(args.turn_time, args.think_time);
    if think >= args.turn_time {
        warn!(?think, turn_time = ?args.turn_time, "think time leaves no margin for the network");
    }
    let mut bot = Bot::new(player, Rule::from(args.rule), think);
    bot.connect_timeout = args.reply_timeout;
    bot.limits = Limits::new(args.turn_time, args.reply_timeout);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        let (mut won, mut lost, mut drawn) = (0, 0, 0);
        for n in 1..=args.games {
            let outcome = bot
                .play_seated(&args.connect.to_string())
                .await
                .with_context(|| format!("game {n}"))?;
            println!("game {n}: {outcome}");
            *match outcome.result {
                EndResult::Won => &mut won,
                EndResult::Lost => &mut lost,
                EndResult::Draw => &mut drawn,
            } += 1;
        }
        let s = if args.games == 1 { "" } else { "s" };
        println!(
            "{} game{s}: {won} won, {lost} lost, {drawn} drawn",
            args.games
        );
        Ok(())
    })
}

/// Builds the move picker the arguments ask for.
fn make_player(args: &Args) -> Result<Box<dyn Player>> {
    if let Some(command) = &args.brain {
        let brain = ExternalBrain::spawn(command)
            .with_context(|| format!("starting the Gomocup engine {command:?}"))?;
        return Ok(Box::new(brain));
    }
    Ok(Box::new(Engine::new(Rule::from(args.rule))))
}

/// The engine's time per move: `think` if given, else the turn time less a
/// margin of 10 % and at least [`MIN_MARGIN`].
pub(crate) fn think_time(turn_time: Duration, think: Option<Duration>) -> Duration {
    think.unwrap_or_else(|| turn_time.saturating_sub((turn_time / 10).max(MIN_MARGIN)))
}

/// A player program: an engine and how it plays on a referee.
pub(crate) struct Bot {
    /// Shared with the blocking threads the engine runs on.
    engine: Arc<Mutex<Box<dyn Player>>>,
    rule: Rule,
    think: Duration,
    /// How long to wait for the connection.
    pub(crate) connect_timeout: Duration,
    /// How long to wait for the referee.
    pub(crate) limits: Limits,
}

impl Bot {
    /// A bot playing `rule` with `player`, thinking `think` per move.
    pub(crate) fn new(player: Box<dyn Player>, rule: Rule, think: Duration) -> Bot {
        Bot {
            engine: Arc::new(Mutex::new(player)),
            rule,
            think,
            connect_timeout: CONNECT_TIMEOUT,
            limits: Limits::default(),
        }
    }

    /// Plays one game at `addr`, asking again for a while if the referee
    /// has no free seat.
    pub(crate) async fn play_seated(&self, addr: &str) -> Result<Outcome> {
        let deadline = tokio::time::Instant::now() + SEAT_RETRY_FOR;
        loop {
            if let Some(outcome) = self.play(addr).await? {
                return Ok(outcome);
            }
            if tokio::time::Instant::now() >= deadline {
                bail!("the referee at {addr} has no free seat");
            }
            info!("no free seat; asking again");
            tokio::time::sleep(SEAT_RETRY_EVERY).await;
        }
    }

    /// Plays one game at `addr`; `None` if the referee refused a seat.
    async fn play(&self, addr: &str) -> Result<Option<Outcome>> {
        self.play_game(addr)
            .instrument(info_span!("game", %addr))
            .await
    }

    async fn play_game(&self, addr: &str) -> Result<Option<Outcome>> {
        let mut conn = Connection::connect_with(addr, self.rule, self.connect_timeout, self.limits)
            .await
            .with_context(|| format!("connecting to {addr}"))?;
        let mut said_waiting = false;
        loop {
            // Said without RUST_LOG: a bot may wait long for an opponent,
            // and must not look hung meanwhile.
            let next = if conn.session().phase() == Phase::Seated && !said_waiting {
                tokio::select! {
                    next = conn.next_notice() => next?,
                    () = tokio::time::sleep(WAITING_NOTICE_AFTER) => {
                        let color = conn.session().color().map_or_else(String::new, |c| format!(" as {c}"));
                        eprintln!("seated{color} at {addr}; waiting for an opponent");
                        said_waiting = true;
                        continue;
                    }
                }
            } else {
                conn.next_notice().await?
            };
            let Some(notice) = next else { break };
            match notice {
                Notice::Seated(color) => {
                    info!(%color, "seated");
                    let rule = self.rule;
                    self.with_engine(move |e| e.new_game(rule)).await??;
                }
                Notice::OurTurn(game) => {
                    let p = self.pick(game).await?;
                    conn.play(p)
                        .await
                        .with_context(|| format!("the engine chose {p}"))?;
                }
                Notice::TheirTurn(_) => {}
                Notice::GameOver(outcome) => {
                    info!(%outcome, "game over");
                    return Ok(Some(outcome));
                }
                Notice::Refused { .. } => return Ok(None),
            }
        }
        Err(anyhow!("the connection ended without a result"))
    }

    async fn pick(&self, game: Game) -> Result<renju::Point> {
        let think = self.think;
        let p = self.with_engine(move |e| e.pick(&game, think)).await?;
        p.context("the engine gave no move")
    }

    /// Runs `f` on the engine on a blocking thread: engines compute or wait
    /// for a child process, and must not stall the connection's task.
    async fn with_engine<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut dyn Player) -> T + Send + 'static,
    {
        let engine = Arc::clone(&self.engine);
        tokio::task::spawn_blocking(move || {
            let mut guard = engine
                .lock()
                .map_err(|_| anyhow!("the engine crashed earlier"))?;
            Ok(f(guard.as_mut()))
        })
        .await
        .context("the engine crashed")?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn think_time_keeps_a_margin() {
        let s = Duration::from_secs;
        let ms = Duration::from_millis;
        assert_eq!(think_time(s(15), None), ms(13_500));
        assert_eq!(think_time(s(2), None), ms(1_700));
        assert_eq!(think_time(ms(200), None), Duration::ZERO);
        assert_eq!(think_time(s(15), Some(s(3))), s(3));
    }
}
