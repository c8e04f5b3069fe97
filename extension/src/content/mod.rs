//! The content script, running in every frame of every page.
//!
//! For now it announces itself and answers probes (which engine loaded, in
//! which frame); observation and actions build on this entry point.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::chrome;

pub fn start(engine: String) {
    let url = web_sys::window()
        .and_then(|w| w.location().href().ok())
        .unwrap_or_default();
    let top = web_sys::window()
        .and_then(|w| w.top().ok().flatten().map(|t| t == w))
        .unwrap_or(true);
    let probe_engine = engine.clone();
    let listener = Closure::<dyn FnMut(JsValue, JsValue, js_sys::Function) -> bool>::new(
        move |msg: JsValue, _sender: JsValue, respond: js_sys::Function| {
            let kind = js_sys::Reflect::get(&msg, &"kind".into())
                .ok()
                .and_then(|k| k.as_string());
            if kind.as_deref() != Some("probe") {
                return false;
            }
            let reply = serde_json::json!({ "engine": probe_engine, "url": url, "top": top });
            let _ = respond.call1(&JsValue::NULL, &chrome::to_js(&reply));
            false
        },
    );
    chrome::RUNTIME_ON_MESSAGE.with(|e| e.add_listener(listener.as_ref().unchecked_ref()));
    listener.forget();
    let ready = serde_json::json!({ "kind": "content_ready", "engine": engine });
    if let Ok(promise) = chrome::send_message(&chrome::to_js(&ready)) {
        // Nobody may be listening (the worker is starting); that is fine.
        let catch = Closure::<dyn FnMut(JsValue)>::new(|_| {});
        let _ = promise.catch(&catch);
        catch.forget();
    }
}
