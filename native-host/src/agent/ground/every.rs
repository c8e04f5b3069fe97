//! One action for every row of one kind: "Archive all the emails from Dana Lee". Each row that
//! names the entity has its box ticked, every other row's box is left unticked, and then the
//! control the verb names is pressed once for them all, as a person does in a mail client.
//! Where the rows have no boxes but each its own control ("Delete" on every row), that control
//! is pressed on each of the entity's rows in turn, and a confirmation between two of them is
//! answered.

use itinero_shared::observation::Observation;
use itinero_shared::Action;

use super::candidate::{named, target, Candidate, Grounded};
use super::confirm;
use super::page::{same_line, Element, Kind, Page};
use super::words;

/// Whether the row of box `e` names `near`: in the box's own name ("Select message from Dana
/// Lee") or in a text on its line.
fn names(page: &Page, e: &Element, near: &str) -> bool {
    e.labels.iter().any(|l| words::contains(l, near))
        || page
            .texts
            .iter()
            .any(|t| same_line(t.node, e.node) && words::contains(t.text, near))
}

fn set(e: &Element, checked: bool) -> Option<Candidate> {
    Some(Candidate {
        why: format!(
            "{} {:?} (the rows to {})",
            if checked { "tick" } else { "untick" },
            named(e),
            if checked { "act on" } else { "leave" }
        ),
        action: Action::Check {
            target: target(e)?,
            checked,
        },
        confidence: 0.9,
        finishes: false,
    })
}

/// Whether a control's name is the verb's ("Delete"), or starts with it and goes on to say
/// what it acts on ("Delete message from Dana Lee").
fn is_verb(verb: &str, label: &str) -> bool {
    words::similarity(verb, label) >= 0.8 || {
        let (v, l) = (words::words(verb), words::words(label));
        !v.is_empty() && l.len() > v.len() && l[..v.len()] == v[..]
    }
}

/// The next press on a row of `near` that has its own control for the verb; the last such
/// row's press finishes the want (a confirmation after it is the strategy's to answer).
fn row_by_row(obs: &Observation, page: &Page, verb: &str, near: &str) -> Grounded {
    let pressed = [verb.to_owned()];
    if let Some(mut c) = confirm::confirmation(obs, page, &pressed) {
        c.finishes = false;
        return Grounded::Candidates(vec![c]);
    }
    let rows: Vec<&Element> = page
        .elements
        .iter()
        .filter(|e| e.kind == Kind::Press && !e.has_state("disabled"))
        .filter(|e| e.labels.iter().any(|l| is_verb(verb, l)) && names(page, e, near))
        .collect();
    let Some(first) = rows.first() else {
        return Grounded::Absent;
    };
    match target(first) {
        Some(t) => Grounded::Candidates(vec![Candidate {
            why: match rows.len() {
                1 => format!("click {:?} on the last row of {near:?}", named(first)),
                n => format!("click {:?} on a row of {near:?} ({n} left)", named(first)),
            },
            action: Action::Click { target: t },
            confidence: 0.9,
            finishes: rows.len() == 1,
        }]),
        None => Grounded::Absent,
    }
}

