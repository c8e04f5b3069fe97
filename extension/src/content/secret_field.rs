//! The page's own check before a saved secret is typed. The host already chose the field from
//! its observation; this runs at the moment of typing, on the element the action resolved to,
//! so a page that swapped the field, navigated to another origin or framed a look-alike since
//! the observation gets nothing.

use itinero_shared::messages::SecretField;
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlInputElement, Window};

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
