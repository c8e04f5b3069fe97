//! The background service worker: owner of the one port to the native host.
//!
//! Panels and content scripts come and go; the host connection outlives them.
//! The background rewrites request ids so replies find the panel that asked,
//! reconnects with backoff when the host dies, and tells every panel the state.
//! It also carries out the host's own requests (observe, act, list tabs; see
//! `host_requests`) and answers them on the port they came through.

mod backoff;
mod host_requests;
mod router;
mod stitch;

use std::cell::RefCell;
use std::rc::Rc;

use itinero_shared::envelope::Envelope;
use itinero_shared::messages::{ErrorReply, Hello};
use itinero_shared::{ErrorCode, ToBrowser, ToHost, HOST_NAME, PROTOCOL_VERSION};
use wasm_bindgen::prelude::*;

use crate::chrome::{self, field, Port};
use crate::panel_protocol::{ConnectionState, HostStatus, ToPanel, PANEL_PORT};
use backoff::Backoff;
use router::Router;

struct Background {
    host: Option<Port>,
    /// Bumped on every connection so callbacks of a dead port are ignored.
    generation: u32,
    status: HostStatus,
    backoff: Backoff,
    panels: Vec<(u32, Port)>,
    next_panel: u32,
    router: Router,
    retry_pending: bool,
}

thread_local! {
    static STATE: RefCell<Option<Rc<RefCell<Background>>>> = const { RefCell::new(None) };
}

fn state() -> Rc<RefCell<Background>> {
    STATE.with(|s| {
        s.borrow_mut()
            .get_or_insert_with(|| {
                Rc::new(RefCell::new(Background {
                    host: None,
                    generation: 0,
                    status: HostStatus {
                        state: ConnectionState::Connecting,
                        host_version: None,
                        pid: None,
                        capabilities: Vec::new(),
                        error: None,
                        retry_in_ms: None,
                        attempts: 0,
                    },
                    backoff: Backoff::default(),
                    panels: Vec::new(),
                    next_panel: 1,
                    router: Router::default(),
                    retry_pending: false,
                }))
            })
            .clone()
    })
}

pub fn start() {
    let st = state();
    if st.borrow().host.is_none() && st.borrow().generation == 0 {
        connect(&st);
    }
}

fn broadcast(bg: &Background, msg: &ToPanel) {
    broadcast_js(bg, &chrome::to_js(msg));
}

fn broadcast_js(bg: &Background, js: &JsValue) {
    for (_, port) in &bg.panels {
        let _ = port.post_message(js);
    }
}

/// Answers one panel request with an `Error` envelope (host gone, send failed, bad request).
fn send_error(bg: &Background, panel: u32, original: u64, message: String) {
    let Some((_, port)) = bg.panels.iter().find(|(id, _)| *id == panel) else {
        return;
    };
    let reply = Envelope::new(
        original,
        ToBrowser::Error(ErrorReply {
            code: ErrorCode::Internal,
            message,
        }),
    );
    let envelope = serde_json::from_slice(&reply.to_json()).unwrap_or_default();
    let _ = port.post_message(&chrome::to_js(&ToPanel::Host { envelope }));
}

fn set_status(st: &Rc<RefCell<Background>>, update: impl FnOnce(&mut HostStatus)) {
    let mut bg = st.borrow_mut();
    update(&mut bg.status);
    let msg = ToPanel::Status {
        status: bg.status.clone(),
    };
    broadcast(&bg, &msg);
}

fn send_to_host(bg: &Background, env: &Envelope<ToHost>) -> Result<(), String> {
    let port = bg.host.as_ref().ok_or("the native host is not connected")?;
    let text = String::from_utf8(env.to_json()).map_err(|e| e.to_string())?;
    let value = js_sys::JSON::parse(&text).map_err(|e| format!("{e:?}"))?;
    port.post_message(&value)
        .map_err(|e| format!("could not send to the host: {e:?}"))
}

