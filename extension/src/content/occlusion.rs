//! Is an element covered by something painted above it?
//!
//! One centre point is not enough (a banner can cover the middle of a wide
//! button and leave its ends clickable, or cover everything but the centre), so
//! five points are hit-tested: the centre and the centres of the four quadrants.
//! The element is usable if the topmost element at any of them is the element
//! itself or inside it; it is occluded if every tested point belongs to
//! something else. Points outside the viewport cannot be tested and are skipped.

use wasm_bindgen::JsCast;
use web_sys::{Document, Element, Node};

use super::dom::{attr, clean_text, composed_contains, element_at, Box4};

/// Outcome of hit-testing an element.
pub struct Occlusion {
    /// Every tested point hit one of its own ancestors: it is clipped away
    /// (`overflow: hidden` on a zero-size box, `clip`, `clip-path`), i.e. hidden, not covered.
    pub clipped: bool,
    pub occluded: bool,
    /// What covers it (tag, id or class, text), when occluded.
    pub by: Option<String>,
}

const VISIBLE: Occlusion = Occlusion {
    clipped: false,
    occluded: false,
    by: None,
};

/// Computed `pointer-events`: elements with `none` are skipped by hit-testing, which says nothing about clipping.
fn pointer_events(el: &Element) -> String {
    el.owner_document()
        .and_then(|d| d.default_view())
        .and_then(|w| w.get_computed_style(el).ok().flatten())
        .and_then(|s| s.get_property_value("pointer-events").ok())
        .unwrap_or_default()
}

/// The points of an element's box that are hit-tested: those of the five that lie in the viewport.
pub fn points((x, y, w, h): Box4, viewport: (f64, f64)) -> Vec<(f64, f64)> {
    [
        (x + w * 0.5, y + h * 0.5),
        (x + w * 0.25, y + h * 0.25),
        (x + w * 0.75, y + h * 0.25),
        (x + w * 0.25, y + h * 0.75),
        (x + w * 0.75, y + h * 0.75),
    ]
    .into_iter()
    .filter(|&p| in_viewport(p, viewport))
    .collect()
}

/// Whether a point can be hit-tested: the viewport's own, scrollbars excluded.
pub fn in_viewport((px, py): (f64, f64), viewport: (f64, f64)) -> bool {
    px >= 0.0 && py >= 0.0 && px < viewport.0 && py < viewport.1
}

/// Line fragments of a wrapped inline element that are hit-tested when its box's points miss it.
const MAX_FRAGMENTS: u32 = 4;

/// `points` as [`points`] gives them for the element's box, in its own frame's viewport
/// (`viewport`, its size).
pub fn test(
    doc: &Document,
    el: &Element,
    points: &[(f64, f64)],
    viewport: (f64, f64),
) -> Occlusion {
    if points.is_empty() {
        return VISIBLE;
    }
    let node: &Node = el.unchecked_ref();
    let mut ancestors_only = true;
    let mut cover: Option<Element> = None;
    for &(px, py) in points {
        match element_at(doc, px, py) {
            Some(top) if composed_contains(node, top.unchecked_ref()) => return VISIBLE,
            Some(top) => {
                if !composed_contains(top.unchecked_ref(), node) {
                    ancestors_only = false;
                    cover.get_or_insert(top);
                }
            }
            None => ancestors_only = false,
        }
    }
    if a_fragment_shows(doc, el, viewport) {
        return VISIBLE;
    }
    if ancestors_only && pointer_events(el) != "none" {
        return Occlusion {
            clipped: true,
            occluded: false,
            by: None,
        };
    }
    Occlusion {
        clipped: false,
        occluded: true,
        by: cover.map(|c| describe(&c)),
    }
}

/// Whether an inline element broken over lines is on top at the centre of one of its
/// fragments. Its box's points may all miss it (falling on the text beside it or between
/// lines), which would say covered or clipped of a link anyone can see.
fn a_fragment_shows(doc: &Document, el: &Element, viewport: (f64, f64)) -> bool {
    let rects = el.get_client_rects();
    if rects.length() < 2 {
        return false;
    }
    let node: &Node = el.unchecked_ref();
    (0..rects.length().min(MAX_FRAGMENTS))
        .filter_map(|i| rects.get(i))
        .map(|r| (r.x() + r.width() / 2.0, r.y() + r.height() / 2.0))
        .filter(|&p| in_viewport(p, viewport))
        .any(|(px, py)| {
            element_at(doc, px, py).is_some_and(|top| composed_contains(node, top.unchecked_ref()))
        })
}

/// Whether text at a point shows: the topmost element there is the text's
/// element, inside it, or one of its ancestors (text itself is never hit).
pub fn text_visible_at(
    doc: &Document,
    parent: &Element,
    (px, py): (f64, f64),
    viewport: (f64, f64),
) -> bool {
    if !in_viewport((px, py), viewport) {
        return true;
    }
    match element_at(doc, px, py) {
        Some(top) if composed_contains(parent.unchecked_ref(), top.unchecked_ref()) => true,
        // An ancestor on top: the text's box is not hit-testable there, which means clipped
        // away unless hit-testing was switched off for it.
        Some(top) if composed_contains(top.unchecked_ref(), parent.unchecked_ref()) => {
            pointer_events(parent) == "none"
        }
        Some(_) => false,
        None => true,
    }
}

/// A short human description of an element, e.g. `div#cookie-banner "We use cookies…"`.
pub fn describe(el: &Element) -> String {
    let mut s = el.local_name();
    if let Some(id) = attr(el, "id").filter(|i| !i.is_empty()) {
        s.push('#');
        s.push_str(&id);
    } else if let Some(class) =
        attr(el, "class").and_then(|c| c.split_whitespace().next().map(str::to_owned))
    {
        s.push('.');
        s.push_str(&class);
    }
    let text = clean_text(&el.text_content().unwrap_or_default(), 40);
    if !text.is_empty() {
        s.push_str(&format!(" \"{text}\""));
    }
    s
}
