//! What an element is to a person: whether it can be used, its role, its accessible name, its state.

use wasm_bindgen::JsCast;
use web_sys::{Document, Element, HtmlInputElement};

use super::dom::{attr, clean_text, get, want, Attrs, Indexed};

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

/// ARIA roles whose content is not their name (accname: no name from content): their items,
/// indexed on their own, or a value. Named by their content, a list box would say all its
/// options again, and a grid its whole table.
const NO_NAME_FROM_CONTENT: &[&str] = &[
    "combobox",
    "listbox",
    "textbox",
    "searchbox",
    "slider",
    "spinbutton",
    "scrollbar",
    "progressbar",
    "menu",
    "menubar",
    "tablist",
    "tabpanel",
    "tree",
    "treegrid",
    "grid",
    "radiogroup",
    "toolbar",
];

/// Input types that hold free text (for the `empty` state and implicit roles).
const TEXT_INPUTS: &[&str] = &[
    "text", "email", "password", "search", "tel", "url", "number", "",
];

/// Input types whose value is not shown: a password's is secret, the others' is a label
/// or nothing a person types.
const NO_VALUE_INPUTS: &[&str] = &[
    "password", "checkbox", "radio", "submit", "button", "reset", "image", "file", "hidden",
];

pub fn input_type(el: &Element, tag: &str, attrs: &Attrs) -> Option<String> {
    input_type_with(tag, attrs, || {
        el.unchecked_ref::<HtmlInputElement>().type_()
    })
}

/// The states of an input's `type` attribute by their keywords, which its `type` property
/// gives (HTML: a missing value is `text`).
const INPUT_TYPES: &[&str] = &[
    "hidden",
    "text",
    "search",
    "tel",
    "url",
    "email",
    "password",
    "date",
    "month",
    "week",
    "time",
    "datetime-local",
    "number",
    "range",
    "color",
    "checkbox",
    "radio",
    "file",
    "submit",
    "image",
    "reset",
    "button",
];

