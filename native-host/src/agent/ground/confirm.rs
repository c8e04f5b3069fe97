//! The confirmation a site asks for after a destructive press ("Delete the project Apollo?
//! This cannot be undone."): the goal asked for the deletion, so its dialog's confirming
//! button finishes it. Only a dialog that asks to confirm, or whose button repeats what the
//! goal pressed, is taken for one; a dialog of any other kind is not the goal's to answer.

use std::sync::LazyLock;

use itinero_shared::observation::{DomNode, Observation};
use itinero_shared::Action;
use regex::Regex;

use super::candidate::{named, target, Candidate};
use super::page::{Element, Kind, Page};
use super::words;

static ASKS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:are\s+you\s+sure|confirm|cannot\s+be\s+undone|can't\s+be\s+undone|can’t\s+be\s+undone|permanently|do\s+you\s+(?:really\s+)?want)\b").unwrap()
});

/// Buttons that confirm, best first after the goal's own verb.
const YES: &[&str] = &["confirm", "yes", "ok", "continue", "delete", "proceed"];
/// Buttons that back out.
const NO: &[&str] = &[
    "cancel", "no", "close", "keep", "back", "go back", "not now",
];

pub(super) fn is_dialog(n: &DomNode) -> bool {
    n.tag == "dialog" || matches!(n.role.as_deref(), Some("dialog" | "alertdialog"))
}

fn dialogs<'a>(n: &'a DomNode, out: &mut Vec<&'a DomNode>) {
    if is_dialog(n) {
        out.push(n);
        return;
    }
    for c in &n.children {
        dialogs(c, out);
    }
}

fn collect<'a>(n: &'a DomNode, texts: &mut Vec<&'a str>, nodes: &mut Vec<&'a DomNode>) {
    if let Some(t) = n.text.as_deref() {
        texts.push(t);
    }
    if let Some(t) = n.name.as_deref() {
        texts.push(t);
    }
    nodes.push(n);
    for c in &n.children {
        collect(c, texts, nodes);
    }
}

/// The press that confirms an open dialog asking about what the goal did, given the names of
/// the controls the goal asks to press (`pressed`).
pub fn confirmation(obs: &Observation, page: &Page, pressed: &[String]) -> Option<Candidate> {
    let mut found = Vec::new();
    dialogs(&obs.root, &mut found);
    for dialog in found {
        let (mut texts, mut nodes) = (Vec::new(), Vec::new());
        collect(dialog, &mut texts, &mut nodes);
        let buttons: Vec<_> = page
            .elements
            .iter()
            .filter(|e| e.kind == Kind::Press && nodes.iter().any(|n| std::ptr::eq(*n, e.node)))
            .filter(|e| !e.has_state("disabled") && !e.node.occluded)
            .filter(|e| !NO.iter().any(|n| words::similarity(n, &named(e)) >= 0.95))
            .collect();
        let repeats = |e: &&&Element| {
            pressed
                .iter()
                .any(|p| words::similarity(p, &named(e)) >= 0.95)
        };
        let asks = ASKS.is_match(&texts.join(" "));
        let button = buttons.iter().find(repeats).or_else(|| {
            asks.then(|| {
                YES.iter().find_map(|y| {
                    buttons
                        .iter()
                        .find(|e| words::similarity(y, &named(e)) >= 0.95)
                })
            })
            .flatten()
        });
        if let Some(e) = button {
            return Some(Candidate {
                why: format!("confirm with {:?}", named(e)),
                action: Action::Click { target: target(e)? },
                confidence: 0.9,
                finishes: true,
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::test_support::{element, page_of, text_at};

    fn with_dialog(text: &str, buttons: &[&str]) -> Observation {
        let mut children = vec![text_at(text, 10.0, 10.0)];
        for (i, b) in buttons.iter().enumerate() {
            children.push(element(10 + i as u32, "button", None, None, b));
        }
        page_of(
            "https://app.example/projects",
            "Projects",
            vec![
                element(0, "button", None, None, "Delete"),
                DomNode {
                    tag: "div".into(),
                    role: Some("dialog".into()),
                    children,
                    ..Default::default()
                },
            ],
        )
    }

    fn confirms(obs: &Observation, pressed: &[&str]) -> Option<u32> {
        let page = Page::read(obs);
        let pressed: Vec<String> = pressed.iter().map(|p| p.to_string()).collect();
        match confirmation(obs, &page, &pressed)?.action {
            Action::Click { target } => Some(target.index),
            _ => None,
        }
    }

    #[test]
    fn a_dialog_that_asks_is_confirmed_by_its_own_button_never_by_cancel() {
        let asks = with_dialog(
            "Delete Apollo? This cannot be undone.",
            &["Cancel", "Delete"],
        );
        assert_eq!(confirms(&asks, &["remove"]), Some(11));
        let yes = with_dialog("Are you sure?", &["No", "Yes"]);
        assert_eq!(confirms(&yes, &["archive"]), Some(11));
        // A dialog that asks nothing, and none of whose buttons the goal named, is not one.
        let news = with_dialog("Subscribe to our newsletter", &["Cancel", "OK"]);
        assert_eq!(confirms(&news, &["delete"]), None);
        let only_cancel = with_dialog("Are you sure?", &["Cancel"]);
        assert_eq!(confirms(&only_cancel, &["delete"]), None);
    }
}
