//! Replaying a skill: its recorded steps, each acted on only after its target is found again by
//! fingerprint in the fresh page (never by position: a control that now means something else
//! is not clicked) and after the previous step's postcondition was seen. No model is asked while
//! the replay holds. On the first mismatch the rest goes to the inner strategy (the model), told
//! which steps remained, and the run is marked as diverged so a success can heal the skill.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use itinero_shared::messages::Outcome;
use itinero_shared::observation::Observation;
use itinero_shared::skills::{Postcondition, SkillStep};
use itinero_shared::Action;

use super::strategy::{DecideError, Decision, Step, Strategy};
use super::{cache, resolve};
use crate::url_pattern;

pub const NAME: &str = "skill";

/// A skill ready to replay: its name, where it starts and its steps with parameters filled in.
#[derive(Debug, Clone)]
pub struct Script {
    pub name: String,
    pub start_url: String,
    pub steps: Vec<SkillStep>,
}

#[derive(Debug, Default)]
struct Progress {
    /// The next step to replay.
    next: usize,
    /// The step whose action was handed out last (its postcondition is checked next).
    given: Option<usize>,
    /// Whether the replay has sent the tab to the skill's start page.
    navigated: bool,
    /// Why the replay stopped, once it has.
    diverged: Option<String>,
}

pub struct Replay<S> {
    pub inner: S,
    script: Script,
    progress: Mutex<Progress>,
    diverged: Arc<AtomicBool>,
}

impl<S> Replay<S> {
    /// `diverged` is set when the model has to take over (a successful run then heals the skill).
    pub fn new(inner: S, script: Script, diverged: Arc<AtomicBool>) -> Self {
        Self {
            inner,
            script,
            progress: Mutex::new(Progress::default()),
            diverged,
        }
    }

    fn progress(&self) -> std::sync::MutexGuard<'_, Progress> {
        self.progress.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What the model is told when it takes over: where the replay stopped and what was left.
    fn hint(&self, from: usize, why: &str) -> String {
        let mut s = format!(
            "The saved skill \"{}\" was replaying this task but stopped at its step {} of {}: {why}. \
             Its remaining steps were:",
            self.script.name,
            from + 1,
            self.script.steps.len()
        );
        for (i, step) in self.script.steps.iter().enumerate().skip(from) {
            s.push_str(&format!("\n  {}. {}", i + 1, step.note));
        }
        s
    }
}

