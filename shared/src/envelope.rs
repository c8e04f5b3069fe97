//! The envelope every message travels in: `{"v": 1, "id": 7, "type": "Ping", "body": {...}}`.
//!
//! Decoding happens in two stages so that a bad message still yields an error
//! reply that carries the request's id: first the envelope's fixed fields, with the body kept
//! as the raw text it is (skipping it takes no recursion and builds nothing, whatever its depth
//! or size), then the body, once, straight into the type its `type` names. A body nested past
//! the parser's depth limit or shaped wrongly is then an error for its own id.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

/// Version of the wire protocol spoken by this build. A peer sending a newer one gets an error reply.
pub const PROTOCOL_VERSION: u32 = 1;

/// First id of requests the host starts (`Observe`, `Perform`, `ListTabs`); the browser's replies
/// to them echo the id.
///
/// Ids flow both ways on one port, so the two directions get disjoint ranges: the background
/// numbers the requests it forwards from panels from 1 upwards and can never reach this, and
/// the host numbers its own from here. A reply is then unambiguous by its id alone (and by its
/// type: only the host sends `Observe`/`Perform`/`ListTabs`). 2^52 keeps every id exactly
/// representable as a JavaScript number, which the extension reads ids as.
pub const HOST_REQUEST_ID_BASE: u64 = 1 << 52;

/// Whether `id` belongs to a request the host started (see [`HOST_REQUEST_ID_BASE`]).
pub fn is_host_request_id(id: u64) -> bool {
    id >= HOST_REQUEST_ID_BASE
}

/// A message set (one per direction) whose variants are named by the envelope's `type`.
pub trait MessageSet: Sized + Serialize + DeserializeOwned {
    /// Every `type` this set understands, so an unknown one is told apart from a bad body.
    const TYPES: &'static [&'static str];
    /// The wire name of this message.
    fn type_name(&self) -> &'static str;
}

#[derive(Debug, Clone, PartialEq)]
pub struct Envelope<M> {
    pub v: u32,
    /// Correlates a reply with its request; 0 for messages that answer nothing.
    pub id: u64,
    pub msg: M,
}

#[derive(Serialize)]
struct Raw {
    v: u32,
    id: u64,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    body: Value,
}

/// The envelope as read: the body still raw JSON text.
#[derive(Deserialize)]
struct Head<'a> {
    v: u32,
    id: u64,
    #[serde(rename = "type")]
    kind: String,
    #[serde(borrow, default)]
    body: Option<&'a serde_json::value::RawValue>,
}

/// Only the id, when the rest of the envelope cannot be read; everything else is skipped.
#[derive(Deserialize)]
struct IdOnly {
    #[serde(default)]
    id: Option<u64>,
}

#[derive(Debug, Error)]
pub enum EnvelopeError {
    #[error("message is not valid UTF-8 JSON: {0}")]
    Json(String),
    #[error("envelope is malformed (needs v, id, type, body): {0}")]
    Shape(String),
    #[error("protocol version {got} is newer than this side's {ours}; update itinero")]
    NewerVersion { got: u32, ours: u32 },
    #[error("unknown message type {0:?}")]
    UnknownType(String),
    #[error("body of {kind} is invalid: {reason}")]
    Body { kind: String, reason: String },
}

impl<M: MessageSet> Envelope<M> {
    pub fn new(id: u64, msg: M) -> Self {
        Self {
            v: PROTOCOL_VERSION,
            id,
            msg,
        }
    }

    pub fn to_json(&self) -> Vec<u8> {
        let tagged = serde_json::to_value(&self.msg).expect("messages always serialise");
        let (kind, body) = match tagged {
            Value::Object(mut map) => (
                map.remove("type")
                    .and_then(|t| t.as_str().map(str::to_owned))
                    .unwrap_or_default(),
                map.remove("body")
                    .unwrap_or(Value::Object(Default::default())),
            ),
            _ => unreachable!("message sets are adjacently tagged enums"),
        };
        serde_json::to_vec(&Raw {
            v: self.v,
            id: self.id,
            kind,
            body,
        })
        .expect("JSON values always serialise")
    }

    /// Decodes one frame's payload. On failure, returns the id if it could be read,
    /// so the caller can address its error reply.
    pub fn from_json(bytes: &[u8]) -> Result<Self, (Option<u64>, EnvelopeError)> {
        let text =
            std::str::from_utf8(bytes).map_err(|e| (None, EnvelopeError::Json(e.to_string())))?;
        let raw: Head<'_> = serde_json::from_str(text).map_err(|e| {
            let id = serde_json::from_str::<IdOnly>(text).ok().and_then(|i| i.id);
            let error = if e.is_syntax() || e.is_eof() {
                EnvelopeError::Json(e.to_string())
            } else {
                EnvelopeError::Shape(e.to_string())
            };
            (id, error)
        })?;
        if raw.v > PROTOCOL_VERSION {
            return Err((
                Some(raw.id),
                EnvelopeError::NewerVersion {
                    got: raw.v,
                    ours: PROTOCOL_VERSION,
                },
            ));
        }
        if !M::TYPES.contains(&raw.kind.as_str()) {
            return Err((Some(raw.id), EnvelopeError::UnknownType(raw.kind)));
        }
        let body = raw.body.map_or("{}", |b| match b.get() {
            "null" => "{}",
            other => other,
        });
        let kind = serde_json::to_string(&raw.kind).expect("a string always serialises");
        // The tag first, so the body is read once, straight into its type.
        let tagged = format!("{{\"type\":{kind},\"body\":{body}}}");
        let msg = serde_json::from_str(&tagged).map_err(|e| {
            (
                Some(raw.id),
                EnvelopeError::Body {
                    kind: raw.kind.clone(),
                    reason: e.to_string(),
                },
            )
        })?;
        Ok(Envelope {
            v: raw.v,
            id: raw.id,
            msg,
        })
    }
}
