//! The Settings page's DOM: the form bound to [`Settings`], and what the agent remembers per
//! site: the "always allow" approvals (`#approvals`, each with Revoke) and the lessons
//! (`#lessons`, each with Delete). Under an OpenAI-compatible server's address, its API key:
//! a password field of a form of its own (`#settings-api-key-form`, so the settings' Save never
//! sends it and its edits are not the settings'), emptied as it is read, never filled; the line
//! beside it says whether the vault keeps a key for the address's origin.

use itinero_shared::records::{BackendChoice, Lesson, LessonId, Settings, SiteApproval};
use itinero_shared::vault::VaultStatus;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Document, Element, HtmlInputElement, HtmlSelectElement};

use super::format;
use super::history::local_time;
use super::view::{by_id, el, focus, set_status, show};

pub struct SettingsView {
    document: Document,
    pub form: Element,
    fields: Element,
    pub backend: HtmlSelectElement,
    model: HtmlInputElement,
    openai: Element,
    openai_url: HtmlInputElement,
    api_key_form: Element,
    api_key: HtmlInputElement,
    api_key_line: Element,
    pub api_key_remove: Element,
    pub api_key_vault: Element,
    api_key_status: Element,
    /// The vault's state as last heard (which servers have a key), for the line.
    vault: std::cell::RefCell<Option<VaultStatus>>,
    device: HtmlSelectElement,
    max_steps: HtmlInputElement,
    pub approval: HtmlSelectElement,
    approval_help: Element,
    plan: HtmlSelectElement,
    pub vote: HtmlSelectElement,
    voting: Element,
    vote_samples: HtmlInputElement,
    vote_models: HtmlInputElement,
    sign_in_names_user: HtmlInputElement,
    keep_pictures: HtmlInputElement,
    models: Element,
    model_help: Element,
    /// The settings as last loaded: a select showing a value this page does not know keeps it.
    loaded: std::cell::RefCell<Settings>,
    status: Element,
    pub approvals: Element,
    approvals_status: Element,
    pub lessons: Element,
    lessons_status: Element,
}

impl SettingsView {
    pub fn find(document: &Document) -> Result<Self, JsValue> {
        Ok(Self {
            form: by_id(document, "settings-form")?,
            fields: by_id(document, "settings-fields")?,
            backend: by_id(document, "settings-backend")?.dyn_into()?,
            model: by_id(document, "settings-model")?.dyn_into()?,
            openai: by_id(document, "settings-openai")?,
            openai_url: by_id(document, "settings-openai-url")?.dyn_into()?,
            api_key_form: by_id(document, "settings-api-key-form")?,
            api_key: by_id(document, "settings-api-key")?.dyn_into()?,
            api_key_line: by_id(document, "settings-api-key-line")?,
            api_key_remove: by_id(document, "settings-api-key-remove")?,
            api_key_vault: by_id(document, "settings-api-key-vault")?,
            api_key_status: by_id(document, "settings-api-key-status")?,
            vault: Default::default(),
            device: by_id(document, "settings-device")?.dyn_into()?,
            max_steps: by_id(document, "settings-max-steps")?.dyn_into()?,
            approval: by_id(document, "settings-approval")?.dyn_into()?,
            approval_help: by_id(document, "settings-approval-help")?,
            plan: by_id(document, "settings-plan")?.dyn_into()?,
            vote: by_id(document, "settings-vote")?.dyn_into()?,
            voting: by_id(document, "settings-voting")?,
            vote_samples: by_id(document, "settings-vote-samples")?.dyn_into()?,
            vote_models: by_id(document, "settings-vote-models")?.dyn_into()?,
            sign_in_names_user: by_id(document, "settings-sign-in-names-user")?.dyn_into()?,
            keep_pictures: by_id(document, "settings-keep-pictures")?.dyn_into()?,
            models: by_id(document, "settings-models")?,
            model_help: by_id(document, "settings-model-help")?,
            loaded: Default::default(),
            status: by_id(document, "settings-status")?,
            approvals: by_id(document, "approvals")?,
            approvals_status: by_id(document, "approvals-status")?,
            lessons: by_id(document, "lessons")?,
            lessons_status: by_id(document, "lessons-status")?,
            document: document.clone(),
        })
    }

