//! One task per table: it owns the table's [`Table`] state machine and the
//! connections in its seats, reads both, feeds the machine with the time
//! each frame was read whole, sleeps until the machine's next deadline, and
//! writes what the machine asks for. Reading and writing in the table's own
//! task keeps a Put-to-Update round trip as short as a plain echo.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::time::SystemTime;

use futures::StreamExt;
use omok::frame::FRAME_LEN;
use omok::records::GameRecord;
use omok::referee::{GameSummary, Seat, Table, TableAction};
use renju::Color;
use tokio::sync::{mpsc, watch};
use tokio::time::{Instant, Sleep, sleep_until};
use tracing::{Instrument, Span, debug, error, info, info_span, warn};

use super::Shared;
use super::io::Link;

/// A seated connection handed to its table.
pub(super) struct Join {
    pub(super) seat: Seat,
    pub(super) link: Link,
}

/// A seated player's connection.
struct Player {
    link: Link,
    /// Whether reading may go on (false after end of stream or an error).
    open: bool,
}

/// What the table task keeps of its game in progress.
struct GameInProgress {
    /// Black's and white's addresses.
    players: [String; 2],
    /// Wall-clock start, for the record.
    started: SystemTime,
    /// The game's span: everything logged during the game is inside it.
    span: Span,
}

/// One table: its state machine and the connections in its seats.
pub(super) struct TableTask {
    index: usize,
    table: Table,
    /// One timer for the table's life, moved to each new deadline rather
    /// than created anew at every wake-up.
    sleep: Pin<Box<Sleep>>,
    /// The deadline `sleep` is set to.
    armed: Option<std::time::Instant>,
    players: [Option<Player>; 2],
    joins: mpsc::UnboundedReceiver<Join>,
    stop: watch::Receiver<bool>,
    shared: Arc<Shared>,
    game: Option<GameInProgress>,
}

/// What woke a table up.
enum Wake {
    Join(Join),
    Read(Seat, Option<io::Result<[u8; FRAME_LEN]>>),
    Deadline,
    Shutdown,
}

impl TableTask {
    pub(super) fn new(
        index: usize,
        table: Table,
        joins: mpsc::UnboundedReceiver<Join>,
        stop: watch::Receiver<bool>,
        shared: Arc<Shared>,
    ) -> TableTask {
        TableTask {
            index,
            table,
            sleep: Box::pin(sleep_until(Instant::now())),
            armed: None,
            players: [None, None],
            joins,
            stop,
            shared,
            game: None,
        }
    }

    /// Runs the table until the referee shuts down; a game in progress then
    /// ends as [`Table::handle_shutdown`] says, and is recorded.
    pub(super) async fn run(mut self) {
        loop {
            let wake = self.wait().await;
            let now = Instant::now().into_std();
            let stopping = matches!(wake, Wake::Shutdown);
            match wake {
                Wake::Shutdown => self.table.handle_shutdown(now),
                Wake::Join(Join { seat, link }) => {
                    if self.table.handle_seat(seat, now).is_ok() {
                        self.players[seat.index()] = Some(Player { link, open: true });
                    } else {
                        // The lobby gave out a seat still taken: impossible
                        // by construction; the newcomer is dropped unseated.
                        warn!(table = self.index, %seat, "seat already taken");
                    }
                }
                Wake::Read(seat, Some(Ok(frame))) => self.table.handle_frame(seat, frame, now),
                Wake::Read(seat, _) => {
                    if let Some(p) = &mut self.players[seat.index()] {
                        p.open = false;
                    }
                    self.table.handle_gone(seat, now);
                }
                Wake::Deadline => self.table.handle_timeout(now),
            }
            if self.table.start_pending() {
                if self.shared.budget.as_ref().is_none_or(|b| b.take()) {
                    self.table.start(now);
                } else {
                    // No games left: these two will never play here.
                    for seat in Color::ALL {
                        self.table.handle_gone(seat, now);
                    }
                }
            }
            let span = self
                .game
                .as_ref()
                .map_or_else(Span::none, |g| g.span.clone());
            self.apply().instrument(span).await;
            if stopping {
                return;
            }
        }
    }

