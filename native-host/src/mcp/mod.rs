//! `itinero-host mcp`: the browser, through itinero, for other AI tools, over the Model Context
//! Protocol on stdio (the official SDK, `rmcp`).
//!
//! The server is a client of the running host's control socket, as the CLI is: every tool call
//! is a request to the host that the browser started, so the host's rules hold for it. An
//! action is carried out as a one-step task (`perform`), checked by the guards like a model's;
//! a goal or a skill runs as a task. Their questions — a risky step's approval above all — are
//! put to the user in the side panel, never to the calling program. Secrets stay in the vault:
//! an observation shows a password field's value as the page reader reports it (never the
//! value), and `{{secret:…}}` placeholders are filled by auto-login inside the host.
//!
//! `tools.rs` is the tool list, `params.rs` what each takes, `follow.rs` a task's stream turned
//! into progress notifications and a result.

mod follow;
mod params;
mod tools;

use anyhow::{Context, Result};
use rmcp::ServiceExt;

pub use tools::Itinero;

/// Serves MCP on stdin/stdout until the client closes it; `host`: the host's pid when several
/// run (one per browser profile).
pub async fn serve(host: Option<u32>) -> Result<()> {
    let service = Itinero::new(host)
        .serve(rmcp::transport::stdio())
        .await
        .context("the MCP client did not complete its handshake")?;
    service
        .waiting()
        .await
        .context("the MCP session ended with an error")?;
    Ok(())
}
