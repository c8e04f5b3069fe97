//! A date picked from a calendar that shows a month at a time (booking sites, appointment
//! forms): no field takes the date typed, so the month is turned to the one asked for with the
//! calendar's own next and previous buttons, and its day pressed.

use itinero_shared::{input_format, Action};

use super::candidate::{target, Candidate, Grounded};
use super::page::{Element, Kind, Page};
use super::words;

/// A month as a comparable number: year × 12 + month − 1.
fn months(year: u32, month: u32) -> u32 {
    year * 12 + month - 1
}

/// (year, month, day) of a date written any way `input_format` reads.
fn date(text: &str) -> Option<(u32, u32, u32)> {
    let iso = input_format::as_input_value("date", text)?;
    let mut parts = iso.split('-').map(|p| p.parse::<u32>().ok());
    Some((parts.next()??, parts.next()??, parts.next()??))
}

/// The month a calendar's title shows ("May 2027", "Mar 2027"), as [`months`].
fn title(text: &str) -> Option<u32> {
    if text.len() > 24 {
        return None;
    }
    let ym = input_format::as_input_value("month", text)?;
    let (y, m) = ym.split_once('-')?;
    Some(months(y.parse().ok()?, m.parse().ok()?))
}

fn press(e: &Element, why: String, finishes: bool) -> Option<Grounded> {
    Some(Grounded::Candidates(vec![Candidate {
        why,
        action: Action::Click { target: target(e)? },
        confidence: 0.9,
        finishes,
    }]))
}

/// The calendar's button that turns it one month `later` (or back): the one named so ("Next
/// month"), else the page's one bare arrow or "Next".
fn turner<'p, 'a>(page: &'p Page<'a>, later: bool) -> Option<&'p Element<'a>> {
    let (month_word, page_word) = if later {
        ("next month", "next")
    } else {
        ("previous month", "previous")
    };
    let only = |phrase: &str, at_least: f32| {
        let named: Vec<&Element> = page
            .elements
            .iter()
            .filter(|e| e.kind == Kind::Press)
            .filter(|e| {
                e.labels
                    .iter()
                    .any(|l| words::similarity(phrase, l) >= at_least)
            })
            .collect();
        (named.len() == 1).then(|| named[0])
    };
    only(month_word, 0.9).or_else(|| only(page_word, 0.95))
}

/// A click on a read-only date field, which opens its calendar, when `value` is a date.
pub fn open(field: &Element, value: &str) -> Option<Grounded> {
    date(value)?;
    let name = field.labels.first().cloned().unwrap_or_default();
    press(field, format!("click {name:?} to open its calendar"), false)
}

/// The press that brings the calendar on the page nearer to `value`'s date (its month turned,
/// or its day pressed); `None` when `value` is no date or the page shows no month's title with
/// a way to the date.
pub fn pick(page: &Page, value: &str) -> Option<Grounded> {
    let (y, m, d) = date(value)?;
    let want = months(y, m);
    // Days whose own name is the whole date ("May 14, 2027"): pressed directly.
    let dated: Vec<&Element> = page
        .elements
        .iter()
        .filter(|e| e.kind == Kind::Press && e.labels.iter().any(|l| date(l) == Some((y, m, d))))
        .collect();
    if let Some(day) = dated.first() {
        return press(
            day,
            format!("click the day {value:?} in the calendar"),
            true,
        );
    }
    let titles: Vec<(usize, u32)> = page
        .texts
        .iter()
        .filter_map(|t| Some((t.order, title(t.text)?)))
        .collect();
    if titles.is_empty() {
        return None;
    }
    if let Some(&(at, _)) = titles.iter().find(|t| t.1 == want) {
        // The day is a control named by its number, after the month's title and before the
        // next month's.
        let end = titles
            .iter()
            .map(|t| t.0)
            .filter(|o| *o > at)
            .min()
            .unwrap_or(usize::MAX);
        let day = page.elements.iter().find(|e| {
            e.kind == Kind::Press
                && e.order > at
                && e.order < end
                && e.labels.first().is_some_and(|l| l.trim() == d.to_string())
        })?;
        return press(
            day,
            format!("click the day {d} under the month of {value:?}"),
            true,
        );
    }
    let later = titles.iter().all(|t| t.1 < want);
    let earlier = titles.iter().all(|t| t.1 > want);
    if !later && !earlier {
        return None;
    }
    let turn = turner(page, later)?;
    let name = turn.labels.first().cloned().unwrap_or_default();
    press(
        turn,
        format!("click {name:?} to turn the calendar towards {value:?}"),
        false,
    )
}

#[cfg(test)]
mod tests {
    use super::pick;
    use crate::agent::ground::page::Page;
    use crate::agent::ground::Grounded;
    use crate::agent::test_support::{element, page_of, text_at};
    use itinero_shared::Action;

    fn button(index: u32, name: &str) -> itinero_shared::observation::DomNode {
        element(index, "button", None, None, name)
    }

    fn clicked(g: Option<Grounded>) -> Option<(u32, bool)> {
        match g? {
            Grounded::Candidates(c) => match &c[0].action {
                Action::Click { target } => Some((target.index, c[0].finishes)),
                _ => None,
            },
            _ => None,
        }
    }

    #[test]
    fn the_month_is_turned_then_the_day_pressed() {
        let mut nodes = vec![
            button(1, "Previous month"),
            text_at("March 2027", 0.0, 0.0),
            button(2, "Next month"),
        ];
        for d in 1..=31 {
            nodes.push(button(10 + d, &d.to_string()));
        }
        let o = page_of("https://book.example/", "Plan", nodes);
        let page = Page::read(&o);
        assert_eq!(clicked(pick(&page, "14 May 2027")), Some((2, false)));
        assert_eq!(clicked(pick(&page, "January 3, 2027")), Some((1, false)));
        assert_eq!(clicked(pick(&page, "March 14, 2027")), Some((24, true)));
        assert_eq!(pick(&page, "next Friday"), None);
    }
}
