//! The History page's DOM: the list of runs (`#runs`, one `li[data-run-id]` each) and one
//! run's detail (`#run-detail`) with its answer, its steps (each with the picture of the page
//! after it, `img.shot`, or why there is none) and Delete.

use itinero_shared::records::{RunDetail, RunId, RunStatus, RunSummary, StepPicture, StepRecord};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Document, Element};

use super::format;
use super::view::{by_id, el, focus, set_status, show};

pub struct HistoryView {
    document: Document,
    list: Element,
    status: Element,
    runs: Element,
    pub refresh: Element,
    detail: Element,
    pub back: Element,
    goal: Element,
    meta: Element,
    url: Element,
    answer_box: Element,
    answer: Element,
    steps: Element,
    no_steps: Element,
    pub delete: Element,
    detail_status: Element,
}

impl HistoryView {
    pub fn find(document: &Document) -> Result<Self, JsValue> {
        Ok(Self {
            list: by_id(document, "history-list")?,
            status: by_id(document, "history-status")?,
            runs: by_id(document, "runs")?,
            refresh: by_id(document, "history-refresh")?,
            detail: by_id(document, "run-detail")?,
            back: by_id(document, "run-back")?,
            goal: by_id(document, "run-goal")?,
            meta: by_id(document, "run-meta")?,
            url: by_id(document, "run-url")?,
            answer_box: by_id(document, "run-answer-box")?,
            answer: by_id(document, "run-answer")?,
            steps: by_id(document, "run-steps")?,
            no_steps: by_id(document, "run-no-steps")?,
            delete: by_id(document, "run-delete")?,
            detail_status: by_id(document, "run-status")?,
            document: document.clone(),
        })
    }

    /// A line above the list: loading, empty, or the host's error (`kind` `error`).
    pub fn list_status(&self, text: &str, kind: &str) {
        set_status(&self.status, text, kind);
    }

    /// A line under the run's detail.
    pub fn detail_status(&self, text: &str, kind: &str) {
        set_status(&self.detail_status, text, kind);
    }

    /// Back to the list; focus returns to the run that was open, if it is still listed.
    pub fn show_list(&self, was_open: Option<RunId>) {
        show(&self.detail, false);
        show(&self.list, true);
        if let Some(button) = was_open.and_then(|id| self.run_button(id)) {
            focus(&button);
        }
    }

    fn run_button(&self, id: RunId) -> Option<Element> {
        self.runs
            .query_selector(&format!("li[data-run-id=\"{id}\"] button"))
            .ok()
            .flatten()
    }

    /// Replaces the list with `runs`, newest first as the host sends them.
    pub fn show_runs(&self, runs: &[RunSummary], now_ms: i64) {
        self.runs.set_text_content(None);
        for run in runs {
            let li = el(&self.document, "li", "", "");
            let _ = li.set_attribute("data-run-id", &run.id.to_string());
            let _ = li.set_attribute("data-status", run.status.as_str());
            let button = el(&self.document, "button", "run", "");
            let _ = button.set_attribute("type", "button");
            let goal = el(&self.document, "span", "goal", &run.goal);
            let _ = button.append_child(&goal);
            let meta = el(&self.document, "span", "meta", "");
            let _ = meta.append_child(&badge(&self.document, run.status));
            let _ = meta.append_child(&text(&self.document, " · "));
            let _ = meta.append_child(&when(&self.document, run.started_at, now_ms));
            let mut rest = format!(" · {}", format::steps(run.steps));
            if let Some(origin) = &run.origin {
                rest.push_str(&format!(" · {origin}"));
            }
            let _ = meta.append_child(&text(&self.document, &rest));
            let _ = button.append_child(&meta);
            let _ = li.append_child(&button);
            let _ = self.runs.append_child(&li);
        }
    }

    /// Opens a run's page while its detail is on its way.
    pub fn show_loading(&self) {
        show(&self.list, false);
        show(&self.detail, true);
        self.goal.set_text_content(Some("…"));
        for e in [&self.meta, &self.url, &self.steps] {
            e.set_text_content(None);
        }
        show(&self.answer_box, false);
        show(&self.no_steps, false);
        let _ = self.delete.set_attribute("disabled", "");
        self.detail_status("Loading…", "");
        focus(&self.back);
    }

    pub fn show_detail(&self, detail: &RunDetail, now_ms: i64) {
        let run = &detail.run;
        show(&self.list, false);
        show(&self.detail, true);
        let _ = self
            .detail
            .set_attribute("data-run-id", &run.id.to_string());
        self.goal.set_text_content(Some(&run.goal));
        self.meta.set_text_content(None);
        let _ = self.meta.append_child(&badge(&self.document, run.status));
        let _ = self.meta.append_child(&text(&self.document, " · "));
        let _ = self
            .meta
            .append_child(&when(&self.document, run.started_at, now_ms));
        let mut rest = String::new();
        if let Some(end) = run.finished_at {
            let took = u64::try_from(end - run.started_at).unwrap_or(0);
            rest.push_str(&format!(" · took {}", format::duration(took)));
        }
        rest.push_str(&format!(" · {}", format::steps(run.steps)));
        let model = [run.backend.as_str(), run.model.as_str()]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        if !model.is_empty() {
            rest.push_str(&format!(" · {model}"));
        }
        let _ = self.meta.append_child(&text(&self.document, &rest));
        self.url.set_text_content(Some(&run.start_url));
        let _ = self.url.set_attribute("title", &run.start_url);
        let answer = run.answer.as_deref().unwrap_or_default();
        self.answer.set_text_content(Some(answer));
        show(&self.answer_box, !answer.is_empty());
        self.steps.set_text_content(None);
        for step in &detail.steps {
            let picture = detail.pictures.iter().find(|pic| pic.n == step.n);
            let _ = self.steps.append_child(&self.step(step, picture));
        }
        show(&self.no_steps, detail.steps.is_empty());
        let _ = self.delete.remove_attribute("disabled");
        self.detail_status("", "");
        focus(&self.goal);
    }

