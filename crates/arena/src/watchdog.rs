//! The hard watchdog: a thread that kills (`SIGKILL`) the process tree of
//! any engine still thinking past its last deadline (the engine and every
//! process it started: see [`ProcessTree`]), whatever the thread running
//! its game is doing (even blocked writing to a frozen engine). It lives
//! until it is dropped, which a tournament does only after every game has
//! ended.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use gomocup::driver::ProcessTree;

/// Engines are known by their root process id.
#[derive(Default)]
struct State {
    deadlines: HashMap<u32, Instant>,
    /// Every engine alive, for the deadlines, and whether
    /// [`Watchdog::cancel`] kills it.
    live: HashMap<u32, (ProcessTree, bool)>,
    closing: bool,
}

/// Kills engines that outlive their deadlines.
pub struct Watchdog {
    shared: Arc<(Mutex<State>, Condvar)>,
    /// Set by [`Watchdog::cancel`]: games end at once.
    cancelled: AtomicBool,
    thread: Option<JoinHandle<()>>,
}

impl Default for Watchdog {
    fn default() -> Self {
        Watchdog::new()
    }
}

impl Watchdog {
    /// Starts the watchdog thread.
    pub fn new() -> Watchdog {
        let shared = Arc::new((Mutex::new(State::default()), Condvar::new()));
        let thread = {
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || watch(&shared))
        };
        Watchdog {
            shared,
            cancelled: AtomicBool::new(false),
            thread: Some(thread),
        }
    }

    /// Kills the registered engine `pgid` at `deadline` unless disarmed
    /// first.
    pub fn arm(&self, pgid: u32, deadline: Instant) {
        let (state, wake) = &*self.shared;
        lock(state).deadlines.insert(pgid, deadline);
        wake.notify_one();
    }

    /// Forgets `pgid`'s deadline.
    pub fn disarm(&self, pgid: u32) {
        lock(&self.shared.0).deadlines.remove(&pgid);
    }

    /// Notes an engine that deadlines may end, and [`Watchdog::cancel`]
    /// too if `kill_on_cancel` (otherwise its game ends it, within 100 ms).
    pub fn register(&self, tree: ProcessTree, kill_on_cancel: bool) {
        lock(&self.shared.0)
            .live
            .insert(tree.root(), (tree, kill_on_cancel));
    }

    /// Forgets an engine (it has been ended).
    pub fn unregister(&self, pgid: u32) {
        let mut state = lock(&self.shared.0);
        state.live.remove(&pgid);
        state.deadlines.remove(&pgid);
    }

    /// Ends every game at once (the tournament was interrupted): kills
    /// every registered engine that needs no End frame, and the other
    /// games stop at their next look at [`Watchdog::is_cancelled`] (within
    /// 100 ms).
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        for (tree, kill) in lock(&self.shared.0).live.values() {
            if *kill {
                tree.kill();
            }
        }
    }

    /// Whether [`Watchdog::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    // The state stays consistent whatever panicked while holding it.
    state.lock().unwrap_or_else(|e| e.into_inner())
}

fn watch(shared: &(Mutex<State>, Condvar)) {
    let (state, wake) = shared;
    let mut guard = lock(state);
    loop {
        let now = Instant::now();
        let due: Vec<u32> = guard
            .deadlines
            .iter()
            .filter(|&(_, &d)| d <= now)
            .map(|(&pgid, _)| pgid)
            .collect();
        for pgid in due {
            guard.deadlines.remove(&pgid);
            tracing::warn!(pgid, "watchdog: killing a hung engine");
            if let Some((tree, _)) = guard.live.get(&pgid) {
                tree.kill();
            }
        }
        if guard.closing {
            return;
        }
        let wait = guard
            .deadlines
            .values()
            .min()
            .map_or(Duration::from_secs(3600), |d| {
                d.saturating_duration_since(now)
            });
        guard = wake
            .wait_timeout(guard, wait)
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        lock(&self.shared.0).closing = true;
        self.shared.1.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
