//! Checking a decision against the page it was made on, before anything is done: the element
//! exists and the action fits it. A refusal is worded for the model, which is asked again with it.

use itinero_shared::observation::{DomNode, Observation};
use itinero_shared::{Action, Target};

use super::reply::ModelReply;

/// Why a decision cannot be carried out on this page.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

/// Input types that take typed text.
const TEXT_INPUTS: &[&str] = &[
    "text",
    "search",
    "email",
    "url",
    "tel",
    "password",
    "number",
    "date",
    "datetime-local",
    "month",
    "week",
    "time",
    "range",
];

pub(super) fn takes_text(node: &DomNode) -> bool {
    match node.tag.as_str() {
        "textarea" => true,
        "input" => TEXT_INPUTS.contains(&node.input_type.as_deref().unwrap_or("text")),
        _ => matches!(
            node.role.as_deref(),
            Some("textbox" | "searchbox" | "combobox" | "spinbutton")
        ),
    }
}

pub(super) fn is_choice(node: &DomNode) -> bool {
    node.tag == "select" || matches!(node.role.as_deref(), Some("listbox" | "combobox"))
}

pub(super) fn is_checkable(node: &DomNode) -> bool {
    (node.tag == "input" && matches!(node.input_type.as_deref(), Some("checkbox" | "radio")))
        || matches!(
            node.role.as_deref(),
            Some("checkbox" | "radio" | "switch" | "menuitemcheckbox" | "menuitemradio")
        )
}

/// `button "Save"`, `input[type=email] "Email"`: how an element is named back to the model.
fn describe(node: &DomNode) -> String {
    let mut s = node.tag.clone();
    if let Some(t) = &node.input_type {
        s.push_str(&format!("[type={t}]"));
    }
    if let Some(name) = node.name.as_deref().filter(|n| !n.is_empty()) {
        s.push_str(&format!(" {name:?}"));
    }
    s
}

fn target<'a>(
    obs: &'a Observation,
    index: Option<u32>,
    verb: &str,
) -> Result<(Target, &'a DomNode), Invalid> {
    let Some(index) = index else {
        return Err(Invalid(format!(
            "`{verb}` needs the \"index\" of an element"
        )));
    };
    let Some(node) = obs.find_indexed(index) else {
        // Listed only to say what exists: the usual path needs no list.
        let indexed = obs.indexed();
        let range = match (
            indexed.first().and_then(|n| n.index),
            indexed.last().and_then(|n| n.index),
        ) {
            (Some(a), Some(b)) => format!("the elements on this page are [{a}] to [{b}]"),
            _ => "this page has no elements to act on".into(),
        };
        return Err(Invalid(format!("there is no element [{index}]; {range}")));
    };
    let Some(fingerprint) = node.fingerprint.clone() else {
        return Err(Invalid(format!("element [{index}] cannot be acted on")));
    };
    Ok((Target { index, fingerprint }, node))
}

fn required<'a>(value: &'a Option<String>, field: &str, verb: &str) -> Result<&'a str, Invalid> {
    match value.as_deref().map(str::trim) {
        Some(v) if !v.is_empty() => Ok(value.as_deref().unwrap_or_default()),
        _ => Err(Invalid(format!("`{verb}` needs a non-empty \"{field}\""))),
    }
}

