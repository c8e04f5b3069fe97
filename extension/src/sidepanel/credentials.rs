//! The Vault page's behaviour: what it asks of the host and what it does with the replies. The
//! DOM is [`super::vault`]'s. A password typed here goes to the host in `Add` and is dropped;
//! a revealed one is on screen until Hide, or for [`REVEAL_MS`] at most.

use std::cell::RefCell;
use std::rc::Rc;

use itinero_shared::messages::{VaultRequest, VaultResponse};
use itinero_shared::vault::CredentialId;
use itinero_shared::{ToBrowser, ToHost};
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;

use super::skills::on_submit;
use super::vault::{self, RowAction};
use super::{format, now_ms, request, view, Panel, Pending};
use itinero_shared::envelope::MessageSet;

/// How long a revealed password stays on screen.
const REVEAL_MS: u32 = 30_000;
/// Audit lines shown.
const AUDIT_LISTED: u32 = 50;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VaultPending {
    Status,
    Unlock,
    Lock,
    List,
    Add,
    Remove,
    Reveal(CredentialId),
    Import,
    Audit,
}

pub fn wire(panel: &Rc<RefCell<Panel>>) -> Result<(), JsValue> {
    let p = panel.borrow();
    let v = &p.vault;
    let with = |f: fn(&mut Panel)| {
        let panel = panel.clone();
        move || f(&mut panel.borrow_mut())
    };
    on_submit(&v.unlock_form, with(unlock))?;
    view::on_click(&v.lock, with(lock))?;
    on_submit(&v.add_form, with(add))?;
    view::on_click(&v.more, with(more))?;
    vault::on_row_action(v, {
        let panel = panel.clone();
        move |action| row_action(&panel, action)
    })?;
    vault::on_import(v, {
        let panel = panel.clone();
        move || import(&panel)
    })?;
    Ok(())
}

fn ask(p: &mut Panel, body: VaultRequest, what: VaultPending) {
    request(p, ToHost::Vault(body), Pending::Vault(what));
}

/// What the page shows: the state, the sign-ins and the audit list, asked again each time.
pub fn refresh(p: &mut Panel) {
    ask(p, VaultRequest::Status, VaultPending::Status);
    ask(
        p,
        VaultRequest::List {
            offset: 0,
            limit: VaultRequest::LIST_PAGE,
        },
        VaultPending::List,
    );
    ask(
        p,
        VaultRequest::Audit {
            limit: AUDIT_LISTED,
        },
        VaultPending::Audit,
    );
}

/// The next page of the sign-ins, after those listed.
fn more(p: &mut Panel) {
    let offset = p.credentials.len() as u32;
    ask(
        p,
        VaultRequest::List {
            offset,
            limit: VaultRequest::LIST_PAGE,
        },
        VaultPending::List,
    );
}

fn unlock(p: &mut Panel) {
    match p.vault.take_passphrase() {
        Ok(passphrase) => {
            p.vault.status("Unlocking…", "");
            ask(p, VaultRequest::Unlock { passphrase }, VaultPending::Unlock);
        }
        Err(why) => p.vault.status(&why, "error"),
    }
}

fn lock(p: &mut Panel) {
    ask(p, VaultRequest::Lock, VaultPending::Lock);
}

fn add(p: &mut Panel) {
    match p.vault.take_sign_in() {
        Ok(s) => {
            p.vault.add_status("Saving…", "");
            let body = VaultRequest::Add {
                origin: s.origin,
                username: s.username,
                password: s.password,
                totp_seed: s.totp_seed,
                notes: String::new(),
                same_site: s.same_site,
                allow_http: s.allow_http,
            };
            ask(p, body, VaultPending::Add);
        }
        Err(why) => p.vault.add_status(&why, "error"),
    }
}

fn row_action(panel: &Rc<RefCell<Panel>>, action: RowAction) {
    let mut p = panel.borrow_mut();
    match action {
        RowAction::Reveal(id) => {
            if p.vault.arm(id, "reveal", "Really show it?") {
                let passphrase = p.vault.take_reveal_passphrase();
                ask(
                    &mut p,
                    VaultRequest::Reveal { id, passphrase },
                    VaultPending::Reveal(id),
                );
            } else {
                p.vault.ask_reveal_passphrase();
            }
        }
        RowAction::Hide(id) => p.vault.hide_secret(id),
        RowAction::Edit(id) => {
            if let Some(c) = p.credentials.iter().find(|c| c.id == id).cloned() {
                p.vault.edit(&c);
            }
        }
        RowAction::Delete(id) => {
            if p.vault.arm(id, "delete", "Click again to delete") {
                ask(&mut p, VaultRequest::Remove { id }, VaultPending::Remove);
            }
        }
    }
}

