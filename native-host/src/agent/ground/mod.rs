//! Grounding: what the goal asks (`goal.rs`) found on the page (`page.rs`) by the names a
//! person would use (`words.rs`; an option's everyday name, the shared `aliases`), as ranked
//! candidate actions each with a confidence. A candidate is only as sure as its match is unique: "Save"
//! on a page with one Save button is sure; on a page with two it is a choice for the model
//! (`candidate.rs`). Values to read come from `answer.rs` by their form and from `lookup.rs`
//! by where they sit; a count set by its buttons is `counter.rs`'s, a date picked from a
//! month's days `calendar.rs`'s, every row of one sender ticked for one action `every.rs`'s,
//! a dialog's confirmation `confirm.rs`'s, a cookie banner's answer `consent.rs`'s, the way
//! back to a site's front page `site.rs`'s.
//! The strategy that acts on these is `agent/grounded.rs`.

pub mod answer;
mod calendar;
mod candidate;
pub mod confirm;
mod consent;
pub mod counter;
mod every;
pub mod goal;
pub mod lookup;
pub mod page;
mod site;
pub mod words;

use itinero_shared::observation::{DomNode, Observation};
use itinero_shared::{aliases, input_format, Action, ScrollDirection, Target};

use candidate::{named, target};
pub use candidate::{Candidate, Grounded, SURE};
use goal::{AnswerKind, Question, Want};
use page::{Element, Kind, Page};

/// What the strategy remembers of earlier steps that the page no longer shows.
#[derive(Debug, Default, Clone)]
pub struct Memory {
    /// Values typed into fields whose value the page hides (passwords), by element path.
    pub typed: Vec<(String, String)>,
    /// Moves made to find something not yet on the page (scrolls, next pages).
    pub searches: u32,
}

/// The best score of `phrase` against any of the element's names.
fn score(phrase: &str, e: &Element) -> f32 {
    e.labels
        .iter()
        .enumerate()
        .map(|(i, l)| {
            // A name that comes from an attribute or nearby text counts a little less.
            let s = words::similarity(phrase, l);
            if i == 0 {
                s
            } else {
                s * 0.95
            }
        })
        .fold(0.0, f32::max)
}

/// Confidence from a best and a runner-up score: sure only when the best is good and alone.
fn margin(best: f32, second: f32) -> f32 {
    if second >= best - 0.05 {
        best.min(0.6)
    } else if second > best - 0.15 {
        best.min(0.75)
    } else {
        best
    }
}

/// Elements of the kinds asked, scored against `phrase`, best first.
fn ranked<'p, 'a>(page: &'p Page<'a>, phrase: &str, kinds: &[Kind]) -> Vec<(f32, &'p Element<'a>)> {
    let mut v: Vec<(f32, &Element)> = page
        .elements
        .iter()
        .filter(|e| kinds.contains(&e.kind) && !e.has_state("disabled"))
        .map(|e| (score(phrase, e), e))
        .filter(|(s, _)| *s > 0.3)
        .collect();
    v.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.order.cmp(&b.1.order)));
    // A control inside another of the same name (a link in a tree item) is one control: the
    // inner one, which is what takes the click.
    let inner: Vec<bool> = v
        .iter()
        .map(|(s, e)| {
            !v.iter()
                .any(|(t, o)| t >= s && o.path.len() > e.path.len() && o.path.starts_with(&e.path))
        })
        .collect();
    let mut v: Vec<(f32, &Element)> = v
        .into_iter()
        .zip(inner)
        .filter_map(|(x, keep)| keep.then_some(x))
        .collect();
    // The site's chrome (its header's search, its footer's newsletter) gives way to the page's
    // content where both are named alike: "the email field" is the form's, not the footer's.
    let content = v
        .iter()
        .filter(|(_, e)| !e.in_site_chrome())
        .map(|(s, _)| *s)
        .fold(0.0, f32::max);
    if content > 0.0 {
        for (s, e) in &mut v {
            if e.in_site_chrome() && *s <= content + 0.05 {
                *s *= 0.7;
            }
        }
        v.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.order.cmp(&b.1.order)));
    }
    v
}

pub fn ground(want: &Want, obs: &Observation, page: &Page, memory: &Memory) -> Grounded {
    if let Some(c) = consent::answer(page) {
        return Grounded::Candidates(vec![c]);
    }
    match want {
        Want::Assign { field, value } => assign(page, field.as_deref(), value, memory),
        Want::Pair { text } => pair(page, text, memory),
        Want::Choose { option } => choose(page, option),
        Want::Tick { items, on, only } => tick(page, items, *on, *only),
        Want::Click {
            target,
            ordinal,
            near,
        } => click(obs, page, target, *ordinal, near.as_deref(), memory),
        Want::Submit { label } => submit(page, label.as_deref(), memory),
        Want::Search { query } => search(obs, page, query, memory),
        Want::Answer(q) => read_answer(obs, page, q, memory),
        Want::Act { verb, object } => act(obs, page, verb, object, memory),
        Want::Every { verb, near } => every::select(obs, page, verb, near),
        Want::Unknown { .. } => Grounded::Absent,
    }
}

/// A verb done to an object: the option itself where the verb chooses and the page offers
/// it, else the control named by the verb beside the object (scrolling or paging to find the
/// object when the page has rows of such controls, none beside it yet). A page with no
/// control of the verb's name leaves it to the model.
fn act(obs: &Observation, page: &Page, verb: &str, object: &str, memory: &Memory) -> Grounded {
    if goal::is_choosing(verb) {
        let chosen = choose(page, object);
        if chosen != Grounded::Absent {
            return chosen;
        }
    }
    let controls = ranked(page, verb, &[Kind::Press])
        .into_iter()
        .filter(|(s, _)| *s >= 0.8)
        .count();
    let anchored = anchors(page, object);
    // Such controls only beyond the viewport's reach, one beside the object: scroll to them.
    if controls == 0 && beyond_reach(obs, page, verb, &anchored).is_some() && !anchored.is_empty() {
        return find_more(obs, page, memory);
    }
    // One such control and the object nowhere: no row of a list to look further down for.
    if controls == 0 || (controls == 1 && anchored.is_empty()) {
        return Grounded::Absent;
    }
    click(obs, page, verb, None, Some(object), memory)
}

