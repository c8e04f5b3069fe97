//! What an element is to a person: whether it can be used, its role, its accessible name, its state.

use wasm_bindgen::JsCast;
use web_sys::{
    Document, Element, HtmlInputElement, HtmlOptionElement, HtmlSelectElement, HtmlTextAreaElement,
};

use super::dom::{attr, clean_text, get, Attrs, Properties};

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

pub fn input_type(el: &Element, tag: &str, attrs: &Attrs) -> Option<String> {
    input_type_with(tag, attrs, || {
        el.unchecked_ref::<HtmlInputElement>().type_()
    })
}

/// [`input_type`], given a way to read an input's `type` property: the walk holds most
/// elements only by name, and fetches one only for an `input`.
pub fn input_type_with(
    tag: &str,
    attrs: &Attrs,
    input_type: impl FnOnce() -> String,
) -> Option<String> {
    match tag {
        "input" => Some(input_type().to_ascii_lowercase()),
        "button" => Some(attrs.get("type").unwrap_or("submit").to_ascii_lowercase()),
        _ => None,
    }
}

/// The role a person would call it: explicit `role`, else the tag's implicit one.
pub fn role(attrs: &Attrs, tag: &str, input_type: Option<&str>) -> Option<String> {
    if let Some(r) = attrs
        .get("role")
        .and_then(|r| r.split_whitespace().next().map(str::to_owned))
    {
        return Some(r);
    }
    let implicit = match tag {
        "a" if attrs.has("href") => "link",
        "button" | "summary" => "button",
        "select" => {
            if attrs.has("multiple") {
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
pub fn is_interactive(
    attrs: &Attrs,
    tag: &str,
    input_type: Option<&str>,
    role: Option<&str>,
    pointer_cursor: bool,
) -> bool {
    match tag {
        "a" => return attrs.has("href") || pointer_cursor,
        "button" | "select" | "textarea" | "summary" => return true,
        "input" => return input_type != Some("hidden"),
        _ => {}
    }
    if role.is_some_and(|r| WIDGET_ROLES.contains(&r)) {
        return true;
    }
    if attrs.is_empty() {
        return pointer_cursor;
    }
    if let Some(ce) = attrs.get("contenteditable") {
        if ce.is_empty()
            || ce.eq_ignore_ascii_case("true")
            || ce.eq_ignore_ascii_case("plaintext-only")
        {
            return true;
        }
    }
    if attrs
        .get("tabindex")
        .and_then(|t| t.trim().parse::<i32>().ok())
        .is_some_and(|t| t >= 0)
    {
        return true;
    }
    if attrs.has("onclick") {
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
    // Not `dyn_ref`: a same-origin frame's NodeList is another realm's, and fails `instanceof`.
    let labels = get(el, "labels").filter(|l| l.is_object())?;
    let list: &web_sys::NodeList = labels.unchecked_ref();
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

fn non_empty(s: Option<&str>) -> Option<String> {
    s.map(|s| clean_text(s, NAME_MAX)).filter(|s| !s.is_empty())
}

/// Accessible name, in the order of the accname algorithm's main steps.
pub fn accessible_name(
    doc: &Document,
    el: &Element,
    attrs: &Attrs,
    tag: &str,
    input_type: Option<&str>,
) -> Option<String> {
    if let Some(ids) = attrs.get("aria-labelledby") {
        let t = text_by_ids(doc, ids);
        if !t.is_empty() {
            return Some(t);
        }
    }
    if let Some(t) = non_empty(attrs.get("aria-label")) {
        return Some(t);
    }
    let form_control = matches!(tag, "input" | "select" | "textarea");
    if form_control {
        if matches!(input_type, Some("submit" | "button" | "reset")) {
            return non_empty(attrs.get("value")).or_else(|| {
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
            return non_empty(attrs.get("alt")).or_else(|| non_empty(attrs.get("title")));
        }
        return label_text(el)
            .or_else(|| non_empty(attrs.get("placeholder")))
            .or_else(|| non_empty(attrs.get("title")));
    }
    if tag == "img" {
        return non_empty(attrs.get("alt")).or_else(|| non_empty(attrs.get("title")));
    }
    // Name from content: visible text, else the alt text of images inside (a logo link).
    let text = non_empty(el.text_content().as_deref());
    if text.is_some() {
        return text;
    }
    if let Ok(Some(img)) = el.query_selector("img[alt]") {
        if let Some(alt) = non_empty(attr(&img, "alt").as_deref()) {
            return Some(alt);
        }
    }
    non_empty(attrs.get("title"))
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

/// Controls whose value a form submits, and whose `validity` says whether it may.
pub fn is_form_control(tag: &str) -> bool {
    matches!(tag, "input" | "select" | "textarea")
}

/// The states a person reads off an element, by markup and by `props`, what its properties
/// say (read together, in one crossing).
pub fn states(
    el: &Element,
    attrs: &Attrs,
    tag: &str,
    input_type: Option<&str>,
    focused: bool,
    props: &Properties,
) -> Vec<String> {
    let mut out = Vec::new();
    let aria = |name: &str| attrs.get(name);
    // By tag, not `instanceof`: elements in same-origin frames belong to another realm.
    let input = (tag == "input").then(|| el.unchecked_ref::<HtmlInputElement>());
    let checked = match input {
        Some(i) if matches!(input_type, Some("checkbox" | "radio")) => i.checked(),
        _ => aria("aria-checked") == Some("true"),
    };
    if checked {
        out.push("checked");
    }
    let selected = if tag == "option" {
        el.unchecked_ref::<HtmlOptionElement>().selected()
    } else {
        aria("aria-selected") == Some("true")
    };
    if selected {
        out.push("selected");
    }
    let form_control = is_form_control(tag);
    let disabled = props.disabled || aria("aria-disabled") == Some("true");
    if disabled {
        out.push("disabled");
    }
    match aria("aria-expanded") {
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
    if (form_control && attrs.has("required")) || aria("aria-required") == Some("true") {
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
        // `validity.valid`, not `checkValidity()`: the latter fires events the page sees.
        // An untouched empty required field is "empty", not yet "invalid".
        || (props.invalid && !out.contains(&"empty"));
    if invalid {
        out.push("invalid");
    }
    if form_control && attrs.has("readonly") {
        out.push("readonly");
    }
    if focused {
        out.push("focused");
    }
    out.into_iter().map(str::to_owned).collect()
}
