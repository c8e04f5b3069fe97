//! The Vault page's DOM: the vault's state with its unlock (or create) form and Lock, the saved
//! sign-ins (`#vault-list`, one `li[data-credential-id]` each, with Show password, Edit and
//! Delete), the add form, the CSV import and the audit list. A password is only ever in an
//! input's value until it is sent, and in a revealed line until it is hidden (30 s at most);
//! nothing here writes one to the extension's storage.

use itinero_shared::vault::{
    AuditEntry, CredentialId, CredentialSummary, KeySource, VaultState, VaultStatus,
};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Document, Element, HtmlInputElement};

use super::view::{by_id, el, focus, set_status, show};

/// What a credential row's button asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowAction {
    Reveal(CredentialId),
    Hide(CredentialId),
    Edit(CredentialId),
    Delete(CredentialId),
}

/// A sign-in typed in the add form.
pub struct NewSignIn {
    pub origin: String,
    pub username: String,
    pub password: String,
    pub totp_seed: Option<String>,
    pub same_site: bool,
    pub allow_http: bool,
}

pub struct VaultView {
    document: Document,
    pub lock: Element,
    state: Element,
    pub unlock_form: Element,
    passphrase: HtmlInputElement,
    again_box: Element,
    again: HtmlInputElement,
    unlock: Element,
    status: Element,
    pub list: Element,
    reveal_row: Element,
    reveal_passphrase: HtmlInputElement,
    more_row: Element,
    shown: Element,
    pub more: Element,
    pub add_form: Element,
    origin: HtmlInputElement,
    username: HtmlInputElement,
    password: HtmlInputElement,
    totp: HtmlInputElement,
    same_site: HtmlInputElement,
    allow_http: HtmlInputElement,
    add_status: Element,
    pub import_file: HtmlInputElement,
    import_status: Element,
    audit: Element,
    audit_empty: Element,
    /// Whether the form creates the vault (asks the passphrase twice) or unlocks it.
    creating: std::cell::Cell<bool>,
}

fn input(document: &Document, id: &str) -> Result<HtmlInputElement, JsValue> {
    by_id(document, id)?.dyn_into().map_err(Into::into)
}

impl VaultView {
    pub fn find(document: &Document) -> Result<Self, JsValue> {
        Ok(Self {
            lock: by_id(document, "vault-lock")?,
            state: by_id(document, "vault-state")?,
            unlock_form: by_id(document, "vault-unlock-form")?,
            passphrase: input(document, "vault-passphrase")?,
            again_box: by_id(document, "vault-again-box")?,
            again: input(document, "vault-passphrase-again")?,
            unlock: by_id(document, "vault-unlock")?,
            status: by_id(document, "vault-status")?,
            list: by_id(document, "vault-list")?,
            reveal_row: by_id(document, "vault-reveal-row")?,
            reveal_passphrase: input(document, "vault-reveal-passphrase")?,
            more_row: by_id(document, "vault-more-row")?,
            shown: by_id(document, "vault-shown")?,
            more: by_id(document, "vault-more")?,
            add_form: by_id(document, "vault-add-form")?,
            origin: input(document, "vault-origin")?,
            username: input(document, "vault-username")?,
            password: input(document, "vault-password")?,
            totp: input(document, "vault-totp")?,
            same_site: input(document, "vault-same-site")?,
            allow_http: input(document, "vault-allow-http")?,
            add_status: by_id(document, "vault-add-status")?,
            import_file: input(document, "vault-import-file")?,
            import_status: by_id(document, "vault-import-status")?,
            audit: by_id(document, "vault-audit")?,
            audit_empty: by_id(document, "vault-audit-empty")?,
            creating: Default::default(),
            document: document.clone(),
        })
    }

    pub fn status(&self, text: &str, kind: &str) {
        set_status(&self.status, text, kind);
    }

    pub fn add_status(&self, text: &str, kind: &str) {
        set_status(&self.add_status, text, kind);
    }

