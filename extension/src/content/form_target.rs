//! Where a form control sends what is typed into it: its form's `action`, or the `formaction`
//! of the button that sends it. The observation marks a control whose form sends to another
//! origin (the host then treats submitting it as leaving the site), and the secret check
//! refuses a sign-in form that would carry a password to another site.
//!
//! The addresses are read as attributes and resolved here, never through `form.action`: a
//! control named `action` shadows that property, and reading it as a string would read an
//! element.

use itinero_shared::vault::{self, AddressParts};
use wasm_bindgen::JsCast;
use web_sys::{
    Element, HtmlButtonElement, HtmlFormElement, HtmlInputElement, HtmlSelectElement,
    HtmlTextAreaElement,
};

use super::dom::{attribute_of, attributes_in};

/// The origin of `url` (`null` for what has none, such as `javascript:`).
fn origin_of(url: &str) -> String {
    web_sys::Url::new(url)
        .map(|u| u.origin())
        .unwrap_or_else(|_| "null".into())
}

/// An `action` or `formaction` value as the browser sends to it: resolved against `el`'s base
/// URL, and the document's own address when it is absent or empty.
fn resolve(el: &Element, value: Option<String>) -> String {
    let value = value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
    let Some(value) = value else {
        return el
            .owner_document()
            .and_then(|d| d.url().ok())
            .unwrap_or_default();
    };
    el.base_uri()
        .ok()
        .flatten()
        .and_then(|base| web_sys::Url::new_with_base(&value, &base).ok())
        .map_or(value, |u| u.href())
}

/// The form `el` belongs to.
fn form_of(el: &Element) -> Option<HtmlFormElement> {
    if let Some(b) = el.dyn_ref::<HtmlButtonElement>() {
        return b.form();
    }
    if let Some(i) = el.dyn_ref::<HtmlInputElement>() {
        return i.form();
    }
    if let Some(s) = el.dyn_ref::<HtmlSelectElement>() {
        return s.form();
    }
    el.dyn_ref::<HtmlTextAreaElement>()?.form()
}

/// Every address `form` can send to: its `action` and the `formaction` of each of its buttons.
pub fn destinations(form: &HtmlFormElement) -> Vec<String> {
    let action = resolve(form, attribute_of(form, "action"));
    let buttons = attributes_in(form, "[formaction]", "formaction");
    std::iter::once(action)
        .chain(buttons.into_iter().map(|v| resolve(form, Some(v))))
        .collect()
}

/// The origin `el`'s form sends to, when that is not `page` (its document's origin).
pub fn sends_to(el: &Element, page: &str) -> Option<String> {
    let form = form_of(el)?;
    let own = attribute_of(el, "formaction");
    let to = match own {
        Some(own) => resolve(el, Some(own)),
        None => resolve(&form, attribute_of(&form, "action")),
    };
    let to = origin_of(&to);
    (to != page).then_some(to)
}

/// Whether a secret typed on a page of `page` (an origin) may be sent to `url`: the shared rule
/// ([`may_send_secret`]), with `site` the sign-in's registrable domain, which the host worked out.
pub fn may_send_secret(page: &str, site: Option<&str>, url: &str) -> bool {
    let (Ok(from), Ok(to)) = (web_sys::Url::new(page), web_sys::Url::new(url)) else {
        return false;
    };
    let read = |u: &web_sys::Url| {
        let scheme = u.protocol();
        (
            u.origin(),
            scheme.trim_end_matches(':').to_owned(),
            u.hostname().to_ascii_lowercase(),
        )
    };
    let ((from_origin, from_scheme, from_host), (to_origin, to_scheme, to_host)) =
        (read(&from), read(&to));
    vault::may_send_secret(
        AddressParts {
            origin: &from_origin,
            scheme: &from_scheme,
            host: &from_host,
        },
        site,
        AddressParts {
            origin: &to_origin,
            scheme: &to_scheme,
            host: &to_host,
        },
    )
}
