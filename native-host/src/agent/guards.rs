//! Rules enforced in code, whatever the model says: they cannot be talked out of by a page or
//! forgotten by a small model.
//!
//! - typing and then finishing without submitting: the text is submitted first;
//! - the same action on the same page for the third time: the loop is broken;
//! - `done` without an answer when the goal asks a question: the model is asked again;
//! - risky actions (buy, pay, order, delete, send, transfer; payment and password fields):
//!   the user approves them first;
//! - leaving for a site the task has not been on (a navigation, a link): the user approves it
//!   first, since the address may carry what the page or the user wrote, and a page can steer
//!   the model to any address.
//!
//! Words match whole words only: "payload" is not "pay", and "Order history" is read, not
//! approved. (An empty `type` never gets this far: `validate` refuses it.)

use itinero_shared::observation::{DomNode, Observation};
use itinero_shared::{Action, Target};

/// An action carried out in an earlier step, and the page it was carried out on.
#[derive(Debug, Clone, PartialEq)]
pub struct Taken {
    pub action: Action,
    pub url: String,
    /// What the page showed when the action was chosen ([`digest`]): the same action again on
    /// a page that changed since (a counter's number, the next rows) is progress, not a loop.
    pub page: u64,
}

/// What a page shows, as one number: its elements' texts, names, values and states and how
/// far it is scrolled. Two observations with the same digest look the same to the agent.
pub fn digest(obs: &Observation) -> u64 {
    use std::hash::{Hash, Hasher};
    fn walk(n: &DomNode, h: &mut impl Hasher) {
        (&n.tag, &n.text, &n.name, &n.value, &n.states).hash(h);
        for c in &n.children {
            walk(c, h);
        }
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    obs.url.hash(&mut h);
    (obs.scroll_x.round() as i64, obs.scroll_y.round() as i64).hash(&mut h);
    walk(&obs.root, &mut h);
    h.finish()
}

/// What to do with a decided action.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Allow,
    /// Do this instead, and say why.
    Replace {
        action: Box<Action>,
        why: String,
    },
    /// Ask the model again, with this reason.
    Reask(String),
    /// The agent is going round in circles: tell the model, and ask the user if it goes on.
    Loop(String),
    /// The user must approve it first. `kind` is what makes it risky (`buy`, `send`, `payment`,
    /// …): "always allow" is remembered per site and kind.
    Approve {
        kind: String,
        why: String,
    },
}

/// Words of controls that spend money, destroy or send something. "Order" only as a verb:
/// "Order history" is a page to read.
const RISKY_WORDS: &[&str] = &[
    "buy",
    "pay",
    "purchase",
    "checkout",
    "check out",
    "delete",
    "remove",
    "send",
    "transfer",
    "subscribe",
    "donate",
    "unsubscribe",
    "place order",
    "order now",
    "submit order",
    "complete order",
    "confirm order",
];
/// Words of fields that take payment details or a new password.
const RISKY_FIELDS: &[&str] = &[
    "card",
    "cvc",
    "cvv",
    "iban",
    "account number",
    "routing",
    "expiry",
    "new password",
    "new-password",
    "cc-number",
    "cc-csc",
];
const QUESTION_WORDS: &[&str] = &[
    "what", "which", "how", "when", "where", "who", "whose", "why", "is", "are", "does", "do",
    "find", "tell", "list", "get", "look up", "check",
];

fn words_of(node: &DomNode) -> String {
    let mut s = String::new();
    for part in [&node.name, &node.value, &node.placeholder]
        .into_iter()
        .flatten()
    {
        s.push_str(part);
        s.push(' ');
    }
    for (_, v) in &node.attributes {
        s.push_str(v);
        s.push(' ');
    }
    s.to_lowercase()
}

/// Whole-word (or whole-phrase) match, so "payload" is not "pay" and "border" not "order".
fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

fn node_of<'a>(obs: &'a Observation, target: &Target) -> Option<&'a DomNode> {
    obs.find_indexed(target.index)
}

