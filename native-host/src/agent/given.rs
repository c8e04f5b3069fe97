//! Steps a program named itself (an MCP client's `act`): handed out one by one as decisions, so
//! they pass through the same guards, approvals, sign-in and records as a model's. The task
//! ends after the last step, or with the first that failed or was sent back.

use std::sync::Mutex;

use async_trait::async_trait;
use itinero_shared::Action;

use super::strategy::{DecideError, Decision, Step, Strategy};

pub const NAME: &str = "given";

pub struct Given {
    steps: Vec<Action>,
    /// The next step to hand out.
    next: Mutex<usize>,
}

impl Given {
    pub fn new(steps: Vec<Action>) -> Self {
        Self {
            steps,
            next: Mutex::new(0),
        }
    }
}

/// A decision of this strategy: nothing for the panel to hear beyond the step itself.
fn decision(action: Action, thought: String) -> Decision {
    let mut d = Decision::without_model(action, NAME, thought);
    d.note = None;
    d
}

fn end(success: bool, answer: String) -> Decision {
    decision(Action::Done { answer, success }, String::new())
}

#[async_trait]
impl Strategy for Given {
    async fn decide(&self, step: &Step<'_>) -> Result<Decision, DecideError> {
        let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
        if *next > 0 {
            // The step before this one was refused by the guards, or did not take effect.
            if let Some(failed) = step.failed {
                return Ok(end(
                    false,
                    format!("the step did not work: {}", failed.outcome),
                ));
            }
            if let Some(why) = &step.feedback {
                return Ok(end(false, format!("the step was refused: {why}")));
            }
        }
        let Some(action) = self.steps.get(*next).cloned() else {
            let n = self.steps.len();
            let done = if n == 1 {
                "the step was done".to_owned()
            } else {
                format!("all {n} steps were done")
            };
            return Ok(end(true, done));
        };
        *next += 1;
        let thought = format!("step {} of {}, as given", *next, self.steps.len());
        Ok(decision(action, thought))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::strategy::Failed;
    use crate::agent::test_support::{self, page_of};
    use itinero_shared::messages::Outcome;

    fn step<'a>(
        obs: &'a itinero_shared::observation::Observation,
        failed: Option<&'a Failed>,
        feedback: Option<String>,
    ) -> Step<'a> {
        Step {
            failed,
            feedback,
            ..test_support::step("", obs)
        }
    }

    #[tokio::test]
    async fn hands_out_its_steps_then_ends_at_the_last_or_the_first_that_failed() {
        let obs = page_of("https://shop.example/", "", Vec::new());
        let wait = |ms| Action::Wait { ms };
        let given = Given::new(vec![wait(1), wait(2)]);
        assert_eq!(
            given.decide(&step(&obs, None, None)).await.unwrap().action,
            wait(1)
        );
        assert_eq!(
            given.decide(&step(&obs, None, None)).await.unwrap().action,
            wait(2)
        );
        let last = given.decide(&step(&obs, None, None)).await.unwrap();
        assert_eq!(
            last.action,
            Action::Done {
                answer: "all 2 steps were done".into(),
                success: true
            }
        );

        let given = Given::new(vec![wait(1), wait(2)]);
        given.decide(&step(&obs, None, None)).await.unwrap();
        let failed = Failed {
            action: wait(1),
            outcome: Outcome::Failed {
                reason: "the tab closed".into(),
            },
            attempts: 0,
            subgoal_done: None,
        };
        let end = given
            .decide(&step(&obs, Some(&failed), None))
            .await
            .unwrap();
        assert!(
            matches!(&end.action, Action::Done { success: false, answer } if answer.contains("the tab closed")),
            "{end:?}"
        );

        let given = Given::new(vec![wait(1)]);
        given.decide(&step(&obs, None, None)).await.unwrap();
        let refused = given
            .decide(&step(
                &obs,
                None,
                Some("a saved secret is only typed".into()),
            ))
            .await
            .unwrap();
        assert!(
            matches!(&refused.action, Action::Done { success: false, answer } if answer.contains("refused")),
            "{refused:?}"
        );
    }
}
