//! The agent's [`Panel`] for a task of the session: its events and questions go to the side
//! panel (or the control-socket client) that started it, under the starting request's id; the
//! answers come back through the registry. A task a program started for someone else (an MCP
//! client) reports to the program but asks the user, in every open side panel.

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
    /// For a task a program started on its behalf: the browser, whose side panels ask the user,
    /// and the program's name, which the panel shows.
    pub asks_user: Option<(Outbox, String)>,
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
        let ask = AskUser {
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
            started_by: self.asks_user.as_ref().map(|(_, by)| by.clone()),
        };
        match &self.asks_user {
            Some((browser, _)) => {
                // Id 0 answers no panel's request: the background shows it in every panel.
                browser.send(0, ToBrowser::AskUser(ask)).await;
                let text = format!("waiting for the user to answer in the side panel: {question}");
                self.event(0, TaskEventKind::Note { text }).await;
            }
            None => {
                self.out
                    .send(self.request_id, ToBrowser::AskUser(ask))
                    .await
            }
        }
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
            asks_user: None,
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

    #[tokio::test]
    async fn a_programs_task_asks_the_user_in_the_panel_and_tells_the_program_it_waits() {
        let registry = Registry::default();
        let stopped = Arc::new(Notify::new());
        let task_id = registry.add(Arc::new(AtomicBool::new(false)), stopped.clone());
        let (out, mut to_program) = Outbox::channel();
        let (browser, mut to_panels) = Outbox::channel();
        let panel = SessionPanel {
            registry: registry.clone(),
            out,
            request_id: 1,
            task_id,
            stopped,
            answer_within: Duration::from_secs(30),
            asks_user: Some((browser, "the MCP client claude".into())),
        };
        let asking = tokio::spawn(async move {
            panel
                .ask("Allow this step?", Ask::Approval { can_always: false })
                .await
        });
        let asked = to_panels.recv().await.unwrap();
        let ToBrowser::AskUser(q) = &asked.msg else {
            panic!("{asked:?}")
        };
        assert_eq!(asked.id, 0, "every panel shows it");
        assert_eq!(q.started_by.as_deref(), Some("the MCP client claude"));
        assert_eq!(q.kind, "approval");
        let told = to_program.recv().await.unwrap();
        assert!(
            matches!(&told.msg, ToBrowser::TaskEvent(TaskEvent { kind: TaskEventKind::Note { text }, .. }) if text.contains("side panel")),
            "{told:?}"
        );
        let tx = registry
            .lock()
            .running
            .get_mut(&task_id)
            .unwrap()
            .questions
            .remove(&q.question_id)
            .unwrap();
        tx.send(("no".into(), false)).unwrap();
        assert_eq!(asking.await.unwrap().as_deref(), Some("no"));
        assert!(
            to_program.try_recv().is_err(),
            "the question never reached the program"
        );
    }
}