    /// The form can be edited once the settings are loaded (and not while they are saved).
    pub fn enable(&self, enabled: bool) {
        let _ = self
            .fields
            .toggle_attribute_with_force("disabled", !enabled);
    }

    pub fn fill(&self, s: &Settings) {
        self.backend.set_value(format::backend_value(s.backend));
        self.model.set_value(s.model.as_deref().unwrap_or_default());
        self.openai_url
            .set_value(s.openai_url.as_deref().unwrap_or_default());
        self.device.set_value(&format::wire(s.device));
        self.max_steps.set_value(&s.max_steps.to_string());
        self.approval.set_value(format::approval_value(s.approval));
        self.plan.set_value(&format::wire(s.plan));
        self.vote.set_value(&format::wire(s.vote));
        self.vote_samples.set_value(&s.vote_samples.to_string());
        self.vote_models.set_value(&s.vote_models.join(", "));
        self.sign_in_names_user.set_checked(s.sign_in_names_user);
        self.keep_pictures.set_checked(s.keep_pictures);
        *self.loaded.borrow_mut() = s.clone();
        self.update();
    }

    /// The backend the select shows.
    pub fn chosen_backend(&self) -> BackendChoice {
        format::backend_from(&self.backend.value()).unwrap_or_default()
    }

    /// The server address typed, for listing an OpenAI-compatible server's models.
    pub fn chosen_openai_url(&self) -> Option<String> {
        format::optional(&self.openai_url.value())
    }

    /// The origin of the server address typed (what the vault keeps a key for), if it is an
    /// http(s) address.
    pub fn typed_server(&self) -> Option<String> {
        let url = web_sys::Url::new(self.openai_url.value().trim()).ok()?;
        matches!(url.protocol().as_str(), "http:" | "https:").then(|| url.origin())
    }

    /// The API key typed; the field is emptied as it is read.
    pub fn take_api_key(&self) -> Option<String> {
        let key = self.api_key.value();
        self.api_key.set_value("");
        if key.trim().is_empty() {
            focus(&self.api_key);
            return None;
        }
        Some(key)
    }

    /// The vault's state, for the API key's line.
    pub fn show_vault(&self, status: &VaultStatus) {
        *self.vault.borrow_mut() = Some(status.clone());
        self.show_api_key_line();
    }

    /// Saving or removing the key: progress, or why it failed.
    pub fn api_key_status(&self, text: &str, kind: &str) {
        set_status(&self.api_key_status, text, kind);
    }

    fn show_api_key_line(&self) {
        let vault = self.vault.borrow();
        let Some(vault) = vault.as_ref() else {
            show(&self.api_key_remove, false);
            show(&self.api_key_vault, false);
            return;
        };
        let server = self.typed_server();
        let (line, to_vault) = format::api_key_line(server.as_deref(), vault);
        self.api_key_line.set_text_content(Some(&line));
        let saved = server.is_some_and(|s| vault.api_key_servers.contains(&s));
        show(&self.api_key_remove, saved);
        show(&self.api_key_vault, to_vault);
    }

    /// The backend of the settings as last loaded.
    pub fn loaded_backend(&self) -> BackendChoice {
        self.loaded.borrow().backend
    }

    /// The backend's models, offered as the model field's suggestions (none: the help goes back
    /// to its default words).
    pub fn show_models(&self, models: &[String]) {
        self.models.set_text_content(None);
        for m in models {
            let option = el(&self.document, "option", "", "");
            let _ = option.set_attribute("value", m);
            let _ = self.models.append_child(&option);
        }
        let help = if models.is_empty() {
            "E.g. qwen2.5:3b. Empty: the backend's first model.".to_owned()
        } else {
            format!(
                "The backend has: {}. Empty: its first model.",
                models.join(", ")
            )
        };
        self.model_help.set_text_content(Some(&help));
    }