fn typed_here(e: &Element, memory: &Memory) -> Option<String> {
    let path = e.node.fingerprint.as_ref().map(|f| f.path.clone())?;
    memory
        .typed
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, v)| v.clone())
}

/// The action that puts `value` into `e`, or `None` when it is already there.
fn put(e: &Element, value: &str, confidence: f32, memory: &Memory) -> Option<Candidate> {
    let t = target(e)?;
    match e.kind {
        Kind::Field => {
            let current = if e.is_secret() {
                typed_here(e, memory)
            } else {
                e.node.value.clone()
            };
            if current.as_deref().is_some_and(|c| {
                let format = input_format::format_of(e.input_type(), e.attr("inputmode"));
                input_format::same_value(format, c, value)
            }) {
                return None;
            }
            // A secret is named, never repeated: the reason reaches the panel and the store.
            let why = if e.is_secret() {
                format!("type the password into {:?}", named(e))
            } else {
                format!("type {value:?} into {:?}", named(e))
            };
            Some(Candidate {
                why,
                action: Action::Type {
                    target: t,
                    text: value.to_owned(),
                    submit: false,
                    clear: true,
                },
                confidence,
                finishes: true,
            })
        }
        Kind::Choice => {
            let (best, option) = e
                .options
                .iter()
                .map(|o| (option_score(value, o), o.clone()))
                .max_by(|a, b| a.0.total_cmp(&b.0))
                .unwrap_or_else(|| (1.0, value.to_owned()));
            if e.node
                .value
                .as_deref()
                .is_some_and(|v| words::similarity(&option, v) >= 0.95 || aliases::same(&option, v))
            {
                return None;
            }
            Some(Candidate {
                why: format!("choose {option:?} in {:?}", named(e)),
                action: Action::Select {
                    target: t,
                    value: option,
                },
                confidence: confidence.min(if best >= 0.9 { 1.0 } else { best }),
                finishes: true,
            })
        }
        Kind::Checkable => {
            if e.has_state("checked") {
                return None;
            }
            Some(Candidate {
                why: format!("choose {:?}", named(e)),
                action: Action::Check {
                    target: t,
                    checked: true,
                },
                confidence,
                finishes: true,
            })
        }
        Kind::Press => Some(Candidate {
            why: format!("click {:?}", named(e)),
            action: Action::Click { target: t },
            confidence,
            finishes: true,
        }),
    }
}

fn outcome(candidate: Option<Candidate>) -> Grounded {
    match candidate {
        Some(c) => Grounded::Candidates(vec![c]),
        None => Grounded::Satisfied,
    }
}

/// Field words a goal uses for the fields of a sign-in form, and what finds them when no label
/// says the same.
fn conventional<'p, 'a>(page: &'p Page<'a>, field: &str) -> Option<&'p Element<'a>> {
    let canon = words::canonical(field);
    let unique = |mut v: Vec<&'p Element<'a>>| {
        keep_if_any(&mut v, |e| !e.in_site_chrome());
        (v.len() == 1).then(|| v[0])
    };
    match canon.as_str() {
        "password" => unique(page.elements.iter().filter(|e| e.is_secret()).collect()),
        "username" | "user" | "email" | "login" | "signin" => {
            // Beside a password, the sign-in's own form: not the footer's newsletter email.
            let secret_form = page
                .elements
                .iter()
                .find(|e| e.is_secret())
                .and_then(|s| form_of(&s.path));
            let by_hint = unique(
                page.elements
                    .iter()
                    .filter(|e| {
                        e.kind == Kind::Field
                            && (matches!(e.attr("autocomplete"), Some("username" | "email"))
                                || e.input_type() == "email")
                            && secret_form.is_none_or(|f| form_of(&e.path) == Some(f))
                    })
                    .collect(),
            );
            by_hint.or_else(|| {
                // The one text field of a form that asks for a password.
                let secret = page.elements.iter().find(|e| e.is_secret())?;
                unique(
                    page.elements
                        .iter()
                        .filter(|e| {
                            e.kind == Kind::Field
                                && !e.is_secret()
                                && Page::shared_depth(&e.path, &secret.path) + 3
                                    >= secret.path.len()
                        })
                        .collect(),
                )
            })
        }
        "onetimecode" | "code" => unique(
            page.elements
                .iter()
                .filter(|e| {
                    e.kind == Kind::Field
                        && (e.attr("autocomplete") == Some("one-time-code")
                            || words::contains(&e.labels.join(" "), "code"))
                })
                .collect(),
        ),
        _ => None,
    }
}

/// Which field a value with no field named belongs in, by the kind of value.
fn by_value<'p, 'a>(page: &'p Page<'a>, value: &str) -> Option<&'p Element<'a>> {
    let empty_fields: Vec<&Element> = page
        .elements
        .iter()
        .filter(|e| e.kind == Kind::Field && e.node.value.as_deref().unwrap_or("").is_empty())
        .collect();
    let kind = if value.contains('@') && !value.contains(' ') {
        "email"
    } else if value.len() > 40 || value.split_whitespace().count() > 5 {
        "textarea"
    } else {
        ""
    };
    let mut fits: Vec<&Element> = empty_fields
        .iter()
        .copied()
        .filter(|e| kind.is_empty() || e.input_type() == kind)
        .collect();
    keep_if_any(&mut fits, |e| !e.in_site_chrome());
    (fits.len() == 1).then(|| fits[0])
}

