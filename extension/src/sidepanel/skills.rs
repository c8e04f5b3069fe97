//! The Skills page's DOM: the library (`#skills-list`, one `li[data-skill-id]` each, with a
//! search box and an import box) and one skill's page (`#skill-detail`): a form to run it with
//! its parameters, its parameters (rename, or stop asking), its steps, its name and
//! description, export, and Delete. What the page asks of the host is `mod.rs`'s business.

use itinero_shared::messages::SkillFormat;
use itinero_shared::skills::{Skill, SkillId, SkillSummary};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{
    Document, Element, HtmlAnchorElement, HtmlInputElement, HtmlTextAreaElement, KeyboardEvent,
};

use super::format;
use super::view::{by_id, el, focus, set_status, show};

/// A change to one parameter, from its row's buttons.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamEdit {
    Rename {
        from: String,
        to: String,
    },
    /// Stop asking for it: its example value is used from now on.
    Unparameterise {
        name: String,
    },
}

pub struct SkillsView {
    document: Document,
    library: Element,
    pub search: HtmlInputElement,
    pub refresh: Element,
    status: Element,
    list: Element,
    import_text: HtmlTextAreaElement,
    pub import: Element,
    import_status: Element,
    detail: Element,
    pub back: Element,
    title: Element,
    description: Element,
    meta: Element,
    goal: Element,
    pub run_form: Element,
    run_params: Element,
    params: Element,
    no_params: Element,
    steps: Element,
    pub edit_form: Element,
    name: HtmlInputElement,
    edit_description: HtmlTextAreaElement,
    pub export: Element,
    exported: Element,
    download: HtmlAnchorElement,
    export_text: HtmlTextAreaElement,
    /// The object URL behind the download link, revoked when replaced.
    download_url: std::cell::RefCell<Option<String>>,
    pub delete: Element,
    detail_status: Element,
}

impl SkillsView {
    pub fn find(document: &Document) -> Result<Self, JsValue> {
        Ok(Self {
            library: by_id(document, "skills-library")?,
            search: by_id(document, "skills-search")?.dyn_into()?,
            refresh: by_id(document, "skills-refresh")?,
            status: by_id(document, "skills-status")?,
            list: by_id(document, "skills-list")?,
            import_text: by_id(document, "skills-import-text")?.dyn_into()?,
            import: by_id(document, "skills-import")?,
            import_status: by_id(document, "skills-import-status")?,
            detail: by_id(document, "skill-detail")?,
            back: by_id(document, "skill-back")?,
            title: by_id(document, "skill-title")?,
            description: by_id(document, "skill-description")?,
            meta: by_id(document, "skill-meta")?,
            goal: by_id(document, "skill-goal")?,
            run_form: by_id(document, "skill-run-form")?,
            run_params: by_id(document, "skill-run-params")?,
            params: by_id(document, "skill-params")?,
            no_params: by_id(document, "skill-no-params")?,
            steps: by_id(document, "skill-steps")?,
            edit_form: by_id(document, "skill-edit-form")?,
            name: by_id(document, "skill-name")?.dyn_into()?,
            edit_description: by_id(document, "skill-edit-description")?.dyn_into()?,
            export: by_id(document, "skill-export")?,
            exported: by_id(document, "skill-exported")?,
            download: by_id(document, "skill-export-download")?.dyn_into()?,
            export_text: by_id(document, "skill-export-text")?.dyn_into()?,
            download_url: Default::default(),
            delete: by_id(document, "skill-delete")?,
            detail_status: by_id(document, "skill-status")?,
            document: document.clone(),
        })
    }

    pub fn search_text(&self) -> Option<String> {
        let text = self.search.value();
        (!text.trim().is_empty()).then(|| text.trim().to_owned())
    }

    pub fn list_status(&self, text: &str, kind: &str) {
        set_status(&self.status, text, kind);
    }

    pub fn detail_status(&self, text: &str, kind: &str) {
        set_status(&self.detail_status, text, kind);
    }

    pub fn import_status(&self, text: &str, kind: &str) {
        set_status(&self.import_status, text, kind);
    }

    pub fn import_text(&self) -> String {
        self.import_text.value()
    }

    pub fn clear_import(&self) {
        self.import_text.set_value("");
    }

