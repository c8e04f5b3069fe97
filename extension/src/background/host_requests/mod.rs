//! Requests the host starts: observe a tab, perform an action in one of its frames, list tabs,
//! picture a tab.
//!
//! The host numbers these from `HOST_REQUEST_ID_BASE`, far above the ids the router gives
//! panel requests, and only the host sends these types, so they are told apart by type here
//! and by id in the host. Each runs as its own task (an action takes as long as its page
//! needs to settle) and ends in exactly one reply carrying the request's id: the result, or
//! an `Error` that says what went wrong. Never silence: the host would only see a timeout.

mod capture;
mod deliver;
mod observe;
mod perform;
mod tabs;
mod wait;

use itinero_shared::envelope::{Envelope, MessageSet};
use itinero_shared::messages::{ActionOutcomeReport, Captured, ErrorReply, TabList};
use itinero_shared::{ErrorCode, ToBrowser, ToHost};
use wasm_bindgen::prelude::*;

/// Why a host request could not be carried out; becomes the `Error` reply.
#[derive(Debug)]
pub struct Failure {
    pub code: ErrorCode,
    pub message: String,
}

impl Failure {
    fn internal(message: String) -> Self {
        Self {
            code: ErrorCode::Internal,
            message,
        }
    }
}

/// Whether a host message of this type is a request for the background to carry out.
pub fn is_host_request(kind: &str) -> bool {
    matches!(kind, "Observe" | "Perform" | "ListTabs" | "Capture")
}

/// Carries out one host request; `reply` posts the answer (a JS envelope) to the host that asked.
pub fn handle(msg: &JsValue, reply: impl FnOnce(JsValue) + 'static) {
    // Host requests are small: decoding them into Rust costs nothing worth avoiding.
    let text = js_sys::JSON::stringify(msg)
        .ok()
        .and_then(|s| s.as_string())
        .unwrap_or_default();
    let env = match Envelope::<ToBrowser>::from_json(text.as_bytes()) {
        Ok(env) => env,
        Err((id, e)) => {
            let message = format!("the background could not read the host's request: {e}");
            return reply(to_js(&error(id.unwrap_or(0), ErrorCode::BadBody, message)));
        }
    };
    wasm_bindgen_futures::spawn_local(async move {
        let id = env.id;
        let answer = match env.msg {
            ToBrowser::Observe(req) => observe::observe_tab(req.tab_id)
                .await
                .map(|observation| observe::report(id, &req, observation)),
            ToBrowser::Perform(req) => perform::perform(&req).await.map(|(outcome, elapsed_ms)| {
                to_js(&Envelope::new(
                    id,
                    ToHost::ActionOutcome(ActionOutcomeReport {
                        task_id: req.task_id,
                        tab_id: req.tab_id,
                        outcome,
                        elapsed_ms,
                    }),
                ))
            }),
            ToBrowser::ListTabs(_) => tabs::list()
                .await
                .map(|tabs| to_js(&Envelope::new(id, ToHost::TabList(TabList { tabs })))),
            ToBrowser::Capture(req) => {
                capture::capture(req.tab_id, req.max_bytes)
                    .await
                    .map(|jpeg_base64| {
                        to_js(&Envelope::new(
                            id,
                            ToHost::Captured(Captured {
                                tab_id: req.tab_id,
                                jpeg_base64,
                            }),
                        ))
                    })
            }
            other => Err(Failure::internal(format!(
                "{} is not a request the background carries out",
                other.type_name()
            ))),
        };
        reply(answer.unwrap_or_else(|f| to_js(&error(id, f.code, f.message))));
    });
}

fn error(id: u64, code: ErrorCode, message: String) -> Envelope<ToHost> {
    Envelope::new(id, ToHost::Error(ErrorReply { code, message }))
}

/// An envelope as the plain JS object a port posts.
fn to_js(env: &Envelope<ToHost>) -> JsValue {
    let text = String::from_utf8(env.to_json()).expect("JSON is UTF-8");
    js_sys::JSON::parse(&text).expect("an envelope is valid JSON")
}