fn assign(page: &Page, field: Option<&str>, value: &str, memory: &Memory) -> Grounded {
    let Some(field) = field else {
        return match by_value(page, value) {
            Some(e) => outcome(put(e, value, 0.9, memory)),
            None => Grounded::Absent,
        };
    };
    let fields = ranked(page, field, &[Kind::Field, Kind::Choice]);
    let best = fields.first().map_or(0.0, |f| f.0);
    let second = fields.get(1).map_or(0.0, |f| f.0);
    if best >= 0.8 {
        let e = fields[0].1;
        // A read-only date field is a calendar's: the calendar, once open, takes the date.
        if e.has_state("readonly") {
            if let Some(picked) = calendar::pick(page, value).or_else(|| calendar::open(e, value)) {
                return picked;
            }
        }
        return outcome(put(e, value, margin(best, second), memory));
    }
    if let Some(e) = conventional(page, field) {
        return outcome(put(e, value, 0.9, memory));
    }
    if let Some(stepped) = counter::step_to(page, field, value) {
        return stepped;
    }
    if let Some(picked) = calendar::pick(page, value) {
        return picked;
    }
    // Radio buttons: the one named like the value (or by its everyday name), in the group
    // named like the field.
    let mut radios: Vec<(f32, &Element)> = ranked(page, value, &[Kind::Checkable])
        .into_iter()
        .filter(|(s, e)| {
            *s >= 0.8 && e.input_type() == "radio" || e.node.role.as_deref() == Some("radio")
        })
        .collect();
    if radios.is_empty() {
        radios = page
            .elements
            .iter()
            .filter(|e| is_radio(e) && e.labels.iter().any(|l| aliases::same(value, l)))
            .map(|e| (0.95, e))
            .collect();
    }
    if !radios.is_empty() {
        // The group is the nearest text before a radio that names the field (its legend).
        let distance = |e: &Element| {
            page.texts
                .iter()
                .filter(|t| t.order < e.order && words::contains(t.text, field))
                .map(|t| e.order - t.order)
                .min()
        };
        let mut fitting: Vec<(usize, f32, &Element)> = radios
            .iter()
            .filter_map(|(s, e)| Some((distance(e)?, *s, *e)))
            .collect();
        fitting.sort_by_key(|f| f.0);
        let pick = match fitting.as_slice() {
            [(d, s, e), rest @ ..] if rest.first().is_none_or(|r| r.0 > *d) => Some((*s, *e)),
            _ if radios.len() == 1 => Some((radios[0].0 * 0.95, radios[0].1)),
            _ => None,
        };
        if let Some((s, e)) = pick {
            return outcome(put(e, value, s, memory));
        }
    }
    // An option of a list nobody named as the field.
    choose(page, value).sure_or(if best > 0.5 {
        Grounded::Candidates(
            fields
                .iter()
                .take(4)
                .filter_map(|(s, e)| put(e, value, s * 0.7, memory))
                .collect(),
        )
    } else {
        Grounded::Absent
    })
}

fn is_radio(e: &Element) -> bool {
    e.kind == Kind::Checkable
        && (e.input_type() == "radio" || e.node.role.as_deref() == Some("radio"))
}

/// How well an option of a list says `value`: by its words, or as the everyday name of what
/// it writes otherwise ("the UK" for *United Kingdom*) a little below a match of words.
fn option_score(value: &str, option: &str) -> f32 {
    let s = words::similarity(value, option);
    if s < 0.9 && aliases::same(value, option) {
        0.95
    } else {
        s
    }
}

/// "username alice": the longest start of the phrase that names a field on the page is the
/// field, the rest its value.
fn pair(page: &Page, text: &str, memory: &Memory) -> Grounded {
    let parts: Vec<&str> = text.split_whitespace().collect();
    let mut best: Option<(f32, usize, &Element)> = None;
    for k in 1..parts.len().min(5) {
        let phrase = parts[..k].join(" ");
        for (s, e) in ranked(page, &phrase, &[Kind::Field, Kind::Choice])
            .into_iter()
            .take(1)
        {
            if s >= 0.9 && best.is_none_or(|b| s >= b.0) {
                best = Some((s, k, e));
            }
        }
        if best.is_none() {
            if let Some(e) = conventional(page, &phrase) {
                best = Some((0.9, k, e));
            }
        }
    }
    match best {
        Some((s, k, e)) => outcome(put(e, &parts[k..].join(" "), s, memory)),
        None if parts.len() >= 2 => Grounded::Absent,
        None => assign(page, None, text, memory),
    }
}

fn choose(page: &Page, option: &str) -> Grounded {
    // A list that offers it.
    let lists: Vec<(f32, &Element)> = page
        .elements
        .iter()
        .filter(|e| e.kind == Kind::Choice)
        .filter_map(|e| {
            let s = e
                .options
                .iter()
                .map(|o| option_score(option, o))
                .fold(0.0, f32::max);
            (s >= 0.9).then_some((s, e))
        })
        .collect();
    if lists.len() == 1 {
        return outcome(put(lists[0].1, option, lists[0].0, &Memory::default()));
    }
    // A radio button, an option, a tab or a button of that name.
    let named = ranked(page, option, &[Kind::Checkable, Kind::Press]);
    match named.as_slice() {
        [] => Grounded::Absent,
        [(s, e), rest @ ..] => {
            let second = rest.first().map_or(0.0, |r| r.0);
            if *s < 0.5 {
                return Grounded::Absent;
            }
            outcome(put(e, option, margin(*s, second), &Memory::default()))
        }
    }
}

