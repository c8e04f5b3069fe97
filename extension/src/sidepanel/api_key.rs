//! The Settings page's API key for an OpenAI-compatible server: what it asks of the host and
//! what it does with the replies (the DOM is [`super::settings`]'s). A key typed here goes to
//! the host in `SetApiKey` and is dropped; the host never sends one back, only which servers
//! have one (in the vault's `Status`), so the field is never filled.

use std::cell::RefCell;
use std::rc::Rc;

use itinero_shared::envelope::MessageSet;
use itinero_shared::messages::{VaultRequest, VaultResponse};
use itinero_shared::{ToBrowser, ToHost};
use wasm_bindgen::JsValue;

use super::nav::Page;
use super::{format, open_page, request, settings, view, Panel, Pending};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiKeyPending {
    /// The vault's state: which servers have a key, and whether it is unlocked.
    Status,
    Save,
    Remove,
}

pub fn wire(panel: &Rc<RefCell<Panel>>) -> Result<(), JsValue> {
    let p = panel.borrow();
    settings::on_api_key_save(&p.settings, {
        let panel = panel.clone();
        move || save(&mut panel.borrow_mut())
    })?;
    view::on_click(&p.settings.api_key_remove, {
        let panel = panel.clone();
        move || remove(&mut panel.borrow_mut())
    })?;
    view::on_click(&p.settings.api_key_vault, {
        let panel = panel.clone();
        move || open_page(&panel, Page::Vault)
    })?;
    Ok(())
}

fn ask(p: &mut Panel, body: VaultRequest, what: ApiKeyPending) {
    request(p, ToHost::Vault(body), Pending::ApiKey(what));
}

/// Asks which servers have a key (each time the Settings page opens).
pub fn refresh(p: &mut Panel) {
    ask(p, VaultRequest::Status, ApiKeyPending::Status);
}

fn save(p: &mut Panel) {
    let Some(server) = p.settings.chosen_openai_url() else {
        return p
            .settings
            .api_key_status("Type the server's address first.", "error");
    };
    let Some(key) = p.settings.take_api_key() else {
        return p.settings.api_key_status("Type the key first.", "error");
    };
    p.settings.api_key_status("Saving…", "");
    ask(
        p,
        VaultRequest::SetApiKey { server, key },
        ApiKeyPending::Save,
    );
}

fn remove(p: &mut Panel) {
    let Some(server) = p.settings.chosen_openai_url() else {
        return;
    };
    p.settings.api_key_status("Removing…", "");
    ask(
        p,
        VaultRequest::RemoveApiKey { server },
        ApiKeyPending::Remove,
    );
}

pub fn on_reply(p: &mut Panel, what: ApiKeyPending, msg: ToBrowser) {
    let reply = match msg {
        ToBrowser::Vault(reply) => reply,
        ToBrowser::Error(err) => return show_error(p, what, &format::sentence(&err.message)),
        other => {
            let why = format!("The host answered with {}.", other.type_name());
            return show_error(p, what, &why);
        }
    };
    match (what, reply) {
        (ApiKeyPending::Status, VaultResponse::Status { status }) => p.settings.show_vault(&status),
        (ApiKeyPending::Save, VaultResponse::ApiKeySaved { server }) => {
            p.settings
                .api_key_status(&format!("Key saved for {server}."), "ok");
            refresh(p);
        }
        (ApiKeyPending::Remove, VaultResponse::ApiKeyRemoved { server, existed }) => {
            let text = if existed {
                format!("Key removed for {server}.")
            } else {
                format!("There was no key for {server}.")
            };
            p.settings.api_key_status(&text, "ok");
            refresh(p);
        }
        (what, _) => show_error(p, what, "The host answered something else."),
    }
}

pub fn show_error(p: &mut Panel, what: ApiKeyPending, message: &str) {
    match what {
        // A host without a store, or an older one: the key cannot be kept; say so where it
        // would be typed.
        ApiKeyPending::Status => p.settings.api_key_status(message, "error"),
        ApiKeyPending::Save | ApiKeyPending::Remove => {
            p.settings.api_key_status(message, "error");
            // The vault's state may be why (locked since): the line says what to do.
            refresh(p);
        }
    }
}
