//! Observing a tab for the host.
//!
//! Today the observation is the top frame's (which walks same-origin iframes in place);
//! cross-origin frames, observed through their own content scripts and stitched in, extend
//! [`observe_tab`].

use itinero_shared::messages::Observe;
use itinero_shared::PROTOCOL_VERSION;
use wasm_bindgen::JsValue;

use super::{deliver, Failure};

/// The tab's observation as the JS object the content script produced: at up to megabytes,
/// it is passed on as it is, never converted to Rust and back.
pub async fn observe_tab(tab_id: i64) -> Result<JsValue, Failure> {
    let msg = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&msg, &"kind".into(), &"observe".into());
    let reply = deliver::send_to_frame(tab_id, 0, &msg).await?;
    // The content script may send it pre-serialised (a string is cheaper to pass between contexts).
    if let Some(text) = reply.as_string() {
        return js_sys::JSON::parse(&text).map_err(|e| {
            Failure::internal(format!(
                "the observation of tab {tab_id} is not valid JSON: {}",
                crate::chrome::error_message(&e)
            ))
        });
    }
    if !reply.is_object() {
        return Err(Failure::internal(format!(
            "the content script of tab {tab_id} sent no observation"
        )));
    }
    Ok(reply)
}

/// The `Observation` envelope, built around the JS observation.
pub fn report(id: u64, req: &Observe, observation: JsValue) -> JsValue {
    let set = |obj: &js_sys::Object, key: &str, value: &JsValue| {
        let _ = js_sys::Reflect::set(obj, &key.into(), value);
    };
    let body = js_sys::Object::new();
    set(&body, "task_id", &(req.task_id as f64).into());
    set(&body, "tab_id", &(req.tab_id as f64).into());
    set(&body, "observation", &observation);
    let env = js_sys::Object::new();
    set(&env, "v", &PROTOCOL_VERSION.into());
    set(&env, "id", &(id as f64).into());
    set(&env, "type", &"Observation".into());
    set(&env, "body", &body);
    env.into()
}
