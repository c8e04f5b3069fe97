//! `itinero-host act --tab N '<action JSON>'`: performs one action and says what happened.
//!
//! The outcome is printed in the words the panel and the model's history use, and the exit
//! status is non-zero when the action did not take effect (`Outcome::took_effect`), so a
//! script can stop at the first step that failed.

use anyhow::{bail, Context, Result};
use clap::Args;
use itinero_shared::observation::Observation;
use itinero_shared::{Action, Target};
use serde_json::Value;

use super::host::{self, HostArgs};
use crate::control::protocol::{Request, Response};
use crate::control::ControlClient;

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    itinero-host act --tab 7 '{\"kind\":\"click\",\"target\":4}'\n  \
    itinero-host act --tab 7 '{\"kind\":\"type\",\"target\":3,\"text\":\"ana@example.org\",\"submit\":true}'\n  \
    itinero-host act --tab 7 '{\"kind\":\"scroll\",\"direction\":\"down\"}'\n\n\
A bare index as the target is looked up in a fresh observation of the tab (top frame only),\n\
which supplies the element's fingerprint; `observe --json` shows full targets.")]
pub struct ActArgs {
    #[command(flatten)]
    pub host: HostArgs,
    /// The tab to act in (ids from `itinero-host tabs`).
    #[arg(long = "tab", value_name = "N")]
    pub tab_id: i64,
    /// The frame to act in; 0 is the top frame.
    #[arg(long = "frame", value_name = "F", default_value_t = 0)]
    pub frame_id: i64,
    /// Print the response as JSON.
    #[arg(long)]
    pub json: bool,
    /// The action, as JSON: {"kind":"click","target":…}, {"kind":"type",…}, {"kind":"navigate","url":…}, …
    #[arg(value_name = "ACTION")]
    pub action: String,
}

/// `Ok(false)` (a failing exit status) when the action did not take effect: its target was
/// covered or gone, the value was refused, or the page failed it.
pub fn run_act(args: &ActArgs) -> Result<bool> {
    let mut action: Value = serde_json::from_str(&args.action)
        .context("the action is not valid JSON (quote it for the shell: '{\"kind\":\"click\",\"target\":4}')")?;
    let response = host::block_on(async {
        let mut client = host::connect(&args.host).await?;
        if let Some(index) = action.get("target").and_then(Value::as_u64) {
            if args.frame_id != 0 {
                bail!("a bare index as the target works in the top frame only; give the full target from `observe --json`");
            }
            let target = target_by_index(&mut client, args.tab_id, index).await?;
            action["target"] = serde_json::to_value(target)?;
        }
        let action: Action =
            serde_json::from_value(action).context("the JSON is not an itinero action")?;
        let request = Request::Act {
            tab_id: args.tab_id,
            frame_id: args.frame_id,
            action,
        };
        host::call(&mut client, &request).await
    })?;
    let Response::Outcome {
        outcome,
        elapsed_ms,
        round_trip_ms,
    } = &response
    else {
        bail!("unexpected response to act: {response:?}");
    };
    if args.json {
        println!("{}", serde_json::to_string(&response)?);
    } else {
        println!(
            "{outcome} (in the browser {elapsed_ms} ms; host round trip {round_trip_ms:.1} ms)"
        );
    }
    Ok(outcome.took_effect())
}

async fn target_by_index(client: &mut ControlClient, tab_id: i64, index: u64) -> Result<Target> {
    let observation = match host::call(client, &Request::Observe { tab_id }).await? {
        Response::Observation { observation, .. } => observation,
        other => bail!("unexpected response to observe: {other:?}"),
    };
    find_target(&observation, index).with_context(|| {
        format!("no element has index {index} in tab {tab_id} now; observe it again")
    })
}

fn find_target(observation: &Observation, index: u64) -> Option<Target> {
    let node = observation.find_indexed(u32::try_from(index).ok()?)?;
    Some(Target {
        index: node.index?,
        fingerprint: node.fingerprint.clone()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use itinero_shared::observation::DomNode;
    use itinero_shared::Fingerprint;

    #[test]
    fn a_bare_index_finds_the_element_and_its_fingerprint() {
        let fingerprint = Fingerprint {
            tag: "button".into(),
            name: Some("Go".into()),
            ..Default::default()
        };
        let observation = Observation {
            root: DomNode {
                tag: "body".into(),
                children: vec![DomNode {
                    tag: "button".into(),
                    index: Some(4),
                    fingerprint: Some(fingerprint.clone()),
                    ..Default::default()
                }],
                ..Default::default()
            },
            ..Default::default()
        };
        assert_eq!(
            find_target(&observation, 4),
            Some(Target {
                index: 4,
                fingerprint
            })
        );
        assert_eq!(find_target(&observation, 5), None);
    }
}
