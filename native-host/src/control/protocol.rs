//! Requests and responses on the control socket: one JSON object per line each way, one
//! response per request, in order.
//!
//! ```text
//! → {"op":"act","tab_id":7,"action":{"kind":"click","target":{...}}}
//! ← {"kind":"outcome","outcome":{"kind":"done"},"elapsed_ms":162,"round_trip_ms":168.4}
//! ```

use itinero_shared::messages::{Outcome, TabInfo};
use itinero_shared::observation::Observation;
use itinero_shared::{Action, ErrorCode};
use serde::{Deserialize, Serialize};

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
