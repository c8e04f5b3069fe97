//! The content script, running in every frame of every page.
//!
//! It answers the background: `probe` (which engine loaded, in which frame),
//! `observe` (the pruned, occlusion-aware tree of this frame, see `observe`) and
//! `act` (perform an action on it and report the outcome, see `act`).

mod act;
mod dom;
mod form_target;
mod navigation;
mod observe;
mod occlusion;
mod overlap;
mod paint;
mod scrolling;
mod secret_field;
mod semantics;

use std::cell::RefCell;
use std::rc::Rc;

use itinero_shared::messages::Outcome;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::chrome;
use crate::frame_protocol::{ObserveFrame, OBSERVE_FRAME};

thread_local! {
    static OBSERVER: Rc<RefCell<observe::Observer>> = Rc::new(RefCell::new(observe::Observer::default()));
}

/// Handles one message; `true` means the reply comes later (the channel must stay open).
fn on_message(msg: JsValue, respond: js_sys::Function, engine: &str, url: &str, top: bool) -> bool {
    let kind = js_sys::Reflect::get(&msg, &"kind".into())
        .ok()
        .and_then(|k| k.as_string());
    let reply = match kind.as_deref() {
        Some("probe") => {
            // Where the frame is now and how big its viewport is: the background matches
            // cross-origin iframes to frames by these.
            let win = web_sys::window();
            let now = win
                .as_ref()
                .and_then(|w| w.location().href().ok())
                .unwrap_or_default();
            let size = |v: Option<Result<JsValue, JsValue>>| {
                v.and_then(Result::ok)
                    .and_then(|v| v.as_f64())
                    .unwrap_or(0.0)
            };
            let viewport = (
                size(win.as_ref().map(|w| w.inner_width())),
                size(win.as_ref().map(|w| w.inner_height())),
            );
            chrome::to_js(&serde_json::json!({
                "engine": engine, "url": url, "top": top, "location": now, "viewport": viewport,
            }))
        }
        Some("observe") => {
            let Some(obs) = observe_top() else {
                return false;
            };
            to_js_fast(&obs)
        }
        Some(OBSERVE_FRAME) => {
            let Some(win) = web_sys::window() else {
                return false;
            };
            // The background says where this frame sits when it is not the top one.
            let frame = js_sys::Reflect::get(&msg, &"frame".into())
                .ok()
                .filter(|f| !f.is_undefined() && !f.is_null())
                .and_then(|f| serde_wasm_bindgen::from_value::<ObserveFrame>(f).ok())
                .unwrap_or_default();
            let (obs, remote_frames) = OBSERVER.with(|o| {
                let mut o = o.borrow_mut();
                let obs = o.observe(&win, &frame);
                (obs, o.remote_frames())
            });
            let reply = js_sys::Object::new();
            let _ = js_sys::Reflect::set(&reply, &"observation".into(), &to_js_fast(&obs));
            let _ = js_sys::Reflect::set(
                &reply,
                &"remote_frames".into(),
                &f64::from(remote_frames).into(),
            );
            reply.into()
        }
        Some("act") => {
            let action = js_sys::Reflect::get(&msg, &"action".into())
                .ok()
                .map(serde_wasm_bindgen::from_value::<itinero_shared::Action>);
            // A saved secret's field check: unreadable means refuse, never type unchecked.
            let secret = js_sys::Reflect::get(&msg, &"secret".into())
                .ok()
                .filter(|v| !v.is_undefined() && !v.is_null())
                .map(serde_wasm_bindgen::from_value::<itinero_shared::messages::SecretField>);
            let observer = OBSERVER.with(Rc::clone);
            let Some(win) = web_sys::window() else {
                return false;
            };
            let watch = Rc::new(navigation::NavigationWatch::start(&win));
            let left = watch.left();
            let acting = wasm_bindgen_futures::future_to_promise(async move {
                let outcome = match action {
                    Some(Ok(action)) => match secret {
                        None => act::perform(&observer, action, None).await,
                        Some(Ok(field)) => act::perform(&observer, action, Some(&field)).await,
                        Some(Err(e)) => Outcome::ValueRejected {
                            reason: format!(
                                "the saved secret's field check could not be read: {e}"
                            ),
                        },
                    },
                    Some(Err(e)) => Outcome::Failed {
                        reason: format!("the action could not be read: {e}"),
                    },
                    None => Outcome::Failed {
                        reason: "the message has no action".into(),
                    },
                };
                // A same-document navigation (pushState) leaves the page in place: say where it went.
                let outcome = match (outcome, watch.destination()) {
                    (Outcome::Done | Outcome::NeverSettled { .. }, Some(url)) => {
                        Outcome::Navigated { url }
                    }
                    (outcome, _) => outcome,
                };
                drop(watch);
                Ok(chrome::to_js(&outcome))
            });
            // Actions take time (settling): answer asynchronously, keeping the channel open.
            // Whichever comes first answers: the outcome, or the page being left mid-action.
            let race = js_sys::Promise::race(&js_sys::Array::of2(&acting, &left));
            wasm_bindgen_futures::spawn_local(async move {
                if let Ok(outcome) = wasm_bindgen_futures::JsFuture::from(race).await {
                    let _ = respond.call1(&JsValue::NULL, &outcome);
                }
            });
            return true;
        }
        _ => return false,
    };
    let _ = respond.call1(&JsValue::NULL, &reply);
    false
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
            on_message(msg, respond, &probe_engine, &url, top)
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

/// This frame's observation, placed as the top frame; `None` where there is no window.
fn observe_top() -> Option<itinero_shared::observation::Observation> {
    let win = web_sys::window()?;
    Some(OBSERVER.with(|o| o.borrow_mut().observe(&win, &ObserveFrame::default())))
}

/// `observe_top` as JSON; empty where there is no window.
pub fn observe_page() -> String {
    observe_top()
        .and_then(|obs| serde_json::to_string(&obs).ok())
        .unwrap_or_default()
}

/// One JSON string parsed by V8 beats a JS object built field by field across the boundary.
fn to_js_fast<T: serde::Serialize>(value: &T) -> JsValue {
    serde_json::to_string(value)
        .ok()
        .and_then(|json| js_sys::JSON::parse(&json).ok())
        .unwrap_or(JsValue::NULL)
}