fn tick(page: &Page, items: &[String], on: bool, only: bool) -> Grounded {
    let boxes: Vec<&Element> = page
        .elements
        .iter()
        .filter(|e| e.kind == Kind::Checkable && e.input_type() != "radio")
        .collect();
    let mut wanted = Vec::new();
    for item in items {
        let mut scored: Vec<(f32, &Element)> = boxes.iter().map(|e| (score(item, e), *e)).collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        match scored.as_slice() {
            [(s, e), rest @ ..] if *s >= 0.8 => {
                let conf = margin(*s, rest.first().map_or(0.0, |r| r.0));
                wanted.push((conf, *e));
            }
            _ => return Grounded::Absent,
        }
    }
    let set = |e: &Element, checked: bool, confidence: f32| -> Option<Candidate> {
        if e.has_state("checked") == checked {
            return None;
        }
        Some(Candidate {
            why: format!("{} {:?}", if checked { "tick" } else { "untick" }, named(e)),
            action: Action::Check {
                target: target(e)?,
                checked,
            },
            confidence,
            finishes: false,
        })
    };
    let mut todo: Vec<Candidate> = wanted.iter().filter_map(|(c, e)| set(e, on, *c)).collect();
    if only && on {
        // The others of the same group that are ticked.
        let group = wanted
            .iter()
            .map(|(_, e)| e.path.len().saturating_sub(2))
            .min()
            .unwrap_or(0);
        let anchor = wanted
            .first()
            .map(|(_, e)| e.path[..group.min(e.path.len())].to_vec());
        for b in &boxes {
            let same_group = anchor.as_ref().is_some_and(|a| b.path.starts_with(a));
            if same_group && !wanted.iter().any(|(_, w)| w.order == b.order) {
                todo.extend(set(b, false, 0.9));
            }
        }
    }
    if todo.is_empty() {
        Grounded::Satisfied
    } else {
        // One at a time, the surest first; the want is met when none is left.
        todo.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
        Grounded::Candidates(todo)
    }
}

/// Where the entity is named: texts and elements whose own words hold it.
fn anchors<'a>(page: &Page<'a>, entity: &str) -> Vec<(usize, &'a DomNode)> {
    let mut out: Vec<(usize, &DomNode)> = page
        .texts
        .iter()
        .filter(|t| words::contains(t.text, entity))
        .map(|t| (t.order, t.node))
        .collect();
    for e in &page.elements {
        if e.labels.first().is_some_and(|l| words::contains(l, entity)) {
            out.push((e.order, e.node));
        }
    }
    out.sort_by_key(|a| a.0);
    out
}

/// How far a control sits from the entity: on its line is nearest, then what follows it in
/// reading order (a card's button after its title), then what comes before.
fn distance(e: &Element, anchors: &[(usize, &DomNode)]) -> usize {
    distance_at(e.node, e.order, anchors)
}

/// How far a control sits from the nearest place the entity is named, on the screen: below
/// it (a card's or a post's buttons under its title) is nearer than as far above it, and a
/// column away counts too. It tells apart controls that reading order puts equally near: the
/// last button of one post and the first of the next post's title.
fn offset(e: &Element, anchors: &[(usize, &DomNode)]) -> f64 {
    anchors
        .iter()
        .map(|(_, a)| {
            let dy = e.node.rect.y - a.rect.y;
            let vertical = if dy >= 0.0 { dy } else { -dy * 3.0 };
            vertical + (e.node.rect.x - a.rect.x).abs()
        })
        .fold(f64::INFINITY, f64::min)
}

/// [`distance`] for any node at reading position `order`.
fn distance_at(n: &DomNode, order: usize, anchors: &[(usize, &DomNode)]) -> usize {
    anchors
        .iter()
        .map(|(at, node)| {
            if page::same_line(n, node) {
                0
            } else if order > *at {
                order - at
            } else {
                (at - order) * 3
            }
        })
        .min()
        .unwrap_or(usize::MAX)
}

/// How near the entity the nearest control named `phrase` sits that is beyond the viewport's
/// reach: the page shows it only as text, to be scrolled to before it can be pressed.
fn beyond_reach(
    obs: &Observation,
    page: &Page,
    phrase: &str,
    anchors: &[(usize, &DomNode)],
) -> Option<usize> {
    let out_of_view =
        |n: &DomNode| n.rect.y > obs.viewport.height || n.rect.y + n.rect.height < 0.0;
    page.texts
        .iter()
        .filter(|t| out_of_view(t.node) && words::similarity(phrase, t.text) >= 0.95)
        .map(|t| distance_at(t.node, t.order, anchors))
        .min()
}

/// Controls named like the target, and how close each sits to the entity.
fn click(
    obs: &Observation,
    page: &Page,
    target_phrase: &str,
    ordinal: Option<usize>,
    near: Option<&str>,
    memory: &Memory,
) -> Grounded {
    let kinds = [Kind::Press, Kind::Checkable, Kind::Choice];
    if let Some(n) = ordinal {
        return nth(page, target_phrase, n);
    }
    let matches: Vec<(f32, &Element)> = ranked(page, target_phrase, &kinds)
        .into_iter()
        .filter(|(s, _)| *s >= 0.8)
        .collect();
    let press = |e: &Element, confidence: f32, finishes: bool| -> Option<Candidate> {
        Some(Candidate {
            why: format!("click {:?}{}", named(e), beside(page, e)),
            action: Action::Click { target: target(e)? },
            confidence,
            finishes,
        })
    };
    if let Some(entity) = near {
        let anchors = anchors(page, entity);
        if !anchors.is_empty() {
            let mut by_distance: Vec<(usize, f32, &Element)> = matches
                .iter()
                .map(|(s, e)| (distance(e, &anchors), *s, *e))
                .collect();
            by_distance.sort_by(|a, b| {
                a.0.cmp(&b.0)
                    .then(offset(a.2, &anchors).total_cmp(&offset(b.2, &anchors)))
                    .then(b.1.total_cmp(&a.1))
            });
            // The entity's own control is further down, not yet within reach: scroll to it
            // rather than press a neighbour's.
            let nearest = by_distance.first().map_or(usize::MAX, |b| b.0);
            if beyond_reach(obs, page, target_phrase, &anchors).is_some_and(|d| d < nearest) {
                if let found @ Grounded::Candidates(_) = find_more(obs, page, memory) {
                    return found;
                }
            }
            if let [(d, s, e), rest @ ..] = by_distance.as_slice() {
                // As near in reading order, the one clearly nearer on the screen is alone.
                let alone = rest.first().is_none_or(|r| {
                    r.0 > *d || offset(r.2, &anchors) > offset(e, &anchors) * 1.5 + 20.0
                });
                let conf = if alone { *s } else { s.min(0.6) };
                // The others stay as choices for the model when this one is not sure.
                let mut out: Vec<Candidate> = press(e, conf, true).into_iter().collect();
                out.extend(
                    rest.iter()
                        .take(7)
                        .filter_map(|(_, s, e)| press(e, s.min(conf) * 0.9, true)),
                );
                return Grounded::Candidates(out);
            }
            // No such control here: open the entity itself (a message, a product) first.
            let openers: Vec<(f32, &Element)> = ranked(page, entity, &[Kind::Press])
                .into_iter()
                .filter(|(_, e)| e.labels.first().is_some_and(|l| words::contains(l, entity)))
                .collect();
            if let [(s, e), rest @ ..] = openers.as_slice() {
                let conf = margin(s.max(0.85), rest.first().map_or(0.0, |r| r.0.max(0.85)));
                return Grounded::Candidates(press(e, conf, false).into_iter().collect());
            }
        }
    } else if let [(s, e), rest @ ..] = matches.as_slice() {
        let conf = margin(*s, rest.first().map_or(0.0, |r| r.0));
        let mut out: Vec<Candidate> = press(e, conf, true).into_iter().collect();
        out.extend(
            rest.iter()
                .take(6)
                .filter_map(|(s, e)| press(e, s * 0.7, true)),
        );
        return Grounded::Candidates(out);
    }
    find_more(obs, page, memory)
}