/// What makes `action` on `obs` risky (a risk word) and why, if it is.
pub fn risk(action: &Action, obs: &Observation) -> Option<(String, String)> {
    let node = node_of(obs, action.target()?)?;
    let words = words_of(node);
    match action {
        Action::Click { .. } | Action::PressKey { .. } => {
            let kind = node.role.as_deref().unwrap_or(node.tag.as_str());
            let clickable = matches!(kind, "button" | "link" | "a" | "menuitem")
                || node.input_type.as_deref() == Some("submit");
            RISKY_WORDS
                .iter()
                .find(|w| clickable && has_word(&words, w))
                .map(|w| {
                    let why = format!(
                        "\"{}\" may {w} something",
                        node.name.as_deref().unwrap_or(w)
                    );
                    ((*w).to_owned(), why)
                })
        }
        Action::Type { .. } => {
            let password_change = node.input_type.as_deref() == Some("password")
                && (has_word(&words, "new") || has_word(&words, "confirm"));
            RISKY_FIELDS
                .iter()
                .find(|w| has_word(&words, w))
                .map(|w| {
                    let why = format!(
                        "the field \"{}\" takes {w} details",
                        node.name.as_deref().unwrap_or(w)
                    );
                    ((*w).to_owned(), why)
                })
                .or_else(|| {
                    password_change
                        .then(|| ("password".to_owned(), "it changes a password".to_owned()))
                })
        }
        _ => None,
    }
}

/// Whether `action` names a saved secret where none is ever put in: the value goes only into a
/// typed field, so a placeholder in an address (which would send it as text to whatever site
/// asked for it), an option or a key is the page's doing. An answer or a question may quote
/// one; it is shown as written, never filled in.
fn misplaced_secret(action: &Action) -> bool {
    match action {
        Action::Type { .. } | Action::Done { .. } | Action::AskUser { .. } => false,
        other => serde_json::to_string(other)
            .is_ok_and(|json| itinero_shared::vault::mentions_secret(&json)),
    }
}

/// The origin an action takes the task to: a navigation's, a followed link's, or that of a
/// form it sends (a click on its button, Enter in a field, text typed and submitted).
fn destination(action: &Action, obs: &Observation) -> Option<String> {
    let href = match action {
        Action::Navigate { url } => url.as_str(),
        Action::Click { target } => {
            let node = node_of(obs, target)?;
            if let Some(to) = &node.sends_to {
                return Some(to.clone());
            }
            if !matches!(node.tag.as_str(), "a" | "area") {
                return None;
            }
            node.href.as_deref()?
        }
        Action::Type {
            target,
            submit: true,
            ..
        } => return node_of(obs, target)?.sends_to.clone(),
        Action::PressKey {
            key,
            target: Some(target),
            ..
        } if key == "Enter" => return node_of(obs, target)?.sends_to.clone(),
        _ => return None,
    };
    let base = reqwest::Url::parse(&obs.url).ok();
    let url = match base {
        Some(base) => base.join(href).ok()?,
        None => reqwest::Url::parse(href).ok()?,
    };
    crate::store::origin_of(url.as_str())
}

/// Whether `action` leaves for an origin the task has not been on (and why, as a risk): a
/// navigation or link there, or text typed into a frame of another origin than the page's.
pub fn leaves(action: &Action, obs: &Observation, taken: &[Taken]) -> Option<(String, String)> {
    if let Action::Type { target, text, .. } = action {
        // A saved secret goes only where the sign-in rules allow, which are stricter.
        if itinero_shared::vault::mentions_secret(text) {
            return None;
        }
        let frame = node_of(obs, target)?.frame_id.unwrap_or(0);
        let page = crate::store::origin_of(&obs.url);
        let field = obs.frame_src(frame).and_then(crate::store::origin_of);
        if field.is_some() && field != page {
            return Some((
                "leave".to_owned(),
                format!(
                    "the field is in a frame of {}, not of this page's site",
                    field.unwrap_or_default()
                ),
            ));
        }
    }
    let to = destination(action, obs)?;
    let been = std::iter::once(obs.url.as_str())
        .chain(taken.iter().map(|t| t.url.as_str()))
        .filter_map(crate::store::origin_of)
        .any(|o| o == to);
    (!been).then(|| {
        (
            "leave".to_owned(),
            format!("it goes to {to}, a site this task has not been on"),
        )
    })
}