/// [`input_type`], given a way to read an input's `type` property. The attribute says it
/// where it names one of the keywords above or nothing; the property is read (a crossing,
/// and the walk holds most elements only by name) only for a value the browser may
/// understand otherwise, such as one of a type added since.
pub fn input_type_with(
    tag: &str,
    attrs: &Attrs,
    input_type: impl FnOnce() -> String,
) -> Option<String> {
    match tag {
        "input" => Some(match attrs.get("type") {
            None => "text".to_owned(),
            Some(t) => match INPUT_TYPES.iter().find(|k| k.eq_ignore_ascii_case(t)) {
                Some(k) => (*k).to_owned(),
                None => input_type().to_ascii_lowercase(),
            },
        }),
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

/// Whether the element may be named by its content: not when its explicit role says its
/// content is something else (`NO_NAME_FROM_CONTENT`).
fn named_by_content(attrs: &Attrs) -> bool {
    attrs
        .get("role")
        .and_then(|r| r.split_whitespace().next())
        .is_none_or(|r| !NO_NAME_FROM_CONTENT.contains(&r))
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
    let texts = (0..list.length())
        .filter_map(|i| list.item(i))
        .map(|l| super::dom::content_text(l.unchecked_ref()));
    joined_labels(texts)
}

/// The cleaned, non-empty texts of a control's labels, joined as its name.
fn joined_labels<S: AsRef<str>>(texts: impl Iterator<Item = S>) -> Option<String> {
    let parts: Vec<String> = texts
        .map(|t| clean_text(t.as_ref(), NAME_MAX))
        .filter(|t| !t.is_empty())
        .collect();
    (!parts.is_empty()).then(|| parts.join(" "))
}

fn non_empty(s: Option<&str>) -> Option<String> {
    s.map(|s| clean_text(s, NAME_MAX)).filter(|s| !s.is_empty())
}

/// Whether `s` holds anything but whitespace: what `non_empty` keeps.
fn has_text(s: &str) -> bool {
    s.chars().any(|c| !c.is_whitespace())
}

/// What the walk should read of an element it indexes (`dom::read_indexed`, `want::*`), so
/// that its name, value and states ask nothing more: its text content or its labels' where
/// its name comes from them without looking anything up first (an `aria-labelledby` is
/// looked up, and they are read only when that names nothing), a link's `href`, a field's
/// value (a password's only whether it is empty), a check box's `checked`, an option's
/// `selected`, a select's chosen options.
pub fn wants(attrs: &Attrs, tag: &str, input_type: Option<&str>) -> u8 {
    let mut w = 0;
    let named_ahead =
        !attrs.has("aria-labelledby") && !attrs.get("aria-label").is_some_and(has_text);
    if is_form_control(tag) {
        if named_ahead && !matches!(input_type, Some("submit" | "button" | "reset" | "image")) {
            w |= want::LABELS;
        }
    } else if tag != "img" && named_ahead && named_by_content(attrs) {
        w |= want::CONTENT;
    }
    if tag == "a" && attrs.has("href") {
        w |= want::HREF;
    }
    if text_like(tag, input_type) {
        w |= want::EMPTY;
    }
    if checkable(tag, input_type) {
        w |= want::CHECKED;
    }
    match tag {
        "input" if !NO_VALUE_INPUTS.contains(&input_type.unwrap_or("")) => w |= want::VALUE,
        "textarea" => w |= want::VALUE,
        "option" => w |= want::SELECTED,
        "select" => w |= want::OPTIONS,
        _ => {}
    }
    w
}

/// A field a person types free text into: it may be `empty`.
fn text_like(tag: &str, input_type: Option<&str>) -> bool {
    tag == "textarea" || (tag == "input" && TEXT_INPUTS.contains(&input_type.unwrap_or("")))
}

/// A check box or radio button, whose `checked` property says whether it is checked.
fn checkable(tag: &str, input_type: Option<&str>) -> bool {
    tag == "input" && matches!(input_type, Some("checkbox" | "radio"))
}

/// Accessible name, in the order of the accname algorithm's main steps. `read`: what the
/// walk read of the element already (as [`wants`] asked); what it did not is read here.
pub fn accessible_name(
    doc: &Document,
    el: &Element,
    attrs: &Attrs,
    tag: &str,
    input_type: Option<&str>,
    read: Option<&Indexed>,
) -> Option<String> {
    let asked = |w: u8| read.filter(|r| r.asked & w != 0);
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
        let labels = match asked(want::LABELS) {
            Some(r) => r
                .labels
                .as_deref()
                .and_then(|l| joined_labels(l.split('\0'))),
            None => label_text(el),
        };
        return labels
            .or_else(|| non_empty(attrs.get("placeholder")))
            .or_else(|| non_empty(attrs.get("title")));
    }
    if tag == "img" {
        return non_empty(attrs.get("alt")).or_else(|| non_empty(attrs.get("title")));
    }
    if !named_by_content(attrs) {
        return non_empty(attrs.get("title"));
    }
    // Name from content: visible text, else the alt text of images inside (a logo link).
    let text = match asked(want::CONTENT) {
        Some(r) => non_empty(r.content.as_deref()),
        None => non_empty(Some(&super::dom::content_text(el))),
    };
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

/// Current value of a form control, from what the walk read of it (`want::VALUE`,
/// `want::OPTIONS`); never a password's, which is not read.
pub fn value(tag: &str, read: &Indexed) -> Option<String> {
    match tag {
        "input" | "textarea" => read.value.as_deref().map(|v| clean_text(v, NAME_MAX)),
        "select" => Some(
            read.options
                .as_deref()
                .map(|o| {
                    o.split('\0')
                        .map(|t| clean_text(t, NAME_MAX))
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default(),
        ),
        _ => None,
    }
    .filter(|v| !v.is_empty())
}

/// Controls whose value a form submits, and whose `validity` says whether it may.
pub fn is_form_control(tag: &str) -> bool {
    matches!(tag, "input" | "select" | "textarea")
}

/// The states a person reads off an element, by markup and by `props`, what the walk read
/// of it in one crossing (as [`wants`] asked).
pub fn states(
    el: &Element,
    attrs: &Attrs,
    tag: &str,
    input_type: Option<&str>,
    props: &Indexed,
) -> Vec<String> {
    let mut out = Vec::new();
    let aria = |name: &str| attrs.get(name);
    let checked = if checkable(tag, input_type) {
        props.checked
    } else {
        aria("aria-checked") == Some("true")
    };
    if checked {
        out.push("checked");
    }
    let selected = if tag == "option" {
        props.selected
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
    if text_like(tag, input_type) && props.empty {
        out.push("empty");
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
    if props.focused {
        out.push("focused");
    }
    out.into_iter().map(str::to_owned).collect()
}

#[cfg(test)]
mod tests {
    use super::{input_type_with, value, wants};
    use crate::content::dom::{want, Attrs, Indexed};

    fn attrs(raw: &str) -> Attrs {
        Attrs::parse(raw.to_owned())
    }

    fn read(value: Option<&str>, options: Option<&str>) -> Indexed {
        Indexed {
            disabled: false,
            invalid: false,
            scrolls: false,
            focused: false,
            checked: false,
            selected: false,
            empty: false,
            content: None,
            href: None,
            value: value.map(str::to_owned),
            labels: None,
            options: options.map(str::to_owned),
            asked: 0,
        }
    }

    #[test]
    fn an_inputs_type_comes_from_its_attribute_where_that_names_a_keyword() {
        let never = || -> String { panic!("the property was read") };
        assert_eq!(
            input_type_with("input", &attrs(""), never).as_deref(),
            Some("text")
        );
        let a = attrs("\0type\0CheckBox");
        assert_eq!(
            input_type_with("input", &a, never).as_deref(),
            Some("checkbox")
        );
        let a = attrs("\0type\0datetime-local");
        assert_eq!(
            input_type_with("input", &a, never).as_deref(),
            Some("datetime-local")
        );
        // A value the list does not know is the browser's to interpret.
        let a = attrs("\0type\0text ");
        assert_eq!(
            input_type_with("input", &a, || "Text".into()).as_deref(),
            Some("text")
        );
        assert_eq!(input_type_with("div", &a, never), None);
    }

    #[test]
    fn an_indexed_element_is_read_for_what_its_name_value_and_states_need() {
        let link = attrs("\0href\0/a");
        assert_eq!(wants(&link, "a", None), want::CONTENT | want::HREF);
        // Named by its label already: no content is read.
        let labelled = attrs("\0aria-label\0Close");
        assert_eq!(wants(&labelled, "button", Some("submit")), 0);
        // An aria-labelledby is looked up first; what it needs next is read then.
        assert_eq!(wants(&attrs("\0aria-labelledby\0x"), "a", None), 0);
        assert_eq!(
            wants(&attrs(""), "input", Some("text")),
            want::LABELS | want::VALUE | want::EMPTY
        );
        // A password's value is only asked whether it is empty.
        assert_eq!(
            wants(&attrs(""), "input", Some("password")),
            want::LABELS | want::EMPTY
        );
        assert_eq!(
            wants(&attrs(""), "input", Some("checkbox")),
            want::LABELS | want::CHECKED
        );
        assert_eq!(wants(&attrs(""), "input", Some("submit")), 0);
        assert_eq!(
            wants(&attrs(""), "select", None),
            want::LABELS | want::OPTIONS
        );
        assert_eq!(
            wants(&attrs(""), "option", None),
            want::CONTENT | want::SELECTED
        );
        // A list box's content is its options, a grid's its cells: not a name.
        assert_eq!(wants(&attrs("\0role\0listbox"), "ul", None), 0);
        assert_eq!(wants(&attrs("\0role\0grid foo"), "div", None), 0);
        assert_eq!(wants(&attrs("\0role\0tab"), "div", None), want::CONTENT);
    }

    #[test]
    fn a_value_is_cleaned_and_a_selects_is_its_chosen_options() {
        assert_eq!(
            value("input", &read(Some("  a  b "), None)).as_deref(),
            Some("a b")
        );
        assert_eq!(value("input", &read(Some(" "), None)), None);
        assert_eq!(value("input", &read(None, None)), None);
        assert_eq!(
            value("select", &read(None, Some("One\0 Two"))).as_deref(),
            Some("One, Two")
        );
        assert_eq!(value("select", &read(None, Some(""))), None);
        assert_eq!(value("a", &read(Some("x"), None)), None);
    }
}
