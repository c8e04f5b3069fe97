//! Subcommands for people (as opposed to the stdio protocol the browser speaks), one file each.
//!
//! Those that need the browser or the running host's memory (`tabs`, `observe`, `act`, `run`,
//! `skills run`, `vault unlock|lock`, `mcp`) reach it through the control socket (`host.rs` picks the
//! host); the others work on files and on the store directly, so they need no browser.

pub mod act;
pub mod doctor;
pub mod host;
pub mod install;
#[cfg(feature = "mcp")]
pub mod mcp;
#[cfg(feature = "engine")]
pub mod models;
#[cfg(feature = "engine")]
pub mod models_bench;
#[cfg(feature = "engine")]
pub mod models_pull;
pub mod observe;
pub mod runs;
pub mod skills;
pub mod stats;
pub mod tabs;
pub mod task;
pub mod vault;

/// `models` in a host built without the engine: every subcommand reads or runs models through
/// it, so each says that it is missing rather than being unknown.
#[cfg(not(feature = "engine"))]
pub mod models {
    #[derive(Debug, clap::Args)]
    pub struct ModelsArgs {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
        args: Vec<String>,
    }

    pub fn run_models(_: &ModelsArgs) -> anyhow::Result<bool> {
        anyhow::bail!(crate::llm::NO_ENGINE)
    }
}

/// `mcp` in a host built without the MCP server: it says so rather than being unknown.
#[cfg(not(feature = "mcp"))]
pub mod mcp {
    #[derive(Debug, clap::Args)]
    pub struct McpArgs {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
        args: Vec<String>,
    }

    pub fn run_mcp(_: &McpArgs) -> anyhow::Result<bool> {
        anyhow::bail!("this itinero-host was built without the MCP server (cargo feature `mcp`)")
    }
}