/// What is written on an element's line besides its own name, for telling alike controls
/// apart: ` (beside “Bob Ray · Admin”)`.
fn beside(page: &Page, e: &Element) -> String {
    let own = e.labels.first().map(String::as_str).unwrap_or("");
    let line: Vec<&str> = page
        .texts
        .iter()
        .filter(|t| page::same_line(t.node, e.node) && t.text.trim() != own)
        .map(|t| t.text.trim())
        .filter(|t| !t.is_empty())
        .collect();
    if line.is_empty() {
        return String::new();
    }
    let joined = clip(&line.join(" · "));
    let short: String = joined.chars().take(60).collect();
    format!(" (beside \u{201c}{short}\u{201d})")
}

/// The n-th item of the page's main list: the largest group of links that repeat the same
/// place in the tree.
fn nth(page: &Page, phrase: &str, n: usize) -> Grounded {
    use std::collections::HashMap;
    let mut groups: HashMap<Vec<String>, Vec<&Element>> = HashMap::new();
    for e in page.elements.iter().filter(|e| e.kind == Kind::Press) {
        if e.path.len() < 2 {
            continue;
        }
        // Items of one list have the same path but for the item's own place (`li[2]>a[0]`,
        // `nav[0]>a[3]`).
        let n = e.path.len();
        let key: Vec<String> = e
            .path
            .iter()
            .enumerate()
            .map(|(i, seg)| {
                if i + 2 >= n {
                    seg.split('[').next().unwrap_or(seg).to_owned()
                } else {
                    seg.clone()
                }
            })
            .collect();
        groups.entry(key).or_default().push(e);
    }
    let mut groups: Vec<Vec<&Element>> = groups.into_values().filter(|g| g.len() >= 2).collect();
    // "The third result" is never one of the site's own menus.
    keep_if_any(&mut groups, |g| !g.iter().all(|e| e.in_site_chrome()));
    // A group named like the phrase wins; else the largest.
    groups.sort_by_key(|g| {
        let named = g.iter().filter(|e| score(phrase, e) >= 0.8).count();
        (std::cmp::Reverse(named), std::cmp::Reverse(g.len()))
    });
    let Some(group) = groups.first() else {
        return Grounded::Absent;
    };
    let second = groups.get(1).map_or(0, |g| g.len());
    let pick = if n == usize::MAX {
        group.last()
    } else {
        group.get(n - 1)
    };
    let Some(e) = pick else {
        return Grounded::Absent;
    };
    let confidence = if group.len() >= 2 * second.max(1) {
        0.9
    } else {
        0.6
    };
    Grounded::Candidates(
        target(e)
            .map(|t| Candidate {
                why: format!(
                    "click {:?}, item {} of the list",
                    named(e),
                    n.min(group.len())
                ),
                action: Action::Click { target: t },
                confidence,
                finishes: true,
            })
            .into_iter()
            .collect(),
    )
}

/// A list's button for its next items: "Load more", "Show more", "See more articles", "More
/// results" — not a menu's "More actions".
fn asks_for_more(label: &str) -> bool {
    const LEADS: &[&str] = &["load", "show", "see", "view", "display", "get"];
    const THINGS: &[&str] = &[
        "result", "article", "item", "post", "product", "story", "comment", "news", "review",
        "event", "job", "listing", "entry", "message", "photo", "video", "answer",
    ];
    let w: Vec<String> = label
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| w.trim_end_matches('s').to_owned())
        .collect();
    let thing = |w: Option<&String>| w.is_none_or(|t| THINGS.contains(&t.as_str()));
    match w.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        [lead, "more", ..] if LEADS.contains(lead) => w.len() <= 4 && thing(w.get(2)),
        ["more"] => true,
        ["more", _] => thing(w.get(1)),
        _ => false,
    }
}

