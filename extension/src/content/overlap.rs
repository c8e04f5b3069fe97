//! Which hit tests can tell anything.
//!
//! A hit test visits every paint layer of the page: a few µs on a small page, hundreds
//! on a large one, and the occlusion rule asks for about a hundred per observation. Most
//! of them only confirm what layout already says. In normal flow boxes do not overlap;
//! only an element that is positioned, transformed, floated, translucent or filtered
//! (a *cover*, read.js `COVER`) can paint over content not its own, and only a clipping
//! ancestor can cut content away. So the walk notes each cover's box (grown by what it
//! holds) and each element's clip. A target shows without a hit test when one of its points
//! lies within its ancestors' clips and no cover that is neither around the target nor
//! inside it holds any of them: there the topmost thing is the target itself. It is cut
//! away without one when its box lies wholly outside a clip known to be exact: a box's own
//! `overflow` clip, not under a transform, with nothing positioned out of it in between
//! (read.js `CLIPS_EXACTLY`, `ESCAPES_CLIPS`). A hit test would say the same there, or
//! blame whatever lies beyond the clip's edge. Anything else is hit-tested.
//!
//! Covers are known only where style is read: within the viewport's subtrees. When a
//! control or a text shows up in view from below a box wholly off screen (positioned
//! content escaping it), covers there may have gone unread, and every point of that
//! document is hit-tested. Two things this does not see: a cover that carries neither
//! text nor a control and escapes an off-screen box, and normal-flow content pulled
//! over other content by negative margins.

use std::cell::Cell;

use super::dom::Box4;

/// An element's place in document order: its own number, and the last of its descendants'.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub order: u32,
    pub end: u32,
}

impl Span {
    fn holds(self, other: u32) -> bool {
        self.order <= other && other <= self.end
    }
}

/// An element that may paint over others: where it is in the document and where it paints.
#[derive(Debug)]
pub struct Cover {
    pub order: u32,
    /// The last of its descendants, known once they have been walked.
    pub end: Cell<u32>,
    /// Its border box, grown by every box measured inside it (content may overflow it).
    extent: Cell<Box4>,
}

impl Cover {
    pub fn new(order: u32, rect: Box4) -> Self {
        Self {
            order,
            end: Cell::new(order),
            extent: Cell::new(rect),
        }
    }

    /// Takes in a box drawn as part of this cover.
    pub fn grow(&self, (x, y, w, h): Box4) {
        if w <= 0.0 || h <= 0.0 {
            return;
        }
        let (ex, ey, ew, eh) = self.extent.get();
        if ew <= 0.0 || eh <= 0.0 {
            self.extent.set((x, y, w, h));
            return;
        }
        let left = ex.min(x);
        let top = ey.min(y);
        let right = (ex + ew).max(x + w);
        let bottom = (ey + eh).max(y + h);
        self.extent.set((left, top, right - left, bottom - top));
    }

    fn span(&self) -> Span {
        Span {
            order: self.order,
            end: self.end.get(),
        }
    }
}

/// What is tested: an element, or a text through its element.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    /// The element (for a text, the nearest walked element around it); `None`: the page root.
    pub span: Option<Span>,
    /// Whether a cover inside `span` belongs to the target (false for a text whose own
    /// element is not the walked one, e.g. a slotted text).
    pub owns_inside: bool,
}

/// Whether something painted over one of `points` could be other than the target.
pub fn covered_somewhere(
    covers: &[std::rc::Rc<Cover>],
    points: &[(f64, f64)],
    target: Target,
) -> bool {
    covers.iter().any(|c| {
        let around = target.span.is_some_and(|t| c.span().holds(t.order));
        let inside = target.owns_inside && target.span.is_some_and(|t| t.holds(c.order));
        !around && !inside && points.iter().any(|&p| contains(c.extent.get(), p))
    })
}

/// Whether some point lies within `clip` (`None`: nothing clips).
pub fn inside_somewhere(clip: Option<Box4>, points: &[(f64, f64)]) -> bool {
    points.iter().any(|&p| clip.is_none_or(|c| contains(c, p)))
}

/// Whether a box has nothing within `clip` (`None`: nothing is known to clip).
pub fn wholly_outside(clip: Option<Box4>, (x, y, w, h): Box4) -> bool {
    clip.is_some_and(|(cx, cy, cw, ch)| {
        x + w <= cx || y + h <= cy || x >= cx + cw || y >= cy + ch || cw <= 0.0 || ch <= 0.0
    })
}

