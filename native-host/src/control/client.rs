//! A client of the control socket, used by the CLI (and by anything else on this machine
//! that wants to drive the browser through the host).

use thiserror::Error;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::UnixStream;

use super::protocol::{Request, Response};

#[derive(Debug, Error)]
pub enum ClientError {
    #[error("talking to itinero host {pid} failed: {source}")]
    Io { pid: u32, source: std::io::Error },
    #[error("itinero host {pid} closed the connection before answering (did it exit?)")]
    Closed { pid: u32 },
    #[error("itinero host {pid} sent an unreadable response: {reason}")]
    BadResponse { pid: u32, reason: String },
}

/// One connection to a host; requests are answered one at a time, in order.
pub struct ControlClient {
    pid: u32,
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
}

impl ControlClient {
    pub(crate) fn new(stream: UnixStream, pid: u32) -> Self {
        let (read, writer) = stream.into_split();
        Self {
            pid,
            reader: BufReader::new(read),
            writer,
        }
    }

    /// The host's process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Sends one request and waits for its response. The host bounds every wait on the
    /// browser, so this returns even when the browser does not answer.
    pub async fn call(&mut self, request: &Request) -> Result<Response, ClientError> {
        self.send(request).await?;
        self.receive().await
    }

    /// Sends a request without waiting: `run_skill` is answered by a stream of responses, and
    /// `reply`/`stop` go out while it runs.
    pub async fn send(&mut self, request: &Request) -> Result<(), ClientError> {
        let pid = self.pid;
        let mut line = serde_json::to_vec(request).expect("requests always serialise");
        line.push(b'\n');
        self.writer
            .write_all(&line)
            .await
            .map_err(|source| ClientError::Io { pid, source })
    }

    /// The next response line.
    pub async fn receive(&mut self) -> Result<Response, ClientError> {
        let pid = self.pid;
        let io = |source| ClientError::Io { pid, source };
        let mut reply = String::new();
        if self.reader.read_line(&mut reply).await.map_err(io)? == 0 {
            return Err(ClientError::Closed { pid });
        }
        serde_json::from_str(&reply).map_err(|e| ClientError::BadResponse {
            pid,
            reason: e.to_string(),
        })
    }
}
