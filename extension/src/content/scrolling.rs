//! Which box a scroll moves and how far it can go, for the actions (`scroll`) and for the
//! observation (how much of the page lies above and below what is shown).
//!
//! "The page" is the document's scrolling element, as a wheel over a plain page moves it.
//! Many apps instead fix the document to the window and scroll their content in one
//! full-height pane (a mail list, a chat, a feed). There the document cannot move, and the
//! page is the pane under the middle of the window, the box a person's wheel would move.
//! Only a pane at least half the window long counts: a small scrolling box that happens to
//! lie in the middle is not the page, and is scrolled by naming something in it.

use itinero_shared::ScrollDirection;
use wasm_bindgen::JsCast;
use web_sys::{Document, Element, HtmlIFrameElement, Window};

use super::dom::element_at;
use super::dom::viewport;

/// Frames entered at most when looking for what lies under a point.
const MAX_FRAME_DEPTH: usize = 8;

pub fn is_vertical(direction: ScrollDirection) -> bool {
    matches!(direction, ScrollDirection::Up | ScrollDirection::Down)
}

/// How far a scrolling box has scrolled along `direction`'s axis, and how far it can.
pub fn position(el: &Element, direction: ScrollDirection) -> (f64, f64) {
    if is_vertical(direction) {
        (
            f64::from(el.scroll_top()),
            f64::from(el.scroll_height() - el.client_height()),
        )
    } else {
        (
            f64::from(el.scroll_left()),
            f64::from(el.scroll_width() - el.client_width()),
        )
    }
}

/// Whether a box at `pos` of `room` has somewhere to go in `direction`.
pub fn can_move(pos: f64, room: f64, direction: ScrollDirection) -> bool {
    if matches!(direction, ScrollDirection::Down | ScrollDirection::Right) {
        pos < room - 1.0
    } else {
        pos > 0.0
    }
}

/// Whether a box of `room` scrolls at all (a pixel of rounding is not scrolling).
fn has_room(room: f64) -> bool {
    room >= 1.0
}

/// How far `pages` pages in `direction` is, for a scrolling box of size `(w, h)`.
pub fn scroll_delta(direction: ScrollDirection, pages: f64, (w, h): (f64, f64)) -> (f64, f64) {
    match direction {
        ScrollDirection::Down => (0.0, h * pages),
        ScrollDirection::Up => (0.0, -h * pages),
        ScrollDirection::Right => (w * pages, 0.0),
        ScrollDirection::Left => (-w * pages, 0.0),
    }
}

/// Scrolls a box (not the top page) by `pages` of its own size.
pub fn scroll_box(el: &Element, direction: ScrollDirection, pages: f64) {
    let size = (f64::from(el.client_width()), f64::from(el.client_height()));
    let (dx, dy) = scroll_delta(direction, pages, size);
    el.scroll_by_with_x_and_y(dx, dy);
}

/// The box a wheel over `el` would scroll in `direction`: `el` or its nearest ancestor that
/// scrolls that way and has room to, across shadow roots and out of same-origin frames (whose
/// documents scroll too); `None` means the top page.
pub fn scroller_of(win: &Window, el: &Element, direction: ScrollDirection) -> Option<Element> {
    scroller_where(win, el, direction, |pos, room| {
        can_move(pos, room, direction)
    })
}

/// As `scroller_of`, for the nearest box that scrolls along `direction`'s axis and of which
/// `fits(scrolled, room)` holds.
fn scroller_where(
    win: &Window,
    el: &Element,
    direction: ScrollDirection,
    fits: impl Fn(f64, f64) -> bool,
) -> Option<Element> {
    let top = win.document().and_then(|d| d.scrolling_element());
    let mut at = Some(el.clone());
    while let Some(box_) = at {
        if Some(&box_) == top.as_ref() {
            return None;
        }
        let doc = box_.owner_document();
        let frame_root = doc.as_ref().and_then(|d| d.scrolling_element()).as_ref() == Some(&box_);
        let overflow = win
            .get_computed_style(&box_)
            .ok()
            .flatten()
            .and_then(|s| {
                s.get_property_value(if is_vertical(direction) {
                    "overflow-y"
                } else {
                    "overflow-x"
                })
                .ok()
            })
            .unwrap_or_default();
        // A frame's document scrolls at its root unless the root's overflow says it may not.
        let scrolls = matches!(overflow.as_str(), "auto" | "scroll" | "overlay")
            || (frame_root && overflow == "visible");
        let (pos, room) = position(&box_, direction);
        if scrolls && fits(pos, room) {
            return Some(box_);
        }
        at = if frame_root {
            doc.and_then(|d| d.default_view())
                .and_then(|w| w.frame_element().ok().flatten())
        } else {
            box_.parent_element().or_else(|| {
                box_.get_root_node()
                    .dyn_into::<web_sys::ShadowRoot>()
                    .ok()
                    .map(|s| s.host())
            })
        };
    }
    None
}

