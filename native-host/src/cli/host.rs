//! What the browser-driving commands (`tabs`, `observe`, `act`) share: choosing the running
//! host and calling it through its control socket.

use anyhow::{bail, Context, Result};
use clap::Args;

use crate::control::protocol::{Request, Response};
use crate::control::{self, ControlClient};

#[derive(Debug, Clone, Args)]
pub struct HostArgs {
    /// The host to use, by process id, when several are running (one per browser profile).
    #[arg(long = "host", value_name = "PID")]
    pub pid: Option<u32>,
}

/// Runs `f` on a small runtime of its own: the CLI is otherwise synchronous.
pub fn block_on<T>(f: impl std::future::Future<Output = Result<T>>) -> Result<T> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?
        .block_on(f)
}

pub async fn connect(args: &HostArgs) -> Result<ControlClient> {
    Ok(control::connect(args.pid).await?)
}

/// Sends one request; a refusal by the host or the browser becomes the error.
pub async fn call(client: &mut ControlClient, request: &Request) -> Result<Response> {
    match client.call(request).await? {
        Response::Error { message, .. } => bail!("{message}"),
        response => Ok(response),
    }
}