    /// Back to the library; focus returns to the skill that was open, if it is still listed.
    pub fn show_list(&self, was_open: Option<SkillId>) {
        show(&self.detail, false);
        show(&self.library, true);
        if let Some(button) = was_open.and_then(|id| {
            self.list
                .query_selector(&format!("li[data-skill-id=\"{id}\"] button"))
                .ok()
                .flatten()
        }) {
            focus(&button);
        }
    }

    pub fn show_skills(&self, skills: &[SkillSummary], now_ms: i64) {
        self.list.set_text_content(None);
        for s in skills {
            let li = el(&self.document, "li", "", "");
            let _ = li.set_attribute("data-skill-id", &s.id.to_string());
            let button = el(&self.document, "button", "skill", "");
            let _ = button.set_attribute("type", "button");
            let _ = button.append_child(&el(&self.document, "span", "name", &s.name));
            let _ = button.append_child(&el(&self.document, "span", "meta", &s.goal));
            let meta = format!("{} · {}", stats(s, now_ms), s.origin);
            let _ = button.append_child(&el(&self.document, "span", "meta", &meta));
            let _ = li.append_child(&button);
            let _ = self.list.append_child(&li);
        }
    }

    /// Opens a skill's page while it is on its way.
    pub fn show_loading(&self) {
        show(&self.library, false);
        show(&self.detail, true);
        self.title.set_text_content(Some("…"));
        for e in [
            &self.description,
            &self.meta,
            &self.goal,
            &self.run_params,
            &self.params,
            &self.steps,
        ] {
            e.set_text_content(None);
        }
        show(&self.exported, false);
        self.enable(false);
        self.detail_status("Loading…", "");
        focus(&self.back);
    }

    /// The detail's buttons work only once a skill is shown.
    pub fn enable(&self, enabled: bool) {
        let Ok(controls) = self.detail.query_selector_all("button, input, textarea") else {
            return;
        };
        for i in 0..controls.length() {
            let Some(c) = controls.item(i).and_then(|n| n.dyn_into::<Element>().ok()) else {
                continue;
            };
            if c.id() != "skill-back" && c.id() != "skill-export-text" {
                let _ = c.toggle_attribute_with_force("disabled", !enabled);
            }
        }
    }

    /// Fills the skill's page. `fresh`: a newly opened skill (the run form and the export are
    /// reset); otherwise an edit's reply, and what the user typed to run it is kept.
    pub fn show_detail(&self, summary: &SkillSummary, skill: &Skill, now_ms: i64, fresh: bool) {
        show(&self.library, false);
        show(&self.detail, true);
        let _ = self
            .detail
            .set_attribute("data-skill-id", &summary.id.to_string());
        self.title.set_text_content(Some(&skill.name));
        self.description.set_text_content(Some(&skill.description));
        self.meta.set_text_content(Some(&format!(
            "{} · {} · {}",
            skill.origin,
            format::steps(summary.steps),
            stats(summary, now_ms)
        )));
        self.goal
            .set_text_content(Some(&format!("Goal: {}", skill.goal)));
        let typed = if fresh {
            Vec::new()
        } else {
            self.typed_params()
        };
        self.run_params.set_text_content(None);
        for p in &skill.params {
            let id = format!("skill-param-{}", p.name);
            let label = el(&self.document, "label", "", &p.name);
            let _ = label.set_attribute("for", &id);
            let input = el(&self.document, "input", "", "");
            let _ = input.set_attribute("type", "text");
            let _ = input.set_attribute("id", &id);
            let _ = input.set_attribute("data-param", &p.name);
            let _ = input.set_attribute("autocomplete", "off");
            if !p.example.is_empty() {
                let _ = input.set_attribute("placeholder", &format!("e.g. {}", p.example));
            }
            if let Some((_, value)) = typed.iter().find(|(n, _)| *n == p.name) {
                if let Some(i) = input.dyn_ref::<HtmlInputElement>() {
                    i.set_value(value);
                }
            }
            let _ = self.run_params.append_child(&label);
            let _ = self.run_params.append_child(&input);
        }
        self.params.set_text_content(None);
        for p in &skill.params {
            let _ = self
                .params
                .append_child(&self.param_row(&p.name, &p.example));
        }
        show(&self.no_params, skill.params.is_empty());
        self.steps.set_text_content(None);
        for step in &skill.steps {
            let words = if step.note.is_empty() {
                step.action.kind().replace('_', " ")
            } else {
                step.note.clone()
            };
            let _ = self
                .steps
                .append_child(&el(&self.document, "li", "", &words));
        }
        self.name.set_value(&skill.name);
        self.edit_description.set_value(&skill.description);
        if fresh {
            show(&self.exported, false);
            reset_delete(&self.delete);
            self.detail_status("", "");
            focus(&self.title);
        }
        self.enable(true);
    }

