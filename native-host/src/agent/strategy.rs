//! Deciding the next action: a chain of strategies, each a small type behind one trait.
//!
//! [`Llm`] asks a model (prompt → backend → parse → validate). Decorators wrap a strategy:
//! [`Retry`] asks again, with the reason, when a reply cannot be used; `Recovery` works around
//! a failed action before a model is asked; `Vote` asks several voters and takes the majority.
//! `Cached` (`cache.rs`) and `Replay` (`replay.rs`) join the same chain; `session/chain.rs`
//! orders it. Asking the user is the
//! run loop's, since only it can wait on the panel.

use std::sync::Arc;

use async_trait::async_trait;
use itinero_shared::messages::{Outcome, Subgoal};
use itinero_shared::observation::Observation;
use itinero_shared::Action;

use super::parse::{self, Source};
use super::progress::Reporter;
use super::prompt::{self, Family, Input, PastStep};
use super::reply;
use super::short_prompt;
use super::validate;
use crate::llm::{Backend, ChatRequest, LlmError};

/// An action that did not work, as the next step's strategies see it.
#[derive(Debug, Clone, PartialEq)]
pub struct Failed {
    pub action: Action,
    pub outcome: Outcome,
    /// Recovery attempts already made for this action.
    pub attempts: u32,
    /// The sub-goal the action was to finish, which the recovered action finishes instead.
    pub subgoal_done: Option<u32>,
}

/// What a strategy decides on.
#[derive(Debug, Clone)]
pub struct Step<'a> {
    pub goal: &'a str,
    pub observation: &'a Observation,
    /// The page's key for the memory (see `cache::page_key`).
    pub page_key: &'a str,
    pub history: &'a [PastStep],
    pub lessons: &'a [String],
    pub examples: &'a [String],
    pub plan: &'a [Subgoal],
    /// Why the previous attempt at this step could not be used.
    pub feedback: Option<String>,
    /// The last action, when it did not work.
    pub failed: Option<&'a Failed>,
    /// Where a model call's progress goes while the step waits for it (the panel's bar).
    pub progress: Option<&'a Reporter>,
}

/// A decided action and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub action: Action,
    pub thought: Option<String>,
    /// Which strategy answered, e.g. `llm`.
    pub strategy: &'static str,
    /// How the model's reply was read (for model strategies).
    pub source: Option<Source>,
    /// Model calls this decision took.
    pub calls: u32,
    /// The largest prompt among those calls, in tokens as the backend counted them (where it
    /// says).
    pub prompt_tokens: Option<u64>,
    /// What the panel should hear about how it was decided (e.g. a vote's count).
    pub note: Option<String>,
    /// The plan's sub-goal (numbered from 1) the model says this step finished.
    pub subgoal_done: Option<u32>,
}

