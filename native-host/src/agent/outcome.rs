//! What came of an action, in words: for the CLI, the panel and the model's history.

use itinero_shared::messages::Outcome;

/// One line a person (or the model) reads.
pub fn describe(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Done => "done".into(),
        Outcome::Navigated { url } => format!("navigated to {url}"),
        Outcome::OpenedTab { tab_id, url } => format!("opened tab {tab_id}: {url}"),
        Outcome::TargetDetached => {
            "target detached: the element is gone or means something else now".into()
        }
        Outcome::TargetOccluded { by } => format!("target covered by {by}"),
        Outcome::ValueRejected { reason } => format!("value rejected: {reason}"),
        Outcome::NeverSettled { waited_ms } => {
            format!("done, but the page never settled (waited {waited_ms} ms)")
        }
        Outcome::Failed { reason } => format!("failed: {reason}"),
    }
}

/// The action did what it was meant to (the page may have moved on).
pub fn took_effect(outcome: &Outcome) -> bool {
    matches!(
        outcome,
        Outcome::Done
            | Outcome::Navigated { .. }
            | Outcome::OpenedTab { .. }
            | Outcome::NeverSettled { .. }
    )
}