/// Something the goal names is not on the page: take an overlay away, open the next page of a
/// list, or scroll further, in that order; nothing when none applies.
fn find_more(obs: &Observation, page: &Page, memory: &Memory) -> Grounded {
    const MAX_SEARCHES: u32 = 8;
    if memory.searches >= MAX_SEARCHES {
        return Grounded::Absent;
    }
    let candidate = |e: &Element, confidence: f32, what: &str| -> Option<Candidate> {
        Some(Candidate {
            why: format!("{what} {:?}", named(e)),
            action: Action::Click { target: target(e)? },
            confidence,
            finishes: false,
        })
    };
    let occluded = page.elements.iter().filter(|e| e.node.occluded).count();
    if occluded * 2 > page.elements.len() {
        let closers = ranked(page, "close", &[Kind::Press]);
        if let Some((_, e)) = closers.iter().find(|(s, e)| *s >= 0.8 && !e.node.occluded) {
            return Grounded::Candidates(
                candidate(e, 0.9, "dismiss the overlay with")
                    .into_iter()
                    .collect(),
            );
        }
        for w in [
            "reject all",
            "only necessary",
            "accept all",
            "accept",
            "got it",
            "no thanks",
            "ok",
            "continue",
        ] {
            if let Some((_, e)) = ranked(page, w, &[Kind::Press])
                .into_iter()
                .find(|(s, e)| *s >= 0.9 && !e.node.occluded)
            {
                return Grounded::Candidates(
                    candidate(e, 0.9, "dismiss the overlay with")
                        .into_iter()
                        .collect(),
                );
            }
        }
    }
    // A consent or notice layer may hide the rest of the page from the observation; a
    // consent layer is answered with the least it allows where it offers that.
    for w in [
        "reject all",
        "only necessary",
        "necessary only",
        "accept all",
        "accept",
        "got it",
        "no thanks",
        "ok",
        "close",
        "dismiss",
    ] {
        let found = ranked(page, w, &[Kind::Press]);
        if let Some((_, e)) = found.iter().find(|(s, _)| *s >= 0.95) {
            if page.elements.len() <= 6 {
                return Grounded::Candidates(
                    candidate(e, 0.85, "dismiss what covers the page with")
                        .into_iter()
                        .collect(),
                );
            }
        }
    }
    let collapsed: Vec<&Element> = page
        .elements
        .iter()
        .filter(|e| e.has_state("collapsed") && e.kind == Kind::Press)
        .collect();
    if collapsed.len() == 1 {
        return Grounded::Candidates(
            candidate(collapsed[0], 0.85, "expand")
                .into_iter()
                .collect(),
        );
    }
    let next = ranked(page, "next", &[Kind::Press]);
    if let Some((s, e)) = next.first().filter(|(s, _)| *s >= 0.9) {
        return Grounded::Candidates(
            candidate(
                e,
                margin(*s, next.get(1).map_or(0.0, |n| n.0)),
                "next page:",
            )
            .into_iter()
            .collect(),
        );
    }
    let more: Vec<&Element> = page
        .elements
        .iter()
        .filter(|e| e.kind == Kind::Press && e.labels.first().is_some_and(|l| asks_for_more(l)))
        .collect();
    if let [e] = more.as_slice() {
        return Grounded::Candidates(candidate(e, 0.9, "more:").into_iter().collect());
    }
    // A scrolling list that has more below, else the page.
    if let Some(list) = page
        .nodes
        .iter()
        .find(|n| n.scroll_container && n.index.is_some() && n.fingerprint.is_some())
    {
        return Grounded::Candidates(vec![Candidate {
            why: "scroll the list for more".into(),
            action: Action::Scroll {
                target: Some(Target {
                    index: list.index.unwrap_or(0),
                    fingerprint: list.fingerprint.clone().unwrap_or_default(),
                }),
                direction: Some(ScrollDirection::Down),
                pages: 1.0,
            },
            confidence: 0.85,
            finishes: false,
        }]);
    }
    if obs.pages_below > 0.05 {
        return Grounded::Candidates(vec![Candidate {
            why: "scroll down for more".into(),
            action: Action::Scroll {
                target: None,
                direction: Some(ScrollDirection::Down),
                pages: 1.0,
            },
            confidence: 0.85,
            finishes: false,
        }]);
    }
    Grounded::Absent
}

/// Keeps the elements that `keep` takes, where it takes any and leaves some out.
fn keep_if_any<T>(items: &mut Vec<T>, keep: impl Fn(&T) -> bool) {
    if items.len() > 1 && items.iter().any(&keep) {
        items.retain(keep);
    }
}

/// The path of the form an element sits in: its path up to its innermost `form`.
fn form_of(path: &[String]) -> Option<&[String]> {
    let at = path
        .iter()
        .rposition(|s| s.split('[').next() == Some("form"))?;
    Some(&path[..=at])
}

fn submit(page: &Page, label: Option<&str>, memory: &Memory) -> Grounded {
    let press = |e: &Element, confidence: f32| -> Grounded {
        match target(e) {
            Some(t) => Grounded::Candidates(vec![Candidate {
                why: format!("click {:?}", named(e)),
                action: Action::Click { target: t },
                confidence,
                finishes: true,
            }]),
            None => Grounded::Absent,
        }
    };
    if let Some(label) = label {
        let named = ranked(page, label, &[Kind::Press]);
        if let [(s, e), rest @ ..] = named.as_slice() {
            if *s >= 0.8 {
                return press(e, margin(*s, rest.first().map_or(0.0, |r| r.0)));
            }
        }
    }
    // The form's own button: the one submit button of the page, leaving out the site's
    // chrome (its search, its newsletter) and, where forms remain, those the task has not
    // typed into.
    let mut submits: Vec<&Element> = page
        .elements
        .iter()
        .filter(|e| e.kind == Kind::Press && e.submits() && !e.has_state("disabled"))
        .collect();
    keep_if_any(&mut submits, |e| !e.in_site_chrome());
    keep_if_any(&mut submits, |e| {
        let form = form_of(&e.path);
        form.is_some()
            && memory
                .typed
                .iter()
                .any(|(path, _)| form_of(&page::segments(path)) == form)
    });
    match submits.as_slice() {
        [e] => match press(e, 0.9) {
            // A button that is not the one the goal named only moves the form on.
            Grounded::Candidates(mut c) if label.is_some() => {
                c[0].finishes = false;
                Grounded::Candidates(c)
            }
            other => other,
        },
        _ => Grounded::Absent,
    }
}