    /// Shows the picture after step `n`, which arrived on its own.
    pub fn show_picture(&self, n: u32, jpeg_base64: &str) {
        if let Some(img) = self.shot(n) {
            let _ = img.set_attribute("src", &format!("data:image/jpeg;base64,{jpeg_base64}"));
            let _ = img.remove_attribute("aria-busy");
        }
    }

    /// The picture after step `n` could not be read: its place says why.
    pub fn picture_missing(&self, n: u32, why: &str) {
        if let Some(img) = self.shot(n) {
            let note = el(
                &self.document,
                "p",
                "meta no-shot",
                &format!("No picture: {why}"),
            );
            let _ = img.replace_with_with_node_1(&note);
        }
    }

    fn shot(&self, n: u32) -> Option<Element> {
        self.steps
            .query_selector(&format!("li[data-step=\"{n}\"] img.shot"))
            .ok()
            .flatten()
    }

    /// One step: `n. action` with who decided, what happened, the model's reason, the timings,
    /// and the page after it.
    fn step(&self, step: &StepRecord, picture: Option<&StepPicture>) -> Element {
        let li = el(&self.document, "li", "", "");
        let _ = li.set_attribute("data-step", &step.n.to_string());
        let head = el(&self.document, "div", "", "");
        let action = if step.action_summary.is_empty() {
            "(no action)"
        } else {
            &step.action_summary
        };
        let _ = head.append_child(&el(
            &self.document,
            "span",
            "action",
            &format!("{}. {action}", step.n),
        ));
        let _ = head.append_child(&text(&self.document, " "));
        let strategy = el(
            &self.document,
            "span",
            "badge strategy",
            format::strategy(&step.strategy),
        );
        let _ = strategy.set_attribute("title", "What decided this step");
        let _ = head.append_child(&strategy);
        let _ = li.append_child(&head);
        if !step.outcome_text.is_empty() {
            let _ = li.append_child(&el(&self.document, "p", "outcome", &step.outcome_text));
        }
        if !step.thought.is_empty() {
            let _ = li.append_child(&el(&self.document, "p", "thought", &step.thought));
        }
        let timings = format::timings(step);
        if !timings.is_empty() {
            let _ = li.append_child(&el(&self.document, "p", "meta timing", &timings));
        }
        match picture {
            Some(pic) if pic.is_kept() => {
                let img = el(&self.document, "img", "shot", "");
                let _ = img.set_attribute("alt", &format!("The page after step {}", step.n));
                let _ = img.set_attribute("aria-busy", "true");
                let _ = li.append_child(&img);
            }
            Some(pic) => {
                let why = pic.withheld.as_deref().unwrap_or("none was taken");
                let _ = li.append_child(&el(
                    &self.document,
                    "p",
                    "meta no-shot",
                    &format!("No picture: {why}"),
                ));
            }
            None => {}
        }
        li
    }
}

fn text(document: &Document, s: &str) -> web_sys::Text {
    document.create_text_node(s)
}

fn badge(document: &Document, status: RunStatus) -> Element {
    let b = el(document, "span", "badge", format::status_label(status));
    let _ = b.set_attribute("data-status", status.as_str());
    b
}

/// `<time>`: how long ago within a day, else the local date and time; the full local time as
/// its tooltip.
fn when(document: &Document, at_ms: i64, now_ms: i64) -> Element {
    let full = local_time(at_ms);
    let shown = format::ago(now_ms, at_ms).unwrap_or_else(|| full.clone());
    let t = el(document, "time", "", &shown);
    let _ = t.set_attribute("title", &full);
    let iso: String = js_sys::Date::new(&JsValue::from_f64(at_ms as f64))
        .to_iso_string()
        .into();
    let _ = t.set_attribute("datetime", &iso);
    t
}

/// Unix milliseconds as the browser's locale writes a date and time.
pub fn local_time(ms: i64) -> String {
    let date = js_sys::Date::new(&JsValue::from_f64(ms as f64));
    let options = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&options, &"dateStyle".into(), &"medium".into());
    let _ = js_sys::Reflect::set(&options, &"timeStyle".into(), &"short".into());
    let language = web_sys::window()
        .and_then(|w| w.navigator().language())
        .unwrap_or_else(|| "en".into());
    date.to_locale_string(&language, &options).into()
}

/// Calls `f` with the run whose entry in `#runs` is clicked (or activated with the keyboard).
pub fn on_run_click(view: &HistoryView, f: impl Fn(RunId) + 'static) -> Result<(), JsValue> {
    let click = Closure::<dyn FnMut(web_sys::Event)>::new(move |e: web_sys::Event| {
        let Some(target) = e.target().and_then(|t| t.dyn_into::<Element>().ok()) else {
            return;
        };
        let id = target
            .closest("li[data-run-id]")
            .ok()
            .flatten()
            .and_then(|li| li.get_attribute("data-run-id"))
            .and_then(|id| id.parse().ok());
        if let Some(id) = id {
            f(RunId(id));
        }
    });
    view.runs
        .add_event_listener_with_callback("click", click.as_ref().unchecked_ref())?;
    click.forget();
    Ok(())
}