/// Whether what step `step` expected after it shows in `obs`; otherwise what is missing.
fn expected(step: &SkillStep, obs: &Observation) -> Result<(), String> {
    for e in &step.expect {
        match e {
            Postcondition::Url { pattern } => {
                if !url_pattern::matches(pattern, &obs.url) {
                    return Err(format!(
                        "after \"{}\" the page should be {pattern}, but it is {}",
                        step.note, obs.url
                    ));
                }
            }
            Postcondition::Appeared { fingerprint } => {
                if resolve::find(fingerprint, obs).is_none() {
                    return Err(format!(
                        "after \"{}\" {} should be on the page",
                        step.note,
                        fingerprint.name.as_deref().unwrap_or(&fingerprint.tag)
                    ));
                }
            }
            Postcondition::Value { value } => {
                // Checked while the field is still there; a submit that moved on is the URL's check.
                let Some(target) = step.action.target() else {
                    continue;
                };
                if let Some(node) = resolve::find(&target.fingerprint, obs) {
                    let now = node.value.as_deref().unwrap_or_default();
                    if node.tag != "select" && now != value {
                        return Err(format!(
                            "after \"{}\" the field should hold {value:?}, but holds {now:?}",
                            step.note
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

impl<S: Strategy> Replay<S> {
    /// The next step of the skill for this page, or why the replay cannot go on.
    fn next_step(&self, step: &Step<'_>) -> Result<Option<Decision>, (usize, String)> {
        let mut p = self.progress();
        let total = self.script.steps.len();
        let obs = step.observation;
        if let Some(given) = p.given {
            // A scroll that finds the page already where it goes (a taller window than the one
            // the skill was made in) leaves nothing undone.
            let undone = step
                .failed
                .is_some_and(|f| !matches!(f.outcome, Outcome::NotScrolled { .. }));
            if undone {
                return Err((given, format!("step {} did not work", given + 1)));
            }
            expected(&self.script.steps[given], obs).map_err(|why| (p.next, why))?;
        }
        let Some(next) = self.script.steps.get(p.next) else {
            return Ok(None);
        };
        let i = p.next;
        if !url_pattern::matches(&next.url, &obs.url) {
            // The first step may need the skill's start page; after that, a wrong page is a mismatch.
            if i == 0 && !p.navigated && !self.script.start_url.is_empty() {
                p.navigated = true;
                return Ok(Some(decision(
                    Action::Navigate {
                        url: self.script.start_url.clone(),
                    },
                    format!("skill \"{}\": going to its start page", self.script.name),
                )));
            }
            return Err((
                i,
                format!(
                    "step {} expects the page {}, but the tab shows {} ({})",
                    i + 1,
                    next.url,
                    obs.url,
                    if obs.title.is_empty() {
                        "no title"
                    } else {
                        &obs.title
                    }
                ),
            ));
        }
        // An answer read off the page (a price, a count) is the page's to give now, not the
        // recording's: when its figures are gone, the model answers instead.
        if let Action::Done { answer, .. } = &next.action {
            if !cache::answer_holds(answer, obs) {
                return Err((
                    i,
                    format!(
                        "step {} answers {answer:?}, but the page no longer shows its figures",
                        i + 1
                    ),
                ));
            }
        }
        let action = resolve::resolve(&next.action, obs)
            .map_err(|e| (i, format!("step {} ({}): {e}", i + 1, next.note)))?;
        p.given = Some(i);
        p.next = i + 1;
        Ok(Some(decision(
            action,
            format!(
                "skill \"{}\" step {} of {total}: {}",
                self.script.name,
                i + 1,
                next.note
            ),
        )))
    }
}

fn decision(action: Action, note: String) -> Decision {
    Decision::without_model(action, NAME, note)
}

#[async_trait]
impl<S: Strategy> Strategy for Replay<S> {
    async fn decide(&self, step: &Step<'_>) -> Result<Decision, DecideError> {
        let stopped = self.progress().diverged.clone();
        let (hint, first) = match stopped {
            Some(hint) => (hint, None),
            None => match self.next_step(step) {
                Ok(Some(d)) => return Ok(d),
                // Every step replayed and the last one's result seen.
                Ok(None) => {
                    return Ok(decision(
                        Action::Done {
                            answer: format!(
                                "Done: the skill \"{}\" ran to its end.",
                                self.script.name
                            ),
                            success: true,
                        },
                        format!("skill \"{}\": all its steps are done", self.script.name),
                    ))
                }
                Err((from, why)) => {
                    let hint = self.hint(from, &why);
                    tracing::info!(skill = %self.script.name, %why, "skill replay diverged; the model takes over");
                    self.progress().diverged = Some(hint.clone());
                    self.diverged.store(true, Ordering::SeqCst);
                    let short = format!("the skill \"{}\" stopped: {why}", self.script.name);
                    (hint, Some(short))
                }
            },
        };
        let mut lessons = step.lessons.to_vec();
        lessons.push(hint);
        let mut handed = step.clone();
        handed.lessons = &lessons;
        match self.inner.decide(&handed).await {
            Ok(mut d) => {
                if let Some(short) = first {
                    d.note = Some(match d.note {
                        Some(n) => format!("{short}; the model takes over; {n}"),
                        None => format!("{short}; the model takes over"),
                    });
                }
                Ok(d)
            }
            Err(DecideError::Backend(e)) => Err(DecideError::Stuck(match first {
                Some(short) => format!("{short}, and no model could take over: {e}"),
                None => format!(
                    "the skill \"{}\" needed the model, which failed: {e}",
                    self.script.name
                ),
            })),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::strategy::Failed;
    use crate::agent::test_support::{page_of, step};

    /// Stands in for the model: says what it was told.
    struct Model;

    #[async_trait]
    impl Strategy for Model {
        async fn decide(&self, step: &Step<'_>) -> Result<Decision, DecideError> {
            let answer = step.lessons.last().cloned().unwrap_or_default();
            Ok(Decision::without_model(
                Action::Done {
                    answer,
                    success: true,
                },
                "llm",
                String::new(),
            ))
        }
    }

    fn answering(answer: &str) -> Replay<Model> {
        let script = Script {
            name: "Price of socks".into(),
            start_url: String::new(),
            steps: vec![SkillStep {
                action: Action::Done {
                    answer: answer.into(),
                    success: true,
                },
                url: "https://shop.example/*".into(),
                expect: vec![],
                note: format!("finish, answering {answer:?}"),
            }],
        };
        Replay::new(Model, script, Arc::default())
    }

    #[tokio::test]
    async fn an_answer_read_off_the_page_is_replayed_only_while_the_page_still_says_it() {
        let mut obs = page_of("https://shop.example/product", "Wool socks", vec![]);
        obs.text = "Wool socks 12.99 EUR".into();
        let replay = answering("Wool socks cost 12.99 EUR.");
        let d = replay.decide(&step("Price of socks", &obs)).await.unwrap();
        assert_eq!(d.strategy, NAME);

        obs.text = "Wool socks 14.49 EUR".into();
        let replay = answering("Wool socks cost 12.99 EUR.");
        let d = replay.decide(&step("Price of socks", &obs)).await.unwrap();
        assert_eq!(d.strategy, "llm");
        let Action::Done { answer, .. } = d.action else {
            panic!()
        };
        assert!(answer.contains("no longer shows its figures"), "{answer}");
    }

    #[tokio::test]
    async fn a_scroll_that_finds_the_page_at_its_end_does_not_stop_the_replay() {
        let scroll = Action::Scroll {
            target: None,
            direction: Some(itinero_shared::ScrollDirection::Down),
            pages: 1.0,
        };
        let script = || Script {
            name: "Read the footer".into(),
            start_url: String::new(),
            steps: vec![
                SkillStep {
                    action: scroll.clone(),
                    url: "https://shop.example/*".into(),
                    expect: vec![],
                    note: "scroll down a page".into(),
                },
                SkillStep {
                    action: Action::Done {
                        answer: String::new(),
                        success: true,
                    },
                    url: "https://shop.example/*".into(),
                    expect: vec![],
                    note: "finish".into(),
                },
            ],
        };
        let obs = page_of("https://shop.example/about", "About", vec![]);
        let failed = |outcome| Failed {
            action: scroll.clone(),
            outcome,
            attempts: 0,
            subgoal_done: None,
        };
        let not_scrolled = failed(Outcome::NotScrolled {
            why: "the page is already at its bottom".into(),
        });
        let detached = failed(Outcome::Failed {
            reason: "the tab closed".into(),
        });
        for (after, replayed) in [(&not_scrolled, true), (&detached, false)] {
            let replay = Replay::new(Model, script(), Arc::default());
            let first = replay.decide(&step("Read the footer", &obs)).await.unwrap();
            assert_eq!(first.action, scroll);
            let then = Step {
                failed: Some(after),
                ..step("Read the footer", &obs)
            };
            let d = replay.decide(&then).await.unwrap();
            assert_eq!(
                d.strategy == NAME,
                replayed,
                "after {:?}: {d:?}",
                after.outcome
            );
        }
    }
}
