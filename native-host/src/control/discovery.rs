//! Finding the running host to talk to: the one live control socket, or the one with a given pid.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use thiserror::Error;
use tokio::net::UnixStream;
use tracing::debug;

use super::client::ControlClient;
use super::{pid_of_socket, socket_path};

#[derive(Debug, Error)]
pub enum ConnectError {
    #[error("no running itinero host — open Chromium with the itinero extension installed (no live control socket in {})", dir.display())]
    NoHost { dir: PathBuf },
    #[error(
        "no itinero host with pid {pid} is running ({})",
        running_list(running)
    )]
    NotRunning { pid: u32, running: Vec<u32> },
    #[error(
        "several itinero hosts are running (pids {}); choose one with --host PID",
        list(pids)
    )]
    Several { pids: Vec<u32> },
    #[error("cannot determine the data directory: {0:#}")]
    DataDir(anyhow::Error),
    #[error("cannot connect to {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

fn list(pids: &[u32]) -> String {
    pids.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn running_list(pids: &[u32]) -> String {
    if pids.is_empty() {
        "none is".into()
    } else {
        format!("running: {}", list(pids))
    }
}

/// Connects to the host with `pid`, or to the only one running, through the data directory's sockets.
pub async fn connect(pid: Option<u32>) -> Result<ControlClient, ConnectError> {
    let dir = crate::paths::run_dir().map_err(ConnectError::DataDir)?;
    connect_in(&dir, pid).await
}

/// Like [`connect`], with the socket directory given.
pub async fn connect_in(run_dir: &Path, pid: Option<u32>) -> Result<ControlClient, ConnectError> {
    if let Some(pid) = pid {
        let path = socket_path(run_dir, pid);
        if let Some(stream) = try_connect(&path).await? {
            return Ok(ControlClient::new(stream, pid));
        }
        let running = live(run_dir).await?.into_iter().map(|(p, _)| p).collect();
        return Err(ConnectError::NotRunning { pid, running });
    }
    let mut hosts = live(run_dir).await?;
    match hosts.len() {
        0 => Err(ConnectError::NoHost {
            dir: run_dir.to_owned(),
        }),
        1 => {
            let (pid, stream) = hosts.remove(0);
            Ok(ControlClient::new(stream, pid))
        }
        _ => Err(ConnectError::Several {
            pids: hosts.into_iter().map(|(p, _)| p).collect(),
        }),
    }
}

/// Removes the sockets in `run_dir` nobody listens on any more.
pub fn sweep_stale(run_dir: &Path) {
    for (_, path) in sockets(run_dir) {
        // A blocking connect to a Unix socket returns at once: it is accepted or refused.
        if let Err(e) = std::os::unix::net::UnixStream::connect(&path) {
            if is_stale(&e) {
                debug!(path = %path.display(), "removing a stale control socket");
                let _ = std::fs::remove_file(&path);
            }
        }
    }
}

/// The hosts whose sockets accept a connection, sorted by pid; stale sockets are removed.
async fn live(run_dir: &Path) -> Result<Vec<(u32, UnixStream)>, ConnectError> {
    let mut found = Vec::new();
    for (pid, path) in sockets(run_dir) {
        if let Some(stream) = try_connect(&path).await? {
            found.push((pid, stream));
        }
    }
    found.sort_by_key(|(pid, _)| *pid);
    Ok(found)
}

/// `None` when nobody listens there (the socket file is then removed).
async fn try_connect(path: &Path) -> Result<Option<UnixStream>, ConnectError> {
    match UnixStream::connect(path).await {
        Ok(stream) => Ok(Some(stream)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) if is_stale(&e) => {
            debug!(path = %path.display(), "removing a stale control socket");
            let _ = std::fs::remove_file(path);
            Ok(None)
        }
        Err(source) => Err(ConnectError::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

/// A socket file whose process is gone refuses connections.
fn is_stale(e: &std::io::Error) -> bool {
    e.kind() == ErrorKind::ConnectionRefused
}

fn sockets(run_dir: &Path) -> Vec<(u32, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(run_dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let pid = pid_of_socket(e.file_name().to_str()?)?;
            Some((pid, e.path()))
        })
        .collect()
}