fn connect(st: &Rc<RefCell<Background>>) {
    let generation = {
        let mut bg = st.borrow_mut();
        bg.generation += 1;
        bg.retry_pending = false;
        bg.status.attempts += 1;
        bg.generation
    };
    set_status(st, |s| {
        s.state = ConnectionState::Connecting;
        s.retry_in_ms = None;
    });
    let port = match chrome::connect_native(HOST_NAME) {
        Ok(port) => port,
        Err(e) => {
            on_host_gone(st, generation, format!("{e:?}"));
            return;
        }
    };
    {
        let st2 = st.clone();
        chrome::listen(&port.on_message(), move |msg| {
            on_host_message(&st2, generation, msg)
        });
        let st3 = st.clone();
        chrome::listen(&port.on_disconnect(), move |_| {
            let why = chrome::last_error()
                .unwrap_or_else(|| "the native host closed the connection".into());
            on_host_gone(&st3, generation, why);
        });
    }
    let hello = Envelope::new(
        0,
        ToHost::Hello(Hello {
            protocol: PROTOCOL_VERSION,
            extension_version: chrome::extension_version(),
            browser: user_agent(),
        }),
    );
    let mut bg = st.borrow_mut();
    bg.host = Some(port);
    if let Err(e) = send_to_host(&bg, &hello) {
        chrome::log(&format!("itinero: hello failed: {e}"));
    }
}

fn user_agent() -> String {
    js_sys::Reflect::get(&js_sys::global(), &"navigator".into())
        .and_then(|n| js_sys::Reflect::get(&n, &"userAgent".into()))
        .ok()
        .and_then(|u| u.as_string())
        .unwrap_or_default()
}

/// A shallow copy of an envelope with another id: bodies (up to 64 MiB) are never re-encoded.
fn with_id(envelope: &JsValue, id: u64) -> JsValue {
    let copy = js_sys::Object::assign(&js_sys::Object::new(), envelope.unchecked_ref());
    let _ = js_sys::Reflect::set(
        &copy,
        &JsValue::from_str("id"),
        &JsValue::from_f64(id as f64),
    );
    copy.into()
}

/// Wraps a host envelope for a panel without converting it to Rust and back.
fn to_panel_host(envelope: JsValue) -> JsValue {
    let out = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&out, &"kind".into(), &"host".into());
    let _ = js_sys::Reflect::set(&out, &"envelope".into(), &envelope);
    out.into()
}

fn on_host_message(st: &Rc<RefCell<Background>>, generation: u32, msg: JsValue) {
    if st.borrow().generation != generation {
        return;
    }
    let kind = field(&msg, "type").as_string().unwrap_or_default();
    let Some(id) = field(&msg, "id").as_f64().map(|id| id as u64) else {
        chrome::log("itinero: message from the host without an id; ignored");
        return;
    };
    if kind == "HelloAck" {
        let text = js_sys::JSON::stringify(&msg)
            .ok()
            .and_then(|s| s.as_string())
            .unwrap_or_default();
        let ack = match Envelope::<ToBrowser>::from_json(text.as_bytes()) {
            Ok(Envelope {
                msg: ToBrowser::HelloAck(ack),
                ..
            }) => ack,
            Ok(_) | Err(_) => {
                chrome::log("itinero: unreadable HelloAck from the host");
                return;
            }
        };
        st.borrow_mut().backoff.reset();
        set_status(st, |s| {
            s.state = ConnectionState::Connected;
            s.host_version = Some(ack.host_version);
            s.pid = Some(ack.pid);
            s.capabilities = ack.capabilities;
            s.error = None;
            s.retry_in_ms = None;
        });
        return;
    }
    if host_requests::is_host_request(&kind) {
        let st = st.clone();
        host_requests::handle(&msg, move |reply| reply_to_host(&st, generation, &reply));
        return;
    }
    // A task's events and questions stream under its StartTask's id until TaskFinished (or an error).
    let more = matches!(kind.as_str(), "TaskEvent" | "AskUser");
    let routed = st.borrow_mut().router.route(id, more);
    let bg = st.borrow();
    match routed {
        Some((panel, original_id)) => {
            if let Some((_, port)) = bg.panels.iter().find(|(p, _)| *p == panel) {
                let _ = port.post_message(&to_panel_host(with_id(&msg, original_id)));
            }
        }
        None => broadcast_js(&bg, &to_panel_host(msg)),
    }
}

/// Answers a host request on the port it came through. A reply for a port that has since
/// died is dropped: the host that asked is gone, and its successor never asked.
fn reply_to_host(st: &Rc<RefCell<Background>>, generation: u32, reply: &JsValue) {
    let bg = st.borrow();
    if bg.generation != generation {
        return;
    }
    if let Some(port) = &bg.host {
        if let Err(e) = port.post_message(reply) {
            chrome::log(&format!("itinero: could not answer the host: {e:?}"));
        }
    }
}

