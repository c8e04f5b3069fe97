//! The agent's [`Browser`] for a task of the session: its observations and actions go through
//! the session's [`BrowserLink`], tagged with the task's id.

use async_trait::async_trait;
use base64::Engine as _;
use itinero_shared::messages::{Outcome, SecretField};
use itinero_shared::observation::Observation;
use itinero_shared::{Action, ErrorCode};

use super::link::{BrowserLink, LinkError};
use crate::agent::run::Browser;

pub struct SessionBrowser {
    pub link: BrowserLink,
    pub task_id: u64,
}

/// What the user should read when the link fails: a closed tab is said plainly (the link's
/// wording is for the CLI, which can list the tabs).
fn task_error(tab: i64, e: LinkError) -> String {
    match e {
        LinkError::Browser {
            code: ErrorCode::NoSuchTab | ErrorCode::TabClosed,
            ..
        } => format!("the tab the task works in ({tab}) was closed"),
        other => other.to_string(),
    }
}

#[async_trait]
impl Browser for SessionBrowser {
    async fn observe(&self, tab: i64) -> Result<Observation, String> {
        self.link
            .observe(self.task_id, tab)
            .await
            .map(|r| r.value.observation)
            .map_err(|e| task_error(tab, e))
    }

    async fn perform(
        &self,
        tab: i64,
        frame: i64,
        action: &Action,
    ) -> Result<(Outcome, u64), String> {
        self.send(tab, frame, action, None).await
    }

    async fn perform_secret(
        &self,
        tab: i64,
        frame: i64,
        action: &Action,
        field: &SecretField,
    ) -> Result<(Outcome, u64), String> {
        self.send(tab, frame, action, Some(field.clone())).await
    }

    async fn capture(&self, tab: i64) -> Result<Vec<u8>, String> {
        let picture = self
            .link
            .capture(self.task_id, tab, crate::store::MAX_PICTURE_BYTES)
            .await
            .map_err(|e| task_error(tab, e))?;
        base64::engine::general_purpose::STANDARD
            .decode(picture.value.jpeg_base64)
            .map_err(|e| format!("the browser's picture of tab {tab} was not base64: {e}"))
    }
}

impl SessionBrowser {
    /// `action` through the link, with the field the page must check when it carries a secret.
    async fn send(
        &self,
        tab: i64,
        frame: i64,
        action: &Action,
        field: Option<SecretField>,
    ) -> Result<(Outcome, u64), String> {
        self.link
            .perform(self.task_id, tab, frame, action.clone(), field)
            .await
            .map(|r| (r.value.outcome, r.value.elapsed_ms))
            .map_err(|e| task_error(tab, e))
    }
}
