//! The page's own check before a saved secret is typed. The host already chose the field from
//! its observation; this runs at the moment of typing, on the element the action resolved to,
//! so a page that swapped the field, navigated to another origin or framed a look-alike since
//! the observation gets nothing.
//!
//! A password or code never goes into a form that sends its fields in the page's address
//! (GET): the next page's URL would carry it into the browser's history, the server's logs and
//! every observation after. A form that says so (a `method` or `formmethod` of `get`, or an
//! `action` with no method) is refused outright; a form with neither is a script's, which
//! normally sends it itself, so its native GET sending is held back instead. Nor into a form
//! that sends to another site than the sign-in's: an injected form on the right page.

use super::dom::{attribute_of, attributes_in};
use super::form_target;
use itinero_shared::messages::SecretField;
use itinero_shared::vault::SecretKind;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{Element, Event, HtmlFormElement, HtmlInputElement, Window};

/// Why the secret must not be typed into `el`, if it must not.
pub fn refuse(win: &Window, el: &Element, field: &SecretField) -> Option<String> {
    let origin = el
        .owner_document()
        .and_then(|d| d.location())
        .and_then(|l| l.origin().ok())
        .unwrap_or_default();
    if origin != field.origin {
        return Some(format!(
            "the field is on {origin}, not on {} where the sign-in was saved",
            field.origin
        ));
    }
    let Some(input) = el.dyn_ref::<HtmlInputElement>() else {
        return Some(format!(
            "a <{}> is not a sign-in field",
            el.tag_name().to_lowercase()
        ));
    };
    let kind = input.type_().to_lowercase();
    if !field.kind.fits_input_type(&kind) {
        return Some(format!(
            "a field of type {kind:?} does not take a {}",
            field.kind.word()
        ));
    }
    if input.read_only() {
        return Some("the field is read-only".into());
    }
    let get_form = input
        .form()
        .is_some_and(|f| sends_in_address(&f) == Some(true));
    if field.kind != SecretKind::Username && get_form {
        return Some(format!(
            "its form sends with GET, which would put the {} in the next page's address",
            field.kind.word()
        ));
    }
    if let Some(form) = input.form() {
        let elsewhere = form_target::destinations(&form)
            .into_iter()
            .find(|to| !form_target::may_send_secret(&origin, field.site.as_deref(), to));
        if let Some(to) = elsewhere {
            let to = web_sys::Url::new(&to).map_or(to, |u| u.origin());
            return Some(format!("its form sends to {to}, another site"));
        }
    }
    let r = el.get_bounding_client_rect();
    let style = win.get_computed_style(el).ok().flatten();
    let shown = |prop: &str, hidden: &str| {
        style
            .as_ref()
            .and_then(|s| s.get_property_value(prop).ok())
            .is_none_or(|v| v.trim() != hidden)
    };
    let opaque = style
        .as_ref()
        .and_then(|s| s.get_property_value("opacity").ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .is_none_or(|o| o >= 0.1);
    // The target was scrolled into view before this check: outside the viewport now means
    // parked where no scrolling brings it.
    let (vw, vh) = (
        win.inner_width()
            .ok()
            .and_then(|v| v.as_f64())
            .unwrap_or(f64::MAX),
        win.inner_height()
            .ok()
            .and_then(|v| v.as_f64())
            .unwrap_or(f64::MAX),
    );
    let in_view = r.right() > 0.0 && r.bottom() > 0.0 && r.left() < vw && r.top() < vh;
    if r.width() < 2.0 || r.height() < 2.0 || !in_view || !shown("visibility", "hidden") || !opaque
    {
        return Some("the field cannot be seen".into());
    }
    None
}

/// Whether `form` sends its fields in the page's address: `Some(true)` when its markup says
/// so, `Some(false)` when it says it posts, `None` when it says nothing (GET by default, unless
/// a script sends it).
fn sends_in_address(form: &HtmlFormElement) -> Option<bool> {
    let says_get = |v: &str| v.trim().eq_ignore_ascii_case("get");
    // Read through the prototypes: a control named `getAttribute` or `querySelectorAll` would
    // otherwise hide the form's own.
    let submitter_get = attributes_in(form, "[formmethod]", "formmethod")
        .iter()
        .any(|m| says_get(m));
    match attribute_of(form, "method") {
        _ if submitter_get => Some(true),
        Some(m) => Some(says_get(&m)),
        None if attribute_of(form, "action").is_some() => Some(true),
        None => None,
    }
}

thread_local! {
    /// Cancels a form's sending if nothing else did; it lives as long as the page.
    static HOLD_BACK: Closure<dyn FnMut(Event)> = Closure::new(|e: Event| {
        if !e.default_prevented() {
            e.prevent_default();
        }
    });
}

/// For a secret about to be typed into `el`: when its form says nothing of how it is sent,
/// cancels the browser's own GET sending of it from now on. The listener is added to the form
/// after the page's own, so a page that sends the form by script (and cancels the native
/// sending itself) is not disturbed; only a sending nobody cancelled is stopped.
pub fn hold_back_get(el: &Element, kind: SecretKind) {
    if kind == SecretKind::Username {
        return;
    }
    let Some(form) = el.dyn_ref::<HtmlInputElement>().and_then(|i| i.form()) else {
        return;
    };
    if sends_in_address(&form).is_some() {
        return;
    }
    // One listener for every form: the DOM adds the same function to a target only once, so a
    // form that takes several secrets is not given several.
    HOLD_BACK.with(|stop| {
        let _ = form.add_event_listener_with_callback("submit", stop.as_ref().unchecked_ref());
    });
}
