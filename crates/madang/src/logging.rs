//! Log output of every subcommand: `tracing` to standard error.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// Logs to standard error, at `default_level` unless `RUST_LOG` says
/// otherwise, coloured only on a terminal. A second call (tests run several
/// commands in one process) keeps the first subscriber.
pub fn init(default_level: &str) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr)
        .try_init();
}
