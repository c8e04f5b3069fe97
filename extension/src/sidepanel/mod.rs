//! The side panel: connection state, the goal box, the running task and the activity log.
//!
//! The document skeleton is static HTML (`sidepanel.html`); this module owns
//! the behaviour. It talks only to the background, never to the host directly,
//! so any number of panels share the one host connection. A task is started in
//! the panel's window's active tab; its events, questions and result all come
//! back under the id of the `StartTask` that began it.

mod view;

use std::cell::RefCell;
use std::rc::Rc;

use itinero_shared::envelope::{Envelope, MessageSet};
use itinero_shared::messages::{
    StartTask, StopTask, TaskEventKind, TaskOptions, TaskStatus, UserReply,
};
use itinero_shared::{Action, ToBrowser, ToHost};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::chrome::{self, field, Port};
use crate::panel_protocol::{FromPanel, ToPanel, PANEL_PORT};
use view::View;

/// The task this panel started and is showing.
struct Running {
    /// The panel's id of its `StartTask`: every message of the task comes back with it.
    request_id: u64,
    /// Known from the task's first message.
    task_id: Option<u64>,
    /// The question on screen: (task, question).
    question: Option<(u64, u64)>,
}

struct Panel {
    port: Option<Port>,
    view: View,
    next_id: u64,
    running: Option<Running>,
}