/// Reads the chosen CSV and sends it; the file input is cleared either way.
fn import(panel: &Rc<RefCell<Panel>>) {
    let Some(file) = panel.borrow().vault.import_file() else {
        return;
    };
    panel.borrow().vault.import_status("Importing…", "");
    let panel = panel.clone();
    wasm_bindgen_futures::spawn_local(async move {
        let text = JsFuture::from(file.text()).await;
        let mut p = panel.borrow_mut();
        p.vault.clear_import();
        match text.ok().and_then(|t| t.as_string()) {
            Some(csv) => ask(&mut p, VaultRequest::Import { csv }, VaultPending::Import),
            None => p
                .vault
                .import_status("The file could not be read.", "error"),
        }
    });
}

pub fn on_reply(p: &mut Panel, what: VaultPending, msg: ToBrowser) {
    let reply = match msg {
        ToBrowser::Vault(reply) => reply,
        ToBrowser::Error(err) => return show_error(p, what, &format::sentence(&err.message)),
        other => {
            let why = format!("The host answered with {}.", other.type_name());
            return show_error(p, what, &why);
        }
    };
    match (what, reply) {
        (
            VaultPending::Status | VaultPending::Unlock | VaultPending::Lock,
            VaultResponse::Status { status },
        ) => {
            p.vault.show_state(&status);
            // The Settings page's API key line follows the vault's state.
            p.settings.show_vault(&status);
            // A plain refresh leaves the line to what it reported (a deletion, say).
            match what {
                VaultPending::Unlock => p.vault.status("Unlocked.", "ok"),
                VaultPending::Lock => p.vault.status("Locked.", "ok"),
                _ => {}
            }
        }
        (
            VaultPending::List,
            VaultResponse::Credentials {
                credentials,
                offset,
                total,
            },
        ) => {
            p.vault.show_credentials(&credentials, offset, total);
            if offset == 0 {
                p.credentials = credentials;
            } else {
                p.credentials.extend(credentials);
            }
        }
        (VaultPending::Add, VaultResponse::Saved { credential }) => {
            p.vault.saved(&credential);
            // The list, the state (a first save creates the vault) and the audit.
            refresh(p);
        }
        (VaultPending::Remove, VaultResponse::Removed { .. }) => {
            p.vault.status("Deleted.", "ok");
            refresh(p);
        }
        (
            VaultPending::Reveal(id),
            VaultResponse::Revealed {
                password,
                totp_code,
            },
        ) => {
            p.vault.show_secret(id, &password, totp_code.as_deref());
            hide_later(p, id);
            ask(
                p,
                VaultRequest::Audit {
                    limit: AUDIT_LISTED,
                },
                VaultPending::Audit,
            );
        }
        (VaultPending::Import, VaultResponse::Imported { report }) => {
            let mut text = format!(
                "{} export: {} added, {} updated",
                report.format, report.added, report.updated
            );
            if !report.skipped.is_empty() {
                text.push_str(&format!(
                    ", {} skipped ({})",
                    report.skipped.len(),
                    report.skipped.join("; ")
                ));
            }
            text.push_str(". Delete the CSV file now: it holds your passwords in the clear.");
            p.vault.import_status(&text, "ok");
            refresh(p);
        }
        (VaultPending::Audit, VaultResponse::Audit { entries }) => {
            p.vault.show_audit(&entries, now_ms())
        }
        (what, other) => {
            let why = format!("The host answered {} to {what:?}.", kind_of(&other));
            show_error(p, what, &why);
        }
    }
}

/// A reply's kind without its content (a `Revealed` out of place must not be shown).
fn kind_of(reply: &VaultResponse) -> &'static str {
    match reply {
        VaultResponse::Status { .. } => "Status",
        VaultResponse::Credentials { .. } => "Credentials",
        VaultResponse::Saved { .. } => "Saved",
        VaultResponse::Removed { .. } => "Removed",
        VaultResponse::Revealed { .. } => "Revealed",
        VaultResponse::Imported { .. } => "Imported",
        VaultResponse::Audit { .. } => "Audit",
        VaultResponse::ApiKeySaved { .. } => "ApiKeySaved",
        VaultResponse::ApiKeyRemoved { .. } => "ApiKeyRemoved",
    }
}

fn hide_later(p: &Panel, id: CredentialId) {
    let Some(panel) = p.me.upgrade() else {
        return;
    };
    gloo_timers::callback::Timeout::new(REVEAL_MS, move || {
        panel.borrow().vault.hide_secret(id);
    })
    .forget();
}

pub fn show_error(p: &mut Panel, what: VaultPending, message: &str) {
    match what {
        VaultPending::Unlock => p.vault.unlock_failed(message),
        VaultPending::Add => p.vault.add_status(message, "error"),
        VaultPending::Import => p.vault.import_status(message, "error"),
        VaultPending::Reveal(id) => {
            p.vault.hide_secret(id);
            p.vault.status(message, "error");
            // A refused reveal is listed there.
            ask(
                p,
                VaultRequest::Audit {
                    limit: AUDIT_LISTED,
                },
                VaultPending::Audit,
            );
        }
        VaultPending::Status
        | VaultPending::Lock
        | VaultPending::List
        | VaultPending::Remove
        | VaultPending::Audit => p.vault.status(message, "error"),
    }
}