/// The element under the middle of a window `(vw, vh)`, inside shadow roots and same-origin
/// frames.
fn under_centre(win: &Window, doc: &Document, (vw, vh): (f64, f64)) -> Option<Element> {
    let (mut x, mut y) = (vw / 2.0, vh / 2.0);
    let mut hit = element_at(doc, x, y)?;
    for _ in 0..MAX_FRAME_DEPTH {
        let Some(inner) = hit
            .dyn_ref::<HtmlIFrameElement>()
            .and_then(|f| f.content_document())
        else {
            break;
        };
        // The frame's content box: its border box less the border and the padding.
        let r = hit.get_bounding_client_rect();
        let style = win.get_computed_style(&hit).ok().flatten();
        let padding = |side: &str| {
            style
                .as_ref()
                .and_then(|s| s.get_property_value(side).ok())
                .and_then(|v| v.trim_end_matches("px").parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        x -= r.left() + f64::from(hit.client_left()) + padding("padding-left");
        y -= r.top() + f64::from(hit.client_top()) + padding("padding-top");
        match element_at(&inner, x, y) {
            Some(next) => hit = next,
            None => break,
        }
    }
    Some(hit)
}

/// The page's own pane (see the module's doc) for `direction`'s axis, asked where the
/// document cannot scroll that way at all: the box under the middle of the window `(vw, vh)`
/// that scrolls that way and is at least half the window long along it.
fn main_pane(
    win: &Window,
    doc: &Document,
    direction: ScrollDirection,
    (vw, vh): (f64, f64),
) -> Option<Element> {
    let centre = under_centre(win, doc, (vw, vh))?;
    let pane = scroller_where(win, &centre, direction, |_, room| has_room(room))?;
    let long_enough = if is_vertical(direction) {
        f64::from(pane.client_height()) * 2.0 >= vh
    } else {
        f64::from(pane.client_width()) * 2.0 >= vw
    };
    long_enough.then_some(pane)
}

/// Scrolls the page (the document, or its pane) by `pages` windows or pane lengths, or says
/// why it cannot move that way: checked before, not after, since a page with
/// `scroll-behavior: smooth` has not moved yet when `scrollBy` returns.
pub fn scroll_page(
    win: &Window,
    doc: &Document,
    direction: ScrollDirection,
    pages: f64,
) -> Result<(), String> {
    if let Some(root) = doc.scrolling_element() {
        let (pos, room) = position(&root, direction);
        let pane = (!has_room(room))
            .then(|| main_pane(win, doc, direction, viewport(doc, win)))
            .flatten();
        if let Some(pane) = pane {
            let (pos, room) = position(&pane, direction);
            if !can_move(pos, room, direction) {
                return Err(format!(
                    "the page's pane under the middle of the window is already at its {}",
                    direction.end()
                ));
            }
            scroll_box(&pane, direction, pages);
            return Ok(());
        }
        if !can_move(pos, room, direction) {
            let dir = direction.word();
            return Err(if !has_room(room) {
                format!("the page does not scroll {dir}: it fits in the window that way")
            } else {
                format!("the page is already at its {}", direction.end())
            });
        }
    }
    let h = win
        .inner_height()
        .ok()
        .and_then(|v| v.as_f64())
        .unwrap_or(600.0);
    let w = win
        .inner_width()
        .ok()
        .and_then(|v| v.as_f64())
        .unwrap_or(800.0);
    let (dx, dy) = scroll_delta(direction, pages, (w, h));
    win.scroll_by_with_x_and_y(dx, dy);
    Ok(())
}

/// How many windows of the page lie above and below what is shown, to a tenth: of the
/// document, or of its pane where the document does not scroll down or up.
pub fn pages_above_below(win: &Window, doc: &Document, (vw, vh): (f64, f64)) -> (f64, f64) {
    let tenths = |pages: f64| (pages.max(0.0) * 10.0).round() / 10.0;
    let fixed = doc
        .scrolling_element()
        .is_some_and(|root| !has_room(position(&root, ScrollDirection::Down).1));
    let pane = fixed
        .then(|| main_pane(win, doc, ScrollDirection::Down, (vw, vh)))
        .flatten();
    if let Some(pane) = pane {
        let (pos, room) = position(&pane, ScrollDirection::Down);
        let len = f64::from(pane.client_height()).max(1.0);
        return (tenths(pos / len), tenths((room - pos) / len));
    }
    let scroll_y = win.scroll_y().unwrap_or(0.0);
    let full_height = doc
        .document_element()
        .map(|e| f64::from(e.scroll_height()))
        .unwrap_or(vh);
    (
        tenths(scroll_y / vh.max(1.0)),
        tenths((full_height - scroll_y - vh) / vh.max(1.0)),
    )
}