pub fn start() -> Result<(), JsValue> {
    let view = View::find()?;
    let panel = Rc::new(RefCell::new(Panel {
        port: None,
        view,
        next_id: 1,
        running: None,
    }));
    let p = panel.borrow();
    view::on_run(&p.view, {
        let panel = panel.clone();
        move || run_goal(&panel)
    })?;
    view::on_reconnect(&p.view, {
        let panel = panel.clone();
        move || {
            if let Some(port) = &panel.borrow().port {
                let _ = port.post_message(&chrome::to_js(&FromPanel::Reconnect));
            }
        }
    })?;
    view::on_click(&p.view.stop, {
        let panel = panel.clone();
        move || stop(&panel)
    })?;
    view::on_click(&p.view.ask_allow, {
        let panel = panel.clone();
        move || answer(&panel, "yes".into())
    })?;
    view::on_click(&p.view.ask_deny, {
        let panel = panel.clone();
        move || answer(&panel, "no".into())
    })?;
    let send_answer = {
        let panel = panel.clone();
        move || {
            let text = panel.borrow().view.ask_input.value();
            if !text.trim().is_empty() {
                answer(&panel, text);
            }
        }
    };
    let send_answer = Rc::new(send_answer);
    view::on_click(&p.view.ask_send, {
        let f = send_answer.clone();
        move || f()
    })?;
    view::on_enter(p.view.ask_input.unchecked_ref(), move || send_answer())?;
    view::on_click(&p.view.answer_copy, {
        let panel = panel.clone();
        move || copy_answer(&panel)
    })?;
    drop(p);
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

/// Sends a host message; returns its id, or logs why it could not be sent.
fn send(p: &mut Panel, msg: ToHost) -> Option<u64> {
    let id = p.next_id;
    p.next_id += 1;
    let value: serde_json::Value =
        serde_json::from_slice(&Envelope::new(id, msg).to_json()).unwrap_or_default();
    let Some(port) = p.port.clone() else {
        p.view
            .log("error", "Not connected to the background; retrying.");
        return None;
    };
    match port.post_message(&chrome::to_js(&FromPanel::ToHost { envelope: value })) {
        Ok(()) => Some(id),
        Err(e) => {
            p.view.log("error", &format!("Could not send: {e:?}"));
            None
        }
    }
}

fn run_goal(panel: &Rc<RefCell<Panel>>) {
    let goal = {
        let p = panel.borrow();
        if p.running.is_some() {
            p.view.log("hint", "A task is running: stop it first.");
            return;
        }
        let goal = p.view.goal_text();
        if goal.trim().is_empty() {
            p.view.log("hint", "Type a goal first.");
            return;
        }
        goal
    };
    let panel = panel.clone();
    wasm_bindgen_futures::spawn_local(async move {
        let tab = active_tab().await;
        let mut p = panel.borrow_mut();
        let Some(tab_id) = tab else {
            p.view.log(
                "error",
                "No tab to work in: open a web page in this window first.",
            );
            return;
        };
        let start = ToHost::StartTask(StartTask {
            goal: goal.trim().to_owned(),
            tab_id,
            options: TaskOptions::default(),
        });
        if let Some(request_id) = send(&mut p, start) {
            p.running = Some(Running {
                request_id,
                task_id: None,
                question: None,
            });
            p.view.show_running(true);
            p.view.log("sent", &format!("→ {}", goal.trim()));
        }
    });
}

/// The tab to work in: the active tab of the panel's window, or, when the panel itself is open
/// as a tab there, the web page used most recently.
async fn active_tab() -> Option<i64> {
    let query = chrome::to_js(&serde_json::json!({ "currentWindow": true }));
    let tabs = JsFuture::from(chrome::tabs_query(&query).ok()?)
        .await
        .ok()?;
    let pages: Vec<JsValue> = js_sys::Array::from(&tabs)
        .iter()
        .filter(|t| {
            let url = field(t, "url").as_string().unwrap_or_default();
            !url.starts_with("chrome-extension://") && field(t, "id").as_f64().is_some()
        })
        .collect();
    let active = pages
        .iter()
        .find(|t| field(t, "active").as_bool() == Some(true));
    let recent = || {
        pages.iter().max_by(|a, b| {
            let at = |t: &JsValue| field(t, "lastAccessed").as_f64().unwrap_or(0.0);
            at(a).total_cmp(&at(b))
        })
    };
    let tab = active.or_else(recent)?;
    field(tab, "id").as_f64().map(|id| id as i64)
}

fn stop(panel: &Rc<RefCell<Panel>>) {
    let mut p = panel.borrow_mut();
    let Some(task_id) = p.running.as_ref().and_then(|r| r.task_id) else {
        return;
    };
    if send(&mut p, ToHost::StopTask(StopTask { task_id })).is_some() {
        p.view.log("sent", "Stopping…");
    }
}

fn answer(panel: &Rc<RefCell<Panel>>, reply: String) {
    let mut p = panel.borrow_mut();
    let Some((task_id, question_id)) = p.running.as_mut().and_then(|r| r.question.take()) else {
        return;
    };
    p.view.hide_question();
    p.view.log("sent", &format!("You: {reply}"));
    send(
        &mut p,
        ToHost::UserReply(UserReply {
            task_id,
            question_id,
            reply,
        }),
    );
}

fn copy_answer(panel: &Rc<RefCell<Panel>>) {
    let text = panel.borrow().view.answer_text();
    if let Some(clipboard) = web_sys::window().map(|w| w.navigator().clipboard()) {
        let _ = clipboard.write_text(&text);
    }
}

/// `type [3] "wool socks"`: an action in a line of the log.
fn describe(action: &Action) -> String {
    let value = serde_json::to_value(action).unwrap_or_default();
    let mut s = value["kind"].as_str().unwrap_or("?").replace('_', " ");
    if let Some(t) = action.target() {
        s.push_str(&format!(" [{}]", t.index));
        if let Some(name) = t.fingerprint.name.as_deref().filter(|n| !n.is_empty()) {
            s.push_str(&format!(" {name:?}"));
        }
    }
    for key in ["text", "value", "url", "key", "direction", "question"] {
        if let Some(v) = value[key].as_str() {
            s.push_str(&format!(" {v:?}"));
        }
    }
    s
}

fn on_task_message(p: &mut Panel, msg: ToBrowser) {
    match msg {
        ToBrowser::TaskEvent(e) => {
            if let Some(r) = p.running.as_mut() {
                r.task_id.get_or_insert(e.task_id);
            }
            let step = e.step;
            match e.kind {
                TaskEventKind::Started { goal } => p.view.log("step", &format!("Started: {goal}")),
                TaskEventKind::Observed { summary } => {
                    p.view.log("step", &format!("{step}. Saw {summary}"))
                }
                TaskEventKind::Decided {
                    action,
                    reason,
                    source,
                } => {
                    let why = if reason.is_empty() {
                        String::new()
                    } else {
                        format!(" — {reason}")
                    };
                    p.view.log(
                        "decided",
                        &format!("{step}. {}{why} ({source})", describe(&action)),
                    );
                }
                TaskEventKind::Acted {
                    outcome,
                    elapsed_ms,
                } => {
                    let text = serde_json::to_value(&outcome).unwrap_or_default();
                    let kind = text["kind"].as_str().unwrap_or("?").replace('_', " ");
                    p.view
                        .log("step", &format!("{step}. {kind} ({elapsed_ms} ms)"));
                }
                TaskEventKind::Note { text } => p.view.log("note", &text),
                TaskEventKind::Plan { subgoals } => {
                    if let Some(done) = subgoals.iter().rposition(|s| s.done) {
                        p.view.log(
                            "note",
                            &format!(
                                "{step}. Finished sub-goal {}: {}",
                                done + 1,
                                subgoals[done].text
                            ),
                        );
                    } else {
                        p.view
                            .log("note", &format!("Planned {} sub-goals", subgoals.len()));
                    }
                    p.view.show_plan(&subgoals);
                }
            }
        }
        ToBrowser::AskUser(q) => {
            if let Some(r) = p.running.as_mut() {
                r.task_id.get_or_insert(q.task_id);
                r.question = Some((q.task_id, q.question_id));
            }
            p.view.show_question(&q.question, q.kind == "approval");
            p.view.log("note", &format!("Asks: {}", q.question));
        }
        ToBrowser::TaskFinished(f) => {
            p.running = None;
            p.view.show_running(false);
            p.view.hide_question();
            let (status, heading) = match f.status {
                TaskStatus::Succeeded => ("succeeded", "Done"),
                TaskStatus::Failed => ("failed", "Failed"),
                TaskStatus::Stopped => ("stopped", "Stopped"),
                TaskStatus::StepLimit => ("step_limit", "Step limit reached"),
            };
            let answer = f.answer.unwrap_or_default();
            p.view.show_answer(status, heading, &answer);
            p.view.log("reply", &format!("{heading}: {answer}"));
        }
        ToBrowser::Error(err) => {
            // A task's request answered with an error (the host went away mid-run, or refused
            // the task): the run is over, and the result box says why rather than the log alone.
            let was_running = p.running.take().is_some();
            p.view.show_running(false);
            p.view.hide_question();
            p.view.log(
                "error",
                &format!("Host error ({:?}): {}", err.code, err.message),
            );
            if was_running {
                p.view.show_answer(
                    "failed",
                    "Failed",
                    &format!("The task ended: {}", err.message),
                );
            }
        }
        other => p
            .view
            .log("info", &format!("Host sent {}", other.type_name())),
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
            let ours = p.running.as_ref().is_some_and(|r| r.request_id == env.id);
            match env.msg {
                msg if ours => on_task_message(&mut p, msg),
                // Acknowledgements of Stop and of answers: the task's own stream says what follows.
                ToBrowser::TaskEvent(_) => {}
                ToBrowser::Error(err) => p.view.log(
                    "error",
                    &format!("Host error ({:?}): {}", err.code, err.message),
                ),
                other => p
                    .view
                    .log("info", &format!("Host sent {}", other.type_name())),
            }
        }
    }
}