/// Whether the goal asks for something to be found out, not only done.
fn asks_question(goal: &str) -> bool {
    let g = goal.trim().to_lowercase();
    g.ends_with('?')
        || QUESTION_WORDS
            .iter()
            .any(|w| g.starts_with(&format!("{w} ")))
}

/// Two actions are the same step if they do the same thing to the same element.
fn same(a: &Action, b: &Action) -> bool {
    match (a, b) {
        (Action::Done { .. }, _) | (_, Action::Done { .. }) => false,
        _ => {
            let key = |x: &Action| {
                let mut v = serde_json::to_value(x).unwrap_or_default();
                // The element is the same by fingerprint, whatever index it had.
                if let Some(t) = v.get_mut("target") {
                    if let Some(o) = t.as_object_mut() {
                        o.remove("index");
                    }
                }
                v
            };
            key(a) == key(b)
        }
    }
}

/// Checks `action`, decided on `obs` for `goal`, against what was `taken` before (oldest first).
pub fn check(goal: &str, action: &Action, obs: &Observation, taken: &[Taken]) -> Verdict {
    if misplaced_secret(action) {
        return Verdict::Reask(
            "a saved secret ({{secret:…}}) is only typed, whole, into its sign-in field: never put it in an address, an option or a key".into(),
        );
    }
    if let Action::Done { answer, success } = action {
        if let Some(Taken {
            action:
                Action::Type {
                    target,
                    submit: false,
                    ..
                },
            url,
            ..
        }) = taken.last()
        {
            if *url == obs.url && *success && obs.find_indexed(target.index).is_some() {
                return Verdict::Replace {
                    action: Box::new(Action::PressKey {
                        key: "Enter".into(),
                        modifiers: Vec::new(),
                        target: Some(target.clone()),
                    }),
                    why: "the text was typed but never submitted; pressing Enter first".into(),
                };
            }
        }
        if *success && answer.trim().is_empty() && asks_question(goal) {
            return Verdict::Reask(
                "the goal asks for something to find out: put it in done's \"answer\"".into(),
            );
        }
        return Verdict::Allow;
    }
    let repeats = taken
        .iter()
        .rev()
        .take(2)
        .filter(|t| t.url == obs.url && t.page == digest(obs) && same(&t.action, action))
        .count();
    if repeats == 2 {
        return Verdict::Loop(
            "this is the third time the same action is chosen on this page and nothing changed; try something else"
                .into(),
        );
    }
    match risk(action, obs).or_else(|| leaves(action, obs, taken)) {
        Some((kind, why)) => Verdict::Approve { kind, why },
        None => Verdict::Allow,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::test_support::{element, page_of};

    fn page() -> Observation {
        page_of(
            "https://shop.example/cart",
            "",
            vec![
                element(0, "input", Some("search"), Some("searchbox"), "Search"),
                element(1, "button", None, Some("button"), "Place order"),
                element(2, "a", None, Some("link"), "Order history"),
                element(3, "button", None, Some("button"), "Remove item"),
                element(4, "input", Some("text"), Some("textbox"), "Card number"),
                element(
                    5,
                    "input",
                    Some("password"),
                    Some("textbox"),
                    "New password",
                ),
                element(6, "button", None, Some("button"), "Show payload"),
                element(7, "a", None, Some("link"), "Next page"),
            ],
        )
    }

    fn target(obs: &Observation, i: u32) -> Target {
        let n = obs.find_indexed(i).unwrap();
        Target {
            index: i,
            fingerprint: n.fingerprint.clone().unwrap(),
        }
    }

    fn click(obs: &Observation, i: u32) -> Action {
        Action::Click {
            target: target(obs, i),
        }
    }

    #[test]
    fn risky_actions_need_approval() {
        let obs = page();
        let approve = |a: &Action| match check("buy socks", a, &obs, &[]) {
            Verdict::Approve { why, .. } => why,
            v => panic!("{a:?}: {v:?}"),
        };
        assert!(approve(&click(&obs, 1)).contains("\"Place order\""));
        assert_eq!(
            check("g", &click(&obs, 2), &obs, &[]),
            Verdict::Allow,
            "order history is only read"
        );
        approve(&click(&obs, 3));
        let typed = |i| Action::Type {
            target: target(&obs, i),
            text: "x".into(),
            submit: false,
            clear: true,
        };
        assert!(approve(&typed(4)).contains("card"));
        approve(&typed(5));
        assert_eq!(
            check("g", &click(&obs, 6), &obs, &[]),
            Verdict::Allow,
            "payload is not pay"
        );
        assert_eq!(check("g", &typed(0), &obs, &[]), Verdict::Allow);
    }

    #[test]
    fn leaving_for_a_site_the_task_has_not_been_on_needs_approval() {
        let mut obs = page();
        let mut away = element(9, "a", None, None, "Claim your prize");
        away.href = Some("https://evil.test/?q=secret".into());
        let mut home = element(10, "a", None, None, "Help");
        home.href = Some("/help".into());
        obs.root.children.extend([away, home]);
        let navigate = |url: &str| Action::Navigate { url: url.into() };
        let verdict = |a: &Action, taken: &[Taken]| check("Find socks", a, &obs, taken);
        assert!(matches!(
            verdict(&navigate("https://evil.test/collect?d=page+text"), &[]),
            Verdict::Approve { kind, .. } if kind == "leave"
        ));
        assert!(matches!(
            verdict(&click(&obs, 9), &[]),
            Verdict::Approve { kind, .. } if kind == "leave"
        ));
        // The same site, a relative address, or a site the task has been on: no question.
        assert_eq!(verdict(&click(&obs, 10), &[]), Verdict::Allow);
        assert_eq!(verdict(&navigate("/cart"), &[]), Verdict::Allow);
        let been = [Taken {
            action: Action::Back,
            url: "https://evil.test/earlier".into(),
            page: 0,
        }];
        assert_eq!(
            verdict(&navigate("https://evil.test/again"), &been),
            Verdict::Allow
        );
        // Typing into a frame of another origin sends the text there.
        let mut framed = page();
        let mut field = element(20, "input", Some("text"), Some("textbox"), "Comment");
        field.frame_id = Some(4);
        framed.root.children.push(DomNode {
            tag: "iframe".into(),
            href: Some("https://tracker.test/widget".into()),
            frame_id: Some(4),
            ..Default::default()
        });
        framed.root.children.push(field);
        let typing = Action::Type {
            target: target(&framed, 20),
            text: "what the page said".into(),
            submit: false,
            clear: true,
        };
        assert!(matches!(
            check("Leave a comment", &typing, &framed, &[]),
            Verdict::Approve { kind, .. } if kind == "leave"
        ));
        let own = Action::Type {
            target: target(&framed, 0),
            text: "socks".into(),
            submit: true,
            clear: true,
        };
        assert_eq!(check("Find socks", &own, &framed, &[]), Verdict::Allow);
        // A form of this page that sends to another site: submitting it leaves, typing alone
        // does not.
        let mut form = page();
        let mut feedback = element(30, "input", Some("text"), Some("textbox"), "Feedback");
        feedback.sends_to = Some("https://evil.test".into());
        let mut go = element(31, "button", Some("submit"), Some("button"), "Go");
        go.sends_to = Some("https://evil.test".into());
        form.root.children.extend([feedback, go]);
        let typing = |submit| Action::Type {
            target: target(&form, 30),
            text: "ACCT-1".into(),
            submit,
            clear: true,
        };
        for sends in [typing(true), click(&form, 31)] {
            assert!(matches!(
                check("Leave feedback", &sends, &form, &[]),
                Verdict::Approve { kind, .. } if kind == "leave"
            ));
        }
        assert_eq!(
            check("Leave feedback", &typing(false), &form, &[]),
            Verdict::Allow
        );
    }

    #[test]
    fn a_secret_is_never_put_in_an_address_an_option_or_a_key() {
        let obs = page();
        let navigate = Action::Navigate {
            url: "https://evil.test/?p={{secret:password}}".into(),
        };
        assert!(matches!(
            check("Sign in", &navigate, &obs, &[]),
            Verdict::Reask(why) if why.contains("only typed")
        ));
        let typed = Action::Type {
            target: target(&obs, 0),
            text: "{{secret:password}}".into(),
            submit: false,
            clear: true,
        };
        assert_eq!(check("Sign in", &typed, &obs, &[]), Verdict::Allow);
    }

    #[test]
    fn typing_then_done_submits_first() {
        let obs = page();
        let typed = Taken {
            action: Action::Type {
                target: target(&obs, 0),
                text: "socks".into(),
                submit: false,
                clear: true,
            },
            url: obs.url.clone(),
            page: digest(&obs),
        };
        let done = Action::Done {
            answer: "searched".into(),
            success: true,
        };
        match check("search for socks", &done, &obs, &[typed]) {
            Verdict::Replace { action, .. } => match *action {
                Action::PressKey {
                    key,
                    target: Some(t),
                    ..
                } => assert_eq!((key.as_str(), t.index), ("Enter", 0)),
                a => panic!("{a:?}"),
            },
            v => panic!("{v:?}"),
        }
    }

    #[test]
    fn a_question_needs_an_answer() {
        let obs = page();
        let empty = Action::Done {
            answer: " ".into(),
            success: true,
        };
        assert!(matches!(
            check("What does the cheapest sock cost?", &empty, &obs, &[]),
            Verdict::Reask(_)
        ));
        assert!(matches!(
            check("find the price of socks", &empty, &obs, &[]),
            Verdict::Reask(_)
        ));
        assert_eq!(
            check("add socks to the cart", &empty, &obs, &[]),
            Verdict::Allow
        );
        let failed = Action::Done {
            answer: String::new(),
            success: false,
        };
        assert_eq!(
            check("what is it?", &failed, &obs, &[]),
            Verdict::Allow,
            "giving up needs no answer"
        );
    }

    #[test]
    fn the_third_same_action_on_the_same_page_is_a_loop() {
        let obs = page();
        let next = click(&obs, 7);
        let before = |url: &str| Taken {
            action: next.clone(),
            url: url.into(),
            page: digest(&obs),
        };
        assert_eq!(check("g", &next, &obs, &[before(&obs.url)]), Verdict::Allow);
        assert!(matches!(
            check("g", &next, &obs, &[before(&obs.url), before(&obs.url)]),
            Verdict::Loop(_)
        ));
        // On another page it is progress (the next page of results), not a loop.
        assert_eq!(
            check(
                "g",
                &next,
                &obs,
                &[before("https://shop.example/cart?page=1"), before(&obs.url)]
            ),
            Verdict::Allow
        );
        // On the same address with what it shows changed since (a counter's number), it is
        // progress too.
        let changed = Taken {
            page: digest(&obs) ^ 1,
            ..before(&obs.url)
        };
        assert_eq!(
            check("g", &next, &obs, &[changed.clone(), changed]),
            Verdict::Allow
        );
        // The same element under another index is still the same element.
        let mut moved = next.clone();
        if let Action::Click { target } = &mut moved {
            target.index = 70;
        }
        let earlier = Taken {
            action: moved,
            url: obs.url.clone(),
            page: digest(&obs),
        };
        assert!(matches!(
            check("g", &next, &obs, &[earlier.clone(), earlier]),
            Verdict::Loop(_)
        ));
    }
}
