//! Asking more than once and going with the majority.
//!
//! Small local models are often right but not reliably so; a second and third opinion (samples of
//! the same model at a higher temperature, or other models) catches many of their slips. Asking
//! costs a model call per voter, so by default the vote is held only when the first answer looks
//! unsure: it had to be re-asked, or it was not the JSON the model was taught and was read from
//! prose instead.

use async_trait::async_trait;
use futures::future::join_all;
use itinero_shared::Action;

use super::parse::Source;
use super::strategy::{DecideError, Decision, Step, Strategy};

/// When the voters beyond the first are asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Every step.
    Always,
    /// Only when the first voter's answer looks unsure.
    Unsure,
}

/// The name the vote answers under.
pub const NAME: &str = "vote";

/// The first voter decides; the rest are asked when [`When`] says so, and the action most of
/// them chose is taken (ties go to the first voter's choice, then to the earliest).
pub struct Vote {
    pub voters: Vec<Box<dyn Strategy>>,
    pub when: When,
}

/// Whether a decision can stand without a vote.
fn sure(d: &Decision) -> bool {
    d.calls <= 1 && matches!(d.source, None | Some(Source::Json))
}

/// What two voters must agree on: the verb, the element and the values typed or chosen.
/// Answers of `done` are worded differently each time, so only the verb and success count.
fn ballot(action: &Action) -> String {
    let norm = |s: &str| s.trim().to_lowercase();
    match action {
        Action::Done { success, .. } => format!("done {success}"),
        Action::AskUser { .. } => "ask_user".into(),
        Action::Type {
            target,
            text,
            submit,
            ..
        } => format!("type {} {} {submit}", target.index, norm(text)),
        Action::Select { target, value } => format!("select {} {}", target.index, norm(value)),
        other => serde_json::to_value(other)
            .map(|mut v| {
                if let Some(o) = v.as_object_mut() {
                    if let Some(t) = o.get_mut("target") {
                        *t = t["index"].clone();
                    }
                }
                v.to_string()
            })
            .unwrap_or_default(),
    }
}

