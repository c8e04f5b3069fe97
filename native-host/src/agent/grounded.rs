//! The grounded strategy: acts on what the goal names when the page shows it unmistakably, with
//! no model call, and hands the step to the model behind it otherwise. It reads the goal once
//! into wants (`ground::goal`) and works through them in order, remembering which are met, so
//! that it says `done` as soon as every value is in place and the last control is pressed, or
//! the asked value has been read.

use std::sync::Mutex;

use async_trait::async_trait;
use itinero_shared::Action;

use super::ground::goal::{self, Want};
use super::ground::page::Page;
use super::ground::{self, Candidate, Grounded as Found, Memory, SURE};
use super::strategy::{DecideError, Decision, Step, Strategy};

/// The name its steps are recorded and shown under.
pub const NAME: &str = "grounded";

/// A want whose grounded action failed this often goes to the model.
const TRIES: u32 = 2;

/// Grounds each step ahead of `inner`.
pub struct Grounded<S> {
    pub inner: S,
    state: Mutex<State>,
}

impl<S> Grounded<S> {
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            state: Mutex::new(State::default()),
        }
    }
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

    /// The next sure action, the answer, `done`, or `None` for the model.
    fn next(&mut self, step: &Step<'_>) -> Option<Decision> {
        if self.wants.is_empty() {
            return None;
        }
        let page = Page::read(step.observation);
        for i in 0..self.wants.len() {
            if self.finished[i] {
                continue;
            }
            if self.failures[i] >= TRIES {
                return None;
            }
            let fill = matches!(
                self.wants[i],
                Want::Assign { .. } | Want::Pair { .. } | Want::Tick { .. } | Want::Choose { .. }
            );
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
                    return Some(Decision::without_model(
                        Action::Done {
                            answer,
                            success: true,
                        },
                        NAME,
                        format!("read {value:?} off the page"),
                    ));
                }
                Found::Candidates(c) if c.first().is_some_and(|c| c.confidence >= SURE) => {
                    let mut candidate = c.into_iter().next()?;
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
                    return Some(decision);
                }
                // A field that is not on this page may be on the next (a two-step sign-in).
                Found::Absent if fill => {}
                _ => return None,
            }
        }
        if self.finished.iter().all(|f| *f) {
            let answer = if self.done.is_empty() {
                "Everything the goal asks is already so on the page.".to_owned()
            } else {
                format!("Done: {}.", self.done.join(", then "))
            };
            return Some(Decision::without_model(
                Action::Done {
                    answer,
                    success: true,
                },
                NAME,
                "everything the goal asks is done".into(),
            ));
        }
        None
    }
}

#[async_trait]
impl<S: Strategy> Strategy for Grounded<S> {
    async fn decide(&self, step: &Step<'_>) -> Result<Decision, DecideError> {
        let decided = {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            state.start(step.goal);
            state.settle(step);
            state.next(step)
        };
        match decided {
            Some(d) => Ok(d),
            None => self.inner.decide(step).await,
        }
    }
}