    pub fn import_status(&self, text: &str, kind: &str) {
        set_status(&self.import_status, text, kind);
    }

    /// The vault's state in words, with the form it needs (create, unlock) or Lock.
    pub fn show_state(&self, s: &VaultStatus) {
        let (text, form, creating) = match (s.state, &s.keyring_unavailable) {
            (VaultState::NotCreated, Some(_)) => (
                "No vault yet. Choose a passphrase (at least 8 characters) to create it: \
                 there is no OS secret store here to keep its key, so you give the passphrase \
                 once each time the browser starts itinero."
                    .to_owned(),
                true,
                true,
            ),
            (VaultState::NotCreated, None) => (
                "No vault yet: the first sign-in you save creates it, with its key in the OS \
                 secret store."
                    .to_owned(),
                false,
                false,
            ),
            (VaultState::Locked, _) => (
                match s.source {
                    Some(KeySource::Keyring) => {
                        "Locked: the OS secret store did not give the vault's key.".to_owned()
                    }
                    _ => "Locked: give the passphrase to use the saved sign-ins.".to_owned(),
                },
                s.source != Some(KeySource::Keyring),
                false,
            ),
            (VaultState::Unlocked, _) => (
                match s.source {
                    Some(KeySource::Keyring) => {
                        "Unlocked: its key is in the OS secret store.".to_owned()
                    }
                    _ => "Unlocked with your passphrase until the browser closes (or Lock)."
                        .to_owned(),
                },
                false,
                false,
            ),
        };
        self.state.set_text_content(Some(&text));
        let _ = self.state.set_attribute(
            "data-state",
            match s.state {
                VaultState::NotCreated => "not_created",
                VaultState::Locked => "locked",
                VaultState::Unlocked => "unlocked",
            },
        );
        self.creating.set(creating);
        show(&self.unlock_form, form);
        show(&self.again_box, creating);
        self.unlock.set_text_content(Some(if creating {
            "Create the vault"
        } else {
            "Unlock"
        }));
        let _ = self.unlock.remove_attribute("disabled");
        self.passphrase.set_value("");
        self.again.set_value("");
        show(
            &self.lock,
            s.state == VaultState::Unlocked && s.source == Some(KeySource::Passphrase),
        );
    }

    /// The passphrase typed (twice, alike, when creating); the fields are emptied.
    pub fn take_passphrase(&self) -> Result<String, String> {
        let p = self.passphrase.value();
        let again = self.again.value();
        if p.is_empty() {
            focus(&self.passphrase);
            return Err("Type the passphrase first.".into());
        }
        if self.creating.get() {
            if p.chars().count() < 8 {
                focus(&self.passphrase);
                return Err("A passphrase needs at least 8 characters.".into());
            }
            if p != again {
                focus(&self.again);
                return Err("The two passphrases differ.".into());
            }
        }
        self.passphrase.set_value("");
        self.again.set_value("");
        let _ = self.unlock.set_attribute("disabled", "");
        Ok(p)
    }

    pub fn unlock_failed(&self, message: &str) {
        let _ = self.unlock.remove_attribute("disabled");
        self.status(message, "error");
        focus(&self.passphrase);
    }

