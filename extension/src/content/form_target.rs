//! Where a form control sends what is typed into it: its form's `action`, or the `formaction`
//! of the button that sends it. The observation marks a control whose form sends to another
//! origin (the host then treats submitting it as leaving the site), and the secret check
//! refuses a sign-in form that would carry a password to another site.

use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlButtonElement, HtmlFormElement, HtmlInputElement};

/// The origin of `url` (`null` for what has none, such as `javascript:`).
fn origin_of(url: &str) -> String {
    web_sys::Url::new(url)
        .map(|u| u.origin())
        .unwrap_or_else(|_| "null".into())
}

/// The form `el` belongs to, and the address its own `formaction` names, if it has one.
fn form_of(el: &Element) -> Option<(HtmlFormElement, Option<String>)> {
    let own = el.has_attribute("formaction");
    if let Some(b) = el.dyn_ref::<HtmlButtonElement>() {
        return Some((b.form()?, own.then(|| b.form_action())));
    }
    if let Some(i) = el.dyn_ref::<HtmlInputElement>() {
        return Some((i.form()?, own.then(|| i.form_action())));
    }
    let form = el.closest("form").ok().flatten()?;
    Some((form.dyn_into().ok()?, None))
}

/// Every address `form` can send to: its `action` and the `formaction` of each of its buttons.
pub fn destinations(form: &HtmlFormElement) -> Vec<String> {
    let mut all = vec![form.action()];
    if let Ok(list) = form.query_selector_all("[formaction]") {
        for node in (0..list.length()).filter_map(|i| list.item(i)) {
            if let Some(b) = node.dyn_ref::<HtmlButtonElement>() {
                all.push(b.form_action());
            } else if let Some(i) = node.dyn_ref::<HtmlInputElement>() {
                all.push(i.form_action());
            }
        }
    }
    all
}

/// The origin `el`'s form sends to, when that is not `page` (its document's origin).
pub fn sends_to(el: &Element, page: &str) -> Option<String> {
    let (form, own) = form_of(el)?;
    let to = origin_of(&own.unwrap_or_else(|| form.action()));
    (to != page).then_some(to)
}

/// Whether a secret typed on a page of `page` may be sent to `url`: the same origin, or a host
/// of `site` (the sign-in's registrable domain, which the host worked out), never from https
/// to anything else.
pub fn may_send_secret(page: &str, site: Option<&str>, url: &str) -> bool {
    let Ok(to) = web_sys::Url::new(url) else {
        return false;
    };
    if to.origin() == page {
        return true;
    }
    let scheme = to.protocol();
    let secure_page = page.starts_with("https:");
    if !(scheme == "https:" || scheme == "http:" && !secure_page) {
        return false;
    }
    let host = to.hostname();
    site.is_some_and(|site| host == site || host.ends_with(&format!(".{site}")))
}
