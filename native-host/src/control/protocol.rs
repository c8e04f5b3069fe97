//! Requests and responses on the control socket: one JSON object per line each way, one
//! response per request, in order.
//!
//! ```text
//! → {"op":"act","tab_id":7,"action":{"kind":"click","target":{...}}}
//! ← {"kind":"outcome","outcome":{"kind":"done"},"elapsed_ms":162,"round_trip_ms":168.4}
//! ```
//!
//! `run`, `run_skill` and `perform` are answered by a stream: `started`, then the task's `event`s and
//! `question`s, then `finished` (or an `error` when it cannot start). While it runs the client
//! may send `reply` (to a question) and `stop`; a client that goes away stops the task. The
//! connection closes after `finished`.

use itinero_shared::messages::{AskUser, Outcome, TabInfo, TaskEvent, TaskFinished};
use itinero_shared::observation::Observation;
use itinero_shared::vault::VaultState;
use itinero_shared::{Action, ErrorCode};
use serde::{Deserialize, Serialize};

/// Text that must not reach a log: the same on the wire, `<hidden>` in `Debug` (requests are
/// logged at debug level).
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Hidden(pub String);

impl std::fmt::Debug for Hidden {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<hidden>")
    }
}

impl Drop for Hidden {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.0);
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
#[allow(clippy::large_enum_variant)] // one request per line, moved once: not worth a box
pub enum Request {
    /// The browser's open tabs.
    Tabs,
    /// A fresh observation of a tab's top frame.
    Observe { tab_id: i64 },
    /// Performs an action in a frame of a tab (0: the top frame).
    Act {
        tab_id: i64,
        #[serde(default)]
        frame_id: i64,
        action: Action,
    },
    /// Runs a goal in a tab, as the panel would; answered by a stream.
    Run {
        goal: String,
        /// The tab to run in; default: the active web page.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tab_id: Option<i64>,
        /// See [`Request::Perform`].
        #[serde(default, skip_serializing_if = "Option::is_none")]
        for_program: Option<String>,
    },
    /// Carries out actions in a tab as a task: each is checked by the guards, a risky one waits
    /// for the user's approval, and a `{{secret:…}}` is filled by auto-login, as for a model's
    /// step; answered by a stream like `run`.
    Perform {
        tab_id: i64,
        actions: Vec<Action>,
        /// The program the task is for (an MCP client), by name: its questions, approvals
        /// included, are asked in the side panel rather than sent to this connection.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        for_program: Option<String>,
    },
    /// Runs a skill of the store in a tab, as the panel would; answered by a stream.
    RunSkill {
        /// The skill's name (or its id, in digits).
        skill: String,
        /// `(name, value)` for each of its parameters.
        #[serde(default)]
        params: Vec<(String, String)>,
        /// The tab to run in; default: the active tab already on the skill's site, else the
        /// active tab.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tab_id: Option<i64>,
        /// See [`Request::Perform`].
        #[serde(default, skip_serializing_if = "Option::is_none")]
        for_program: Option<String>,
    },
    /// Unlocks the host's vault with its passphrase.
    UnlockVault { passphrase: Hidden },
    /// Makes the host forget the vault key.
    LockVault,
    /// Answers the question the running task asked (only during `run` or `run_skill`).
    Reply { question_id: u64, reply: String },
    /// Stops the running task (only during `run` or `run_skill`).
    Stop,
}

/// `round_trip_ms` is measured in the host: from sending the request to the browser to
/// receiving its reply (the browser's own share of an action is `elapsed_ms`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[allow(clippy::large_enum_variant)] // one response per request, moved once: not worth a box
pub enum Response {
    Tabs {
        tabs: Vec<TabInfo>,
        round_trip_ms: f64,
    },
    Observation {
        observation: Observation,
        round_trip_ms: f64,
    },
    Outcome {
        outcome: Outcome,
        /// Measured by the browser's background: from handing the action to the page to the outcome.
        elapsed_ms: u64,
        round_trip_ms: f64,
    },
    /// The vault's state after `unlock_vault` or `lock_vault`.
    Vault {
        state: VaultState,
    },
    /// A `run` or `run_skill` began: the task, the tab it works in and its goal.
    Started {
        task_id: u64,
        tab_id: i64,
        goal: String,
    },
    Event {
        event: TaskEvent,
    },
    Question {
        question: AskUser,
    },
    /// The last line of a `run` or `run_skill`.
    Finished {
        finished: TaskFinished,
    },
    Error {
        message: String,
        /// Set when the browser refused the request (e.g. `no_such_tab`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<ErrorCode>,
    },
}

impl Response {
    pub fn error(message: impl Into<String>) -> Self {
        Response::Error {
            message: message.into(),
            code: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_passphrase_travels_but_never_shows_in_a_log() {
        let req: Request =
            serde_json::from_str(r#"{"op":"unlock_vault","passphrase":"tr0ub4dor&3"}"#).unwrap();
        assert_eq!(format!("{req:?}"), "UnlockVault { passphrase: <hidden> }");
        assert!(serde_json::to_string(&req).unwrap().contains("tr0ub4dor&3"));
    }

    #[test]
    fn wire_form() {
        let req: Request =
            serde_json::from_str(r#"{"op":"act","tab_id":7,"action":{"kind":"wait","ms":5}}"#)
                .unwrap();
        assert_eq!(
            req,
            Request::Act {
                tab_id: 7,
                frame_id: 0,
                action: Action::Wait { ms: 5 }
            }
        );
        assert_eq!(
            serde_json::to_string(&Request::Tabs).unwrap(),
            r#"{"op":"tabs"}"#
        );
        let resp = Response::Outcome {
            outcome: Outcome::Done,
            elapsed_ms: 3,
            round_trip_ms: 4.5,
        };
        let json = serde_json::to_value(&resp).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"kind":"outcome","outcome":{"kind":"done"},"elapsed_ms":3,"round_trip_ms":4.5})
        );
        assert_eq!(serde_json::from_value::<Response>(json).unwrap(), resp);
    }
}