    /// `{name}` (e.g. "wool socks"), a box for a new name, Rename, and "Always use …".
    fn param_row(&self, name: &str, example: &str) -> Element {
        let li = el(&self.document, "li", "", "");
        let _ = li.set_attribute("data-param", name);
        let text = el(&self.document, "span", "text", "");
        let _ = text.append_child(&el(&self.document, "code", "", &format!("{{{name}}}")));
        if !example.is_empty() {
            let _ = text.append_child(
                &self
                    .document
                    .create_text_node(&format!(" e.g. “{example}”")),
            );
        }
        let _ = li.append_child(&text);
        let input = el(&self.document, "input", "", "");
        let _ = input.set_attribute("type", "text");
        let _ = input.set_attribute("aria-label", &format!("New name for {name}"));
        let _ = input.set_attribute("placeholder", "new name");
        let _ = input.set_attribute("autocomplete", "off");
        let _ = input.set_attribute("spellcheck", "false");
        let _ = li.append_child(&input);
        let rename = el(&self.document, "button", "secondary small", "Rename");
        let _ = rename.set_attribute("type", "button");
        let _ = rename.set_attribute("data-edit", "rename");
        let _ = li.append_child(&rename);
        if !example.is_empty() {
            let fixed = el(
                &self.document,
                "button",
                "secondary small",
                &format!("Always use “{example}”"),
            );
            let _ = fixed.set_attribute("type", "button");
            let _ = fixed.set_attribute("data-edit", "fix");
            let _ = li.append_child(&fixed);
        }
        li
    }

    /// What is typed in the run form, by parameter.
    fn typed_params(&self) -> Vec<(String, String)> {
        let Ok(inputs) = self.run_params.query_selector_all("input[data-param]") else {
            return Vec::new();
        };
        (0..inputs.length())
            .filter_map(|i| inputs.item(i)?.dyn_into::<HtmlInputElement>().ok())
            .filter_map(|i| Some((i.get_attribute("data-param")?, i.value())))
            .collect()
    }

    /// The values to run with; an empty one is marked and named instead.
    pub fn read_run_params(&self) -> Result<Vec<(String, String)>, String> {
        let values = self.typed_params();
        let mut missing = Vec::new();
        for (name, value) in &values {
            let empty = value.trim().is_empty();
            if let Some(input) = self.param_input(name) {
                let _ = input.set_attribute("aria-invalid", if empty { "true" } else { "false" });
            }
            if empty {
                missing.push(name.clone());
            }
        }
        match missing.first() {
            None => Ok(values
                .into_iter()
                .map(|(n, v)| (n, v.trim().to_owned()))
                .collect()),
            Some(first) => {
                if let Some(input) = self.param_input(first) {
                    focus(&input);
                }
                Err(format!("Give a value for {}.", missing.join(", ")))
            }
        }
    }

    fn param_input(&self, name: &str) -> Option<Element> {
        self.run_params
            .query_selector(&format!("input[data-param=\"{name}\"]"))
            .ok()
            .flatten()
    }

    /// The name and description typed in the edit form.
    pub fn read_name(&self) -> Result<(String, String), String> {
        let name = self.name.value().trim().to_owned();
        let _ = self.name.set_attribute(
            "aria-invalid",
            if name.is_empty() { "true" } else { "false" },
        );
        if name.is_empty() {
            focus(&self.name);
            return Err("A skill needs a name.".into());
        }
        Ok((name, self.edit_description.value().trim().to_owned()))
    }

    /// Shows an export as text to copy and as a file to download.
    pub fn show_export(&self, file_name: &str, text: &str) {
        self.export_text.set_value(text);
        let _ = self.download.set_attribute("download", file_name);
        self.download
            .set_text_content(Some(&format!("Download {file_name}")));
        if let Some(url) = object_url(text) {
            if let Some(old) = self.download_url.replace(Some(url.clone())) {
                let _ = web_sys::Url::revoke_object_url(&old);
            }
            self.download.set_href(&url);
        }
        show(&self.exported, true);
    }
}

/// "Save as skill" under a succeeded run's result: a button that opens a name form.
pub struct SaveOffer {
    pub open: Element,
    pub form: Element,
    name: HtmlInputElement,
    pub cancel: Element,
    save: Element,
    status: Element,
}

