//! A cookie banner over part of the page: a person answers it before going on, since what it
//! covers cannot be pressed. It is answered with the least it allows ("Reject all", "Only
//! necessary") where it offers that, else with its one button to accept.

use itinero_shared::observation::DomNode;
use itinero_shared::Action;

use super::candidate::{named, target, Candidate};
use super::confirm;
use super::page::{Element, Kind, Page};
use super::words;

/// Its buttons, the least permissive first.
const ANSWERS: &[&str] = &[
    "reject all",
    "only necessary",
    "necessary only",
    "essential only",
    "decline",
    "reject",
    "accept all",
    "accept",
    "allow all",
    "i agree",
    "agree",
    "got it",
];

/// Whether one of the few texts just before `e` speaks of cookies or consent.
fn about_cookies(page: &Page, e: &Element) -> bool {
    page.texts
        .iter()
        .filter(|t| t.order < e.order)
        .rev()
        .take(4)
        .any(|t| mentions_cookies(t.node))
}

/// Whether a node or any below it speaks of cookies ("cookies" folds to "cooky", as "parties"
/// to "party", so both forms are looked for).
fn mentions_cookies(n: &DomNode) -> bool {
    n.text.as_deref().is_some_and(|t| {
        ["cookie", "cookies", "consent"]
            .iter()
            .any(|w| words::contains(t, w))
    }) || n.children.iter().any(mentions_cookies)
}

/// The press that answers a cookie banner while the page has something covered; None when
/// nothing is covered, no banner's button is in view, or a dialog of the task's own is open
/// (it sits above the banner, which waits until it is closed).
pub fn answer(page: &Page) -> Option<Candidate> {
    if !page.nodes.iter().any(|n| n.occluded) {
        return None;
    }
    if page
        .nodes
        .iter()
        .any(|n| confirm::is_dialog(n) && !mentions_cookies(n))
    {
        return None;
    }
    ANSWERS.iter().find_map(|a| {
        let e = page.elements.iter().find(|e| {
            e.kind == Kind::Press
                && e.labels
                    .first()
                    .is_some_and(|l| words::similarity(a, l) >= 0.95)
                && about_cookies(page, e)
        })?;
        Some(Candidate {
            why: format!("answer the cookie banner with {:?}", named(e)),
            action: Action::Click { target: target(e)? },
            confidence: 0.9,
            finishes: false,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::answer;
    use crate::agent::ground::page::Page;
    use crate::agent::test_support::{element, page_of, placed, text_at};
    use itinero_shared::observation::DomNode;

    #[test]
    fn a_banner_over_the_page_is_answered_with_the_least_it_allows() {
        let build = |covered: bool, banner: &str| {
            let mut hidden = placed(element(1, "button", None, None, "Delete"), 0.0, 500.0);
            hidden.index = None;
            hidden.occluded = covered;
            page_of(
                "https://app.example/",
                "Projects",
                vec![
                    hidden,
                    text_at(banner, 0.0, 560.0),
                    placed(element(2, "button", None, None, "Accept all"), 0.0, 590.0),
                    placed(
                        element(3, "button", None, None, "Only necessary"),
                        100.0,
                        590.0,
                    ),
                ],
            )
        };
        let o = build(true, "We use cookies to improve your experience.");
        let c = answer(&Page::read(&o)).expect("the banner is answered");
        assert_eq!(c.action.target().map(|t| t.index), Some(3));
        // Nothing covered: the banner is left alone.
        let o = build(false, "We use cookies to improve your experience.");
        assert!(answer(&Page::read(&o)).is_none());
        // A page's own buttons of those names, with no word of cookies, are not a banner's.
        let o = build(true, "Invite Ana to the project?");
        assert!(answer(&Page::read(&o)).is_none());
        // A dialog of the task's own is above the banner until it is closed.
        let mut o = build(true, "We use cookies to improve your experience.");
        o.root.children.push(DomNode {
            tag: "dialog".into(),
            children: vec![text_at("Invite a member", 0.0, 100.0)],
            ..Default::default()
        });
        assert!(answer(&Page::read(&o)).is_none());
    }
}
