//! The side panel: connection state, the goal box, and the activity log.
//!
//! The document skeleton is static HTML (`sidepanel.html`); this module owns
//! the behaviour. It talks only to the background, never to the host directly,
//! so any number of panels share the one host connection.

mod view;

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use itinero_shared::envelope::Envelope;
use itinero_shared::messages::Ping;
use itinero_shared::{ToBrowser, ToHost};
use wasm_bindgen::prelude::*;

use crate::chrome::{self, Port};
use crate::panel_protocol::{FromPanel, ToPanel, PANEL_PORT};
use view::View;

struct Panel {
    port: Option<Port>,
    view: View,
    next_id: u64,
    /// Request id → (what was asked, when, in `performance.now()` ms).
    pending: HashMap<u64, (String, f64)>,
}

pub fn start() -> Result<(), JsValue> {
    let view = View::find()?;
    let panel = Rc::new(RefCell::new(Panel {
        port: None,
        view,
        next_id: 1,
        pending: HashMap::new(),
    }));
    view::on_run(&panel.borrow().view, {
        let panel = panel.clone();
        move || run_goal(&panel)
    })?;
    view::on_reconnect(&panel.borrow().view, {
        let panel = panel.clone();
        move || {
            if let Some(port) = &panel.borrow().port {
                let _ = port.post_message(&chrome::to_js(&FromPanel::Reconnect));
            }
        }
    })?;
    connect(&panel);
    Ok(())
}

fn connect(panel: &Rc<RefCell<Panel>>) {
    let port = chrome::connect(&chrome::to_js(&serde_json::json!({ "name": PANEL_PORT })));
    {
        let p = panel.clone();
        chrome::listen(&port.on_message(), move |msg| on_message(&p, msg));
        let p = panel.clone();
        chrome::listen(&port.on_disconnect(), move |_| {
            // The service worker was stopped or reloaded; a new connect wakes it again.
            p.borrow_mut().port = None;
            p.borrow().view.show_background_lost();
            let p2 = p.clone();
            gloo_timers::callback::Timeout::new(300, move || connect(&p2)).forget();
        });
    }
    panel.borrow_mut().port = Some(port);
}

fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map(|p| p.now())
        .unwrap_or(0.0)
}

fn run_goal(panel: &Rc<RefCell<Panel>>) {
    let mut p = panel.borrow_mut();
    let goal = p.view.goal_text();
    if goal.trim().is_empty() {
        p.view.log("hint", "Type a goal first.");
        return;
    }
    let id = p.next_id;
    p.next_id += 1;
    // Until the agent lands, Run proves the path to the host: the goal travels as a ping and comes back.
    let env = Envelope::new(
        id,
        ToHost::Ping(Ping {
            payload: goal.clone(),
            echo: true,
        }),
    );
    let value: serde_json::Value = serde_json::from_slice(&env.to_json()).unwrap_or_default();
    let Some(port) = p.port.clone() else {
        p.view
            .log("error", "Not connected to the background; retrying.");
        return;
    };
    p.pending.insert(id, (goal.clone(), now_ms()));
    p.view.log("sent", &format!("→ {goal}"));
    if let Err(e) = port.post_message(&chrome::to_js(&FromPanel::ToHost { envelope: value })) {
        p.pending.remove(&id);
        p.view.log("error", &format!("Could not send: {e:?}"));
    }
}

fn on_message(panel: &Rc<RefCell<Panel>>, msg: JsValue) {
    let parsed: ToPanel = match serde_wasm_bindgen::from_value(msg) {
        Ok(m) => m,
        Err(e) => {
            chrome::log(&format!("itinero panel: unreadable message: {e}"));
            return;
        }
    };
    let mut p = panel.borrow_mut();
    match parsed {
        ToPanel::Status { status } => p.view.show_status(&status),
        ToPanel::Host { envelope } => {
            let bytes = serde_json::to_vec(&envelope).unwrap_or_default();
            let env = match Envelope::<ToBrowser>::from_json(&bytes) {
                Ok(env) => env,
                Err((_, e)) => {
                    p.view
                        .log("error", &format!("Unreadable reply from the host: {e}"));
                    return;
                }
            };
            let asked = p.pending.remove(&env.id);
            let elapsed = asked.as_ref().map(|(_, t)| now_ms() - t);
            match env.msg {
                ToBrowser::Pong(pong) => {
                    let text = pong.payload.unwrap_or_default();
                    let ms = elapsed
                        .map(|e| format!(" in {e:.1} ms"))
                        .unwrap_or_default();
                    p.view.log("reply", &format!("← host echoed “{text}”{ms}"));
                }
                ToBrowser::Error(err) => {
                    p.view.log(
                        "error",
                        &format!("Host error ({:?}): {}", err.code, err.message),
                    );
                }
                other => {
                    let kind = itinero_shared::envelope::MessageSet::type_name(&other);
                    p.view.log("info", &format!("Host sent {kind}"));
                }
            }
        }
    }
}
