//! The agent's [`Panel`] for a task of the session: its events and questions go to the side
//! panel (or the control-socket client) that started it, under the starting request's id; the
//! answers come back through the registry.

use std::sync::Arc;

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
                }),
            )
            .await;
        tokio::select! {
            answer = rx => answer.ok(),
            () = stopped => None,
        }
    }
}
