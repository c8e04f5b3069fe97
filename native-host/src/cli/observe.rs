//! `itinero-host observe --tab N`: what the agent would see of a tab: the page as the model reads
//! it (the agent's `render`), or with `--json` the whole observation, each element with the
//! fingerprint `act` can target it by.

use crate::agent::render::{render, RenderOptions};
use anyhow::{bail, Result};
use clap::Args;

use super::host::{self, HostArgs};
use crate::control::protocol::{Request, Response};

#[derive(Debug, Args)]
pub struct ObserveArgs {
    #[command(flatten)]
    pub host: HostArgs,
    /// The tab to observe (ids from `itinero-host tabs`).
    #[arg(long = "tab", value_name = "N")]
    pub tab_id: i64,
    /// Print the whole observation as JSON instead of the compact form the model reads.
    #[arg(long)]
    pub json: bool,
}

pub fn run_observe(args: &ObserveArgs) -> Result<bool> {
    let observation = host::block_on(async {
        let mut client = host::connect(&args.host).await?;
        let request = Request::Observe {
            tab_id: args.tab_id,
        };
        match host::call(&mut client, &request).await? {
            Response::Observation { observation, .. } => Ok(observation),
            other => bail!("unexpected response to observe: {other:?}"),
        }
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&observation)?);
    } else {
        println!("{}", render(&observation, &RenderOptions::default()).text);
    }
    Ok(true)
}
