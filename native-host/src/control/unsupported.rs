//! The control socket is a Unix socket; on other systems the host runs without it and the
//! CLI says so.

use thiserror::Error;

use super::protocol::{Request, Response};
use crate::session::link::BrowserLink;

const UNSUPPORTED: &str =
    "the control socket (and the tabs/observe/act commands) is not supported on this OS yet";

#[derive(Debug, Error)]
#[error("{UNSUPPORTED}")]
pub struct ConnectError;

#[derive(Debug, Error)]
#[error("{UNSUPPORTED}")]
pub struct ClientError;

pub struct ControlClient(());

impl ControlClient {
    pub fn pid(&self) -> u32 {
        0
    }

    pub async fn call(&mut self, _request: &Request) -> Result<Response, ClientError> {
        Err(ClientError)
    }
}

pub async fn connect(_pid: Option<u32>) -> Result<ControlClient, ConnectError> {
    Err(ConnectError)
}

pub async fn connect_in(
    _run_dir: &std::path::Path,
    _pid: Option<u32>,
) -> Result<ControlClient, ConnectError> {
    Err(ConnectError)
}

pub struct ControlServer(());

impl ControlServer {
    pub fn start(
        _link: BrowserLink,
        _tasks: Option<crate::session::tasks::Tasks>,
    ) -> anyhow::Result<Self> {
        anyhow::bail!("{UNSUPPORTED}")
    }

    pub fn path(&self) -> &std::path::Path {
        std::path::Path::new("")
    }
}