fn on_host_gone(st: &Rc<RefCell<Background>>, generation: u32, why: String) {
    if st.borrow().generation != generation {
        return;
    }
    let delay = {
        let mut bg = st.borrow_mut();
        bg.host = None;
        // Requests in flight will never be answered: tell their panels now.
        let orphans = bg.router.drain();
        for (panel, original_id) in orphans {
            send_error(
                &bg,
                panel,
                original_id,
                format!("the native host disconnected: {why}"),
            );
        }
        bg.retry_pending = true;
        bg.backoff.next_delay()
    };
    chrome::log(&format!(
        "itinero: native host disconnected ({why}); retrying in {delay} ms"
    ));
    set_status(st, |s| {
        s.state = ConnectionState::Disconnected;
        s.error = Some(why);
        s.retry_in_ms = Some(delay);
        s.pid = None;
    });
    let st2 = st.clone();
    gloo_timers::callback::Timeout::new(delay, move || {
        let due = {
            let bg = st2.borrow();
            bg.generation == generation && bg.retry_pending
        };
        if due {
            connect(&st2);
        }
    })
    .forget();
}

pub fn on_connect(port: Port) {
    if port.name() != PANEL_PORT {
        return;
    }
    let st = state();
    if st.borrow().generation == 0 {
        connect(&st);
    }
    let panel_id = {
        let mut bg = st.borrow_mut();
        let id = bg.next_panel;
        bg.next_panel += 1;
        bg.panels.push((id, port.clone()));
        id
    };
    {
        let st2 = st.clone();
        chrome::listen(&port.on_message(), move |msg| {
            on_panel_message(&st2, panel_id, msg)
        });
        let st3 = st.clone();
        chrome::listen(&port.on_disconnect(), move |_| {
            let mut bg = st3.borrow_mut();
            bg.panels.retain(|(id, _)| *id != panel_id);
            bg.router.forget_panel(panel_id);
        });
    }
    let status = ToPanel::Status {
        status: st.borrow().status.clone(),
    };
    let _ = port.post_message(&chrome::to_js(&status));
}

fn reply_error(st: &Rc<RefCell<Background>>, panel: u32, original: u64, message: String) {
    send_error(&st.borrow(), panel, original, message);
}

/// Panel requests are forwarded as the JS objects they are, with only the id
/// rewritten: the host validates every message anyway, and decoding a 1 MiB
/// observation into Rust and back here would only add copies.
fn on_panel_message(st: &Rc<RefCell<Background>>, panel: u32, msg: JsValue) {
    match field(&msg, "kind").as_string().as_deref() {
        Some("reconnect") => {
            let connected = st.borrow().host.is_some();
            if !connected {
                connect(st);
            }
        }
        Some("to_host") => {
            let envelope = field(&msg, "envelope");
            let Some(original) = field(&envelope, "id").as_f64().map(|id| id as u64) else {
                return reply_error(st, panel, 0, "the envelope has no numeric id".into());
            };
            let stream = field(&envelope, "type").as_string().as_deref() == Some("StartTask");
            let mut bg = st.borrow_mut();
            let host_id = bg.router.register(panel, original, stream);
            let sent = match &bg.host {
                Some(port) => port
                    .post_message(&with_id(&envelope, host_id))
                    .map_err(|e| format!("could not send to the host: {e:?}")),
                None => Err("the native host is not connected".to_owned()),
            };
            if let Err(e) = sent {
                bg.router.take(host_id);
                drop(bg);
                reply_error(st, panel, original, e);
            }
        }
        other => chrome::log(&format!("itinero: unknown panel message kind {other:?}")),
    }
}

/// One-off messages from content scripts (readiness reports for now).
pub fn on_message(message: JsValue, _sender: JsValue) {
    let kind = js_sys::Reflect::get(&message, &"kind".into())
        .ok()
        .and_then(|k| k.as_string());
    if kind.as_deref() == Some("content_ready") {
        let engine = js_sys::Reflect::get(&message, &"engine".into())
            .ok()
            .and_then(|k| k.as_string())
            .unwrap_or_default();
        chrome::log(&format!("itinero: content script ready ({engine})"));
    }
}