/// The next tick (or untick) towards exactly the rows that name `near`, then the press of the
/// control named `verb`; where no row's box names `near`, the verb's control on each of its
/// rows. `Absent` when neither is on the page or no one control is named so.
pub fn select(obs: &Observation, page: &Page, verb: &str, near: &str) -> Grounded {
    let boxes: Vec<&Element> = page
        .elements
        .iter()
        .filter(|e| e.kind == Kind::Checkable && e.input_type() == "checkbox")
        .collect();
    let (wanted, others): (Vec<&Element>, Vec<&Element>) =
        boxes.iter().partition(|e| names(page, e, near));
    if wanted.is_empty() {
        return row_by_row(obs, page, verb, near);
    }
    let todo = wanted
        .iter()
        .filter(|e| !e.has_state("checked"))
        .filter_map(|e| set(e, true))
        .chain(
            others
                .iter()
                .filter(|e| e.has_state("checked"))
                .filter_map(|e| set(e, false)),
        )
        .next();
    if let Some(c) = todo {
        return Grounded::Candidates(vec![c]);
    }
    // The control for the ticked rows: the one press named by the verb.
    let mut controls: Vec<(f32, &Element)> = page
        .elements
        .iter()
        .filter(|e| e.kind == Kind::Press)
        .filter_map(|e| {
            let s = e
                .labels
                .iter()
                .map(|l| words::similarity(verb, l))
                .fold(0.0, f32::max);
            (s >= 0.8).then_some((s, e))
        })
        .collect();
    controls.sort_by(|a, b| b.0.total_cmp(&a.0));
    match controls.as_slice() {
        [(s, e), rest @ ..] if rest.first().is_none_or(|r| r.0 < *s) => match target(e) {
            Some(t) => Grounded::Candidates(vec![Candidate {
                why: format!(
                    "click {:?} for the {} rows of {near:?}",
                    named(e),
                    wanted.len()
                ),
                action: Action::Click { target: t },
                confidence: 0.9,
                finishes: true,
            }]),
            None => Grounded::Absent,
        },
        _ => Grounded::Absent,
    }
}

#[cfg(test)]
mod tests {
    use super::select;
    use crate::agent::ground::page::Page;
    use crate::agent::ground::Grounded;
    use crate::agent::test_support::{element, page_of, placed, text_at};
    use itinero_shared::observation::Observation;
    use itinero_shared::Action;

    fn next(o: &Observation) -> Option<(u32, Option<bool>, bool)> {
        let page = Page::read(o);
        match select(o, &page, "archive", "Dana Lee") {
            Grounded::Candidates(c) => match &c[0].action {
                Action::Check { target, checked } => {
                    Some((target.index, Some(*checked), c[0].finishes))
                }
                Action::Click { target } => Some((target.index, None, c[0].finishes)),
                _ => None,
            },
            _ => None,
        }
    }

    #[test]
    fn the_sender_s_rows_are_ticked_the_others_left_then_the_verb_pressed() {
        let rows = ["Dana Lee", "Omar Ruiz", "Dana Lee"];
        let nodes = vec![placed(
            element(1, "button", None, None, "Archive"),
            0.0,
            0.0,
        )];
        let mut ticked = [false, true, false];
        let build = |ticked: &[bool; 3]| {
            let mut nodes = nodes.clone();
            for (i, who) in rows.iter().enumerate() {
                let y = 40.0 + 30.0 * i as f64;
                let mut b = placed(
                    element(10 + i as u32, "input", Some("checkbox"), None, ""),
                    0.0,
                    y,
                );
                if ticked[i] {
                    b.states.push("checked".into());
                }
                nodes.push(b);
                nodes.push(text_at(who, 100.0, y));
            }
            page_of("https://mail.example/", "Inbox", nodes)
        };
        let o = build(&ticked);
        assert_eq!(next(&o), Some((10, Some(true), false)));
        ticked[0] = true;
        ticked[2] = true;
        let o = build(&ticked);
        assert_eq!(next(&o), Some((11, Some(false), false)));
        ticked[1] = false;
        let o = build(&ticked);
        assert_eq!(next(&o), Some((1, None, true)));
    }

    #[test]
    fn rows_with_their_own_control_are_pressed_one_at_a_time() {
        let build = |rows: &[&str]| {
            let mut nodes = Vec::new();
            for (i, who) in rows.iter().enumerate() {
                let y = 40.0 + 30.0 * i as f64;
                nodes.push(text_at(who, 0.0, y));
                let mut b = placed(element(20 + i as u32, "button", None, None, "🗑"), 300.0, y);
                b.name = Some("Archive".into());
                nodes.push(b);
            }
            page_of("https://mail.example/", "Inbox", nodes)
        };
        // The first of Dana's two rows, then the last, which finishes.
        let o = build(&["Omar Ruiz", "Dana Lee", "Dana Lee"]);
        assert_eq!(next(&o), Some((21, None, false)));
        let o = build(&["Omar Ruiz", "Dana Lee"]);
        assert_eq!(next(&o), Some((21, None, true)));
        let o = build(&["Omar Ruiz"]);
        assert_eq!(next(&o), None);
    }
}