impl SaveOffer {
    pub fn find(document: &Document) -> Result<Self, JsValue> {
        Ok(Self {
            open: by_id(document, "save-skill-open")?,
            form: by_id(document, "save-skill-form")?,
            name: by_id(document, "save-skill-name")?.dyn_into()?,
            cancel: by_id(document, "save-skill-cancel")?,
            save: by_id(document, "save-skill-save")?,
            status: by_id(document, "save-skill-status")?,
        })
    }

    /// Offers to save the run (`Some(suggested name)`), or hides the offer.
    pub fn offer(&self, name: Option<&str>) {
        show(&self.open, name.is_some());
        show(&self.form, false);
        self.status("", "");
        if let Some(name) = name {
            self.name.set_value(name);
        }
    }

    pub fn show_form(&self, shown: bool) {
        show(&self.form, shown);
        show(&self.open, !shown);
        let _ = self.save.remove_attribute("disabled");
        if shown {
            focus(&self.name);
            self.name.select();
        }
    }

    pub fn saving(&self) {
        let _ = self.save.set_attribute("disabled", "");
        self.status("Saving…", "");
    }

    /// After the save: the form goes, the status says what was kept.
    pub fn saved(&self, text: &str) {
        show(&self.form, false);
        show(&self.open, false);
        self.status(text, "ok");
    }

    pub fn failed(&self, text: &str) {
        let _ = self.save.remove_attribute("disabled");
        self.status(text, "error");
    }

    pub fn name(&self) -> Result<String, String> {
        let name = self.name.value().trim().to_owned();
        if name.is_empty() {
            focus(&self.name);
            return Err("Give the skill a name.".into());
        }
        Ok(name)
    }

    fn status(&self, text: &str, kind: &str) {
        set_status(&self.status, text, kind);
    }
}

/// `3 runs · 67% succeeded · last 5 min ago · 2.1 s on average`, or `never run`.
fn stats(s: &SkillSummary, now_ms: i64) -> String {
    let st = &s.stats;
    if st.runs == 0 {
        return "never run".into();
    }
    let mut out = format!(
        "{} · {}% succeeded",
        if st.runs == 1 {
            "1 run".to_owned()
        } else {
            format!("{} runs", st.runs)
        },
        (st.succeeded * 100 + st.runs / 2) / st.runs
    );
    if let Some(last) = st.last_run {
        let when = format::ago(now_ms, last).unwrap_or_else(|| super::history::local_time(last));
        out.push_str(&format!(" · last {when}"));
    }
    if let Some(ms) = st.average_ms {
        out.push_str(&format!(" · {} on average", format::duration(ms)));
    }
    out
}

fn object_url(text: &str) -> Option<String> {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type("text/plain;charset=utf-8");
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options).ok()?;
    web_sys::Url::create_object_url_with_blob(&blob).ok()
}

/// Delete asks to be clicked twice: the first click only arms it.
pub fn arm_delete(delete: &Element) -> bool {
    if delete.get_attribute("data-armed").is_some() {
        return true;
    }
    let _ = delete.set_attribute("data-armed", "");
    delete.set_text_content(Some("Click again to delete"));
    false
}

pub fn reset_delete(delete: &Element) {
    let _ = delete.remove_attribute("data-armed");
    let _ = delete.remove_attribute("disabled");
    delete.set_text_content(Some("Delete this skill"));
}

/// Calls `f` with the skill whose entry in the library is clicked.
pub fn on_skill_click(view: &SkillsView, f: impl Fn(SkillId) + 'static) -> Result<(), JsValue> {
    on_target(&view.list, move |target| {
        let id = target
            .closest("li[data-skill-id]")
            .ok()
            .flatten()
            .and_then(|li| li.get_attribute("data-skill-id"))
            .and_then(|id| id.parse().ok());
        if let Some(id) = id {
            f(id);
        }
    })
}

