//! The strategy chain a task decides with: the action cache outermost (a remembered step needs
//! no model), recovery next (no model call when the page only moved the target), then the
//! grounding (what the goal names, found on the page, with the model choosing among its
//! candidates when none is sure), then the model with retries, voted on when the options ask
//! for it; and the planner for long goals. A new strategy joins the chain
//! here.

use std::sync::Arc;

use async_trait::async_trait;
use itinero_shared::messages::{TaskOptions, VoteMode};

use crate::agent::cache::{ActionCache, Cached};
use crate::agent::chooser::Chooser;
use crate::agent::grounded::Grounded;
use crate::agent::planner::LlmPlanner;
use crate::agent::prompt;
use crate::agent::recovery::Recovery;
use crate::agent::run::Deciders;
use crate::agent::strategy::{DecideError, Decision, Llm, Retry, Step, Strategy};
use crate::agent::vote::{self, Vote};
use crate::llm::choose::ModelChoice;

/// Replies that cannot be used are asked again this many times in all.
const ATTEMPTS: u32 = 3;
/// Recovery attempts per failed action before the model hears of it.
const RECOVERY_ATTEMPTS: u32 = 2;
/// Voters when voting is on and the task does not say how many.
const DEFAULT_VOTERS: u32 = 3;
/// Sampling temperature of the extra voters: different enough to disagree when unsure.
const VOTER_TEMPERATURE: f32 = 0.7;

/// The chain for a task whose model is `choice`; `cache` wraps it when the task may use it.
pub fn deciders(
    choice: &ModelChoice,
    options: &TaskOptions,
    cache: Option<Arc<dyn ActionCache>>,
) -> Deciders {
    let llm = |model: &str, temperature: Option<f32>, seed: Option<i64>| -> Box<dyn Strategy> {
        let mut llm = Llm::new(choice.backend.clone(), model);
        llm.temperature = temperature;
        llm.seed = seed;
        Box::new(Retry {
            inner: llm,
            attempts: ATTEMPTS,
        })
    };
    let model: Box<dyn Strategy> = match options.vote.unwrap_or_default() {
        VoteMode::Off => llm(&choice.model, Some(0.0), None),
        mode => {
            let voters = if options.vote_models.is_empty() {
                let n = options.vote_samples.unwrap_or(DEFAULT_VOTERS).clamp(2, 9);
                (0..n)
                    .map(|i| {
                        if i == 0 {
                            llm(&choice.model, Some(0.0), None)
                        } else {
                            llm(&choice.model, Some(VOTER_TEMPERATURE), Some(i64::from(i)))
                        }
                    })
                    .collect()
            } else {
                // Several models: each answers greedily; they differ by being different models.
                std::iter::once(choice.model.as_str())
                    .chain(options.vote_models.iter().map(String::as_str).take(8))
                    .map(|m| llm(m, Some(0.0), None))
                    .collect()
            };
            Box::new(Vote {
                voters,
                when: if mode == VoteMode::Always {
                    vote::When::Always
                } else {
                    vote::When::Unsure
                },
            })
        }
    };
    if !grounding_on(choice) {
        let recovery = Recovery {
            inner: model,
            attempts: RECOVERY_ATTEMPTS,
        };
        return with_cache(recovery, cache, choice);
    }
    let chooser = Chooser {
        backend: choice.backend.clone(),
        model: choice.model.clone(),
        family: prompt::family_of(&choice.model),
    };
    let recovery = Recovery {
        inner: Grounded::new(model).with_chooser(chooser),
        attempts: RECOVERY_ATTEMPTS,
    };
    with_cache(recovery, cache, choice)
}

/// Whether the grounding decides ahead of the model: `ITINERO_GROUNDING` (`on`/`off`) says;
/// else on, but for the scripted test model, whose script stands for a model's decisions in
/// tests of the model's own path.
fn grounding_on(choice: &ModelChoice) -> bool {
    match std::env::var("ITINERO_GROUNDING").as_deref() {
        Ok("off" | "0" | "false") => false,
        Ok("on" | "1" | "true") => true,
        _ => choice.backend.name() != "scripted",
    }
}

/// The chain with no model: the grounding alone, and `why` there is no model when it cannot
/// decide a step.
pub fn without_model(why: String, cache: Option<Arc<dyn ActionCache>>) -> Deciders {
    let recovery = Recovery {
        inner: Grounded::new(NoModel(why)),
        attempts: RECOVERY_ATTEMPTS,
    };
    let strategy: Box<dyn Strategy> = match cache {
        Some(cache) => Box::new(Cached {
            inner: recovery,
            cache,
        }),
        None => Box::new(recovery),
    };
    Deciders {
        strategy,
        planner: None,
        sign_in: None,
    }
}

fn with_cache<S: Strategy + 'static>(
    recovery: Recovery<S>,
    cache: Option<Arc<dyn ActionCache>>,
    choice: &ModelChoice,
) -> Deciders {
    Deciders {
        strategy: match cache {
            Some(cache) => Box::new(Cached {
                inner: recovery,
                cache,
            }),
            None => Box::new(recovery),
        },
        planner: Some(Box::new(LlmPlanner {
            backend: choice.backend.clone(),
            model: choice.model.clone(),
            family: prompt::family_of(&choice.model),
        })),
        sign_in: None,
    }
}

/// Stands in for the model when none could be reached: a step the grounding cannot decide (or a
/// skill that diverges) stops the task, saying why.
pub struct NoModel(pub String);

#[async_trait]
impl Strategy for NoModel {
    async fn decide(&self, _: &Step<'_>) -> Result<Decision, DecideError> {
        Err(DecideError::Stuck(self.0.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::test_support::{element, page_of, step};
    use crate::llm::scripted::Scripted;
    use crate::llm::scripted::Step as ScriptStep;

    #[tokio::test]
    async fn several_models_vote_when_the_options_name_them() {
        let script = Arc::new(Scripted::new([1, 1, 0].map(|i| {
            ScriptStep::reply(format!(r#"{{"action": "click", "index": {i}}}"#))
        })));
        let choice = ModelChoice {
            backend: script.clone(),
            model: "qwen2.5:3b".into(),
        };
        let options = TaskOptions {
            vote: Some(VoteMode::Always),
            vote_models: vec!["llama3.2:3b".into(), "gemma3:4b".into()],
            ..Default::default()
        };
        let deciders = deciders(&choice, &options, None);
        let obs = page_of(
            "",
            "",
            vec![
                element(0, "a", None, None, "Hats"),
                element(1, "a", None, None, "Socks"),
            ],
        );
        let d = deciders
            .strategy
            .decide(&step("Show me socks", &obs))
            .await
            .unwrap();
        assert_eq!(d.action.target().map(|t| t.index), Some(1));
        assert_eq!(d.note.as_deref(), Some("2 of 3 voters chose this"));
        let models: Vec<String> = script.requests().into_iter().map(|r| r.model).collect();
        assert_eq!(models, ["qwen2.5:3b", "llama3.2:3b", "gemma3:4b"]);
    }
}