    /// Why the backend's models could not be listed, under the model field.
    pub fn models_unavailable(&self, why: &str) {
        self.model_help
            .set_text_content(Some(&format!("Could not list the backend's models: {why}")));
    }

    /// Shows what depends on the selects: the server address for an OpenAI-compatible
    /// backend, the approval policy in words.
    pub fn update(&self) {
        show(
            &self.openai,
            format::backend_from(&self.backend.value()) == Some(BackendChoice::OpenAi),
        );
        let help = format::approval_from(&self.approval.value())
            .map(format::approval_help)
            .unwrap_or_default();
        self.approval_help.set_text_content(Some(help));
        show(&self.voting, self.vote.value() != "off");
        self.show_api_key_line();
    }

    /// The settings as the form has them, or what is wrong with a field.
    pub fn read(&self) -> Result<Settings, String> {
        let loaded = self.loaded.borrow().clone();
        Ok(Settings {
            backend: format::backend_from(&self.backend.value()).unwrap_or_default(),
            model: format::optional(&self.model.value()),
            openai_url: format::optional(&self.openai_url.value()),
            device: format::from_wire(&self.device.value()).unwrap_or(loaded.device),
            max_steps: format::max_steps(&self.max_steps.value())?,
            approval: format::approval_from(&self.approval.value()).unwrap_or_default(),
            plan: format::from_wire(&self.plan.value()).unwrap_or(loaded.plan),
            vote: format::from_wire(&self.vote.value()).unwrap_or(loaded.vote),
            vote_samples: format::voters(&self.vote_samples.value())?,
            vote_models: format::names(&self.vote_models.value()),
            sign_in_names_user: self.sign_in_names_user.checked(),
            keep_pictures: self.keep_pictures.checked(),
        })
    }

    /// `Saved`, `Saving…`, or an error next to the Save button.
    pub fn status(&self, text: &str, kind: &str) {
        set_status(&self.status, text, kind);
    }

    pub fn approvals_status(&self, text: &str, kind: &str) {
        set_status(&self.approvals_status, text, kind);
    }

    pub fn lessons_status(&self, text: &str, kind: &str) {
        set_status(&self.lessons_status, text, kind);
    }

    pub fn show_approvals(&self, approvals: &[SiteApproval]) {
        self.approvals.set_text_content(None);
        for a in approvals {
            let li = el(&self.document, "li", "", "");
            let _ = li.set_attribute("data-origin", &a.origin);
            let _ = li.set_attribute("data-kind", &a.kind);
            let text = el(&self.document, "span", "text", "");
            let _ = text.append_child(&el(&self.document, "strong", "", &a.kind));
            let _ =
                text.append_child(&self.document.create_text_node(&format!(" on {}", a.origin)));
            let _ = text.append_child(&el(
                &self.document,
                "span",
                "meta",
                &format!("since {}", local_time(a.created_at)),
            ));
            let _ = li.append_child(&text);
            let revoke = el(&self.document, "button", "secondary small", "Revoke");
            let _ = revoke.set_attribute("type", "button");
            let _ = revoke.set_attribute(
                "aria-label",
                &format!("Revoke “always allow” for {} on {}", a.kind, a.origin),
            );
            let _ = li.append_child(&revoke);
            let _ = self.approvals.append_child(&li);
        }
        self.approvals_status(
            if approvals.is_empty() {
                "Nothing is always allowed: itinero asks before every risky action."
            } else {
                ""
            },
            "",
        );
    }

