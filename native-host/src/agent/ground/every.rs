//! One action for every row of one kind: "Archive all the emails from Dana Lee". Each row that
//! names the entity has its box ticked, every other row's box is left unticked, and then the
//! control the verb names is pressed once for them all, as a person does in a mail client.

use itinero_shared::Action;

use super::candidate::{named, target, Candidate, Grounded};
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

/// The next tick (or untick) towards exactly the rows that name `near`, then the press of the
/// control named `verb`; `Absent` when no row's box names it or no one control is named so.
pub fn select(page: &Page, verb: &str, near: &str) -> Grounded {
    let boxes: Vec<&Element> = page
        .elements
        .iter()
        .filter(|e| e.kind == Kind::Checkable && e.input_type() == "checkbox")
        .collect();
    let (wanted, others): (Vec<&Element>, Vec<&Element>) =
        boxes.iter().partition(|e| names(page, e, near));
    if wanted.is_empty() {
        return Grounded::Absent;
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
    use itinero_shared::Action;

    fn next(page: &Page) -> Option<(u32, Option<bool>)> {
        match select(page, "archive", "Dana Lee") {
            Grounded::Candidates(c) => match &c[0].action {
                Action::Check { target, checked } => Some((target.index, Some(*checked))),
                Action::Click { target } => Some((target.index, None)),
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
        assert_eq!(next(&Page::read(&o)), Some((10, Some(true))));
        ticked[0] = true;
        ticked[2] = true;
        let o = build(&ticked);
        assert_eq!(next(&Page::read(&o)), Some((11, Some(false))));
        ticked[1] = false;
        let o = build(&ticked);
        assert_eq!(next(&Page::read(&o)), Some((1, None)));
    }
}