/// Turns a reply into an action on `obs`, or says why it cannot be done.
pub fn validate(reply: &ModelReply, obs: &Observation) -> Result<Action, Invalid> {
    use itinero_shared::{Modifier, ScrollDirection};
    let verb = reply.action.as_str();
    let action = match verb {
        "click" => Action::Click {
            target: target(obs, reply.index, verb)?.0,
        },
        "hover" => Action::Hover {
            target: target(obs, reply.index, verb)?.0,
        },
        "type" => {
            let text = required(&reply.text, "text", verb)?.to_owned();
            let (target, node) = target(obs, reply.index, verb)?;
            if !takes_text(node) {
                return Err(Invalid(format!(
                    "element [{}] is a {}, which does not take typed text; pick a text field",
                    target.index,
                    describe(node)
                )));
            }
            Action::Type {
                target,
                text,
                submit: reply.submit.unwrap_or(false),
                clear: true,
            }
        }
        "select" => {
            let value = required(&reply.value, "value", verb)?.to_owned();
            let (target, node) = target(obs, reply.index, verb)?;
            if !is_choice(node) {
                return Err(Invalid(format!(
                    "element [{}] is a {}, not a list to select from; click it instead",
                    target.index,
                    describe(node)
                )));
            }
            Action::Select { target, value }
        }
        "check" => {
            let (target, node) = target(obs, reply.index, verb)?;
            if !is_checkable(node) {
                return Err(Invalid(format!(
                    "element [{}] is a {}, not a checkbox or radio button",
                    target.index,
                    describe(node)
                )));
            }
            Action::Check {
                target,
                checked: reply.checked.unwrap_or(true),
            }
        }
        "scroll" => {
            let target = match reply.index {
                Some(i) => Some(target(obs, Some(i), verb)?.0),
                None => None,
            };
            // No direction: bring the element into view, or, with no element, scroll down.
            let direction = match reply.direction.as_deref() {
                None if target.is_some() => None,
                None => Some(ScrollDirection::Down),
                Some(word) => Some(ScrollDirection::from_word(word).ok_or_else(|| {
                    Invalid(format!(
                        "\"{word}\" is not a direction; use up, down, left or right"
                    ))
                })?),
            };
            Action::Scroll {
                target,
                direction,
                pages: reply.pages.unwrap_or(1.0).clamp(0.1, 10.0),
            }
        }
        "press_key" => {
            let key = required(&reply.key, "key", verb)?.to_owned();
            let modifiers = reply
                .modifiers
                .iter()
                .map(|m| match m.to_lowercase().as_str() {
                    "alt" | "option" => Ok(Modifier::Alt),
                    "control" | "ctrl" => Ok(Modifier::Control),
                    "meta" | "cmd" | "command" => Ok(Modifier::Meta),
                    "shift" => Ok(Modifier::Shift),
                    other => Err(Invalid(format!("\"{other}\" is not a modifier key"))),
                })
                .collect::<Result<Vec<_>, _>>()?;
            let target = match reply.index {
                Some(i) => Some(target(obs, Some(i), verb)?.0),
                None => None,
            };
            Action::PressKey {
                key,
                modifiers,
                target,
            }
        }
        "navigate" => {
            let raw = required(&reply.url, "url", verb)?.trim();
            // Relative to the page, as a link would be; only web pages.
            let base = reqwest::Url::parse(&obs.url).ok();
            let url = reqwest::Url::options()
                .base_url(base.as_ref())
                .parse(raw)
                .map_err(|e| Invalid(format!("\"{raw}\" is not a URL ({e})")))?;
            if !matches!(url.scheme(), "http" | "https") {
                return Err(Invalid(format!(
                    "only http and https pages can be opened, not \"{}:\"",
                    url.scheme()
                )));
            }
            Action::Navigate { url: url.into() }
        }
        "back" => Action::Back,
        "forward" => Action::Forward,
        "wait" => Action::Wait {
            ms: reply.ms.unwrap_or(1000).min(10_000),
        },
        "done" => Action::Done {
            answer: reply.answer.clone().unwrap_or_default(),
            success: reply.success.unwrap_or(true),
        },
        "ask_user" => Action::AskUser {
            question: required(&reply.question, "question", verb)?.to_owned(),
        },
        other => return Err(Invalid(format!("\"{other}\" is not an action"))),
    };
    Ok(action)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::test_support::{element, page_of};
    use itinero_shared::ScrollDirection;

    fn page() -> Observation {
        page_of(
            "https://shop.example/search?q=socks",
            "",
            vec![
                element(0, "a", None, Some("link"), "Home"),
                element(1, "input", Some("search"), Some("searchbox"), "Search"),
                element(2, "select", None, Some("combobox"), "Size"),
                element(3, "input", Some("checkbox"), Some("checkbox"), "In stock"),
                element(4, "button", None, Some("button"), "Buy"),
                element(5, "div", None, Some("textbox"), "Message"),
            ],
        )
    }

    fn reply(json: &str) -> ModelReply {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn actions_carry_the_element_fingerprint() {
        let obs = page();
        match validate(
            &reply(r#"{"action":"type","index":1,"text":"wool","submit":true}"#),
            &obs,
        )
        .unwrap()
        {
            Action::Type {
                target,
                text,
                submit,
                clear,
            } => {
                assert_eq!(
                    (target.index, text.as_str(), submit, clear),
                    (1, "wool", true, true)
                );
                assert_eq!(target.fingerprint.name.as_deref(), Some("Search"));
            }
            a => panic!("{a:?}"),
        }
        assert!(matches!(
            validate(&reply(r#"{"action":"type","index":5,"text":"hi"}"#), &obs),
            Ok(Action::Type { .. })
        ));
        assert!(matches!(
            validate(&reply(r#"{"action":"select","index":2,"value":"L"}"#), &obs),
            Ok(Action::Select { .. })
        ));
        assert!(matches!(
            validate(
                &reply(r#"{"action":"check","index":3,"checked":false}"#),
                &obs
            ),
            Ok(Action::Check { checked: false, .. })
        ));
        assert!(matches!(
            validate(&reply(r#"{"action":"scroll","direction":"up","pages":50}"#), &obs),
            Ok(Action::Scroll { target: None, direction: Some(ScrollDirection::Up), pages }) if pages == 10.0
        ));
        assert!(matches!(
            validate(&reply(r#"{"action":"scroll"}"#), &obs),
            Ok(Action::Scroll {
                target: None,
                direction: Some(ScrollDirection::Down),
                ..
            })
        ));
        // An element and no direction: scroll to it.
        assert!(matches!(
            validate(&reply(r#"{"action":"scroll","index":4}"#), &obs),
            Ok(Action::Scroll {
                target: Some(_),
                direction: None,
                ..
            })
        ));
        assert!(matches!(
            validate(
                &reply(r#"{"action":"scroll","index":4,"direction":"down"}"#),
                &obs
            ),
            Ok(Action::Scroll {
                target: Some(_),
                direction: Some(ScrollDirection::Down),
                ..
            })
        ));
        match validate(&reply(r#"{"action":"navigate","url":"/cart"}"#), &obs).unwrap() {
            Action::Navigate { url } => assert_eq!(url, "https://shop.example/cart"),
            a => panic!("{a:?}"),
        }
    }

    #[test]
    fn refusals_say_what_to_do_instead() {
        let obs = page();
        let no = |json: &str| validate(&reply(json), &obs).unwrap_err().0;
        assert_eq!(
            no(r#"{"action":"click","index":9}"#),
            "there is no element [9]; the elements on this page are [0] to [5]"
        );
        assert!(no(r#"{"action":"click"}"#).contains("needs the \"index\""));
        assert!(no(r#"{"action":"type","index":4,"text":"x"}"#)
            .contains("button \"Buy\", which does not take typed text"));
        assert!(no(r#"{"action":"type","index":1,"text":"  "}"#).contains("non-empty \"text\""));
        assert!(no(r#"{"action":"select","index":4,"value":"L"}"#)
            .contains("not a list to select from"));
        assert!(no(r#"{"action":"check","index":1}"#).contains("not a checkbox"));
        assert!(no(r#"{"action":"navigate","url":"javascript:alert(1)"}"#)
            .contains("only http and https"));
        assert!(
            no(r#"{"action":"press_key","key":"Enter","modifiers":["hyper"]}"#)
                .contains("not a modifier")
        );
        assert!(no(r#"{"action":"scroll","direction":"sideways"}"#).contains("not a direction"));
        assert!(no(r#"{"action":"ask_user"}"#).contains("needs a non-empty \"question\""));
    }
}
