//! New connections until they hold a seat: the Connect limit, seating or
//! refusal, and making room when the referee is full.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::StreamExt;
use omok::frame::{PlayerMsg, RefereeMsg};
use tokio::sync::mpsc;
use tokio::task::{AbortHandle, JoinSet};
use tokio::time::timeout;
use tracing::{Instrument, debug, info_span};

use super::Shared;
use super::io::Link;
use super::table::Join;

/// The connections that have not sent Connect yet, oldest first, so that a
/// full referee can drop the oldest of them to make room.
#[derive(Default)]
pub(super) struct Admissions {
    tasks: JoinSet<()>,
    order: VecDeque<Pending>,
}

struct Pending {
    task: AbortHandle,
    /// Set once Connect arrived: from then on the connection is being
    /// seated (or refused) and is no longer a candidate for eviction.
    connected: Arc<AtomicBool>,
}

impl Admissions {
    /// Starts the admission of a new connection.
    pub(super) fn spawn(&mut self, link: Link, shared: Arc<Shared>) {
        let connected = Arc::new(AtomicBool::new(false));
        let span = info_span!("conn", peer = %link.peer);
        let task = self
            .tasks
            .spawn(admit(link, shared, connected.clone()).instrument(span));
        if self.order.len() >= 64 && self.order.len() > 2 * self.tasks.len() {
            self.order
                .retain(|p| !p.task.is_finished() && !p.connected.load(Ordering::Acquire));
        }
        self.order.push_back(Pending { task, connected });
    }

    /// Drops the oldest connection still waiting to send Connect; false if
    /// there is none.
    pub(super) fn evict_oldest(&mut self) -> bool {
        while let Some(p) = self.order.pop_front() {
            if !p.task.is_finished() && !p.connected.load(Ordering::Acquire) {
                p.task.abort();
                debug!("full: dropped the oldest connection without a seat");
                return true;
            }
        }
        false
    }

    /// Reaps finished admissions (for `select!`); pending while none run.
    pub(super) async fn join_next(&mut self) {
        if self.tasks.join_next().await.is_none() {
            std::future::pending().await
        }
    }

    /// Stops every admission in progress.
    pub(super) async fn shutdown(&mut self) {
        self.tasks.shutdown().await;
        self.order.clear();
    }
}

/// Waits for a new connection's Connect and seats it, or refuses it.
async fn admit(mut link: Link, shared: Arc<Shared>, connected: Arc<AtomicBool>) {
    // Frames are tiny and answered one by one: never hold them back.
    if let Err(e) = link.frames.get_ref().set_nodelay(true) {
        debug!(error = %e, "set_nodelay failed");
    }
    match timeout(shared.connect_timeout, link.frames.next()).await {
        Ok(Some(Ok(frame))) if PlayerMsg::decode(frame) == Ok(PlayerMsg::Connect) => {}
        Ok(Some(Ok(frame))) => return debug!(?frame, "closed: first frame not Connect"),
        Ok(_) => return debug!("closed before Connect"),
        Err(_) => return debug!("closed: no Connect in time"),
    }
    connected.store(true, Ordering::Release);
    // Once every game allowed has started, nobody else is seated.
    let closing = shared.budget.as_ref().is_some_and(|b| b.exhausted());
    let Some((table, seat)) = shared.lobby.take().filter(|_| !closing) else {
        debug!("refused: every seat taken");
        let refusal = RefereeMsg::Connect {
            seat: 2,
            accepted: false,
        };
        if link.write_frame(refusal.encode()).await {
            let _ = shared.lingers.send(link);
        }
        return;
    };
    debug!(table, %seat, "seated");
    // Handed over without waiting, so that the seat taken is never lost to
    // a cancelled task.
    if let Err(mpsc::error::SendError(_)) = shared.tables[table].send(Join { seat, link }) {
        // The table is gone: the referee is shutting down.
        shared.lobby.release(table, seat);
    }
}
