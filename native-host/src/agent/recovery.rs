//! Working around an action that did not work, without a model call.
//!
//! Most failed actions fail for reasons a person would shrug off: the page re-rendered the
//! control (it is still there, under a new index), a spinner or a toast sat on it for a moment,
//! or the button was relabelled ("Add to cart" → "Add to basket"). [`Recovery`] looks at the
//! fresh observation before the model is asked: the same element found again by fingerprint is
//! acted on again; failing that, the one control of the same kind with a close name is tried;
//! failing that, it waits once for the page to settle. It gives up after a bounded number of
//! attempts and leaves the step to the strategy it wraps, which hears what went wrong.
//!
//! Scrolling is not a separate attempt: the content script scrolls every target into view before
//! it acts.

use std::collections::BTreeSet;

use async_trait::async_trait;
use itinero_shared::matching;
use itinero_shared::messages::Outcome;
use itinero_shared::observation::{DomNode, Observation};
use itinero_shared::{Action, Fingerprint, Target};

use super::strategy::{DecideError, Decision, Failed, Step, Strategy};

/// The name recovery answers under, in the panel and the run's steps.
pub const NAME: &str = "recovery";

/// How long to let a changing page settle when the target is nowhere to be seen.
const SETTLE_MS: u64 = 1_000;
/// Share of name words two controls must have in common to stand in for each other.
const CLOSE_NAME: f64 = 0.5;

/// Tries to work around the last failed action before asking `inner`.
pub struct Recovery<S> {
    pub inner: S,
    /// Recovery attempts per failed action before the step is left to `inner`.
    pub attempts: u32,
}

#[async_trait]
impl<S: Strategy> Strategy for Recovery<S> {
    async fn decide(&self, step: &Step<'_>) -> Result<Decision, DecideError> {
        if let Some(failed) = step.failed.filter(|f| f.attempts < self.attempts) {
            if let Some(d) = recover(failed, step.observation) {
                tracing::debug!(action = ?d.action, "recovering a failed action");
                return Ok(d);
            }
        }
        self.inner.decide(step).await
    }
}

/// The model is not needed when the page only moved the target or covered it for a moment.
fn recoverable(outcome: &Outcome) -> bool {
    matches!(
        outcome,
        Outcome::TargetDetached | Outcome::TargetOccluded { .. } | Outcome::NeverSettled { .. }
    )
}

fn recover(failed: &Failed, obs: &Observation) -> Option<Decision> {
    if !recoverable(&failed.outcome) {
        return None;
    }
    let target = failed.action.target()?;
    let candidates: Vec<(&Fingerprint, &DomNode)> = obs
        .indexed()
        .into_iter()
        .filter_map(|n| n.fingerprint.as_ref().map(|fp| (fp, n)))
        .collect();
    let decided = |node: &DomNode, note: String| {
        let index = node.index?;
        let fingerprint = node.fingerprint.clone()?;
        Some(Decision {
            subgoal_done: failed.subgoal_done,
            ..Decision::without_model(
                failed.action.retargeted(Target { index, fingerprint }),
                NAME,
                note,
            )
        })
    };
    if let Some(node) = matching::best(&target.fingerprint, candidates.iter().copied()) {
        let note = format!(
            "the element is still there as [{}]; trying it again",
            node.index.unwrap_or_default()
        );
        return decided(node, note);
    }
    if let Some(node) = next_best(&target.fingerprint, &candidates) {
        let note = format!(
            "{:?} is gone; trying the closest control, [{}] {:?}",
            target
                .fingerprint
                .name
                .as_deref()
                .unwrap_or(&target.fingerprint.tag),
            node.index.unwrap_or_default(),
            node.name.as_deref().unwrap_or_default()
        );
        return decided(node, note);
    }
    if failed.attempts == 0 {
        let note = "the element is not on the page now; waiting for the page to settle".to_owned();
        return Some(Decision::without_model(
            Action::Wait { ms: SETTLE_MS },
            NAME,
            note,
        ));
    }
    None
}

