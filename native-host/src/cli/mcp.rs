//! `itinero-host mcp`: an MCP server on stdio for other AI tools (Claude Desktop, Claude Code,
//! Cursor, VS Code, …), which start it themselves from their configuration; see `crate::mcp`.

use anyhow::Result;
use clap::Args;

use super::host::HostArgs;

#[derive(Debug, Args)]
#[command(
    after_help = "An MCP client starts this command itself. For example, in Claude Desktop's \
claude_desktop_config.json or a project's .mcp.json:\n\n  \
{\"mcpServers\": {\"itinero\": {\"command\": \"itinero-host\", \"args\": [\"mcp\"]}}}\n\n\
The browser must be running with the itinero extension: the tools reach it through the host it started."
)]
pub struct McpArgs {
    #[command(flatten)]
    pub host: HostArgs,
}

pub fn run_mcp(args: &McpArgs) -> Result<bool> {
    // Several tools may be called at once (an observation while a task runs).
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(crate::mcp::serve(args.host.pid))?;
    Ok(true)
}
