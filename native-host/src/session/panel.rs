//! The agent's [`Panel`] for a task of the session: its events and questions go to the side
//! panel (or the control-socket client) that started it, under the starting request's id; the
//! answers come back through the registry.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use itinero_shared::messages::{AskUser, TaskEvent, TaskEventKind};
use itinero_shared::ToBrowser;
use tokio::sync::{oneshot, Notify};

use super::outbox::Outbox;
use super::registry::Registry;
use crate::agent::run::{Ask, Panel};

pub struct SessionPanel {
    pub registry: Registry,
    pub out: Outbox,
    pub request_id: u64,
    pub task_id: u64,
    pub stopped: Arc<Notify>,
    /// How long a question waits for its answer: a panel that was closed never answers, and
    /// a task must not wait on it for ever.
    pub answer_within: Duration,
}

/// How long a question waits unless `ITINERO_ASK_TIMEOUT_SECS` says otherwise.
pub const ANSWER_WITHIN: Duration = Duration::from_secs(15 * 60);

/// The wait for an answer: `ITINERO_ASK_TIMEOUT_SECS`, else [`ANSWER_WITHIN`].
pub fn answer_within() -> Duration {
    std::env::var("ITINERO_ASK_TIMEOUT_SECS")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .map_or(ANSWER_WITHIN, Duration::from_secs)
}

#[async_trait]
impl Panel for SessionPanel {
    async fn event(&self, step: u32, kind: TaskEventKind) {
        self.out
            .send(
                self.request_id,
                ToBrowser::TaskEvent(TaskEvent {
                    task_id: self.task_id,
                    step,
                    kind,
                }),
            )
            .await;
    }

    async fn ask(&self, question: &str, kind: Ask) -> Option<String> {
        self.put(question, kind, false).await.map(|(a, _)| a)
    }

    async fn ask_teaching(&self, question: &str, from_model: bool) -> Option<(String, bool)> {
        self.put(question, Ask::Question, from_model).await
    }
}

impl SessionPanel {
    /// Sends the question and waits for its answer (and whether to remember it), the task's
    /// stop, or the end of the wait.
    async fn put(&self, question: &str, kind: Ask, from_model: bool) -> Option<(String, bool)> {
        let (tx, rx) = oneshot::channel();
        let question_id = self.registry.ask(self.task_id, tx)?;
        // Registered before the question goes out, so a Stop that races it is not missed.
        let stopped = self.stopped.notified();
        self.out
            .send(
                self.request_id,
                ToBrowser::AskUser(AskUser {
                    task_id: self.task_id,
                    question_id,
                    question: question.to_owned(),
                    kind: match kind {
                        Ask::Question => "question",
                        Ask::Approval { .. } => "approval",
                    }
                    .into(),
                    can_always: matches!(kind, Ask::Approval { can_always: true }),
                    from_model,
                }),
            )
            .await;
        tokio::select! {
            answer = rx => answer.ok(),
            () = stopped => None,
            () = tokio::time::sleep(self.answer_within) => {
                if let Some(running) = self.registry.lock().running.get_mut(&self.task_id) {
                    running.questions.remove(&question_id);
                }
                let minutes = self.answer_within.as_secs_f64() / 60.0;
                self.event(
                    0,
                    TaskEventKind::Note {
                        text: format!(
                            "no answer within {minutes:.0} minutes (is the side panel closed?): \
                             the question is withdrawn"
                        ),
                    },
                )
                .await;
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    #[tokio::test]
    async fn a_question_nobody_answers_is_withdrawn_after_its_wait() {
        let registry = Registry::default();
        let stopped = Arc::new(Notify::new());
        let task_id = registry.add(Arc::new(AtomicBool::new(false)), stopped.clone());
        let (out, mut sent) = Outbox::channel();
        let panel = SessionPanel {
            registry: registry.clone(),
            out,
            request_id: 7,
            task_id,
            stopped,
            answer_within: Duration::from_millis(50),
        };
        assert_eq!(panel.ask("Which size?", Ask::Question).await, None);
        assert!(matches!(
            sent.recv().await.unwrap().msg,
            ToBrowser::AskUser(_)
        ));
        let note = sent.recv().await.unwrap();
        assert!(
            matches!(&note.msg, ToBrowser::TaskEvent(TaskEvent { kind: TaskEventKind::Note { text }, .. }) if text.contains("withdrawn")),
            "{note:?}"
        );
        assert!(registry.lock().running[&task_id].questions.is_empty());
    }
}
