//! The gym's task families, one theme a file: filling forms (`forms.rs`), pressing named
//! controls (`clicks.rs`), choosing options (`choices.rs`), finding things in lists, trees and
//! pages (`lists.rs`), reading a value back (`reading.rs`), flows over several pages
//! (`flows.rs`), settings pages (`settings.rs`), shopping pages (`shopping.rs`), fields that
//! take their own format or controls (`widgets.rs`), records side by side (`records.rs`),
//! values as people say them (`spoken.rs`) and many items at a time (`batches.rs`).
//! Each family states its goal in several phrasings chosen by the seed.

mod batches;
mod choices;
mod clicks;
mod flows;
mod forms;
mod lists;
mod reading;
mod records;
mod settings;
mod shopping;
mod spoken;
mod widgets;

use maud::{html, Markup};

use super::page::Chrome;
use super::{Family, Hit, Reply, Site};

pub static FAMILIES: &[Family] = &[
    forms::TYPE_TEXT,
    forms::FIELD_KINDS,
    forms::TEXTAREA,
    forms::SIGN_IN,
    forms::SIGN_IN_TWO_STEP,
    clicks::BUTTON,
    clicks::LINK,
    clicks::ICON,
    clicks::TABS,
    clicks::MENU,
    clicks::DIALOG,
    choices::SELECT,
    choices::RADIO,
    choices::LISTBOX,
    choices::COMBOBOX,
    choices::CHECKBOXES,
    choices::AUTOCOMPLETE,
    lists::EXPAND,
    lists::TREE,
    lists::SCROLL,
    lists::SEARCH_NTH,
    lists::PAGINATION,
    lists::TABLE_ROW,
    reading::PRICE,
    reading::COUNT,
    reading::DATE,
    reading::NAME,
    flows::OVERLAY,
    flows::CHECKOUT,
    flows::INBOX_DELETE,
    flows::INBOX_REPLY,
    flows::INBOX_FORWARD,
    settings::SWITCH,
    settings::SECTION_FIELD,
    settings::DIALOG_FORM,
    settings::TWO_ADDRESSES,
    settings::RATING,
    shopping::QUANTITY,
    shopping::SORT,
    shopping::TOTAL,
    widgets::DATE_WORDS,
    widgets::TIME_WORDS,
    widgets::SLIDER,
    widgets::COUNTER,
    records::TABLE_LOOKUP,
    records::EXTREME,
    records::DELETE_CONFIRM,
    records::FEED,
    spoken::OPTION_WORDS,
    spoken::AMOUNT,
    widgets::CALENDAR,
    batches::BULK_SELECT,
    batches::ROW_ACTIONS,
    batches::LOAD_MORE,
];

/// The family called `name`.
pub fn family(name: &str) -> Option<&'static Family> {
    FAMILIES.iter().find(|f| f.name == name)
}

/// The last form posted to `path`.
fn posted<'a>(hits: &'a [Hit], path: &str) -> Option<&'a Hit> {
    hits.iter().rev().find(|h| h.post && h.path == path)
}

/// Whether any request (a link followed, a form sent) reached `path`.
fn visited(hits: &[Hit], path: &str) -> bool {
    hits.iter().any(|h| h.path == path)
}

/// The page a form's submission lands on.
fn thanks(chrome: &Chrome, text: &str) -> Reply {
    Reply::Page(chrome.page("Thank you", html! { p role="status" { (text) } }))
}

/// A task of one page and nothing to send: a question read off it, a link followed to an
/// address of its own.
fn static_page(page: String) -> Site {
    Box::new(move |hit| match hit.path.as_str() {
        "" => Reply::Page(page.clone()),
        _ => Reply::NotFound,
    })
}

/// The usual one-page task: its page at the start, and a thank-you page for the form it sends
/// to `action`.
fn form_site(page: String, chrome: Chrome, action: &'static str, message: &'static str) -> Site {
    Box::new(move |hit| match hit.path.as_str() {
        "" => Reply::Page(page.clone()),
        p if p == action => thanks(&chrome, message),
        _ => Reply::NotFound,
    })
}

/// A labelled text field.
fn field(label: &str, name: &str, kind: &str, value: &str) -> Markup {
    html! {
        label { (label) " "
            @if kind == "textarea" {
                textarea name=(name) rows="3" { (value) }
            } @else {
                input type=(kind) name=(name) value=(value);
            }
        }
    }
}

/// One of the phrasings, by the seed.
fn say(rng: &mut fastrand::Rng, options: &[String]) -> String {
    options[rng.usize(..options.len())].clone()
}

/// A value as a goal gives it: quoted or not, by the seed, where leaving it bare keeps it clear.
fn value(rng: &mut fastrand::Rng, v: &str) -> String {
    if v.contains(' ') || rng.bool() {
        format!("\"{v}\"")
    } else {
        v.to_owned()
    }
}
