//! The content script, running in every frame of every page.
//!
//! It answers the background: `probe` (which engine loaded, in which frame) and
//! `observe` (the pruned, occlusion-aware tree of this frame, see `observe`).

mod dom;
mod observe;
mod occlusion;
mod semantics;

use std::cell::RefCell;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::chrome;

thread_local! {
    static OBSERVER: RefCell<observe::Observer> = RefCell::new(observe::Observer::default());
}

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
            let reply = match kind.as_deref() {
                Some("probe") => chrome::to_js(
                    &serde_json::json!({ "engine": probe_engine, "url": url, "top": top }),
                ),
                Some("observe") => {
                    let Some(win) = web_sys::window() else {
                        return false;
                    };
                    let obs = OBSERVER.with(|o| o.borrow_mut().observe(&win));
                    chrome::to_js(&obs)
                }
                _ => return false,
            };
            let _ = respond.call1(&JsValue::NULL, &reply);
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
