//! Where the host keeps its files.
//!
//! Everything lives under one per-OS data directory so a user can find (and
//! delete) all of itinero's state in one place. `ITINERO_DATA_DIR` overrides it:
//! tests give every browser its own directory, and users can relocate it.

use std::path::PathBuf;

use anyhow::{Context, Result};

/// Environment variable that overrides the data directory.
pub const DATA_DIR_ENV: &str = "ITINERO_DATA_DIR";

/// The data directory (not created).
pub fn data_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os(DATA_DIR_ENV).filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let dirs = directories::ProjectDirs::from("dev", "itinero", "itinero").context(
        "cannot determine a home directory for itinero's data; set ITINERO_DATA_DIR to a writable directory",
    )?;
    Ok(dirs.data_dir().to_path_buf())
}

/// The data directory, created if missing.
pub fn ensure_data_dir() -> Result<PathBuf> {
    let dir = data_dir()?;
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create itinero's data directory {}", dir.display()))?;
    Ok(dir)
}

/// Directory of the host's log files.
pub fn log_dir() -> Result<PathBuf> {
    Ok(data_dir()?.join("logs"))
}

/// File listing extension ids allowed to start the host, one per line, written by `install`.
pub fn allowed_extensions_file() -> Result<PathBuf> {
    Ok(data_dir()?.join("allowed-extensions"))
}

/// The store's file name in the data directory.
pub const STORE_FILE_NAME: &str = "itinero.sqlite3";

/// The store: runs and their steps, settings, lessons, site approvals (see `store`).
pub fn store_file() -> Result<PathBuf> {
    Ok(data_dir()?.join(STORE_FILE_NAME))
}

/// Directory of the control sockets of running hosts (`host-<pid>.sock`), see `control`.
pub fn run_dir() -> Result<PathBuf> {
    Ok(data_dir()?.join("run"))
}
