//! What an element is to a person: whether it can be used, its role, its accessible name, its state.

use wasm_bindgen::JsCast;
use web_sys::{
    Document, Element, HtmlInputElement, HtmlOptionElement, HtmlSelectElement, HtmlTextAreaElement,
};

use super::dom::{attr, clean_text};

const NAME_MAX: usize = 120;

/// ARIA roles of widgets a person operates.
const WIDGET_ROLES: &[&str] = &[
    "button",
    "link",
    "checkbox",
    "radio",
    "switch",
    "tab",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "option",
    "combobox",
    "listbox",
    "textbox",
    "searchbox",
    "slider",
    "spinbutton",
    "treeitem",
    "gridcell",
    "scrollbar",
];

/// Input types that hold free text (for the `empty` state and implicit roles).
const TEXT_INPUTS: &[&str] = &[
    "text", "email", "password", "search", "tel", "url", "number", "",
];

pub fn input_type(el: &Element) -> Option<String> {
    match el.local_name().as_str() {
        "input" => Some(
            el.unchecked_ref::<HtmlInputElement>()
                .type_()
                .to_ascii_lowercase(),
        ),
        "button" => Some(
            attr(el, "type")
                .unwrap_or_else(|| "submit".into())
                .to_ascii_lowercase(),
        ),
        _ => None,
    }
}

/// The role a person would call it: explicit `role`, else the tag's implicit one.
pub fn role(el: &Element, tag: &str, input_type: Option<&str>) -> Option<String> {
    if let Some(r) = attr(el, "role").and_then(|r| r.split_whitespace().next().map(str::to_owned)) {
        return Some(r);
    }
    let implicit = match tag {
        "a" if el.has_attribute("href") => "link",
        "button" | "summary" => "button",
        "select" => {
            if el.has_attribute("multiple") {
                "listbox"
            } else {
                "combobox"
            }
        }
        "textarea" => "textbox",
        "option" => "option",
        "img" => "img",
        "input" => match input_type.unwrap_or("text") {
            "checkbox" => "checkbox",
            "radio" => "radio",
            "range" => "slider",
            "number" => "spinbutton",
            "search" => "searchbox",
            "button" | "submit" | "reset" | "image" => "button",
            _ => "textbox",
        },
        "dialog" => "dialog",
        _ => return None,
    };
    Some(implicit.to_owned())
}

/// Whether a person could operate the element. `pointer_cursor` is the element's
/// computed cursor being `pointer` where its parent's is not (a click handler's usual sign).
pub fn is_interactive(el: &Element, tag: &str, role: Option<&str>, pointer_cursor: bool) -> bool {
    match tag {
        "a" => return el.has_attribute("href") || pointer_cursor,
        "button" | "select" | "textarea" | "summary" => return true,
        "input" => return el.unchecked_ref::<HtmlInputElement>().type_() != "hidden",
        _ => {}
    }
    if role.is_some_and(|r| WIDGET_ROLES.contains(&r)) {
        return true;
    }
    if let Some(ce) = attr(el, "contenteditable") {
        if ce.is_empty()
            || ce.eq_ignore_ascii_case("true")
            || ce.eq_ignore_ascii_case("plaintext-only")
        {
            return true;
        }
    }
    if attr(el, "tabindex")
        .and_then(|t| t.trim().parse::<i32>().ok())
        .is_some_and(|t| t >= 0)
    {
        return true;
    }
    if el.has_attribute("onclick") {
        return true;
    }
    pointer_cursor
}

fn text_by_ids(doc: &Document, ids: &str) -> String {
    let parts: Vec<String> = ids
        .split_whitespace()
        .filter_map(|id| doc.get_element_by_id(id))
        .filter_map(|e| e.text_content())
        .map(|t| clean_text(&t, NAME_MAX))
        .filter(|t| !t.is_empty())
        .collect();
    parts.join(" ")
}

