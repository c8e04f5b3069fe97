//! The native-messaging host: talks to the extension over stdio and installs itself into browsers.

pub mod agent;
pub mod cli;
pub mod control;
pub mod hardening;
pub mod llm;
pub mod logging;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod origin;
pub mod paths;
pub mod report;
pub mod session;
pub mod sign_in;
pub mod skills;
pub mod store;
pub mod url_pattern;
pub mod vault;