#[async_trait]
impl Strategy for Vote {
    async fn decide(&self, step: &Step<'_>) -> Result<Decision, DecideError> {
        let (first, rest) = self
            .voters
            .split_first()
            .expect("a vote has at least one voter");
        let first = first.decide(step).await;
        if let Ok(d) = &first {
            if rest.is_empty() || (self.when == When::Unsure && sure(d)) {
                return first;
            }
        }
        let others = join_all(rest.iter().map(|v| v.decide(step))).await;
        let mut calls = 0;
        let mut ballots: Vec<Decision> = Vec::new();
        let mut first_error = None;
        for result in std::iter::once(first).chain(others) {
            match result {
                Ok(d) => {
                    calls += d.calls;
                    ballots.push(d);
                }
                Err(e) => {
                    tracing::debug!(error = %e, "a voter abstained");
                    first_error.get_or_insert(e);
                }
            }
        }
        if ballots.is_empty() {
            return Err(first_error.expect("every voter answered or failed"));
        }
        let keys: Vec<String> = ballots.iter().map(|d| ballot(&d.action)).collect();
        let count = |k: &String| keys.iter().filter(|x| *x == k).count();
        // The earliest key with the most votes; the first ballot is earliest, so it wins ties.
        let mut winner = 0;
        for i in 1..keys.len() {
            if count(&keys[i]) > count(&keys[winner]) {
                winner = i;
            }
        }
        let votes = count(&keys[winner]);
        let voters = self.voters.len();
        let largest = ballots.iter().filter_map(|d| d.prompt_tokens).max();
        let mut d = ballots.swap_remove(winner);
        d.calls = calls;
        d.prompt_tokens = largest;
        d.strategy = NAME;
        d.note = Some(format!("{votes} of {voters} voters chose this"));
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::agent::strategy::{Llm, Retry};
    use crate::agent::test_support::{element, page_of, step};
    use crate::llm::scripted::{Scripted, Step as ScriptStep};
    use itinero_shared::observation::Observation;

    fn page() -> Observation {
        page_of(
            "https://shop.example/",
            "",
            vec![
                element(0, "input", Some("search"), None, "Search"),
                element(1, "button", None, None, "Go"),
                element(2, "a", None, None, "Socks"),
            ],
        )
    }

    /// A voter that answers with `replies` in turn (re-asked ones included).
    fn voter(replies: &[&str]) -> (Box<dyn Strategy>, Arc<Scripted>) {
        let script = Arc::new(Scripted::new(replies.iter().map(|r| ScriptStep::reply(*r))));
        let voter = Retry {
            inner: Llm::new(script.clone(), "qwen2.5:3b"),
            attempts: 2,
        };
        (Box::new(voter), script)
    }

    async fn decide(vote: &Vote) -> Result<Decision, DecideError> {
        let obs = page();
        vote.decide(&step("Open the socks page", &obs)).await
    }

    fn index_of(d: &Decision) -> u32 {
        d.action.target().map(|t| t.index).unwrap_or(u32::MAX)
    }

    #[tokio::test]
    async fn a_sure_first_answer_stands_alone_when_voting_only_on_doubt() {
        let (a, _) = voter(&[r#"{"action": "click", "index": 2}"#]);
        let (b, b_script) = voter(&[r#"{"action": "click", "index": 1}"#]);
        let vote = Vote {
            voters: vec![a, b],
            when: When::Unsure,
        };
        let d = decide(&vote).await.unwrap();
        assert_eq!((index_of(&d), d.strategy, d.calls), (2, "llm", 1));
        assert!(b_script.requests().is_empty(), "nobody else was asked");
    }

    #[tokio::test]
    async fn an_unsure_answer_is_outvoted_by_the_majority() {
        // The first voter needed a second try, and ended on prose: unsure.
        let (a, _) = voter(&["hmm", "CLICK 1"]);
        let (b, _) = voter(&[r#"{"action": "click", "index": 2}"#]);
        let (c, _) = voter(&[r#"{"thought": "socks link", "action": "click", "index": 2}"#]);
        let vote = Vote {
            voters: vec![a, b, c],
            when: When::Unsure,
        };
        let d = decide(&vote).await.unwrap();
        assert_eq!((index_of(&d), d.strategy, d.calls), (2, NAME, 4));
        assert_eq!(d.note.as_deref(), Some("2 of 3 voters chose this"));
    }

    #[tokio::test]
    async fn ties_go_to_the_first_voter_and_failed_voters_abstain() {
        let (a, _) = voter(&[r#"{"action": "click", "index": 1}"#]);
        let (b, _) = voter(&[r#"{"action": "click", "index": 2}"#]);
        let (c, _) = voter(&[]); // no reply left: a backend error, so it abstains
        let vote = Vote {
            voters: vec![a, b, c],
            when: When::Always,
        };
        let d = decide(&vote).await.unwrap();
        assert_eq!(index_of(&d), 1);
        assert_eq!(d.note.as_deref(), Some("1 of 3 voters chose this"));

        let (a, _) = voter(&[]);
        let (b, _) = voter(&[]);
        let vote = Vote {
            voters: vec![a, b],
            when: When::Always,
        };
        assert!(matches!(decide(&vote).await, Err(DecideError::Backend(_))));
    }

    #[test]
    fn ballots_compare_what_matters() {
        let t = |text: &str| Action::Type {
            target: itinero_shared::Target {
                index: 0,
                fingerprint: Default::default(),
            },
            text: text.into(),
            submit: true,
            clear: true,
        };
        assert_eq!(ballot(&t("Wool Socks ")), ballot(&t("wool socks")));
        assert_ne!(ballot(&t("wool socks")), ballot(&t("hats")));
        let done = |a: &str| Action::Done {
            answer: a.into(),
            success: true,
        };
        assert_eq!(
            ballot(&done("12.99 EUR")),
            ballot(&done("They cost 12.99 EUR."))
        );
        assert_ne!(
            ballot(&Action::Scroll {
                target: None,
                direction: Some(itinero_shared::ScrollDirection::Down),
                pages: 1.0
            }),
            ballot(&Action::Scroll {
                target: None,
                direction: Some(itinero_shared::ScrollDirection::Up),
                pages: 1.0
            })
        );
    }
}
