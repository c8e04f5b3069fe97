//! The Run page's DOM (goal, task, questions, result, activity log), and the helpers every
//! page's view uses to find and build elements.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Document, Element, HtmlInputElement, HtmlTextAreaElement, KeyboardEvent};

use crate::panel_protocol::{ConnectionState, HostStatus};
use itinero_shared::messages::Subgoal;

pub struct View {
    document: Document,
    status: Element,
    version: Element,
    pid: Element,
    error: Element,
    reconnect: Element,
    goal: HtmlTextAreaElement,
    run: Element,
    pub stop: Element,
    log: Element,
    plan: Element,
    plan_list: Element,
    progress: Element,
    progress_label: Element,
    progress_bar: Element,
    ask: Element,
    ask_text: Element,
    ask_approval: Element,
    ask_question: Element,
    pub ask_input: HtmlInputElement,
    ask_remember_row: Element,
    ask_remember: HtmlInputElement,
    pub ask_allow: Element,
    pub ask_always: Element,
    pub ask_deny: Element,
    pub ask_send: Element,
    answer: Element,
    answer_status: Element,
    answer_text: Element,
    pub answer_copy: Element,
}

pub fn by_id(document: &Document, id: &str) -> Result<Element, JsValue> {
    document
        .get_element_by_id(id)
        .ok_or_else(|| JsValue::from_str(&format!("sidepanel.html lacks #{id}")))
}

/// The panel's document.
pub fn document() -> Result<Document, JsValue> {
    web_sys::window()
        .and_then(|w| w.document())
        .ok_or_else(|| "no document".into())
}

/// A new `<tag class=…>text</tag>` (no class when `class` is empty, no text when `text` is).
pub fn el(document: &Document, tag: &str, class: &str, text: &str) -> Element {
    let e = document
        .create_element(tag)
        .expect("creating an element with a valid tag name");
    if !class.is_empty() {
        let _ = e.set_attribute("class", class);
    }
    if !text.is_empty() {
        e.set_text_content(Some(text));
    }
    e
}

/// Shows or hides `el` (its `hidden` attribute).
pub fn show(el: &Element, shown: bool) {
    let _ = el.toggle_attribute_with_force("hidden", !shown);
}

/// Writes a status line: `kind` is its class (`error`, `ok`, or none).
pub fn set_status(el: &Element, text: &str, kind: &str) {
    el.set_text_content(Some(text));
    let _ = el.set_attribute("class", &format!("hint {kind}"));
}

/// Moves the keyboard focus to `el`.
pub fn focus(el: &Element) {
    if let Some(e) = el.dyn_ref::<web_sys::HtmlElement>() {
        let _ = e.focus();
    }
}

impl View {
    pub fn find() -> Result<Self, JsValue> {
        let document = document()?;
        Ok(Self {
            status: by_id(&document, "status")?,
            version: by_id(&document, "host-version")?,
            pid: by_id(&document, "host-pid")?,
            error: by_id(&document, "host-error")?,
            reconnect: by_id(&document, "reconnect")?,
            goal: by_id(&document, "goal")?.dyn_into()?,
            run: by_id(&document, "run")?,
            stop: by_id(&document, "stop")?,
            log: by_id(&document, "log")?,
            plan: by_id(&document, "plan")?,
            plan_list: by_id(&document, "plan-list")?,
            progress: by_id(&document, "progress")?,
            progress_label: by_id(&document, "progress-label")?,
            progress_bar: by_id(&document, "progress-bar")?,
            ask: by_id(&document, "ask")?,
            ask_text: by_id(&document, "ask-text")?,
            ask_approval: by_id(&document, "ask-approval")?,
            ask_question: by_id(&document, "ask-question")?,
            ask_input: by_id(&document, "ask-input")?.dyn_into()?,
            ask_remember_row: by_id(&document, "ask-remember-row")?,
            ask_remember: by_id(&document, "ask-remember")?.dyn_into()?,
            ask_allow: by_id(&document, "ask-allow")?,
            ask_always: by_id(&document, "ask-always")?,
            ask_deny: by_id(&document, "ask-deny")?,
            ask_send: by_id(&document, "ask-send")?,
            answer: by_id(&document, "answer")?,
            answer_status: by_id(&document, "answer-status")?,
            answer_text: by_id(&document, "answer-text")?,
            answer_copy: by_id(&document, "answer-copy")?,
            document,
        })
    }

