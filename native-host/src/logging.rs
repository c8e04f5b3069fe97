//! Logging for the host.
//!
//! In native-messaging mode stdout *is* the protocol channel: a single stray
//! line there corrupts the stream, so logs go to a file in the data directory
//! (and stderr, which Chrome forwards to its own log, stays quiet).

use std::path::Path;

use anyhow::{Context, Result};
use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::EnvFilter;

/// Environment variable holding a `tracing` filter, e.g. `debug` or `itinero_host=trace`.
pub const LOG_ENV: &str = "ITINERO_LOG";

/// Name prefix of the daily log files.
pub const LOG_FILE: &str = "host.log";

fn filter() -> EnvFilter {
    EnvFilter::try_from_env(LOG_ENV).unwrap_or_else(|_| EnvFilter::new("info"))
}

/// Sends logs to `<dir>/host.log.<date>`. Keep the guard alive: dropping it flushes.
pub fn to_file(dir: &Path) -> Result<WorkerGuard> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create log directory {}", dir.display()))?;
    let appender = tracing_appender::rolling::Builder::new()
        .rotation(tracing_appender::rolling::Rotation::DAILY)
        .filename_prefix(LOG_FILE)
        .max_log_files(7)
        .build(dir)
        .with_context(|| format!("cannot open a log file in {}", dir.display()))?;
    let (writer, guard) = tracing_appender::non_blocking(appender);
    tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_writer(writer)
        .with_ansi(false)
        .init();
    Ok(guard)
}

/// For CLI subcommands: warnings and errors to stderr, never stdout.
pub fn to_stderr() {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_env(LOG_ENV).unwrap_or_else(|_| EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
}
