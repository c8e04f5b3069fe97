//! The host's end of the control socket.
//!
//! The socket is bound under a name clients do not look for, restricted to its owner and only
//! then renamed into place, so a client never finds a socket it may not use or one that is not
//! listening yet. Sockets of killed hosts are swept at start. When the session ends,
//! [`ControlServer::shutdown`] gives clients a moment to read why their requests failed, then
//! the file is removed, so no client finds a host that is gone. A connection's requests are
//! answered one at a time, in order; a client that leaves mid-request costs nothing.

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};
use tracing::{debug, info, warn};

use super::protocol::{Request, Response};
use super::run_task::{self, Run};
use super::{discovery, handler, socket_path, MAX_REQUEST_BYTES};
use crate::session::link::BrowserLink;
use crate::session::tasks::Tasks;

/// How long [`ControlServer::shutdown`] lets connections finish their last response.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Listens while it lives. [`ControlServer::shutdown`] lets clients read why their requests
/// failed before the socket goes; dropping it just stops. Both remove the socket file.
pub struct ControlServer {
    path: PathBuf,
    accept: JoinHandle<()>,
    stop: watch::Sender<bool>,
}

impl ControlServer {
    /// Listens on `<data dir>/run/host-<pid>.sock`. Must be called inside a tokio runtime.
    /// `tasks` run skills for clients (`None`: `run_skill` is refused).
    pub fn start(link: BrowserLink, tasks: Option<Tasks>) -> Result<Self> {
        Self::start_in(&crate::paths::run_dir()?, link, tasks)
    }

    /// Listens on `host-<pid>.sock` in `run_dir`, which is created (0700) if missing.
    pub fn start_in(run_dir: &Path, link: BrowserLink, tasks: Option<Tasks>) -> Result<Self> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(run_dir)
            .with_context(|| format!("cannot create {}", run_dir.display()))?;
        // Sockets of hosts that were killed would otherwise pile up here.
        discovery::sweep_stale(run_dir);
        let path = socket_path(run_dir, std::process::id());
        // Left by an earlier process with our pid (pids are reused); nobody listens on it.
        let _ = std::fs::remove_file(&path);
        // Bound under a name clients do not look for, restricted, then renamed into place: a
        // client that finds the socket between bind and listen is refused and removes it as
        // stale, so it must not be findable before it listens.
        let staging = run_dir.join(format!(".host-{}.sock.new", std::process::id()));
        let _ = std::fs::remove_file(&staging);
        let listener = UnixListener::bind(&staging)
            .with_context(|| format!("cannot listen on {}", staging.display()))?;
        std::fs::set_permissions(&staging, std::fs::Permissions::from_mode(0o600))
            .with_context(|| format!("cannot restrict {} to its owner", staging.display()))?;
        std::fs::rename(&staging, &path)
            .with_context(|| format!("cannot move {} to {}", staging.display(), path.display()))?;
        info!(path = %path.display(), "control socket listening");
        let (stop, stopped) = watch::channel(false);
        let accept = tokio::spawn(accept_loop(listener, link, tasks, stopped));
        Ok(Self { path, accept, stop })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Stops accepting, and gives the connections a moment to send the response they are
    /// working on (after the session ended, its failure) before the process exits.
    pub async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        if tokio::time::timeout(SHUTDOWN_GRACE, &mut self.accept)
            .await
            .is_err()
        {
            warn!("control connections did not finish within {SHUTDOWN_GRACE:?}");
        }
    }
}

impl Drop for ControlServer {
    fn drop(&mut self) {
        self.accept.abort();
        if let Err(e) = std::fs::remove_file(&self.path) {
            warn!(path = %self.path.display(), "cannot remove the control socket: {e}");
        }
    }
}

/// Resolves once the server is told to stop (at once if it already was). Returns nothing, so
/// no borrow of the channel is held in a `select!` arm that awaits.
async fn stopped(stop: &mut watch::Receiver<bool>) {
    // An error means the server is gone: stop as well.
    let _ = stop.wait_for(|stop| *stop).await;
}

/// Accepts until told to stop, then waits for its connections to end.
async fn accept_loop(
    listener: UnixListener,
    link: BrowserLink,
    tasks: Option<Tasks>,
    mut stop: watch::Receiver<bool>,
) {
    let mut connections = JoinSet::new();
    let for_connections = stop.clone();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let stop = for_connections.clone();
                    connections.spawn(serve_connection(stream, link.clone(), tasks.clone(), stop));
                }
                Err(e) => {
                    // Usually a transient shortage of file descriptors: wait instead of spinning.
                    warn!("control socket accept failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
            },
            // Reap finished connections as we go, so the set does not grow with every client.
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            _ = stopped(&mut stop) => break,
        }
    }
    drop(listener);
    while connections.join_next().await.is_some() {}
}

/// Answers requests one at a time until the client closes the connection or the server
/// stops. A request under way is always answered: once the session has ended it fails fast.
///
/// A client that goes away mid-request costs nothing: the request runs to its end (an
/// action in the page cannot be taken back anyway) and the response is dropped.
async fn serve_connection(
    stream: UnixStream,
    link: BrowserLink,
    tasks: Option<Tasks>,
    mut stop: watch::Receiver<bool>,
) {
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    loop {
        let mut line = String::new();
        let mut limited = (&mut reader).take(MAX_REQUEST_BYTES);
        let read = tokio::select! {
            read = limited.read_line(&mut line) => read,
            _ = stopped(&mut stop) => return,
        };
        let n = match read {
            Ok(n) => n,
            Err(e) => {
                debug!("control client read failed: {e}");
                return;
            }
        };
        if n == 0 {
            return;
        }
        let too_long = !line.ends_with('\n') && n as u64 >= MAX_REQUEST_BYTES;
        let response = if too_long {
            Response::error(format!(
                "request longer than {MAX_REQUEST_BYTES} bytes; closing the connection"
            ))
        } else if line.trim().is_empty() {
            continue;
        } else {
            match serde_json::from_str::<Request>(&line) {
                Ok(request) => match Run::try_from(request) {
                    Ok(run) => {
                        debug!(job = run.job.name(), "control request: a run");
                        run_task::serve(&link, tasks.as_ref(), run, &mut reader, &mut write).await;
                        return;
                    }
                    Err(request) => {
                        debug!(?request, "control request");
                        handler::handle(&link, tasks.as_ref(), request).await
                    }
                },
                Err(e) => Response::error(format!("unreadable request: {e}")),
            }
        };
        let mut out = serde_json::to_vec(&response).expect("responses always serialise");
        out.push(b'\n');
        if let Err(e) = write.write_all(&out).await {
            debug!("control client left before its response: {e}");
            return;
        }
        if too_long {
            return;
        }
    }
}
