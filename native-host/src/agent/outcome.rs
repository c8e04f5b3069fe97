//! Whether an action counts as done (its words are `Outcome`'s `Display`, in `shared/`).

use itinero_shared::messages::Outcome;

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