    pub fn show_lessons(&self, lessons: &[Lesson]) {
        self.lessons.set_text_content(None);
        for lesson in lessons {
            let li = el(&self.document, "li", "", "");
            let _ = li.set_attribute("data-lesson-id", &lesson.id.to_string());
            let text = el(&self.document, "span", "text", &lesson.text);
            let _ = text.append_child(&el(
                &self.document,
                "span",
                "meta",
                &format!("{} · {}", lesson.origin, local_time(lesson.created_at)),
            ));
            let _ = li.append_child(&text);
            let delete = el(&self.document, "button", "secondary small", "Delete");
            let _ = delete.set_attribute("type", "button");
            let _ = delete.set_attribute(
                "aria-label",
                &format!("Delete the lesson “{}”", lesson.text),
            );
            let _ = li.append_child(&delete);
            let _ = self.lessons.append_child(&li);
        }
        self.lessons_status(
            if lessons.is_empty() {
                "No lessons yet."
            } else {
                ""
            },
            "",
        );
    }
}

/// Calls `f` on a click of a button inside an entry of `list`, with that entry (`li`).
pub fn on_entry_button(list: &Element, f: impl Fn(Element) + 'static) -> Result<(), JsValue> {
    let click = Closure::<dyn FnMut(web_sys::Event)>::new(move |e: web_sys::Event| {
        let Some(target) = e.target().and_then(|t| t.dyn_into::<Element>().ok()) else {
            return;
        };
        if let Ok(Some(button)) = target.closest("button") {
            if let Ok(Some(li)) = button.closest("li") {
                let _ = button.set_attribute("disabled", "");
                f(li);
            }
        }
    });
    list.add_event_listener_with_callback("click", click.as_ref().unchecked_ref())?;
    click.forget();
    Ok(())
}

/// Makes the buttons of `list` usable again (after a request from one of them failed).
pub fn enable_entries(list: &Element) {
    if let Ok(buttons) = list.query_selector_all("button[disabled]") {
        for i in 0..buttons.length() {
            if let Some(b) = buttons.item(i).and_then(|n| n.dyn_into::<Element>().ok()) {
                let _ = b.remove_attribute("disabled");
            }
        }
    }
}

/// The lesson an entry of `#lessons` shows.
pub fn lesson_of(li: &Element) -> Option<LessonId> {
    li.get_attribute("data-lesson-id")?
        .parse()
        .ok()
        .map(LessonId)
}

/// The (origin, kind) an entry of `#approvals` shows.
pub fn approval_of(li: &Element) -> Option<(String, String)> {
    Some((
        li.get_attribute("data-origin")?,
        li.get_attribute("data-kind")?,
    ))
}

/// Calls `f` when the form is submitted (Save, or Enter in a field); the page stays.
pub fn on_submit(view: &SettingsView, f: impl Fn() + 'static) -> Result<(), JsValue> {
    let submit = Closure::<dyn FnMut(web_sys::Event)>::new(move |e: web_sys::Event| {
        e.prevent_default();
        f();
    });
    view.form
        .add_event_listener_with_callback("submit", submit.as_ref().unchecked_ref())?;
    submit.forget();
    Ok(())
}

/// Calls `save` when the API key's form is sent (Save key, or Enter in the field). Typing the
/// key is no edit of the settings: its events stop at the field.
pub fn on_api_key_save(view: &SettingsView, save: impl Fn() + 'static) -> Result<(), JsValue> {
    let submit = Closure::<dyn FnMut(web_sys::Event)>::new(move |e: web_sys::Event| {
        e.prevent_default();
        save();
    });
    view.api_key_form
        .add_event_listener_with_callback("submit", submit.as_ref().unchecked_ref())?;
    submit.forget();
    let stop = Closure::<dyn FnMut(web_sys::Event)>::new(|e: web_sys::Event| {
        e.stop_propagation();
    });
    for event in ["input", "change"] {
        view.api_key
            .add_event_listener_with_callback(event, stop.as_ref().unchecked_ref())?;
    }
    stop.forget();
    Ok(())
}

/// Calls `f` on every edit of the form (`input` and `change` events).
pub fn on_edit(view: &SettingsView, f: impl Fn() + 'static) -> Result<(), JsValue> {
    let edit = Closure::<dyn FnMut()>::new(f);
    for event in ["input", "change"] {
        view.form
            .add_event_listener_with_callback(event, edit.as_ref().unchecked_ref())?;
    }
    edit.forget();
    Ok(())
}