    /// A page of the sign-ins, `offset` of `total` in: the first page replaces the list, a
    /// later one ("Show more") is added to it.
    pub fn show_credentials(&self, list: &[CredentialSummary], offset: u32, total: u32) {
        if offset == 0 {
            self.list.set_text_content(None);
        }
        for c in list {
            let li = el(&self.document, "li", "", "");
            let _ = li.set_attribute("data-credential-id", &c.id.to_string());
            let text = el(&self.document, "span", "text", &c.username);
            let mut meta = c.origin.clone();
            for flag in c.flags() {
                meta.push_str(&format!(" · {flag}"));
            }
            let _ = text.append_child(&el(&self.document, "span", "meta", &meta));
            let _ = li.append_child(&text);
            for (act, label) in [
                ("reveal", "Show password"),
                ("edit", "Edit"),
                ("delete", "Delete"),
            ] {
                let class = if act == "delete" {
                    "danger small"
                } else {
                    "secondary small"
                };
                let b = el(&self.document, "button", class, label);
                let _ = b.set_attribute("type", "button");
                let _ = b.set_attribute("data-act", act);
                let _ = b.set_attribute(
                    "aria-label",
                    &format!("{label}: {} on {}", c.username, c.origin),
                );
                let _ = li.append_child(&b);
            }
            let _ = self.list.append_child(&li);
        }
        if list.is_empty() && offset == 0 {
            self.status("No saved sign-ins yet.", "");
        }
        let listed = offset + list.len() as u32;
        show(&self.more_row, listed < total);
        self.shown
            .set_text_content(Some(&format!("Showing {listed} of {total}.")));
    }

    fn row(&self, id: CredentialId) -> Option<Element> {
        self.list
            .query_selector(&format!("li[data-credential-id=\"{id}\"]"))
            .ok()
            .flatten()
    }

    fn button(&self, id: CredentialId, act: &str) -> Option<Element> {
        self.row(id)?
            .query_selector(&format!("button[data-act=\"{act}\"]"))
            .ok()
            .flatten()
    }

    /// A button that acts only on its second click: the first arms it, saying so.
    /// Asks for the passphrase a reveal needs, beside the row's armed button.
    pub fn ask_reveal_passphrase(&self) {
        show(&self.reveal_row, true);
        focus(self.reveal_passphrase.as_ref());
    }

    /// The passphrase typed for a reveal, taken out of its field (which is hidden again).
    pub fn take_reveal_passphrase(&self) -> String {
        let typed = self.reveal_passphrase.value();
        self.reveal_passphrase.set_value("");
        show(&self.reveal_row, false);
        typed
    }

    pub fn arm(&self, id: CredentialId, act: &str, armed_label: &str) -> bool {
        let Some(b) = self.button(id, act) else {
            return false;
        };
        if b.get_attribute("data-armed").is_some() {
            let _ = b.remove_attribute("data-armed");
            return true;
        }
        let _ = b.set_attribute("data-armed", "");
        b.set_text_content(Some(armed_label));
        false
    }

    /// Shows a revealed password (and TOTP code) under its row, with Hide.
    pub fn show_secret(&self, id: CredentialId, password: &str, totp_code: Option<&str>) {
        let Some(row) = self.row(id) else {
            return;
        };
        self.hide_secret(id);
        let mut text = format!("Password: {password}");
        if let Some(code) = totp_code {
            text.push_str(&format!(" · code now: {code}"));
        }
        let secret = el(&self.document, "span", "secret", &text);
        let _ = row.append_child(&secret);
        if let Some(b) = self.button(id, "reveal") {
            b.set_text_content(Some("Hide"));
            let _ = b.set_attribute("data-act", "hide");
        }
    }

    pub fn hide_secret(&self, id: CredentialId) {
        let Some(row) = self.row(id) else {
            return;
        };
        if let Ok(Some(secret)) = row.query_selector(".secret") {
            secret.remove();
        }
        for act in ["hide", "reveal"] {
            if let Some(b) = self.button(id, act) {
                b.set_text_content(Some("Show password"));
                let _ = b.set_attribute("data-act", "reveal");
                let _ = b.remove_attribute("data-armed");
            }
        }
    }

    /// Puts a saved sign-in's site and username in the add form, to save a new password.
    pub fn edit(&self, c: &CredentialSummary) {
        self.origin.set_value(&c.origin);
        self.username.set_value(&c.username);
        self.same_site.set_checked(c.same_site);
        self.allow_http.set_checked(c.allow_http);
        self.add_status(
            "Type the new password (and TOTP seed, if any), then Save.",
            "",
        );
        focus(&self.password);
    }