impl Decision {
    /// A decision made without asking a model (recovery, the cache, a skill's replay): `note`
    /// is both the step's reason and what the panel hears.
    pub fn without_model(action: Action, strategy: &'static str, note: String) -> Self {
        Self {
            action,
            thought: Some(note.clone()),
            strategy,
            source: None,
            calls: 0,
            prompt_tokens: None,
            note: Some(note),
            subgoal_done: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DecideError {
    /// The reply could not be turned into an action; `reason` is worded for the model.
    #[error("the model's reply could not be used: {reason}")]
    Unusable {
        reason: String,
        reply: String,
        /// Model calls made before giving up.
        calls: u32,
    },
    #[error(transparent)]
    Backend(#[from] LlmError),
    /// A strategy that acts without a model cannot go on and no model could take over.
    #[error("{0}")]
    Stuck(String),
}

#[async_trait]
pub trait Strategy: Send + Sync {
    async fn decide(&self, step: &Step<'_>) -> Result<Decision, DecideError>;
}

/// A boxed strategy is one too, so decorators can wrap a chain chosen at run time.
#[async_trait]
impl<T: Strategy + ?Sized> Strategy for Box<T> {
    async fn decide(&self, step: &Step<'_>) -> Result<Decision, DecideError> {
        (**self).decide(step).await
    }
}

/// Asks a model.
pub struct Llm {
    pub backend: Arc<dyn Backend>,
    pub model: String,
    pub family: Family,
    /// Give the backend the reply's JSON schema (with this page's indices) to constrain output.
    pub constrained: bool,
    pub temperature: Option<f32>,
    pub seed: Option<i64>,
}

impl Llm {
    pub fn new(backend: Arc<dyn Backend>, model: &str) -> Self {
        Self {
            backend,
            model: model.to_owned(),
            family: prompt::family_of(model),
            constrained: true,
            temperature: Some(0.0),
            seed: None,
        }
    }
}

#[async_trait]
impl Strategy for Llm {
    async fn decide(&self, step: &Step<'_>) -> Result<Decision, DecideError> {
        let input = Input {
            goal: step.goal,
            observation: step.observation,
            history: step.history,
            feedback: step.feedback.as_deref(),
            lessons: step.lessons,
            examples: step.examples,
            plan: step.plan,
        };
        // A small model may name only what its short prompt showed; a larger one sees the
        // whole page, bar what a long page's cut left out, and may name any element.
        let (built, shown) = if self.family.small {
            let backend = &self.backend;
            let count = |text: &str| {
                backend
                    .count_tokens(text)
                    .unwrap_or_else(|| short_prompt::estimate(text))
            };
            let (p, shown) = short_prompt::build(&input, self.family.system_role, &count);
            (p, Some(shown))
        } else {
            (prompt::build(&input, &self.family), None)
        };
        let mut request = ChatRequest::new(self.model.clone(), built.messages);
        request.context_tokens = Some(self.family.context_tokens as u32);
        request.max_tokens = Some(prompt::REPLY_TOKENS as u32);
        request.temperature = self.temperature;
        request.seed = self.seed;
        if self.constrained {
            let indices: Vec<u32> = shown.unwrap_or_else(|| {
                step.observation
                    .indexed()
                    .iter()
                    .filter_map(|n| n.index)
                    .collect()
            });
            request.schema = Some(reply::schema(&indices));
        }
        let mut sink = Reporter::sink(step.progress);
        let reply = self.backend.chat(&request, &mut sink).await?;
        let unusable = |reason: String| DecideError::Unusable {
            reason,
            reply: reply.content.clone(),
            calls: 1,
        };
        let parsed = parse::parse(&reply.content).map_err(|e| unusable(e.0))?;
        let action =
            validate::validate(&parsed.reply, step.observation).map_err(|e| unusable(e.0))?;
        Ok(Decision {
            action,
            subgoal_done: parsed.reply.subgoal_done,
            thought: parsed.reply.thought,
            strategy: "llm",
            source: Some(parsed.source),
            calls: 1,
            prompt_tokens: reply.prompt_tokens,
            note: None,
        })
    }
}

/// Asks the inner strategy again when its reply cannot be used, telling it why; at most
/// `attempts` times in all. Backend failures are not retried here: asking again will not help.
pub struct Retry<S> {
    pub inner: S,
    pub attempts: u32,
}

#[async_trait]
impl<S: Strategy> Strategy for Retry<S> {
    async fn decide(&self, step: &Step<'_>) -> Result<Decision, DecideError> {
        let mut step = step.clone();
        let mut calls = 0;
        loop {
            match self.inner.decide(&step).await {
                Ok(mut d) => {
                    d.calls += calls;
                    return Ok(d);
                }
                Err(DecideError::Unusable {
                    reason,
                    reply,
                    calls: made,
                }) => {
                    calls += made;
                    if calls >= self.attempts.max(1) {
                        return Err(DecideError::Unusable {
                            reason,
                            reply,
                            calls,
                        });
                    }
                    tracing::debug!(%reason, calls, "reply unusable; asking again");
                    step.feedback = Some(reason);
                }
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::test_support::{self, element, page_of};
    use crate::llm::scripted::{Scripted, Step as ScriptStep};

    fn page() -> Observation {
        page_of(
            "https://shop.example/",
            "Shop",
            vec![
                element(0, "input", Some("search"), None, "Search"),
                element(1, "button", None, None, "Go"),
            ],
        )
    }

    fn step(obs: &Observation) -> Step<'_> {
        test_support::step("Search for socks", obs)
    }

    #[tokio::test]
    async fn a_model_reply_becomes_an_action_on_the_page() {
        let script = Arc::new(Scripted::new([ScriptStep {
            expect: vec!["Goal: Search for socks".into(), "[0]<input".into()],
            reject: vec![],
            reply: r#"{"thought": "type it", "action": "type", "index": 0, "text": "socks", "submit": true}"#.into(),
        }]));
        let llm = Llm::new(script.clone(), "qwen2.5:3b");
        let obs = page();
        let d = llm.decide(&step(&obs)).await.unwrap();
        assert!(
            matches!(&d.action, Action::Type { target, text, submit: true, .. } if target.index == 0 && text == "socks")
        );
        assert_eq!(
            (d.strategy, d.source, d.calls),
            ("llm", Some(Source::Json), 1)
        );
        let sent = &script.requests()[0];
        assert_eq!(
            sent.schema.as_ref().unwrap()["properties"]["index"]["enum"],
            serde_json::json!([0, 1])
        );
        assert_eq!(sent.context_tokens, Some(8192));
    }

    #[tokio::test]
    async fn retry_tells_the_model_what_was_wrong() {
        let script = Arc::new(Scripted::new([
            ScriptStep::reply(r#"{"action": "type", "index": 1, "text": "socks"}"#),
            ScriptStep {
                expect: vec!["could not be used: element [1] is a button \"Go\", which does not take typed text".into()],
                reject: vec![],
                reply: "I think I should just CLICK 1".into(),
            },
            ScriptStep::reply("TYPE 0 \"socks\" SUBMIT"),
        ]));
        let chain = Retry {
            inner: Llm::new(script.clone(), "llama3.2"),
            attempts: 3,
        };
        let obs = page();
        let d = chain.decide(&step(&obs)).await.unwrap();
        // The second reply is prose ("CLICK 1" is not at the start of a line), so a third is asked for.
        assert_eq!((d.source, d.calls), (Some(Source::Line), 3));
        assert!(matches!(d.action, Action::Type { submit: true, .. }));
        assert_eq!(script.remaining(), 0);
    }

    #[tokio::test]
    async fn retry_gives_up_after_its_attempts_and_backend_errors_pass_through() {
        let script = Arc::new(Scripted::new([
            ScriptStep::reply("no idea"),
            ScriptStep::reply("still no idea"),
        ]));
        let chain = Retry {
            inner: Llm::new(script.clone(), "m"),
            attempts: 2,
        };
        let obs = page();
        match chain.decide(&step(&obs)).await {
            Err(DecideError::Unusable { reply, .. }) => assert_eq!(reply, "still no idea"),
            other => panic!("{other:?}"),
        }
        // The script is now empty: the backend fails, and that is not retried.
        let err = chain.decide(&step(&obs)).await.unwrap_err();
        assert!(
            matches!(err, DecideError::Backend(LlmError::Script(_))),
            "{err:?}"
        );
        assert_eq!(script.requests().len(), 3);
    }
}