/// Calls `f` with the edit a parameter row's button asks for (a rename needs a new name).
pub fn on_param_edit(
    view: &SkillsView,
    f: impl Fn(Result<ParamEdit, String>) + 'static,
) -> Result<(), JsValue> {
    let f = std::rc::Rc::new(f);
    let on_button = {
        let f = f.clone();
        move |target: Element| {
            let Some(button) = target.closest("button[data-edit]").ok().flatten() else {
                return;
            };
            if let Some(edit) = param_edit(&button, button.get_attribute("data-edit")) {
                f(edit);
            }
        }
    };
    on_target(&view.params, on_button)?;
    // Enter in a new-name box renames.
    let key = Closure::<dyn FnMut(KeyboardEvent)>::new(move |e: KeyboardEvent| {
        if e.key() != "Enter" || e.is_composing() {
            return;
        }
        let Some(input) = e.target().and_then(|t| t.dyn_into::<Element>().ok()) else {
            return;
        };
        e.prevent_default();
        if let Some(edit) = param_edit(&input, Some("rename".into())) {
            f(edit);
        }
    });
    view.params
        .add_event_listener_with_callback("keydown", key.as_ref().unchecked_ref())?;
    key.forget();
    Ok(())
}

fn param_edit(inside: &Element, edit: Option<String>) -> Option<Result<ParamEdit, String>> {
    let li = inside.closest("li[data-param]").ok().flatten()?;
    let name = li.get_attribute("data-param")?;
    Some(match edit.as_deref()? {
        "rename" => {
            let to = li
                .query_selector("input")
                .ok()
                .flatten()
                .and_then(|i| i.dyn_into::<HtmlInputElement>().ok())
                .map(|i| i.value().trim().to_owned())
                .unwrap_or_default();
            if to.is_empty() {
                Err(format!("Type a new name for {{{name}}} first."))
            } else {
                Ok(ParamEdit::Rename { from: name, to })
            }
        }
        "fix" => Ok(ParamEdit::Unparameterise { name }),
        _ => return None,
    })
}

/// Calls `f` with the format of the export button clicked.
pub fn on_export(view: &SkillsView, f: impl Fn(SkillFormat) + 'static) -> Result<(), JsValue> {
    on_target(&view.export, move |target| {
        let format = target
            .closest("button[data-format]")
            .ok()
            .flatten()
            .and_then(|b| b.get_attribute("data-format"))
            .and_then(|f| format::from_wire::<SkillFormat>(&f));
        if let Some(format) = format {
            f(format);
        }
    })
}

/// Calls `f` as the search box is typed in.
pub fn on_search(view: &SkillsView, f: impl Fn() + 'static) -> Result<(), JsValue> {
    let input = Closure::<dyn FnMut()>::new(f);
    view.search
        .add_event_listener_with_callback("input", input.as_ref().unchecked_ref())?;
    input.forget();
    Ok(())
}

/// Calls `f` when `form` is submitted (its default, a page load, is prevented).
pub fn on_submit(form: &Element, f: impl Fn() + 'static) -> Result<(), JsValue> {
    let submit = Closure::<dyn FnMut(web_sys::Event)>::new(move |e: web_sys::Event| {
        e.prevent_default();
        f();
    });
    form.add_event_listener_with_callback("submit", submit.as_ref().unchecked_ref())?;
    submit.forget();
    Ok(())
}

/// Calls `f` with the element a click inside `root` landed on.
fn on_target(root: &Element, f: impl Fn(Element) + 'static) -> Result<(), JsValue> {
    let click = Closure::<dyn FnMut(web_sys::Event)>::new(move |e: web_sys::Event| {
        if let Some(target) = e.target().and_then(|t| t.dyn_into::<Element>().ok()) {
            f(target);
        }
    });
    root.add_event_listener_with_callback("click", click.as_ref().unchecked_ref())?;
    click.forget();
    Ok(())
}

/// `{name}` placeholders of a skill's goal filled with the values (the host checks them again).
pub fn fill_goal(template: &str, values: &[(String, String)]) -> String {
    values
        .iter()
        .fold(template.to_owned(), |goal, (name, value)| {
            goal.replace(&format!("{{{name}}}"), value)
        })
}

/// A name to offer for a skill saved from a run of `goal`: its first line, capitalised, short.
pub fn suggested_name(goal: &str) -> String {
    let line = goal.lines().next().unwrap_or_default().trim();
    let mut name: String = line.chars().take(60).collect();
    if line.chars().count() > 60 {
        name = name.trim_end().to_owned() + "…";
    }
    let mut chars = name.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goals_fill_and_names_are_offered() {
        let values = [("query".to_owned(), "wool socks".to_owned())];
        assert_eq!(
            fill_goal("Add {query} to my cart", &values),
            "Add wool socks to my cart"
        );
        assert_eq!(
            suggested_name("add wool socks to my cart\nquickly"),
            "Add wool socks to my cart"
        );
        assert_eq!(suggested_name(&"x".repeat(70)).chars().count(), 61);
    }
}
