//! A count set with its own − and + buttons (guests, rooms, tickets): no field takes the
//! number, so the button towards it is pressed, one step at a time, until the number shown
//! between them is the one asked for.

use super::candidate::{target, Candidate, Grounded};
use super::page::{same_line, Element, Kind, Page};
use super::words;
use itinero_shared::Action;

const UP: &[&str] = &[
    "more",
    "increase",
    "add",
    "plus",
    "increment",
    "up",
    "raise",
];
const DOWN: &[&str] = &[
    "fewer",
    "less",
    "decrease",
    "minus",
    "decrement",
    "down",
    "reduce",
    "remove",
];
const UP_SIGNS: &[&str] = &["+", "＋"];
const DOWN_SIGNS: &[&str] = &["-", "−", "–", "－"];

#[derive(Clone, Copy, PartialEq)]
enum Way {
    Up,
    Down,
}

/// Which way a button moves the count named `field`: by its name ("More adults"), or, for a
/// bare sign, by the field's name written on its line.
fn way(page: &Page, e: &Element, field: &str) -> Option<Way> {
    if e.kind != Kind::Press {
        return None;
    }
    for label in &e.labels {
        let w = words::words(label);
        if words::contains(label, field) {
            if w.iter().any(|x| UP.contains(&x.as_str())) {
                return Some(Way::Up);
            }
            if w.iter().any(|x| DOWN.contains(&x.as_str())) {
                return Some(Way::Down);
            }
        }
    }
    let sign = e
        .labels
        .iter()
        .map(|l| l.trim())
        .find(|l| UP_SIGNS.contains(l) || DOWN_SIGNS.contains(l))?;
    let named_on_line = page
        .texts
        .iter()
        .any(|t| same_line(t.node, e.node) && words::contains(t.text, field));
    named_on_line.then(|| {
        if UP_SIGNS.contains(&sign) {
            Way::Up
        } else {
            Way::Down
        }
    })
}

/// The press towards `value` for the count named `field`, `Satisfied` when it is shown
/// already, or `None` when the page has no such pair of buttons and a number between them.
pub fn step_to(page: &Page, field: &str, value: &str) -> Option<Grounded> {
    let wanted: i64 = value.trim().parse().ok()?;
    let field = field
        .trim()
        .trim_start_matches("number of ")
        .trim_start_matches("count of ");
    let mut up = Vec::new();
    let mut down = Vec::new();
    for e in &page.elements {
        match way(page, e, field) {
            Some(Way::Up) => up.push(e),
            Some(Way::Down) => down.push(e),
            None => {}
        }
    }
    let ([up], [down]) = (up.as_slice(), down.as_slice()) else {
        return None;
    };
    // The number shown on the buttons' line, nearest between them in reading order.
    let (lo, hi) = (up.order.min(down.order), up.order.max(down.order));
    let shown: i64 = page
        .texts
        .iter()
        .filter(|t| same_line(t.node, up.node))
        .filter_map(|t| Some((t.order, t.text.trim().parse::<i64>().ok()?)))
        .min_by_key(|(at, _)| {
            if (lo..=hi).contains(at) {
                0
            } else {
                at.abs_diff(lo).min(at.abs_diff(hi))
            }
        })?
        .1;
    if shown == wanted {
        return Some(Grounded::Satisfied);
    }
    let button = if wanted > shown { up } else { down };
    let name = button.labels.first().cloned().unwrap_or_default();
    Some(Grounded::Candidates(vec![Candidate {
        why: format!("click {name:?} ({shown} → {wanted})"),
        action: Action::Click {
            target: target(button)?,
        },
        confidence: 0.9,
        finishes: (wanted - shown).abs() == 1,
    }]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::test_support::{element, page_of, placed, text_at};
    use itinero_shared::observation::Observation;

    fn stay(adults: &str) -> Observation {
        page_of(
            "https://stay.example/",
            "Find a stay",
            vec![
                text_at("Adults", 10.0, 10.0),
                placed(element(0, "button", None, None, "Fewer adults"), 100.0, 6.0),
                text_at(adults, 200.0, 10.0),
                placed(element(1, "button", None, None, "More adults"), 240.0, 6.0),
                text_at("Rooms", 10.0, 50.0),
                placed(element(2, "button", None, None, "−"), 100.0, 46.0),
                text_at("1", 200.0, 50.0),
                placed(element(3, "button", None, None, "+"), 240.0, 46.0),
            ],
        )
    }

    fn pressed(g: Option<Grounded>) -> Option<(u32, bool)> {
        match g? {
            Grounded::Candidates(c) => match &c[0].action {
                Action::Click { target } => Some((target.index, c[0].finishes)),
                _ => None,
            },
            _ => None,
        }
    }

    #[test]
    fn the_button_towards_the_number_until_it_is_shown() {
        let obs = stay("2");
        let page = Page::read(&obs);
        assert_eq!(pressed(step_to(&page, "adults", "4")), Some((1, false)));
        assert_eq!(
            pressed(step_to(&page, "number of adults", "1")),
            Some((0, true))
        );
        assert_eq!(step_to(&page, "adults", "2"), Some(Grounded::Satisfied));
        // Bare signs belong to the count named on their line.
        assert_eq!(pressed(step_to(&page, "rooms", "2")), Some((3, true)));
        assert_eq!(step_to(&page, "children", "2"), None);
        assert_eq!(step_to(&page, "adults", "two"), None);
    }
}
