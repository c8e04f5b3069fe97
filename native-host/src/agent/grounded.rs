//! The grounded strategy: acts on what the goal names when the page shows it unmistakably, with
//! no model call, and hands the step to the model behind it otherwise. It reads the goal once
//! into wants (`ground::goal`) and works through them in order, remembering which are met, so
//! that it says `done` as soon as every value is in place and the last control is pressed, or
//! the asked value has been read.

use std::sync::Mutex;

use async_trait::async_trait;
use itinero_shared::Action;

use super::chooser::{self, Chooser};
use super::ground::goal::{self, Want};
use super::ground::page::Page;
use super::ground::{self, Candidate, Grounded as Found, Memory, SURE};
use super::strategy::{DecideError, Decision, Step, Strategy};

/// The name its steps are recorded and shown under.
pub const NAME: &str = "grounded";

/// A want whose grounded action failed this often goes to the model.
const TRIES: u32 = 2;

/// Grounds each step ahead of `inner`; with a chooser, a model picks among candidates that
/// are plausible but not sure before `inner` is asked to write an action itself.
pub struct Grounded<S> {
    pub inner: S,
    chooser: Option<Chooser>,
    state: Mutex<State>,
}

impl<S> Grounded<S> {
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            chooser: None,
            state: Mutex::new(State::default()),
        }
    }

    pub fn with_chooser(mut self, chooser: Chooser) -> Self {
        self.chooser = Some(chooser);
        self
    }
}

/// What the grounding makes of a step.
enum Next {
    Decided(Box<Decision>),
    /// Plausible actions for want `want`, none sure.
    Choose {
        want: usize,
        options: Vec<Candidate>,
    },
    Model,
}

#[derive(Default)]
struct State {
    goal: String,
    wants: Vec<Want>,
    finished: Vec<bool>,
    failures: Vec<u32>,
    /// The action this strategy chose last, until the next step says how it went.
    last: Option<Last>,
    memory: Memory,
    /// What was done, for the closing answer.
    done: Vec<String>,
    /// Confirmations pressed after the last want (a deletion's "Are you sure?").
    confirmations: u32,
}

struct Last {
    want: usize,
    candidate: Candidate,
}

impl State {
    fn start(&mut self, goal: &str) {
        if self.goal != goal {
            let wants = goal::read(goal);
            *self = State {
                goal: goal.to_owned(),
                finished: vec![false; wants.len()],
                failures: vec![0; wants.len()],
                wants,
                ..State::default()
            };
        }
    }

    /// The previous step's action worked unless the step says it failed.
    fn settle(&mut self, step: &Step<'_>) {
        let Some(last) = self.last.take() else {
            return;
        };
        if step
            .failed
            .is_some_and(|f| f.action == last.candidate.action)
        {
            self.failures[last.want] += 1;
            return;
        }
        if let Action::Type { target, text, .. } = &last.candidate.action {
            self.memory
                .typed
                .push((target.fingerprint.path.clone(), text.clone()));
        }
        if last.candidate.finishes {
            self.finished[last.want] = true;
            self.done.push(last.candidate.why);
        } else {
            self.memory.searches += 1;
        }
    }

    /// The next sure action, the answer, `done`, choices for a model, or the model's turn.
    fn next(&mut self, step: &Step<'_>) -> Next {
        if self.wants.is_empty() {
            return Next::Model;
        }
        let page = Page::read(step.observation);
        for i in 0..self.wants.len() {
            if self.finished[i] {
                continue;
            }
            if self.failures[i] >= TRIES {
                return Next::Model;
            }
            let fill = self.wants[i].fills_form();
            match ground::ground(&self.wants[i], step.observation, &page, &self.memory) {
                Found::Satisfied => {
                    self.finished[i] = true;
                }
                Found::Answer {
                    value,
                    quote,
                    confidence,
                } if confidence >= SURE => {
                    let answer = format!("{value} (the page says: \u{201c}{quote}\u{201d})");
                    return Next::Decided(Box::new(Decision::without_model(
                        Action::Done {
                            answer,
                            success: true,
                        },
                        NAME,
                        format!("read {value:?} off the page"),
                    )));
                }
                Found::Candidates(c) if c.first().is_some_and(|c| c.confidence >= SURE) => {
                    let Some(mut candidate) = c.into_iter().next() else {
                        return Next::Model;
                    };
                    // The form's own button, pressed when everything before it is done, sends
                    // what the goal asked, whatever the button says.
                    if matches!(self.wants[i], Want::Submit { .. })
                        && self.finished[..i].iter().all(|f| *f)
                    {
                        candidate.finishes = true;
                    }
                    let decision = Decision::without_model(
                        candidate.action.clone(),
                        NAME,
                        candidate.why.clone(),
                    );
                    self.last = Some(Last { want: i, candidate });
                    return Next::Decided(Box::new(decision));
                }
                Found::Candidates(options) if !options.is_empty() => {
                    return Next::Choose { want: i, options };
                }
                // A field that is not on this page may be on the next (a two-step sign-in).
                Found::Absent if fill => {}
                _ => return Next::Model,
            }
        }
        if self.finished.iter().all(|f| *f) {
            if let Some(confirm) = self.confirmation(step, &page) {
                return confirm;
            }
            let answer = if self.done.is_empty() {
                "Everything the goal asks is already so on the page.".to_owned()
            } else {
                format!("Done: {}.", self.done.join(", then "))
            };
            return Next::Decided(Box::new(Decision::without_model(
                Action::Done {
                    answer,
                    success: true,
                },
                NAME,
                "everything the goal asks is done".into(),
            )));
        }
        Next::Model
    }
}