    /// Waits for the next event.
    async fn wait(&mut self) -> Wake {
        let deadline = self.table.poll_timeout();
        if let Some(d) = deadline.filter(|&d| self.armed != Some(d)) {
            self.sleep.as_mut().reset(Instant::from_std(d));
            self.armed = Some(d);
        }
        let [black, white] = &mut self.players;
        tokio::select! {
            // Shutdown first: a table busy with a flood still stops.
            biased;
            _ = self.stop.wait_for(|&stop| stop) => Wake::Shutdown,
            join = self.joins.recv() => join.map_or(Wake::Shutdown, Wake::Join),
            read = next_frame(black) => Wake::Read(Color::Black, read),
            read = next_frame(white) => Wake::Read(Color::White, read),
            () = &mut self.sleep, if deadline.is_some() => Wake::Deadline,
        }
    }

    /// Carries out the machine's actions; a player that cannot be written
    /// to is gone, which may queue more actions. A game's record is durable
    /// before its End frames go out.
    async fn apply(&mut self) {
        loop {
            let actions: Vec<TableAction> =
                std::iter::from_fn(|| self.table.poll_action()).collect();
            if actions.is_empty() {
                return;
            }
            for action in &actions {
                if let TableAction::Ended(summary) = action {
                    self.game_ended(summary).await;
                }
            }
            for action in actions {
                match action {
                    TableAction::Send(seat, msg) => {
                        let Some(player) = &mut self.players[seat.index()] else {
                            continue;
                        };
                        if !player.link.write_frame(msg.encode()).await {
                            debug!(table = self.index, peer = %player.link.peer, "write failed");
                            player.open = false;
                            self.table.handle_gone(seat, Instant::now().into_std());
                        }
                    }
                    TableAction::Close(seat) => {
                        if let Some(player) = self.players[seat.index()].take() {
                            let _ = self.shared.lingers.send(player.link);
                        }
                        self.shared.lobby.release(self.index, seat);
                    }
                    TableAction::Started => self.game_started(),
                    TableAction::Ended(_) => {}
                }
            }
        }
    }

    fn game_started(&mut self) {
        let peer = |s: Seat| {
            self.players[s.index()]
                .as_ref()
                .map_or_else(String::new, |p| p.link.peer.to_string())
        };
        let players = [peer(Color::Black), peer(Color::White)];
        let span = info_span!("game", black = %players[0], white = %players[1]);
        span.in_scope(|| {
            info!(
                table = self.index,
                rule = self.table.config().rule.name(),
                "game started"
            );
        });
        self.game = Some(GameInProgress {
            players,
            started: SystemTime::now(),
            span,
        });
    }

    /// Logs the game's end and makes its record durable (when recording).
    async fn game_ended(&mut self, summary: &GameSummary) {
        let Some(GameInProgress {
            players,
            started,
            span,
        }) = self.game.take()
        else {
            return;
        };
        let result = match summary.winner {
            Some(Color::Black) => "black won",
            Some(Color::White) => "white won",
            None => "draw",
        };
        span.in_scope(|| {
            info!(
                table = self.index,
                result,
                reason = %summary.reason,
                moves = summary.moves.len(),
                "game ended"
            );
        });
        if let Some(recorder) = &self.shared.recorder {
            // Start time, table and this run's game number: unique even for
            // games starting in the same millisecond.
            let n = self
                .shared
                .games_ended
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                + 1;
            let record = GameRecord::new(String::new(), summary, players, started);
            let id = format!("{}-t{}-{n}", record.started_unix_ms, self.index);
            let committed = recorder.record(GameRecord {
                id: id.clone(),
                ..record
            });
            match committed.await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => error!(id, error = %e, "game not recorded"),
                Err(_) => error!(id, "game not recorded: the record writer stopped"),
            }
        }
        let _ = self.shared.ended.send(());
    }
}

/// The next frame of a seated player that may still be read; pending
/// forever for an empty seat, so that `select!` just ignores it.
async fn next_frame(player: &mut Option<Player>) -> Option<io::Result<[u8; FRAME_LEN]>> {
    match player {
        Some(p) if p.open => p.link.frames.next().await,
        _ => std::future::pending().await,
    }
}