    /// The add form's sign-in; the secret fields are emptied as they are read.
    pub fn take_sign_in(&self) -> Result<NewSignIn, String> {
        let origin = self.origin.value().trim().to_owned();
        let username = self.username.value().trim().to_owned();
        let password = self.password.value();
        let missing = [
            (&self.origin, origin.is_empty()),
            (&self.username, username.is_empty()),
            (&self.password, password.is_empty()),
        ];
        for (field, empty) in &missing {
            let _ = field.set_attribute("aria-invalid", if *empty { "true" } else { "false" });
        }
        if let Some((field, _)) = missing.iter().find(|(_, empty)| *empty) {
            focus(field);
            return Err("Give the site, the username and the password.".into());
        }
        let totp = self.totp.value();
        self.password.set_value("");
        self.totp.set_value("");
        Ok(NewSignIn {
            origin,
            username,
            password,
            totp_seed: (!totp.trim().is_empty()).then_some(totp),
            same_site: self.same_site.checked(),
            allow_http: self.allow_http.checked(),
        })
    }

    pub fn saved(&self, c: &CredentialSummary) {
        for f in [&self.origin, &self.username] {
            f.set_value("");
        }
        self.same_site.set_checked(false);
        self.allow_http.set_checked(false);
        self.add_status(&format!("Saved {} on {}.", c.username, c.origin), "ok");
    }

    /// The chosen CSV file, if one is.
    pub fn import_file(&self) -> Option<web_sys::File> {
        self.import_file.files()?.get(0)
    }

    pub fn clear_import(&self) {
        self.import_file.set_value("");
    }

    pub fn show_audit(&self, entries: &[AuditEntry], now_ms: i64) {
        self.audit.set_text_content(None);
        for e in entries {
            let li = el(&self.document, "li", "", "");
            let _ = li.set_attribute("data-what", &e.what);
            let mut line = format!("{} {} on {}", e.what, e.username, e.origin);
            if !e.page_url.is_empty() {
                line.push_str(&format!(" at {}", e.page_url));
            }
            if !e.detail.is_empty() {
                line.push_str(&format!(": {}", e.detail));
            }
            let text = el(&self.document, "span", "text", &line);
            let when = super::format::ago(now_ms, e.at)
                .unwrap_or_else(|| super::history::local_time(e.at));
            let _ = text.append_child(&el(&self.document, "span", "meta", &when));
            let _ = li.append_child(&text);
            let _ = self.audit.append_child(&li);
        }
        show(&self.audit_empty, entries.is_empty());
    }
}

/// Calls `f` with what a credential row's button asks for.
pub fn on_row_action(view: &VaultView, f: impl Fn(RowAction) + 'static) -> Result<(), JsValue> {
    let click = Closure::<dyn FnMut(web_sys::Event)>::new(move |e: web_sys::Event| {
        let Some(button) = e
            .target()
            .and_then(|t| t.dyn_into::<Element>().ok())
            .and_then(|t| t.closest("button[data-act]").ok().flatten())
        else {
            return;
        };
        let id = button
            .closest("li[data-credential-id]")
            .ok()
            .flatten()
            .and_then(|li| li.get_attribute("data-credential-id"))
            .and_then(|id| id.parse().ok());
        let Some(id) = id else {
            return;
        };
        let action = match button.get_attribute("data-act").as_deref() {
            Some("reveal") => RowAction::Reveal(id),
            Some("hide") => RowAction::Hide(id),
            Some("edit") => RowAction::Edit(id),
            Some("delete") => RowAction::Delete(id),
            _ => return,
        };
        f(action);
    });
    view.list
        .add_event_listener_with_callback("click", click.as_ref().unchecked_ref())?;
    click.forget();
    Ok(())
}

/// Calls `f` when a file is chosen for import.
pub fn on_import(view: &VaultView, f: impl Fn() + 'static) -> Result<(), JsValue> {
    let change = Closure::<dyn FnMut()>::new(f);
    view.import_file
        .add_event_listener_with_callback("change", change.as_ref().unchecked_ref())?;
    change.forget();
    Ok(())
}
