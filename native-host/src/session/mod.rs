//! One browser connection and everything that lives as long as it: the frames in and out
//! (`connection.rs`, `outbox.rs`), the requests the host makes of the browser (`link.rs`), the
//! handling of each message (`dispatch.rs`), the session's running tasks (`tasks.rs`, with
//! `registry.rs`, and the agent's browser and panel for each: `browser.rs`, `panel.rs`), how a
//! task is set up (`task_setup.rs`, with the strategy chain in `chain.rs` and the model
//! server's API key from the vault in `api_key.rs`), and the answers to
//! the panel's store, skill and vault requests (`panel_requests.rs`, `skill_requests.rs`,
//! `vault_requests.rs`).
//!
//! This is the layer that wires the parts together: it imports the agent, auto-login, the
//! store, the vault and the model backends; none of them imports it.

pub mod api_key;
pub mod browser;
pub mod chain;
pub mod connection;
pub mod dispatch;
pub mod link;
pub mod outbox;
pub mod panel;
pub mod panel_requests;
pub mod registry;
pub mod skill_requests;
pub mod task_setup;
pub mod tasks;
pub mod vault_requests;

pub use connection::{serve, serve_with, SessionEnd};
pub use dispatch::CAPABILITIES;