    pub fn goal_text(&self) -> String {
        self.goal.value()
    }

    pub fn set_goal(&self, goal: &str) {
        self.goal.set_value(goal);
    }

    pub fn show_status(&self, s: &HostStatus) {
        let (label, state) = match s.state {
            ConnectionState::Connected => ("connected", "connected"),
            ConnectionState::Connecting => ("connecting…", "connecting"),
            ConnectionState::Disconnected => ("disconnected", "disconnected"),
        };
        self.status.set_text_content(Some(label));
        let _ = self.status.set_attribute("data-state", state);
        self.version.set_text_content(
            s.host_version
                .as_ref()
                .map(|v| format!("host {v}"))
                .as_deref(),
        );
        self.pid
            .set_text_content(s.pid.map(|p| format!("pid {p}")).as_deref());
        let error = match (&s.error, s.retry_in_ms, s.state) {
            (Some(e), Some(ms), ConnectionState::Disconnected) => {
                format!("{e} — retrying in {:.1} s", f64::from(ms) / 1000.0)
            }
            (Some(e), _, ConnectionState::Disconnected) => e.clone(),
            _ => String::new(),
        };
        self.error.set_text_content(Some(&error));
        let _ = self
            .reconnect
            .toggle_attribute_with_force("hidden", s.state != ConnectionState::Disconnected);
    }

    pub fn show_background_lost(&self) {
        self.status.set_text_content(Some("connecting…"));
        let _ = self.status.set_attribute("data-state", "connecting");
    }

    /// While a task runs, Stop shows and Run does not.
    pub fn show_running(&self, running: bool) {
        let _ = self.stop.toggle_attribute_with_force("hidden", !running);
        let _ = self.run.toggle_attribute_with_force("hidden", running);
        show(&self.progress, false);
        if running {
            let _ = self.answer.toggle_attribute_with_force("hidden", true);
            let _ = self.plan.toggle_attribute_with_force("hidden", true);
            self.plan_list.set_text_content(None);
        }
    }

    /// The task's sub-goals, finished ones struck through and the next one in bold.
    pub fn show_plan(&self, subgoals: &[Subgoal]) {
        self.plan_list.set_text_content(None);
        let current = subgoals.iter().position(|s| !s.done);
        for (i, sub) in subgoals.iter().enumerate() {
            let Ok(li) = self.document.create_element("li") else {
                continue;
            };
            li.set_text_content(Some(&sub.text));
            if sub.done {
                let _ = li.set_attribute("class", "done");
                let _ = li.set_attribute("aria-label", &format!("{} (done)", sub.text));
            } else if Some(i) == current {
                let _ = li.set_attribute("class", "current");
                let _ = li.set_attribute("aria-current", "step");
            }
            let _ = self.plan_list.append_child(&li);
        }
        let _ = self
            .plan
            .toggle_attribute_with_force("hidden", subgoals.is_empty());
    }

    /// How far a long wait inside a step has got: a bar filled `done` of `total`, or one that
    /// only moves when `total` is 0 (no measure).
    pub fn show_progress(&self, label: &str, done: u64, total: u64) {
        self.progress_label.set_text_content(Some(label));
        if total == 0 {
            let _ = self.progress_bar.remove_attribute("value");
            let _ = self.progress_bar.remove_attribute("max");
        } else {
            let _ = self.progress_bar.set_attribute("max", &total.to_string());
            let _ = self
                .progress_bar
                .set_attribute("value", &done.min(total).to_string());
        }
        show(&self.progress, true);
    }

    /// The wait is over: the step decided, asked, or the task ended.
    pub fn hide_progress(&self) {
        show(&self.progress, false);
    }

