//! A step in words, without indices: what a playbook lists and the panel shows. An index only
//! meant something in the observation the step was decided on, so the words name the element
//! the way a person would find it again (its role and accessible name).

use itinero_shared::action::{Action, Fingerprint, Modifier};

/// The element as a person would look for it: `button "Add to cart"`, `searchbox "Search"`.
pub fn element(fp: &Fingerprint) -> String {
    let kind = fp
        .role
        .as_deref()
        .filter(|r| !r.is_empty())
        .unwrap_or(if fp.tag.is_empty() {
            "element"
        } else {
            &fp.tag
        });
    let label = [&fp.name, &fp.aria_label, &fp.text]
        .into_iter()
        .flatten()
        .map(|s| s.trim())
        .find(|s| !s.is_empty());
    match (label, &fp.id, &fp.name_attr) {
        (Some(label), _, _) => format!("{kind} {label:?}"),
        (None, Some(id), _) if !id.is_empty() => format!("{kind} #{id}"),
        (None, _, Some(name)) if !name.is_empty() => format!("{kind} named {name:?}"),
        _ => kind.to_owned(),
    }
}

/// Playwright's and the DOM's name for a key with its modifiers, e.g. `Control+A`.
pub fn key_combo(key: &str, modifiers: &[Modifier]) -> String {
    let mut parts: Vec<&str> = modifiers
        .iter()
        .map(|m| match m {
            Modifier::Alt => "Alt",
            Modifier::Control => "Control",
            Modifier::Meta => "Meta",
            Modifier::Shift => "Shift",
        })
        .collect();
    parts.push(key);
    parts.join("+")
}

/// The action in words, e.g. `type "{query}" into searchbox "Search" and submit`.
pub fn action(action: &Action) -> String {
    match action {
        Action::Click { target } => format!("click {}", element(&target.fingerprint)),
        Action::Type {
            target,
            text,
            submit,
            clear,
        } => {
            let mut s = format!("type {text:?} into {}", element(&target.fingerprint));
            if !clear {
                s.push_str(" (after what it holds)");
            }
            if *submit {
                s.push_str(" and submit");
            }
            s
        }
        Action::Select { target, value } => {
            format!("select {value:?} in {}", element(&target.fingerprint))
        }
        Action::Check { target, checked } => format!(
            "{} {}",
            if *checked { "check" } else { "uncheck" },
            element(&target.fingerprint)
        ),
        Action::Hover { target } => format!("hover over {}", element(&target.fingerprint)),
        Action::Scroll { target, pages, .. } => {
            let Some(direction) = action.scroll_direction() else {
                let t = target
                    .as_ref()
                    .expect("a scroll without a direction has a target");
                return format!("scroll to {}", element(&t.fingerprint));
            };
            let dir = direction.word();
            let amount = if (*pages - 1.0).abs() < f64::EPSILON {
                "a page".to_owned()
            } else {
                format!("{pages} pages")
            };
            match target {
                Some(t) => format!("scroll {dir} {amount} in {}", element(&t.fingerprint)),
                None => format!("scroll {dir} {amount}"),
            }
        }
        Action::PressKey {
            key,
            modifiers,
            target,
        } => {
            let combo = key_combo(key, modifiers);
            match target {
                Some(t) => format!("press {combo} in {}", element(&t.fingerprint)),
                None => format!("press {combo}"),
            }
        }
        Action::Navigate { url } => format!("go to {url}"),
        Action::Back => "go back".to_owned(),
        Action::Forward => "go forward".to_owned(),
        Action::Wait { ms } => format!("wait {ms} ms"),
        Action::Done { answer, success } => {
            if *success {
                format!("finish, answering {answer:?}")
            } else {
                format!("give up, saying {answer:?}")
            }
        }
        Action::AskUser { question } => format!("ask the user {question:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use itinero_shared::action::{ScrollDirection, Target};

    fn target(fp: Fingerprint) -> Target {
        Target {
            index: 7,
            fingerprint: fp,
        }
    }

    #[test]
    fn elements_are_named_by_role_and_accessible_name_never_by_index() {
        let search = Fingerprint {
            tag: "input".into(),
            role: Some("searchbox".into()),
            name: Some("Search products".into()),
            name_attr: Some("q".into()),
            ..Fingerprint::default()
        };
        let typed = action(&Action::Type {
            target: target(search.clone()),
            text: "{query}".into(),
            submit: true,
            clear: true,
        });
        assert_eq!(
            typed,
            "type \"{query}\" into searchbox \"Search products\" and submit"
        );
        assert!(!typed.contains('7'));
        let unnamed = Fingerprint {
            tag: "input".into(),
            name_attr: Some("q".into()),
            ..Fingerprint::default()
        };
        assert_eq!(element(&unnamed), "input named \"q\"");
        let by_id = Fingerprint {
            tag: "div".into(),
            id: Some("buy".into()),
            ..Fingerprint::default()
        };
        assert_eq!(
            action(&Action::Hover {
                target: target(by_id)
            }),
            "hover over div #buy"
        );
        assert_eq!(element(&Fingerprint::default()), "element");
    }

    #[test]
    fn other_actions_in_words() {
        let button = Fingerprint {
            tag: "button".into(),
            role: Some("button".into()),
            name: Some("Add to cart".into()),
            ..Fingerprint::default()
        };
        assert_eq!(
            action(&Action::Click {
                target: target(button.clone())
            }),
            "click button \"Add to cart\""
        );
        assert_eq!(
            action(&Action::Check {
                target: target(button.clone()),
                checked: false
            }),
            "uncheck button \"Add to cart\""
        );
        assert_eq!(
            action(&Action::PressKey {
                key: "a".into(),
                modifiers: vec![Modifier::Control],
                target: None
            }),
            "press Control+a"
        );
        assert_eq!(
            action(&Action::Scroll {
                target: None,
                direction: Some(ScrollDirection::Down),
                pages: 1.0
            }),
            "scroll down a page"
        );
        assert_eq!(
            action(&Action::Scroll {
                target: Some(Target {
                    index: 3,
                    fingerprint: Fingerprint {
                        tag: "button".into(),
                        name: Some("Load more".into()),
                        ..Default::default()
                    }
                }),
                direction: None,
                pages: 1.0
            }),
            "scroll to button \"Load more\""
        );
        assert_eq!(
            action(&Action::Navigate {
                url: "https://shop.example/cart".into()
            }),
            "go to https://shop.example/cart"
        );
        assert_eq!(
            action(&Action::Done {
                answer: "12 EUR".into(),
                success: true
            }),
            "finish, answering \"12 EUR\""
        );
    }
}
