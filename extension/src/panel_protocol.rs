//! Messages between the side panel and the background, inside the browser.
//!
//! Host traffic passes through unchanged as envelopes (the `shared` types); this
//! adds only what the panel needs from the background itself: the connection state.

use serde::{Deserialize, Serialize};

/// Name of the port a side panel opens to the background.
pub const PANEL_PORT: &str = "panel";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConnectionState {
    Connecting,
    Connected,
    Disconnected,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostStatus {
    pub state: ConnectionState,
    pub host_version: Option<String>,
    pub pid: Option<u32>,
    pub capabilities: Vec<String>,
    /// Why the last connection ended, in the browser's words.
    pub error: Option<String>,
    /// When disconnected: how long until the next attempt.
    pub retry_in_ms: Option<u32>,
    pub attempts: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToPanel {
    Status {
        status: HostStatus,
    },
    /// A host message: the reply to one of this panel's requests (with the panel's own id), or a broadcast.
    Host {
        envelope: serde_json::Value,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FromPanel {
    /// An envelope for the host; the background rewrites its id and routes the reply back.
    ToHost { envelope: serde_json::Value },
    /// Try to connect now instead of waiting for the backoff.
    Reconnect,
}