/// Text of the `<label>`s that name a form control.
fn label_text(el: &Element) -> Option<String> {
    let labels = js_sys::Reflect::get(el, &"labels".into()).ok()?;
    let list: &web_sys::NodeList = labels.dyn_ref()?;
    let mut parts = Vec::new();
    for i in 0..list.length() {
        if let Some(t) = list.item(i).and_then(|l| l.text_content()) {
            let t = clean_text(&t, NAME_MAX);
            if !t.is_empty() {
                parts.push(t);
            }
        }
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

fn non_empty(s: Option<String>) -> Option<String> {
    s.map(|s| clean_text(&s, NAME_MAX))
        .filter(|s| !s.is_empty())
}

/// Accessible name, in the order of the accname algorithm's main steps.
pub fn accessible_name(
    doc: &Document,
    el: &Element,
    tag: &str,
    input_type: Option<&str>,
) -> Option<String> {
    if let Some(ids) = attr(el, "aria-labelledby") {
        let t = text_by_ids(doc, &ids);
        if !t.is_empty() {
            return Some(t);
        }
    }
    if let Some(t) = non_empty(attr(el, "aria-label")) {
        return Some(t);
    }
    let form_control = matches!(tag, "input" | "select" | "textarea");
    if form_control {
        if matches!(input_type, Some("submit" | "button" | "reset")) {
            return non_empty(attr(el, "value")).or_else(|| {
                Some(
                    if input_type == Some("reset") {
                        "Reset"
                    } else {
                        "Submit"
                    }
                    .into(),
                )
            });
        }
        if input_type == Some("image") {
            return non_empty(attr(el, "alt")).or_else(|| non_empty(attr(el, "title")));
        }
        return label_text(el)
            .or_else(|| non_empty(attr(el, "placeholder")))
            .or_else(|| non_empty(attr(el, "title")));
    }
    if tag == "img" {
        return non_empty(attr(el, "alt")).or_else(|| non_empty(attr(el, "title")));
    }
    // Name from content: visible text, else the alt text of images inside (a logo link).
    let text = non_empty(el.text_content());
    if text.is_some() {
        return text;
    }
    if let Ok(Some(img)) = el.query_selector("img[alt]") {
        if let Some(alt) = non_empty(attr(&img, "alt")) {
            return Some(alt);
        }
    }
    non_empty(attr(el, "title"))
}

/// Current value of a form control; never a password's.
pub fn value(el: &Element, tag: &str, input_type: Option<&str>) -> Option<String> {
    match tag {
        "input" => match input_type {
            Some("password") | Some("checkbox") | Some("radio") | Some("submit")
            | Some("button") | Some("reset") | Some("image") | Some("file") | Some("hidden") => {
                None
            }
            _ => Some(clean_text(
                &el.unchecked_ref::<HtmlInputElement>().value(),
                NAME_MAX,
            )),
        },
        "textarea" => Some(clean_text(
            &el.unchecked_ref::<HtmlTextAreaElement>().value(),
            NAME_MAX,
        )),
        "select" => {
            let select = el.unchecked_ref::<HtmlSelectElement>();
            let options = select.selected_options();
            let mut labels = Vec::new();
            for i in 0..options.length() {
                if let Some(o) = options.item(i) {
                    labels.push(clean_text(
                        &o.unchecked_ref::<HtmlOptionElement>().text(),
                        NAME_MAX,
                    ));
                }
            }
            Some(labels.join(", "))
        }
        _ => None,
    }
    .filter(|v| !v.is_empty())
}

pub fn states(doc: &Document, el: &Element, tag: &str, input_type: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    let aria = |name: &str| attr(el, name);
    let input = el.dyn_ref::<HtmlInputElement>();
    let checked = match input {
        Some(i) if matches!(input_type, Some("checkbox" | "radio")) => i.checked(),
        _ => aria("aria-checked").is_some_and(|v| v == "true"),
    };
    if checked {
        out.push("checked");
    }
    let selected = match el.dyn_ref::<HtmlOptionElement>() {
        Some(o) => o.selected(),
        None => aria("aria-selected").is_some_and(|v| v == "true"),
    };
    if selected {
        out.push("selected");
    }
    let disabled = js_sys::Reflect::get(el, &"disabled".into())
        .ok()
        .and_then(|v| v.as_bool())
        .unwrap_or(false)
        || aria("aria-disabled").is_some_and(|v| v == "true");
    if disabled {
        out.push("disabled");
    }
    match aria("aria-expanded").as_deref() {
        Some("true") => out.push("expanded"),
        Some("false") => out.push("collapsed"),
        _ => {}
    }
    if tag == "summary" {
        if let Some(details) = el.parent_element().filter(|p| p.local_name() == "details") {
            out.push(if details.has_attribute("open") {
                "expanded"
            } else {
                "collapsed"
            });
        }
    }
    let form_control = matches!(tag, "input" | "select" | "textarea");
    if (form_control && el.has_attribute("required"))
        || aria("aria-required").is_some_and(|v| v == "true")
    {
        out.push("required");
    }
    let text_like =
        tag == "textarea" || (tag == "input" && TEXT_INPUTS.contains(&input_type.unwrap_or("")));
    if text_like {
        let empty = match input {
            Some(i) => i.value().is_empty(),
            None => el.unchecked_ref::<HtmlTextAreaElement>().value().is_empty(),
        };
        if empty {
            out.push("empty");
        }
    }
    let invalid = aria("aria-invalid").is_some_and(|v| v != "false")
        || (form_control && {
            // `validity.valid`, not `checkValidity()`: the latter fires events the page sees.
            // An untouched empty required field is "empty", not yet "invalid".
            let valid = js_sys::Reflect::get(el, &"validity".into())
                .and_then(|v| js_sys::Reflect::get(&v, &"valid".into()))
                .ok()
                .and_then(|v| v.as_bool())
                .unwrap_or(true);
            !valid && !out.contains(&"empty")
        });
    if invalid {
        out.push("invalid");
    }
    if form_control && el.has_attribute("readonly") {
        out.push("readonly");
    }
    if doc.active_element().as_ref() == Some(el) {
        out.push("focused");
    }
    out.into_iter().map(str::to_owned).collect()
}
