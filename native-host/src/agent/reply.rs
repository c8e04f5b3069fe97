//! The reply format the model is taught: one flat JSON object per step, e.g.
//! `{"thought": "…", "action": "type", "index": 3, "text": "socks", "submit": true}`.
//!
//! Flat, with element indices rather than fingerprints: small models follow it, and the same
//! shape is the JSON schema given to backends that can constrain their output. Indices are turned
//! into targets (index and fingerprint) only once checked against the observation (`validate`).

use serde::{Deserialize, Serialize};

/// The verbs, as the model writes them.
pub const VERBS: &[&str] = &[
    "click",
    "type",
    "select",
    "check",
    "hover",
    "scroll",
    "press_key",
    "navigate",
    "back",
    "forward",
    "wait",
    "done",
    "ask_user",
];

/// One decision, as read from the model (fields a verb does not use stay empty).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ModelReply {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought: Option<String>,
    pub action: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submit: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modifiers: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    /// The number of the plan's sub-goal this step finished, when there is a plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subgoal_done: Option<u32>,
}

/// The longest thought a constrained model may write (characters): one short sentence, as the
/// prompt asks, so a small model cannot spend its reply on it.
pub const THOUGHT_MAX: u32 = 160;

/// Bounds of the schema's numbers: past them a reply means nothing (the page has no such
/// element, a wait is capped at 10 s, a plan has a handful of sub-goals).
const MAX_INDEX: u32 = 100_000;
const MAX_PAGES: f64 = 50.0;
const MAX_WAIT_MS: u64 = 10_000;
const MAX_SUBGOALS: u32 = 100;

/// The JSON schema of a reply, for backends that constrain output (Ollama's `format`, OpenAI's
/// `response_format`). `indices` are those of the current observation: with it the model
/// cannot name an element that is not there.
pub fn schema(indices: &[u32]) -> serde_json::Value {
    // Every number and string is bounded: under a constraint a small model may otherwise write
    // until the token limit, and a cut reply is no JSON (SmolLM2 once wrote -1.1e60 for a
    // wait's milliseconds).
    let index = if indices.is_empty() {
        serde_json::json!({"type": "integer", "minimum": 0, "maximum": MAX_INDEX})
    } else {
        serde_json::json!({"type": "integer", "enum": indices})
    };
    serde_json::json!({
        "type": "object",
        "properties": {
            "thought": {"type": "string", "maxLength": THOUGHT_MAX},
            "action": {"type": "string", "enum": VERBS},
            "index": index,
            "text": {"type": "string", "maxLength": 500},
            "submit": {"type": "boolean"},
            "value": {"type": "string", "maxLength": 200},
            "checked": {"type": "boolean"},
            "direction": {"type": "string", "enum": ["up", "down", "left", "right"]},
            "pages": {"type": "number", "minimum": -MAX_PAGES, "maximum": MAX_PAGES},
            "key": {"type": "string", "maxLength": 40},
            "modifiers": {"type": "array", "items": {"type": "string", "enum": ["alt", "control", "meta", "shift"]}},
            "url": {"type": "string", "maxLength": 2000},
            "ms": {"type": "integer", "minimum": 0, "maximum": MAX_WAIT_MS},
            "answer": {"type": "string", "maxLength": 800},
            "success": {"type": "boolean"},
            "question": {"type": "string", "maxLength": 300},
            "subgoal_done": {"type": "integer", "minimum": 1, "maximum": MAX_SUBGOALS},
        },
        "required": ["thought", "action"],
        "additionalProperties": false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each integer field's bounds fit the type the reply is read into.
    #[test]
    fn every_number_of_the_schema_is_bounded() {
        for indices in [&[][..], &[0, 4][..]] {
            let s = schema(indices);
            for (name, p) in s["properties"].as_object().unwrap() {
                if !matches!(p["type"].as_str(), Some("integer" | "number")) {
                    continue;
                }
                if p.get("enum").is_some() {
                    continue;
                }
                let (min, max) = (p["minimum"].as_f64(), p["maximum"].as_f64());
                assert!(min.is_some() && max.is_some(), "{name} is unbounded: {p}");
                if p["type"] == "integer" {
                    assert!(
                        min.unwrap() >= 0.0 && max.unwrap() <= f64::from(u32::MAX),
                        "{name}: {p}"
                    );
                }
            }
        }
    }

    #[test]
    fn schema_restricts_indices_to_the_page() {
        let s = schema(&[0, 1, 7]);
        assert_eq!(
            s["properties"]["index"]["enum"],
            serde_json::json!([0, 1, 7])
        );
        assert_eq!(
            s["properties"]["action"]["enum"].as_array().unwrap().len(),
            VERBS.len()
        );
        assert!(
            schemars::Schema::try_from(s).is_ok(),
            "usable as Ollama's format"
        );
        assert!(schema(&[])["properties"]["index"].get("enum").is_none());
        assert_eq!(schema(&[])["properties"]["index"]["maximum"], MAX_INDEX);
    }

    #[test]
    fn replies_round_trip_in_the_taught_form() {
        let r = ModelReply {
            thought: Some("search first".into()),
            action: "type".into(),
            index: Some(3),
            text: Some("socks".into()),
            submit: Some(true),
            ..Default::default()
        };
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(
            json,
            r#"{"thought":"search first","action":"type","index":3,"text":"socks","submit":true}"#
        );
        assert_eq!(serde_json::from_str::<ModelReply>(&json).unwrap(), r);
    }
}