fn search(obs: &Observation, page: &Page, query: &str, memory: &Memory) -> Grounded {
    let mut boxes: Vec<&Element> = page
        .elements
        .iter()
        .filter(|e| {
            e.kind == Kind::Field
                && (e.input_type() == "search"
                    || e.node.role.as_deref() == Some("searchbox")
                    || e.labels.iter().any(|l| words::contains(l, "search")))
        })
        .collect();
    // A page's own search before the site's (in its header).
    keep_if_any(&mut boxes, |e| !e.in_site_chrome());
    let [e] = boxes.as_slice() else {
        return Grounded::Absent;
    };
    let already = e.node.value.as_deref().map(str::trim) == Some(query.trim())
        && obs
            .url
            .to_lowercase()
            .contains(&query.split_whitespace().next().unwrap_or("").to_lowercase());
    if already {
        return Grounded::Satisfied;
    }
    let _ = memory;
    match target(e) {
        Some(t) => Grounded::Candidates(vec![Candidate {
            why: format!("search for {query:?}"),
            action: Action::Type {
                target: t,
                text: query.to_owned(),
                submit: true,
                clear: true,
            },
            confidence: 0.95,
            finishes: true,
        }]),
        None => Grounded::Absent,
    }
}

fn read_answer(obs: &Observation, page: &Page, q: &Question, memory: &Memory) -> Grounded {
    if let Some(which) = q.extreme {
        return match lookup::extreme(page, &q.entity, which) {
            Some(((value, quote), sure)) => Grounded::Answer {
                value,
                quote: clip(&quote),
                confidence: if sure { 0.9 } else { 0.6 },
            },
            // No such thing priced here ("the cheapest scarf" on a page of socks): a search
            // for the kind may list them.
            None if !lookup::is_any_thing(&q.entity) => look_for(obs, page, &q.entity, memory),
            None => Grounded::Absent,
        };
    }
    if q.list {
        // The kind's own page (a shop's category) lists them all; a page titled by the kind
        // is that page, and its priced entries are its things.
        let on_its_page = words::words(&obs.title)
            .first()
            .is_some_and(|w| words::words(&q.entity).first() == Some(w));
        if !on_its_page {
            let own: Vec<&Element> = page
                .elements
                .iter()
                .filter(|e| {
                    e.kind == Kind::Press
                        && e.node.tag == "a"
                        && e.labels
                            .first()
                            .is_some_and(|l| words::similarity(&q.entity, l) >= 0.95)
                })
                .collect();
            let open = |link: &Element, why: String| {
                target(link).map(|t| {
                    Grounded::Candidates(vec![Candidate {
                        why,
                        action: Action::Click { target: t },
                        confidence: 0.9,
                        finishes: false,
                    }])
                })
            };
            match own.as_slice() {
                [link] if memory.searches < 2 => {
                    let why = format!("open {:?}, the page of all {}", named(link), q.entity);
                    if let Some(g) = open(link, why) {
                        return g;
                    }
                }
                // Search results and a product's neighbours show some of the kind; the front
                // page links to the page of them all.
                [] if memory.searches == 0 => {
                    if let Some(home) = site::front_page(&obs.url, page) {
                        let why = format!(
                            "open {:?}, the front page, to find the page of all {}",
                            named(home),
                            q.entity
                        );
                        if let Some(g) = open(home, why) {
                            return g;
                        }
                    }
                }
                _ => {}
            }
        }
        // On the kind's own page its priced entries come in its order, then any other link
        // that names the kind.
        let mut names = if on_its_page {
            lookup::priced(page)
        } else {
            Vec::new()
        };
        for n in lookup::of_kind(page, &q.entity) {
            if !names.contains(&n) {
                names.push(n);
            }
        }
        return match names.as_slice() {
            // The kind may be one search away.
            [] => look_for(obs, page, &q.entity, memory),
            _ => Grounded::Answer {
                value: names.join(", "),
                quote: clip(&names.join(" · ")),
                confidence: 0.9,
            },
        };
    }
    let anchors = if q.entity.is_empty() {
        Vec::new()
    } else {
        anchors(page, &q.entity)
    };
    if anchors.is_empty() {
        if !q.here {
            // The entity may be one search away.
            return look_for(obs, page, &q.entity, memory);
        }
        // "How much is it?" on the thing's own page: the page's one value of the kind.
        let mut all: Vec<(String, String)> = page
            .texts
            .iter()
            .flat_map(|t| {
                answer::values(t.text, q.kind)
                    .into_iter()
                    .map(|v| (v, t.text.trim().to_owned()))
            })
            .collect();
        all.dedup_by(|a, b| a.0 == b.0);
        return several_or_one(all);
    }
    if let Some(attribute) = &q.attribute {
        let found = lookup::by_attribute(page, &anchors, attribute);
        return several_or_one(found);
    }
    if q.kind == AnswerKind::Any {
        return Grounded::Absent;
    }
    // The first value of the kind from where the entity is named on, within a few pieces of
    // text; the entity's own numbers ("invoice 1042") are not its value.
    let own = words::words(&q.entity);
    let mut answers: Vec<(String, String)> = Vec::new();
    for (at, _) in &anchors {
        let mut quote = Vec::new();
        for t in page.texts_after(*at, 5) {
            quote.push(t.text.trim());
            let found = answer::values(t.text, q.kind)
                .into_iter()
                .find(|v| !own.iter().any(|w| words::canonical(v) == *w));
            if let Some(v) = found {
                answers.push((v, quote.join(" ")));
                break;
            }
        }
    }
    answers.dedup_by(|a, b| a.0 == b.0);
    // "these socks" on their own page: the first place that names them is the page's subject,
    // the later ones its neighbours ("you may also like").
    if q.here {
        answers.truncate(1);
    }
    several_or_one(answers)
}

/// A search for what a question is about, as a step towards its answer.
fn look_for(obs: &Observation, page: &Page, what: &str, memory: &Memory) -> Grounded {
    match search(obs, page, what, memory) {
        Grounded::Candidates(mut c) => {
            for x in &mut c {
                x.finishes = false;
                x.confidence = x.confidence.min(0.85);
            }
            Grounded::Candidates(c)
        }
        _ => Grounded::Absent,
    }
}