impl State {
    /// A dialog that asks to confirm what the goal just had pressed: its confirming button,
    /// twice at most (a dialog that stays after it is not one this can answer).
    fn confirmation(&mut self, step: &Step<'_>, page: &Page) -> Option<Next> {
        const MAX: u32 = 2;
        let pressed: Vec<String> = self
            .wants
            .iter()
            .filter_map(|w| match w {
                Want::Click { target, .. } => Some(target.clone()),
                Want::Act { verb, .. } | Want::Every { verb, .. } => Some(verb.clone()),
                _ => None,
            })
            .collect();
        if self.confirmations >= MAX || pressed.is_empty() {
            return None;
        }
        let c = ground::confirm::confirmation(step.observation, page, &pressed)?;
        self.confirmations += 1;
        self.done.push(c.why.clone());
        Some(Next::Decided(Box::new(Decision::without_model(
            c.action, NAME, c.why,
        ))))
    }
}

#[async_trait]
impl<S: Strategy> Strategy for Grounded<S> {
    async fn decide(&self, step: &Step<'_>) -> Result<Decision, DecideError> {
        let (next, done) = {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            state.start(step.goal);
            state.settle(step);
            (state.next(step), state.done.clone())
        };
        match next {
            Next::Decided(d) => Ok(*d),
            Next::Choose { want, options } => {
                let Some(chooser) = &self.chooser else {
                    return self.inner.decide(step).await;
                };
                let choice = match chooser
                    .choose(
                        step.goal,
                        &done,
                        &step.observation.title,
                        &options,
                        step.progress,
                    )
                    .await
                {
                    Ok(c) => Some(c),
                    Err(e) => {
                        tracing::warn!(error = %e, "the chooser failed; the model writes the action");
                        None
                    }
                };
                let Some(k) = choice.and_then(|c| c.pick) else {
                    // The question the model answered with "none" was a call all the same.
                    let mut decision = self.ask_model(step).await?;
                    if let Some(c) = choice {
                        decision.calls += 1;
                        decision.prompt_tokens = decision.prompt_tokens.max(c.prompt_tokens);
                    }
                    return Ok(decision);
                };
                let n = options.len().min(chooser::MAX_OPTIONS);
                let candidate = options[k].clone();
                let mut decision = Decision::without_model(
                    candidate.action.clone(),
                    chooser::NAME,
                    format!("{} (the model chose {} of {n})", candidate.why, k + 1),
                );
                decision.calls = 1;
                decision.prompt_tokens = choice.and_then(|c| c.prompt_tokens);
                let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
                state.last = Some(Last { want, candidate });
                Ok(decision)
            }
            Next::Model => self.ask_model(step).await,
        }
    }
}

impl<S: Strategy> Grounded<S> {
    /// The model behind, held to one thing the goal's reading knows: a goal that asks only for
    /// actions is not done before anything was done. A small model given a page it cannot make
    /// sense of says `done` at once; that is a failure reported as success.
    async fn ask_model(&self, step: &Step<'_>) -> Result<Decision, DecideError> {
        let decision = self.inner.decide(step).await?;
        let premature = matches!(decision.action, Action::Done { success: true, .. })
            && step.history.is_empty()
            && {
                let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
                asks_only_actions(&state.wants) && state.finished.iter().any(|f| !f)
            };
        if premature {
            return Err(DecideError::Unusable {
                reason: "nothing has been done yet and the goal asks for actions on the page: \
                         reply with the first of them"
                    .into(),
                reply: decision.thought.unwrap_or_default(),
                calls: decision.calls,
            });
        }
        Ok(decision)
    }
}

/// Whether every want is an action the page can show done (no question, nothing unread: a
/// verb of no known reading may ask for a reply, "Summarise the article").
fn asks_only_actions(wants: &[Want]) -> bool {
    !wants.is_empty()
        && wants
            .iter()
            .all(|w| !matches!(w, Want::Answer(_) | Want::Unknown { .. } | Want::Act { .. }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::strategy::Llm;
    use crate::agent::test_support::{element, page_of, step};
    use crate::llm::scripted::{Scripted, Step as ScriptStep};
    use std::sync::Arc;

    const DONE: &str =
        r#"{"thought": "finished", "action": "done", "answer": "", "success": true}"#;

    #[tokio::test]
    async fn a_model_that_says_done_before_any_action_of_an_action_goal_is_refused() {
        let page = page_of(
            "https://app.example/",
            "App",
            vec![element(0, "a", None, None, "Profile")],
        );
        let script = Arc::new(Scripted::new([
            ScriptStep::reply(DONE),
            ScriptStep::reply(DONE),
        ]));
        let grounded = Grounded::new(Llm::new(script.clone(), "qwen2.5:3b"));
        let early = grounded
            .decide(&step("Open the Notifications page.", &page))
            .await;
        assert!(
            matches!(&early, Err(DecideError::Unusable { reason, calls: 1, .. }) if reason.contains("nothing has been done yet")),
            "{early:?}"
        );
        // A question is another matter: the model may answer it at once.
        let grounded = Grounded::new(Llm::new(script, "qwen2.5:3b"));
        let answered = grounded
            .decide(&step("Who wrote the release notes?", &page))
            .await
            .unwrap();
        assert!(matches!(answered.action, Action::Done { .. }));
    }
}