/// The part two clips leave.
pub fn intersect(a: Option<Box4>, (x, y, w, h): Box4) -> Box4 {
    let Some((ax, ay, aw, ah)) = a else {
        return (x, y, w.max(0.0), h.max(0.0));
    };
    let left = ax.max(x);
    let top = ay.max(y);
    let right = (ax + aw).min(x + w);
    let bottom = (ay + ah).min(y + h);
    (left, top, (right - left).max(0.0), (bottom - top).max(0.0))
}

/// Clip that shows nothing for sure: everything under it is hit-tested.
pub const NOWHERE: Box4 = (0.0, 0.0, 0.0, 0.0);

fn contains((x, y, w, h): Box4, (px, py): (f64, f64)) -> bool {
    px >= x && px < x + w && py >= y && py < y + h
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    fn target(order: u32, end: u32) -> Target {
        Target {
            span: Some(Span { order, end }),
            owns_inside: true,
        }
    }

    #[test]
    fn only_a_cover_that_is_neither_around_nor_inside_counts() {
        // A banner (order 10) over the point; the target is element 3.
        let banner = Rc::new(Cover::new(10, (0.0, 0.0, 100.0, 50.0)));
        let covers = [banner.clone()];
        assert!(covered_somewhere(&covers, &[(5.0, 5.0)], target(3, 4)));
        assert!(!covered_somewhere(&covers, &[(5.0, 60.0)], target(3, 4)));
        // The banner's own button (inside it): the banner is around it.
        banner.end.set(12);
        assert!(!covered_somewhere(&covers, &[(5.0, 5.0)], target(11, 11)));
        // A card that holds the banner: a hit on it would be the card's own.
        assert!(!covered_somewhere(&covers, &[(5.0, 5.0)], target(9, 12)));
        // A slotted text's walked host holds the banner, but the text's element may not.
        let slotted = Target {
            span: Some(Span { order: 9, end: 12 }),
            owns_inside: false,
        };
        assert!(covered_somewhere(&covers, &[(5.0, 5.0)], slotted));
    }

    #[test]
    fn a_cover_grows_by_what_it_holds() {
        let c = Cover::new(1, (0.0, 0.0, 10.0, 10.0));
        c.grow((5.0, 5.0, 20.0, 1.0));
        c.grow((0.0, 0.0, 0.0, 100.0));
        assert_eq!(c.extent.get(), (0.0, 0.0, 25.0, 10.0));
        let empty = Cover::new(2, (0.0, 0.0, 0.0, 0.0));
        empty.grow((3.0, 4.0, 5.0, 6.0));
        assert_eq!(empty.extent.get(), (3.0, 4.0, 5.0, 6.0));
    }

    #[test]
    fn a_box_is_cut_away_only_with_nothing_inside_a_known_clip() {
        let clip = Some((0.0, 0.0, 100.0, 90.0));
        // Below the box, touching its edge: nothing of it shows.
        assert!(wholly_outside(clip, (10.0, 90.0, 50.0, 20.0)));
        assert!(wholly_outside(clip, (-60.0, 10.0, 60.0, 20.0)));
        // One pixel row inside: it may show.
        assert!(!wholly_outside(clip, (10.0, 89.0, 50.0, 20.0)));
        assert!(!wholly_outside(None, (1e6, 1e6, 1.0, 1.0)));
        // A clip of no size shows nothing.
        assert!(wholly_outside(
            Some((0.0, 0.0, 100.0, 0.0)),
            (0.0, 0.0, 10.0, 10.0)
        ));
    }

    #[test]
    fn clips_intersect_and_points_inside_them_count() {
        let c = intersect(Some((0.0, 0.0, 100.0, 100.0)), (50.0, 50.0, 100.0, 100.0));
        assert_eq!(c, (50.0, 50.0, 50.0, 50.0));
        assert!(inside_somewhere(Some(c), &[(10.0, 10.0), (60.0, 60.0)]));
        assert!(!inside_somewhere(Some(c), &[(10.0, 10.0), (99.0, 120.0)]));
        assert!(inside_somewhere(None, &[(-5.0, 0.0)]));
        assert!(!inside_somewhere(None, &[]));
        assert!(!inside_somewhere(Some(NOWHERE), &[(0.0, 0.0)]));
        assert_eq!(
            intersect(Some((0.0, 0.0, 10.0, 10.0)), (20.0, 20.0, 5.0, 5.0)).2,
            0.0
        );
    }
}