/// One value found is the answer; several, each where the page says it, are a choice for the
/// model.
fn several_or_one(answers: Vec<(String, String)>) -> Grounded {
    match answers.as_slice() {
        [] => Grounded::Absent,
        [(value, quote)] => Grounded::Answer {
            value: value.clone(),
            quote: clip(quote),
            confidence: 0.9,
        },
        // Several places name the entity with different values: a choice for the model.
        several => Grounded::Candidates(
            several
                .iter()
                .map(|(value, quote)| Candidate {
                    why: format!(
                        "answer {value:?}, where the page says \u{201c}{}\u{201d}",
                        clip(quote)
                    ),
                    action: Action::Done {
                        answer: format!("{value} (the page says: \u{201c}{}\u{201d})", clip(quote)),
                        success: true,
                    },
                    confidence: 0.5,
                    finishes: true,
                })
                .collect(),
        ),
    }
}

fn clip(s: &str) -> String {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.chars().count() <= 140 {
        s
    } else {
        format!("{}…", s.chars().take(140).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::{asks_for_more, assign, find_more, search, submit, Memory};
    use crate::agent::ground::page::Page;
    use crate::agent::ground::Grounded;
    use crate::agent::test_support::{element, page_of, placed};
    use itinero_shared::observation::DomNode;

    /// An element at `path` (its ancestors' tags), as the content script's fingerprint says.
    fn at(mut n: DomNode, path: &str, y: f64) -> DomNode {
        if let Some(f) = n.fingerprint.as_mut() {
            f.path = format!("html>body>{path}");
        }
        placed(n, 0.0, y)
    }

    fn chosen(g: Grounded) -> Option<(u32, bool)> {
        match g {
            Grounded::Candidates(c) => c
                .first()
                .and_then(|c| Some((c.action.target()?.index, c.confidence >= 0.8))),
            _ => None,
        }
    }

    #[test]
    fn a_consent_layer_that_hides_the_page_is_answered_with_the_least_it_allows() {
        let o = page_of(
            "https://news.example/",
            "News",
            vec![
                at(
                    element(1, "button", None, None, "Accept all"),
                    "div[0]>button[0]",
                    300.0,
                ),
                at(
                    element(2, "button", None, None, "Reject all"),
                    "div[0]>button[1]",
                    300.0,
                ),
            ],
        );
        let page = Page::read(&o);
        assert_eq!(
            chosen(find_more(&o, &page, &Memory::default())),
            Some((2, true))
        );
    }

    #[test]
    fn the_site_s_header_and_footer_give_way_to_the_page_s_own_fields_and_buttons() {
        let o = page_of(
            "https://shop.example/book",
            "Book a table",
            vec![
                at(
                    element(1, "input", Some("search"), None, "Search this site"),
                    "header[0]>form[0]>input[0]",
                    0.0,
                ),
                at(
                    element(2, "button", None, None, "Search"),
                    "header[0]>form[0]>button[0]",
                    0.0,
                ),
                at(
                    element(3, "input", Some("search"), None, "Search tables"),
                    "main[0]>form[0]>input[0]",
                    40.0,
                ),
                at(
                    element(4, "input", Some("email"), None, "Email"),
                    "main[0]>form[1]>input[0]",
                    80.0,
                ),
                at(
                    element(5, "button", None, None, "Book"),
                    "main[0]>form[1]>button[0]",
                    120.0,
                ),
                at(
                    element(6, "input", Some("email"), None, "Email"),
                    "footer[0]>form[0]>input[0]",
                    600.0,
                ),
                at(
                    element(7, "button", None, None, "Subscribe"),
                    "footer[0]>form[0]>button[0]",
                    600.0,
                ),
            ],
        );
        let page = Page::read(&o);
        let memory = Memory::default();
        assert_eq!(
            chosen(search(&o, &page, "window seat", &memory)),
            Some((3, true))
        );
        assert_eq!(
            chosen(assign(&page, Some("email"), "ana@example.org", &memory)),
            Some((4, true))
        );
        assert_eq!(
            chosen(assign(&page, None, "ana@example.org", &memory)),
            Some((4, true))
        );
        // The form typed into is the one sent.
        let typed = Memory {
            typed: vec![("html>body>main[0]>form[1]>input[0]".into(), "x".into())],
            ..Memory::default()
        };
        assert_eq!(chosen(submit(&page, None, &typed)), Some((5, true)));
        // A sign-in's user name is its own form's field, not the newsletter's email.
        let o = page_of(
            "https://app.example/login",
            "Welcome back",
            vec![
                at(
                    element(1, "input", Some("text"), None, "User"),
                    "main[0]>form[0]>input[0]",
                    40.0,
                ),
                at(
                    element(2, "input", Some("password"), None, "Password"),
                    "main[0]>form[0]>input[1]",
                    80.0,
                ),
                at(
                    element(3, "input", Some("email"), None, "Get our newsletter"),
                    "footer[0]>form[0]>input[0]",
                    600.0,
                ),
            ],
        );
        let signin = Page::read(&o);
        assert_eq!(
            chosen(assign(&signin, Some("username"), "jonas94", &memory)),
            Some((1, true))
        );
        // The footer's own button, named, is still the footer's.
        assert_eq!(
            chosen(submit(&page, Some("subscribe"), &memory)),
            Some((7, true))
        );
    }

    #[test]
    fn a_list_s_button_for_more_is_told_from_a_menu_s() {
        for yes in [
            "Load more",
            "Show more",
            "See more articles",
            "More results",
            "View more",
            "More",
        ] {
            assert!(asks_for_more(yes), "{yes}");
        }
        for no in [
            "More actions",
            "More options",
            "Show more like this one please",
            "Learn more",
            "Read more",
            "Show less",
        ] {
            assert!(!asks_for_more(no), "{no}");
        }
    }
}
