//! Answers one control request: `tabs`, `observe` and `act` become requests to the browser over
//! the session's link, each answered with the round trip as the host timed it; `unlock_vault`
//! and `lock_vault` act on the host's own vault, whose key only this process holds. `run` and
//! `run_skill` stream, so the connection serves them (`run_task.rs`).

use itinero_shared::ErrorCode;

use itinero_shared::vault::VaultStatus;

use super::protocol::{Request, Response};
use crate::session::link::{BrowserLink, LinkError};
use crate::session::tasks::Tasks;
use crate::vault::Vault;

/// Control requests belong to no agent task.
const NO_TASK: u64 = 0;

pub async fn handle(link: &BrowserLink, tasks: Option<&Tasks>, request: Request) -> Response {
    let result = match request {
        Request::UnlockVault { passphrase } => {
            return vault(tasks, move |v| v.unlock(&passphrase.0)).await
        }
        Request::LockVault => {
            return vault(tasks, |v| {
                v.lock();
                v.status()
            })
            .await
        }
        Request::Tabs => link.list_tabs().await.map(|t| Response::Tabs {
            tabs: t.value,
            round_trip_ms: ms(t.round_trip),
        }),
        Request::Observe { tab_id } => {
            link.observe(NO_TASK, tab_id)
                .await
                .map(|t| Response::Observation {
                    observation: t.value.observation,
                    round_trip_ms: ms(t.round_trip),
                })
        }
        Request::Act {
            tab_id,
            frame_id,
            action,
        } => link
            .perform(NO_TASK, tab_id, frame_id, action, None)
            .await
            .map(|t| Response::Outcome {
                outcome: t.value.outcome,
                elapsed_ms: t.value.elapsed_ms,
                round_trip_ms: ms(t.round_trip),
            }),
        // The server streams a run itself ([`super::run_task`]).
        Request::Run { .. } | Request::RunSkill { .. } | Request::Perform { .. } => {
            Ok(Response::error("runs are served by the connection"))
        }
        Request::Reply { .. } | Request::Stop => Ok(Response::error(
            "no task is running on this connection: reply and stop follow a run or run_skill",
        )),
    };
    result.unwrap_or_else(|e| Response::Error {
        code: code_of(&e),
        message: e.to_string(),
    })
}

/// Runs `f` on the session's vault (on the blocking pool: Argon2id takes a moment).
async fn vault(
    tasks: Option<&Tasks>,
    f: impl FnOnce(&Vault) -> crate::vault::Result<VaultStatus> + Send + 'static,
) -> Response {
    let Some(vault) = tasks.and_then(|t| t.vault()).cloned() else {
        return Response::error("this host has no vault (its store could not be opened)");
    };
    match tokio::task::spawn_blocking(move || f(&vault)).await {
        Ok(Ok(status)) => Response::Vault {
            state: status.state,
        },
        Ok(Err(e)) => Response::error(e.to_string()),
        Err(join) => Response::error(join.to_string()),
    }
}

fn code_of(e: &LinkError) -> Option<ErrorCode> {
    match e {
        LinkError::Browser { code, .. } => Some(*code),
        _ => None,
    }
}

fn ms(d: std::time::Duration) -> f64 {
    // Two decimals: finer than the clocks involved are meaningful.
    (d.as_secs_f64() * 100_000.0).round() / 100.0
}
