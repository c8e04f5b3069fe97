//! A task's stream on the control socket, followed to its end: each step becomes an MCP
//! progress notification (when the client asked for them) and a line of the result, which
//! ends with the task's answer.

use itinero_shared::messages::{Outcome, TaskEventKind, TaskStatus};
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};

use crate::control::protocol::{Request, Response};
use crate::control::ControlClient;
use crate::skills::words;

/// How a task ended, and what it did on the way.
#[derive(Debug)]
pub struct Ended {
    pub status: TaskStatus,
    pub answer: String,
    /// One line per step, as the panel's log would say it.
    pub steps: Vec<String>,
    /// The last action's outcome, for `act`.
    pub outcome: Option<Outcome>,
}

impl Ended {
    /// The result's text: the status and answer first, then the steps.
    pub fn text(&self) -> String {
        let mut text = format!("{}: {}", self.status.heading(), self.answer);
        if !self.steps.is_empty() {
            text.push_str("\n\nSteps:\n");
            text.push_str(&self.steps.join("\n"));
        }
        text
    }
}

/// Where progress goes: the client, under the token it gave, if it gave one.
pub struct Progress {
    pub peer: Peer<RoleServer>,
    pub token: Option<ProgressToken>,
    sent: u32,
}

impl Progress {
    pub fn new(peer: Peer<RoleServer>, token: Option<ProgressToken>) -> Self {
        Self {
            peer,
            token,
            sent: 0,
        }
    }

    async fn say(&mut self, message: String) {
        let Some(token) = &self.token else { return };
        self.sent += 1;
        let note = ProgressNotificationParam::new(token.clone(), f64::from(self.sent))
            .with_message(message);
        // A client that stopped listening still gets its result.
        if let Err(e) = self.peer.notify_progress(note).await {
            tracing::debug!(error = %e, "an MCP progress notification was not sent");
        }
    }
}

/// A line for the event, or `None` for what only the panel shows.
fn line(step: u32, kind: &TaskEventKind) -> Option<String> {
    match kind {
        TaskEventKind::Decided { action, .. } => Some(format!("{step}. {}", words::action(action))),
        TaskEventKind::Acted { outcome, .. } => Some(format!("   {outcome}")),
        TaskEventKind::Note { text } => Some(format!("   {text}")),
        TaskEventKind::Observed { summary } => Some(format!("{step}. Saw {summary}")),
        TaskEventKind::Started { .. }
        | TaskEventKind::Plan { .. }
        | TaskEventKind::Progress { .. } => None,
    }
}

/// Reads the run's responses until it finishes. `Err`: the run could not start, or the host
/// went away, in words for the calling model.
pub async fn follow(client: &mut ControlClient, progress: &mut Progress) -> Result<Ended, String> {
    let mut steps = Vec::new();
    let mut outcome = None;
    loop {
        let response = client
            .receive()
            .await
            .map_err(|e| format!("the run was cut off: {e}"))?;
        match response {
            Response::Started { tab_id, goal, .. } => {
                progress
                    .say(format!("running in tab {tab_id}: {goal}"))
                    .await;
            }
            Response::Event { event } => {
                if let TaskEventKind::Acted { outcome: o, .. } = &event.kind {
                    outcome = Some(o.clone());
                }
                let said = match &event.kind {
                    TaskEventKind::Progress { label, .. } => Some(label.clone()),
                    kind => line(event.step, kind),
                };
                if let Some(text) = said {
                    progress.say(text.trim().to_owned()).await;
                    if !matches!(event.kind, TaskEventKind::Progress { .. }) {
                        steps.push(text);
                    }
                }
            }
            // Runs for a program ask the user in the panel; a question here has nobody to
            // answer it.
            Response::Question { .. } => {
                client
                    .send(&Request::Stop)
                    .await
                    .map_err(|e| format!("the run was cut off: {e}"))?;
            }
            Response::Finished { finished } => {
                return Ok(Ended {
                    status: finished.status,
                    answer: finished.answer.unwrap_or_default(),
                    steps,
                    outcome,
                })
            }
            Response::Error { message, .. } => return Err(message),
            other => return Err(format!("the host answered the run unexpectedly: {other:?}")),
        }
    }
}