    /// Shows the agent's question: Allow/Deny for an approval (and "Always allow on this site"
    /// when the host offers it), a text box otherwise.
    /// A question of the model's says so, and offers to keep the answer as a lesson for the
    /// site (unticked: a page may have steered the question).
    pub fn show_question(&self, text: &str, approval: bool, can_always: bool, from_model: bool) {
        let shown = if from_model {
            format!("The model asks (a page may have led it to): {text}")
        } else {
            text.to_owned()
        };
        self.ask_text.set_text_content(Some(&shown));
        show(&self.ask_remember_row, !approval);
        self.ask_remember.set_checked(false);
        let _ = self
            .ask_approval
            .toggle_attribute_with_force("hidden", !approval);
        let _ = self
            .ask_question
            .toggle_attribute_with_force("hidden", approval);
        show(&self.ask_always, approval && can_always);
        let _ = self.ask.toggle_attribute_with_force("hidden", false);
        self.ask_input.set_value("");
        let focus: &web_sys::HtmlElement = if approval {
            self.ask_allow.unchecked_ref()
        } else {
            self.ask_input.unchecked_ref()
        };
        let _ = focus.focus();
    }

    /// Whether the user ticked "Remember this answer for this site".
    pub fn remember_answer(&self) -> bool {
        self.ask_remember.checked()
    }

    pub fn hide_question(&self) {
        let _ = self.ask.toggle_attribute_with_force("hidden", true);
    }

    /// The task's result, shown above the log. `status` is the wire name (`succeeded`, …).
    pub fn show_answer(&self, status: &str, heading: &str, text: &str) {
        let _ = self.answer.set_attribute("data-status", status);
        self.answer_status.set_text_content(Some(heading));
        self.answer_text.set_text_content(Some(text));
        let _ = self
            .answer_copy
            .toggle_attribute_with_force("hidden", text.is_empty());
        let _ = self.answer.toggle_attribute_with_force("hidden", false);
    }

    pub fn answer_text(&self) -> String {
        self.answer_text.text_content().unwrap_or_default()
    }

    /// Appends a line to the activity log; `kind` becomes a CSS class.
    pub fn log(&self, kind: &str, text: &str) {
        if let Ok(li) = self.document.create_element("li") {
            let _ = li.set_attribute("class", kind);
            li.set_text_content(Some(text));
            let _ = self.log.append_child(&li);
            li.scroll_into_view();
        }
    }
}

pub fn on_run(view: &View, f: impl Fn() + 'static) -> Result<(), JsValue> {
    let f = std::rc::Rc::new(f);
    let click = {
        let f = f.clone();
        Closure::<dyn FnMut()>::new(move || f())
    };
    view.run
        .add_event_listener_with_callback("click", click.as_ref().unchecked_ref())?;
    click.forget();
    // Enter runs; Shift+Enter is a newline, as in chat boxes.
    let key = Closure::<dyn FnMut(KeyboardEvent)>::new(move |e: KeyboardEvent| {
        if e.key() == "Enter" && !e.shift_key() && !e.is_composing() {
            e.prevent_default();
            f();
        }
    });
    view.goal
        .add_event_listener_with_callback("keydown", key.as_ref().unchecked_ref())?;
    key.forget();
    Ok(())
}

pub fn on_reconnect(view: &View, f: impl Fn() + 'static) -> Result<(), JsValue> {
    let click = Closure::<dyn FnMut()>::new(f);
    view.reconnect
        .add_event_listener_with_callback("click", click.as_ref().unchecked_ref())?;
    click.forget();
    Ok(())
}

/// Calls `f` on clicks of `el`.
pub fn on_click(el: &Element, f: impl Fn() + 'static) -> Result<(), JsValue> {
    let click = Closure::<dyn FnMut()>::new(f);
    el.add_event_listener_with_callback("click", click.as_ref().unchecked_ref())?;
    click.forget();
    Ok(())
}

/// Calls `f` when Enter is pressed in `el`.
pub fn on_enter(el: &Element, f: impl Fn() + 'static) -> Result<(), JsValue> {
    let key = Closure::<dyn FnMut(KeyboardEvent)>::new(move |e: KeyboardEvent| {
        if e.key() == "Enter" && !e.is_composing() {
            e.prevent_default();
            f();
        }
    });
    el.add_event_listener_with_callback("keydown", key.as_ref().unchecked_ref())?;
    key.forget();
    Ok(())
}