/// Lower-case words of a name, for comparing labels that were reworded.
fn words(name: &str) -> BTreeSet<String> {
    name.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Words in common over words in either (Jaccard): "Add to cart" and "Add to basket" share 2 of 4.
fn closeness(a: &str, b: &str) -> f64 {
    let (a, b) = (words(a), words(b));
    let either = a.union(&b).count();
    if either == 0 {
        return 0.0;
    }
    a.intersection(&b).count() as f64 / either as f64
}

/// The one control of the same tag, role and frame whose name is close to the recorded one;
/// `None` when there is none or two are equally close (guessing between them is the model's job).
fn next_best<'a>(
    recorded: &Fingerprint,
    candidates: &[(&Fingerprint, &'a DomNode)],
) -> Option<&'a DomNode> {
    let name = recorded.name.as_deref()?;
    let mut top: Option<(f64, &DomNode)> = None;
    let mut tied = false;
    for (fp, node) in candidates {
        if fp.tag != recorded.tag
            || fp.role != recorded.role
            || fp.frame_path != recorded.frame_path
        {
            continue;
        }
        let Some(candidate_name) = fp.name.as_deref() else {
            continue;
        };
        let c = closeness(name, candidate_name);
        if c < CLOSE_NAME {
            continue;
        }
        match top {
            Some((best, _)) if c < best => {}
            Some((best, _)) if c == best => tied = true,
            _ => {
                top = Some((c, node));
                tied = false;
            }
        }
    }
    if tied {
        return None;
    }
    top.map(|(_, n)| n)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::agent::strategy::Llm;
    use crate::agent::test_support::{element, page_of, step};
    use crate::llm::scripted::{Scripted, Step as ScriptStep};

    fn page(elements: Vec<DomNode>) -> Observation {
        page_of("https://shop.example/p/socks", "", elements)
    }

    /// A click on "Add to cart" at index 2 that came back `outcome`.
    fn failed_click(outcome: Outcome, attempts: u32) -> Failed {
        let node = element(2, "button", None, None, "Add to cart");
        Failed {
            action: Action::Click {
                target: Target {
                    index: 2,
                    fingerprint: node.fingerprint.unwrap(),
                },
            },
            outcome,
            attempts,
            subgoal_done: None,
        }
    }

    /// Recovery over a model that answers `reply` once.
    fn chain(reply: &str) -> (Recovery<Llm>, Arc<Scripted>) {
        let script = Arc::new(Scripted::new([ScriptStep::reply(reply)]));
        let chain = Recovery {
            inner: Llm::new(script.clone(), "qwen2.5:3b"),
            attempts: 2,
        };
        (chain, script)
    }

    async fn decide(chain: &Recovery<Llm>, obs: &Observation, failed: &Failed) -> Decision {
        chain
            .decide(&Step {
                feedback: Some("your last action did not work".into()),
                failed: Some(failed),
                ..step("Add socks to the cart", obs)
            })
            .await
            .unwrap()
    }

    fn clicked(d: &Decision) -> u32 {
        match &d.action {
            Action::Click { target } => target.index,
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_re_rendered_target_is_tried_again_under_its_new_index() {
        let (chain, script) = chain(r#"{"action": "back"}"#);
        let mut moved = element(7, "button", None, None, "Add to cart");
        moved.fingerprint.as_mut().unwrap().path = ">main[0]>button[1]".into();
        let obs = page(vec![element(0, "a", None, None, "Home"), moved]);
        let d = decide(&chain, &obs, &failed_click(Outcome::TargetDetached, 0)).await;
        assert_eq!((clicked(&d), d.strategy, d.calls), (7, NAME, 0));
        assert!(d.note.unwrap().contains("still there as [7]"));
        assert!(script.requests().is_empty(), "no model call");
    }

    #[tokio::test]
    async fn a_relabelled_control_is_the_next_best_but_two_equal_ones_are_the_models_call() {
        let (chain, script) = chain(r#"{"action": "click", "index": 4}"#);
        let obs = page(vec![
            element(3, "button", None, None, "Checkout"),
            element(4, "button", None, None, "Add to basket"),
        ]);
        let failed = failed_click(
            Outcome::TargetOccluded {
                by: "div.toast".into(),
            },
            0,
        );
        let d = decide(&chain, &obs, &failed).await;
        assert_eq!((clicked(&d), d.strategy), (4, NAME));
        assert!(d
            .note
            .unwrap()
            .contains("closest control, [4] \"Add to basket\""));

        let obs = page(vec![
            element(4, "button", None, None, "Add to basket"),
            element(5, "button", None, None, "Add to wishlist"),
        ]);
        // (After the one wait for the page to settle.)
        let failed = Failed {
            attempts: 1,
            ..failed
        };
        let d = decide(&chain, &obs, &failed).await;
        assert_eq!((clicked(&d), d.strategy), (4, "llm"));
        assert_eq!(script.requests().len(), 1);
    }

    #[tokio::test]
    async fn a_missing_target_is_waited_for_once_then_left_to_the_model() {
        let (chain, script) = chain(r#"{"action": "back"}"#);
        let obs = page(vec![element(0, "a", None, None, "Home")]);
        let d = decide(&chain, &obs, &failed_click(Outcome::TargetDetached, 0)).await;
        assert_eq!(
            (&d.action, d.strategy),
            (&Action::Wait { ms: SETTLE_MS }, NAME)
        );
        let d = decide(&chain, &obs, &failed_click(Outcome::TargetDetached, 1)).await;
        assert_eq!((&d.action, d.strategy), (&Action::Back, "llm"));
        assert_eq!(script.requests().len(), 1);
    }

    #[tokio::test]
    async fn refusals_and_spent_attempts_go_to_the_model() {
        let obs = page(vec![element(2, "button", None, None, "Add to cart")]);
        let (first, _) = chain(r#"{"action": "back"}"#);
        let rejected = failed_click(
            Outcome::ValueRejected {
                reason: "disabled".into(),
            },
            0,
        );
        assert_eq!(decide(&first, &obs, &rejected).await.strategy, "llm");
        let (second, _) = chain(r#"{"action": "back"}"#);
        let spent = failed_click(Outcome::TargetDetached, 2);
        assert_eq!(decide(&second, &obs, &spent).await.strategy, "llm");
    }

    #[test]
    fn closeness_counts_shared_words() {
        assert_eq!(closeness("Add to cart", "Add to basket"), 0.5);
        assert_eq!(closeness("Add to cart", "add to CART"), 1.0);
        assert_eq!(closeness("Checkout", "Add to cart"), 0.0);
        assert_eq!(closeness("", ""), 0.0);
    }
}
