//! One walk of a frame's document: the pruned tree of what a person can see and use.
//!
//! Reading the DOM is what costs, so the walk reads as little as it can: one
//! batched read per node (see `dom` and read.js), computed style only inside
//! the viewport (outside it, where an ancestor's box lies wholly off screen,
//! markup alone says what is interactive), geometry and visibility only for
//! what could be indexed or shown, paint order only for indexed elements in
//! view (where overlap can be seen), and text beyond a budget only where it is
//! in view. Only the page within reach of the viewport is described (see
//! `REACH_ABOVE`). Hidden subtrees (`display: none`) are cut where they start; other
//! hiding (`visibility`, `opacity`, `content-visibility`) is checked on each
//! candidate and on each text's element, so hidden text never leaks.
//! Interactive elements in view are checked for occlusion and indexed only
//! when usable. That is settled after the walk, once every element that could
//! paint over another is known, and only points such an element or a clip could
//! hide are hit-tested (see `overlap`). Open and closed shadow roots are walked
//! through their slots as rendered, and same-origin iframes in place, offset by
//! the iframe's position.
//!
//! The walk stays in the content script's isolated world although DOM results cost 5–15 %
//! more there: in the page's main world the page's CSP would govern its wasm, it would have no
//! `chrome.dom` for closed shadow roots, and the page could patch the DOM methods it calls or
//! read what it hands over.

use std::borrow::Cow;
use std::cell::{Cell, OnceCell, RefCell};
use std::collections::hash_map::DefaultHasher;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

use itinero_shared::observation::{push_page_text, DomNode, Observation, Rect};
use itinero_shared::Fingerprint;
use wasm_bindgen::JsCast;
use web_sys::{
    Document, Element, HtmlIFrameElement, HtmlInputElement, Node, Range, ShadowRoot, Window,
};

use super::dom::{
    end_walk, get, is_visible_at, read_candidate, read_children, read_clip_box, read_indexed,
    read_node, read_paint, read_rect, read_scrolls, read_text_rect, shadow_root_of, viewport, At,
    Attrs, Bounds, Box4, Clip, Display, ElementFacts, NodeFacts, PaintFacts,
};
use super::form_target;
use super::occlusion;
use super::overlap::{self, Cover, Span, Target};
use super::paint;
use super::scrolling::pages_above_below;
use super::semantics;
use crate::frame_protocol::{ObserveFrame, UNSTITCHED};

/// How far beyond the viewport the walk describes the page, in viewports: above,
/// below, and to either side. Elements further away are neither described nor indexed
/// (the model scrolls to them, as a person would), which keeps the cost of a walk
/// about the same on a long page as on a short one; positioned content that escapes
/// a faraway box into reach is still found, since candidates are measured everywhere.
const REACH_ABOVE: f64 = 1.0;
const REACH_BELOW: f64 = 2.0;
const REACH_SIDE: f64 = 1.0;

/// What a walk describes.
#[derive(Clone, Copy)]
enum Reach {
    /// The viewport and the page around it (see `REACH_ABOVE`): what the model is shown.
    Near,
    /// The whole page: to find an element by fingerprint wherever it went.
    Page,
}

impl Reach {
    /// Its bounds in the viewport of a frame at `offset` in the top one (viewport `(vw, vh)`).
    fn bounds(self, (vw, vh): (f64, f64), offset: (f64, f64)) -> Option<Bounds> {
        match self {
            Reach::Near => Some(Bounds {
                left: -REACH_SIDE * vw - offset.0,
                top: -REACH_ABOVE * vh - offset.1,
                right: (1.0 + REACH_SIDE) * vw - offset.0,
                bottom: (1.0 + REACH_BELOW) * vh - offset.1,
            }),
            Reach::Page => None,
        }
    }
}

/// Text the tree carries beyond what is in view (bytes); text in view is always kept.
const TREE_TEXT_MAX: usize = 24_000;
const SKIPPED: &[&str] = &[
    "script", "style", "noscript", "template", "head", "meta", "link", "title", "base",
];

/// Remembers the previous observation: to mark new elements, and to find the
/// element behind an index when an action arrives.
#[derive(Default)]
pub struct Observer {
    previous: Option<HashSet<u64>>,
    /// The element and fingerprint of every index in the last observation.
    indexed: Vec<(Element, Fingerprint)>,
    /// Where this frame sat in the last observation (indices, offset).
    placement: ObserveFrame,
    /// Cross-origin frames the last observation left placeholders for.
    remote_frames: u32,
}

/// One document being walked: the top one, or a same-origin frame's.
struct Doc {
    doc: Document,
    win: Window,
    viewport: (f64, f64),
    /// Offset of this frame's viewport in the top frame's.
    offset: (f64, f64),
    /// The part of the page that is described, in this frame's viewport; `None`, all of it.
    reach: Option<Bounds>,
    /// Read once per walk: scrolling does not change while walking.
    scroll_y: f64,
    /// One range measures every text node of the document.
    range: OnceCell<Option<Range>>,
    /// The focused element, read once: focus does not move while walking. `None` when it
    /// is the body, which is never a candidate.
    active: OnceCell<Option<Element>>,
    /// Every element met that may paint over others (see `overlap`).
    covers: RefCell<Vec<Rc<Cover>>>,
    /// Content showed up in view from below a box wholly off screen, where no style (so no
    /// cover) is read: every point in this document must be hit-tested.
    escaped: Cell<bool>,
    /// The document's origin, read at the first form control that needs it.
    origin: OnceCell<String>,
}

impl Doc {
    fn origin(&self) -> &str {
        self.origin.get_or_init(|| {
            self.doc
                .location()
                .and_then(|l| l.origin().ok())
                .unwrap_or_default()
        })
    }

    /// A box of this document's viewport in the top frame's, rounded as observations give boxes.
    fn top_rect(&self, (x, y, w, h): Box4) -> Rect {
        Rect {
            x: px(x + self.offset.0),
            y: px(y + self.offset.1),
            width: px(w),
            height: px(h),
        }
    }

    /// Whether a box (in this frame's viewport) lies within reach.
    fn reaches(&self, b: Box4) -> bool {
        self.reach.is_none_or(|r| r.meets(b))
    }

    fn active(&self) -> Option<&Element> {
        self.active
            .get_or_init(|| {
                self.doc.active_element().filter(|a| {
                    self.doc
                        .body()
                        .is_none_or(|b| b.unchecked_ref::<Element>() != a)
                })
            })
            .as_ref()
    }

    fn range(&self) -> Option<&Range> {
        self.range
            .get_or_init(|| self.doc.create_range().ok())
            .as_ref()
    }
}

/// An element the walk has entered: what its children may ask about it, read once, when first asked.
struct Elem {
    /// Where it is; the object is fetched (`el`) only when something needs it.
    at: At,
    el: OnceCell<Element>,
    doc: Rc<Doc>,
    /// The element its paint key extends (`None`: the page's root context).
    parent: Option<Rc<Elem>>,
    display: Display,
    /// Document order, for paint keys.
    order: u32,
    /// The last of its descendants in document order, once they are walked.
    end: Cell<u32>,
    visible: Cell<Option<bool>>,
    rect: Cell<Option<Box4>>,
    /// Its mark, when it is indexed: its own text needs no hit test when that shows it.
    mark: Cell<Option<usize>>,
    style: OnceCell<PaintFacts>,
    painting: OnceCell<paint::Paint>,
    key: OnceCell<paint::Key>,
    context: OnceCell<paint::Key>,
}

impl Elem {
    fn new(at: At, doc: Rc<Doc>, parent: Option<Rc<Elem>>, display: Display, order: u32) -> Self {
        Self {
            at,
            el: OnceCell::new(),
            doc,
            parent,
            display,
            order,
            end: Cell::new(order),
            visible: Cell::new(None),
            rect: Cell::new(None),
            mark: Cell::new(None),
            style: OnceCell::new(),
            painting: OnceCell::new(),
            key: OnceCell::new(),
            context: OnceCell::new(),
        }
    }

    fn el(&self) -> &Element {
        self.el.get_or_init(|| self.at.node().unchecked_into())
    }

    fn visible(&self) -> bool {
        match self.visible.get() {
            Some(v) => v,
            None => {
                let v = is_visible_at(&self.at);
                self.visible.set(Some(v));
                v
            }
        }
    }

    fn rect(&self) -> Box4 {
        match self.rect.get() {
            Some(r) => r,
            None => {
                let r = read_rect(&self.at);
                self.rect.set(Some(r));
                r
            }
        }
    }

    fn style(&self) -> &PaintFacts {
        self.style
            .get_or_init(|| read_paint(&self.at, &self.doc.win, self.display == Display::Unread))
    }

    fn display(&self) -> Display {
        match self.display {
            Display::Unread => self.style().display,
            d => d,
        }
    }

    fn painting(&self) -> &paint::Paint {
        self.painting.get_or_init(|| {
            let flex_or_grid = self
                .parent
                .as_ref()
                .is_some_and(|p| p.display() == Display::FlexOrGrid);
            paint::classify(self.style(), flex_or_grid, self.order)
        })
    }

    /// The key of the context this element's children are painted in.
    fn context(&self) -> paint::Key {
        self.context
            .get_or_init(|| {
                if self.painting().groups_children {
                    self.key()
                } else {
                    context_of(self.parent.as_deref())
                }
            })
            .clone()
    }

    /// Its place in document order; `None` for the page root and elements the walk did
    /// not number (the parent of a slotted text).
    fn span(&self) -> Option<Span> {
        (self.order > 0).then(|| Span {
            order: self.order,
            end: self.end.get(),
        })
    }

    fn key(&self) -> paint::Key {
        self.key
            .get_or_init(|| {
                let mut k = (*context_of(self.parent.as_deref())).clone();
                k.push(self.painting().step);
                Rc::new(k)
            })
            .clone()
    }
}

fn context_of(parent: Option<&Elem>) -> paint::Key {
    parent.map_or_else(paint::Key::default, Elem::context)
}

/// What the children of the element being walked inherit.
#[derive(Clone)]
struct Ctx {
    doc: Rc<Doc>,
    /// Where the children walked in this context are read (see `At::Batched`).
    depth: u32,
    inert: bool,
    /// Parent has a pointer cursor: children inherit it without being click targets themselves.
    parent_pointer: bool,
    /// Inside an indexed element, whose name says what a person reads in it.
    within: bool,
    /// Within an indexed element and under an `aria-hidden` one: its text (an icon font's
    /// word, a glyph beside its screen-reader word) is left out, as it is of the name
    /// (read.js `contentText`), rather than shown as loose words beside the next element.
    muted: bool,
    /// An ancestor's box lies wholly outside the viewport: no style is read below it.
    outside: bool,
    /// An ancestor's box lies wholly out of reach: no text is read below it.
    far: bool,
    frame_path: Rc<Vec<i64>>,
    /// The element whose paint context the children join.
    paint: Option<Rc<Elem>>,
    /// The element whose children these are, when their text nodes' parent is it.
    container: Option<Rc<Elem>>,
    /// What the ancestors' clips leave of this document's viewport coordinates (`None`:
    /// nothing clips).
    clip: Option<Box4>,
    /// What the ancestors' clips known to be exact leave (read.js `CLIPS_EXACTLY`), since the
    /// last element positioned out of them: a box wholly outside it is cut away for sure.
    /// `None`: nothing is certain.
    exact_clip: Option<Box4>,
    /// The nearest element around that may paint over others: what is drawn here is its.
    cover: Option<Rc<Cover>>,
}

/// An element as `Walk::see` read it, before its place on the page is worked out.
struct Seen {
    tag: std::borrow::Cow<'static, str>,
    /// The deciding attributes; all of them for a candidate.
    attrs: Attrs,
    me: Rc<Elem>,
    itype: Option<String>,
    role: Option<String>,
    is_frame: bool,
    /// Its kind could be acted on (whether it can be reached is `Place::interactive`).
    candidate: bool,
    inert: bool,
    muted: bool,
    pointer: bool,
    /// What it may paint over others, when it may.
    cover: Option<Rc<Cover>>,
    clip: Clip,
    escapes_clips: bool,
    open_shadow: bool,
    child_elements: u32,
    /// The shadow root it hosts.
    root: Option<ShadowRoot>,
    /// Children or a shadow root.
    has_children: bool,
}

/// A dialog, by its tag or its role: kept as a container, so that what it holds reads as one
/// thing the page asks.
fn is_dialog(seen: &Seen) -> bool {
    seen.tag == "dialog" || matches!(seen.role.as_deref(), Some("dialog" | "alertdialog"))
}

/// Where an element is, as `Walk::place` worked it out.
struct Place {
    /// Its box in this document's viewport coordinates (zero where it was not measured).
    rect: Box4,
    measured: bool,
    /// Under 2 px either way: its own text is visually hidden.
    tiny: bool,
    /// Its box in the top frame's viewport.
    top_rect: Rect,
    /// A candidate a person can see and reach: it becomes an indexed node.
    interactive: bool,
    outside: bool,
    far: bool,
    in_viewport: bool,
    /// The exact clip it is under (`None` once it escapes its ancestors' clips).
    exact_clip: Option<Box4>,
}

/// What the walk leaves to be settled once every cover is known (`Walk::settle`): an
/// indexed element, or an element or text in view that a hit test may hide.
struct Mark {
    test: Option<Test>,
    /// The indexed element, to act on.
    el: Option<Element>,
    /// An indexed element's paint key, in view only.
    key: Option<paint::Key>,
    /// An indexed element's `fingerprint_key`, for the next observation's `is_new`.
    seen: Option<u64>,
    /// Settled: an indexed element in view and not covered, whose own text then shows.
    shown: bool,
}

/// A hit test that may tell whether something is covered or clipped away.
struct Test {
    doc: Rc<Doc>,
    /// The element tested; for a text, its parent.
    el: Element,
    points: Vec<(f64, f64)>,
    /// The walked element it is, or (for a text) lies in; `owns_inside` as `Target` says.
    holder: Option<Rc<Elem>>,
    owns_inside: bool,
    /// Some point lies within what the ancestors' clips leave (or nothing clips).
    in_clip: bool,
    /// Its box lies wholly outside what the exact clips leave.
    cut_away: bool,
    tested: Tested,
}

enum Tested {
    Element,
    /// A text, with the mark of its element when that is indexed: if that shows, so does
    /// the text.
    Text {
        owner: Option<usize>,
    },
}

impl Test {
    /// What layout alone tells, where it can: `Some(true)`, it shows (a point within the
    /// clips that no cover could hide, where a hit test would only find the target);
    /// `Some(false)`, a clip cuts it away; `None`, only a hit test can tell.
    fn by_layout(&self) -> Option<bool> {
        if self.doc.escaped.get() {
            return None;
        }
        if self.cut_away {
            return Some(false);
        }
        let target = Target {
            span: self.holder.as_deref().and_then(Elem::span),
            owns_inside: self.owns_inside,
        };
        let covered = overlap::covered_somewhere(&self.doc.covers.borrow(), &self.points, target);
        (self.in_clip && !covered).then_some(true)
    }
}

/// What a hit test settled for an element.
enum Verdict {
    Shows,
    Occluded(Option<String>),
    /// Cut away by an ancestor's clip: hidden, not covered.
    Clipped,
}

struct Walk<'a> {
    next_index: u32,
    remote_frames: u32,
    /// Written on indexed nodes when this is not the top frame.
    frame_id: Option<i64>,
    indexed: Vec<(Element, Fingerprint)>,
    /// The frame being walked is covered (its iframe is, in the frame above): so is everything in it.
    covered: bool,
    marks: Vec<Mark>,
    previous: Option<&'a HashSet<u64>>,
    seen: HashSet<u64>,
    text: String,
    tree_text: usize,
    top_viewport: (f64, f64),
    reach: Reach,
    order: u32,
    /// The structural path of the element being walked (`>div[0]>a[3]`): a segment is
    /// pushed on the way in and cut off on the way out, so no element allocates one; only
    /// a fingerprint takes a copy.
    path: String,
    /// Emptied vectors of parents walked, for the next parent's children and sibling counts:
    /// a walk reads the children of some hundreds of parents, and would allocate two each.
    spare: Vec<(Vec<NodeFacts>, Counts)>,
}

/// Replaces provisional paint orders (indices into the key list) with ranks.
fn apply_ranks(node: &mut DomNode, ranks: &[u32]) {
    if node.fingerprint.is_some() {
        if let Some(rank) = ranks.get(node.paint_order as usize) {
            node.paint_order = *rank;
        }
    }
    for child in &mut node.children {
        apply_ranks(child, ranks);
    }
}

fn px(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

fn fingerprint_key(fp: &Fingerprint) -> u64 {
    let mut h = DefaultHasher::new();
    (&fp.path, &fp.tag, &fp.name, &fp.frame_path).hash(&mut h);
    h.finish()
}

impl Observer {
    /// The element an index named in the last observation, with the fingerprint it had then.
    pub fn indexed(&self, index: u32) -> Option<&(Element, Fingerprint)> {
        self.indexed
            .get(index.checked_sub(self.placement.base_index)? as usize)
    }

    /// Cross-origin frames the last observation left placeholders for.
    pub fn remote_frames(&self) -> u32 {
        self.remote_frames
    }

    /// Observes again, placed as last time, the whole page: to find an element by its
    /// fingerprint after the page changed, wherever it is now.
    pub fn observe_again(&mut self, win: &Window) -> Observation {
        let placement = self.placement.clone();
        self.walk(win, &placement, Reach::Page)
    }

    /// Every indexed element of the last observation.
    pub fn all_indexed(&self) -> &[(Element, Fingerprint)] {
        &self.indexed
    }

    /// Observes this frame within reach of the viewport; `frame` places it in the top
    /// frame's terms (default: it is the top frame).
    pub fn observe(&mut self, win: &Window, frame: &ObserveFrame) -> Observation {
        self.walk(win, frame, Reach::Near)
    }

    fn walk(&mut self, win: &Window, frame: &ObserveFrame, reach: Reach) -> Observation {
        let perf = win.performance();
        let t0 = perf.as_ref().map(|p| p.now()).unwrap_or(0.0);
        let doc = win.document().expect("a window has a document");
        let (vw, vh) = viewport(&doc, win);
        let top_viewport = frame.top_viewport.unwrap_or((vw, vh));
        let mut walk = Walk {
            next_index: frame.base_index,
            remote_frames: 0,
            frame_id: frame.frame_id,
            indexed: Vec::new(),
            covered: frame.covered,
            marks: Vec::new(),
            order: 0,
            previous: self.previous.as_ref(),
            seen: HashSet::new(),
            text: String::new(),
            tree_text: 0,
            top_viewport,
            reach,
            path: String::new(),
            spare: Vec::new(),
        };
        let scroll_y = win.scroll_y().unwrap_or(0.0);
        let top = Rc::new(Doc {
            doc: doc.clone(),
            win: win.clone(),
            viewport: (vw, vh),
            offset: frame.offset,
            reach: reach.bounds(top_viewport, frame.offset),
            scroll_y,
            range: OnceCell::new(),
            active: OnceCell::new(),
            covers: RefCell::new(Vec::new()),
            escaped: Cell::new(false),
            origin: OnceCell::new(),
        });
        let mut children = Vec::new();
        if let Some(body) = doc.body() {
            let ctx = Ctx {
                doc: top.clone(),
                depth: 0,
                inert: false,
                parent_pointer: false,
                within: false,
                muted: false,
                outside: false,
                far: false,
                frame_path: Rc::new(frame.frame_path.clone()),
                paint: None,
                container: Some(Rc::new(Elem::new(
                    At::Held(body.clone().into()),
                    top,
                    None,
                    Display::Unread,
                    0,
                ))),
                clip: None,
                exact_clip: None,
                cover: None,
            };
            walk.children(&At::Held(body.into()), &ctx, &mut children);
            end_walk();
        }
        let mut keys = Vec::new();
        let mut children = walk.settle(children, frame.covered, &mut keys);
        let seen = std::mem::take(&mut walk.seen);
        let text = std::mem::take(&mut walk.text);
        let indexed = std::mem::take(&mut walk.indexed);
        let remote_frames = walk.remote_frames;
        let ranks = paint::ranks(&keys);
        for child in &mut children {
            apply_ranks(child, &ranks);
        }
        self.previous = Some(seen);
        self.indexed = indexed;
        self.placement = frame.clone();
        self.remote_frames = remote_frames;
        let scroll_x = win.scroll_x().unwrap_or(0.0);
        let (pages_above, pages_below) = pages_above_below(win, &doc, (vw, vh));
        let mut root = DomNode {
            tag: "body".into(),
            children,
            ..Default::default()
        };
        root.cap_depth(itinero_shared::observation::MAX_TREE_DEPTH);
        Observation {
            url: doc.url().unwrap_or_default(),
            title: doc.title(),
            viewport: Rect {
                x: 0.0,
                y: 0.0,
                width: vw,
                height: vh,
            },
            scroll_x,
            scroll_y,
            pages_above,
            pages_below,
            root,
            text,
            snapshot_ms: perf.map(|p| p.now() - t0).unwrap_or(0.0),
        }
    }
}

/// Whether a box (in its frame's viewport) shows in that viewport.
fn in_view((x, y, w, h): Box4, (vw, vh): (f64, f64)) -> bool {
    x + w > 0.0 && y + h > 0.0 && x < vw && y < vh
}

/// Appends `>tag[nth]`, without the formatting machinery: it is done for every element.
fn push_segment(path: &mut String, tag: &str, nth: u32) {
    let mut digits = [0u8; 10];
    let mut i = digits.len();
    let mut n = nth;
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    path.push('>');
    path.push_str(tag);
    path.push('[');
    // ASCII digits only.
    path.push_str(std::str::from_utf8(&digits[i..]).unwrap_or("0"));
    path.push(']');
}

/// Siblings seen so far, by tag (common tags borrowed, not allocated).
type Counts = Vec<(Cow<'static, str>, u32)>;

/// The number of earlier siblings with the same tag, for structural paths.
// A `Cow`, not `&str`: remembering a borrowed tag copies a pointer, not the string.
#[allow(clippy::ptr_arg)]
fn nth_of(counts: &mut Counts, tag: &Cow<'static, str>) -> u32 {
    match counts.iter_mut().find(|(t, _)| t == tag) {
        Some((_, c)) => {
            *c += 1;
            *c - 1
        }
        None => {
            counts.push((tag.clone(), 1));
            0
        }
    }
}

fn non_empty(v: Option<&str>) -> Option<String> {
    v.filter(|v| !v.is_empty()).map(str::to_owned)
}

impl Walk<'_> {
    /// Walks the rendered children of `parent` (slots resolved), appending kept nodes to `out`.
    fn children(&mut self, parent: &At, ctx: &Ctx, out: &mut Vec<DomNode>) {
        let (mut kids, mut counts) = self.spare.pop().unwrap_or_default();
        // All of them in one crossing; they are named by their place, not handed over.
        // Whether text is wanted is decided once for all: text read past the budget
        // is still dropped, one by one, by `text_node`.
        read_children(
            parent,
            ctx.depth,
            &ctx.doc.win,
            !ctx.outside,
            self.wants_text(ctx),
            ctx.doc.reach,
            &mut kids,
        );
        for (index, facts) in kids.drain(..).enumerate() {
            let at = At::Batched {
                depth: ctx.depth,
                index: index as u32,
            };
            self.read(at, facts, ctx, &mut counts, out);
        }
        counts.clear();
        self.spare.push((kids, counts));
    }

    fn node(&mut self, node: Node, ctx: &Ctx, counts: &mut Counts, out: &mut Vec<DomNode>) {
        let wanted = self.wants_text(ctx);
        let facts = read_node(&node, &ctx.doc.win, !ctx.outside, wanted, ctx.doc.reach);
        self.read(At::Held(node), facts, ctx, counts, out);
    }

    /// Goes on with a node whose facts have been read.
    fn read(
        &mut self,
        at: At,
        facts: NodeFacts,
        ctx: &Ctx,
        counts: &mut Counts,
        out: &mut Vec<DomNode>,
    ) {
        match facts {
            NodeFacts::Element(facts) => self.element(at, facts, ctx, counts, out),
            NodeFacts::Text(Some(text)) => self.text_node(&at, text, ctx, out),
            NodeFacts::Text(None) | NodeFacts::Other => {}
        }
    }

    /// Whether a text node here could be kept, decided before its text is read.
    fn wants_text(&self, ctx: &Ctx) -> bool {
        let over = self.tree_text >= TREE_TEXT_MAX;
        // Past the budget, text under a box wholly off screen is not even read,
        // nor text whose element's box is already known to be out of view.
        if self.covered || ctx.muted || ctx.far || (over && ctx.outside) {
            return false;
        }
        let out_of_view = |c: &Elem| c.rect.get().is_some_and(|r| !in_view(r, ctx.doc.viewport));
        !(over && ctx.container.as_deref().is_some_and(out_of_view))
    }

    /// `text`: cleaned already (`NodeFacts::Text`).
    fn text_node(&mut self, node: &At, text: String, ctx: &Ctx, out: &mut Vec<DomNode>) {
        // Texts of the walked element share its facts; others (slotted, in a
        // display:contents box) have a parent of their own to ask.
        let container = match &ctx.container {
            Some(c) => c.clone(),
            None => match node.node().parent_element() {
                Some(p) => Rc::new(Elem::new(
                    At::Held(p.into()),
                    ctx.doc.clone(),
                    None,
                    Display::Unread,
                    0,
                )),
                None => return,
            },
        };
        // Past the budget only text in view is kept: its element's box tells, without measuring the text.
        if self.tree_text >= TREE_TEXT_MAX && !in_view(container.rect(), ctx.doc.viewport) {
            return;
        }
        let Some(range) = ctx.doc.range() else { return };
        let (x, y, w, h) = read_text_rect(range, node);
        if w < 2.0 || h < 2.0 || !ctx.doc.reaches((x, y, w, h)) {
            return;
        }
        if !container.visible() {
            return;
        }
        if x + w <= 0.0 || y + h + ctx.doc.scroll_y <= 0.0 {
            return;
        }
        if let Some(c) = &ctx.cover {
            c.grow((x, y, w, h));
        }
        // Whether something hides it is settled after the walk; a hit test tells only in view.
        let centre = (x + w / 2.0, y + h / 2.0);
        let mut mark = None;
        if occlusion::in_viewport(centre, ctx.doc.viewport) {
            if ctx.outside {
                ctx.doc.escaped.set(true);
            }
            // A cover inside the text's own element would be hit as part of that element.
            let (holder, owns_inside) = match &ctx.container {
                Some(c) => (Some(c.clone()), true),
                None => (ctx.paint.clone(), false),
            };
            let test = Test {
                doc: ctx.doc.clone(),
                el: container.el().clone(),
                points: vec![centre],
                holder,
                owns_inside,
                in_clip: overlap::inside_somewhere(ctx.clip, &[centre]),
                cut_away: overlap::wholly_outside(ctx.exact_clip, (x, y, w, h)),
                tested: Tested::Text {
                    owner: container.mark.get(),
                },
            };
            mark = Some(self.mark(Some(test)));
        }
        self.tree_text += text.len();
        out.push(DomNode {
            tag: "#text".into(),
            text: Some(text),
            // Where it reads: the render puts text on the line of the control it sits beside.
            rect: ctx.doc.top_rect((x, y, w, h)),
            paint_order: mark.map_or(0, |m| m as u32 + 1),
            ..Default::default()
        });
    }

    /// Leaves a mark for `settle`; its number plus one goes into the node's `paint_order`.
    fn mark(&mut self, test: Option<Test>) -> usize {
        self.marks.push(Mark {
            test,
            el: None,
            key: None,
            seen: None,
            shown: false,
        });
        self.marks.len() - 1
    }

    fn element(
        &mut self,
        at: At,
        facts: ElementFacts,
        ctx: &Ctx,
        counts: &mut Counts,
        out: &mut Vec<DomNode>,
    ) {
        // Inside the viewport every element's style is read: hidden subtrees are cut
        // where they start and a pointer cursor marks a click target. Outside it
        // markup alone decides.
        if SKIPPED.contains(&facts.tag.as_ref()) {
            return;
        }
        let nth = nth_of(counts, &facts.tag);
        // Hidden, or out of reach with nothing in it that could be drawn within: it is not
        // entered, and counts only for its siblings' paths. (A slot renders what is
        // assigned to it whatever its own display.)
        if matches!(facts.display, Display::None | Display::Far) && facts.tag != "slot" {
            return;
        }
        let base = self.path.len();
        push_segment(&mut self.path, &facts.tag, nth);
        self.enter(at, facts, ctx, out);
        self.path.truncate(base);
    }

    /// Walks an element that renders, its segment on `self.path`.
    fn enter(&mut self, at: At, facts: ElementFacts, ctx: &Ctx, out: &mut Vec<DomNode>) {
        let Some(facts) = self.pass_through(at, facts, ctx, out) else {
            return;
        };
        let Some(mut seen) = self.see(facts, ctx) else {
            return;
        };
        let Some(place) = self.place(&seen, ctx) else {
            return;
        };
        let node = self.keep(&mut seen, &place, ctx);
        let inner = self.inner(&seen, &place, ctx);
        // Kept content goes straight into `out`; a node of its own takes it back as children.
        let start = out.len();
        let remote = self.walk_inside(&mut seen, &place, inner, out);
        seen.me.end.set(self.order);
        if let Some(c) = &seen.cover {
            c.end.set(self.order);
        }
        // Plain containers are flattened away: their kept content joins the parent's.
        if let Some(node) = node {
            self.put(node, &seen, &place, remote, ctx, out.split_off(start), out);
        }
    }

    /// A `slot` and an element with `display: contents` have no box of their own while their
    /// children render: the walk goes on through them. The facts back otherwise.
    fn pass_through(
        &mut self,
        at: At,
        facts: ElementFacts,
        ctx: &Ctx,
        out: &mut Vec<DomNode>,
    ) -> Option<(At, ElementFacts)> {
        let inner = || Ctx {
            container: None,
            depth: ctx.depth + 1,
            ..ctx.clone()
        };
        if facts.tag == "slot" {
            self.slot(&at.node().unchecked_into(), inner(), out);
            return None;
        }
        if facts.display == Display::Contents {
            self.children(&at, &inner(), out);
            return None;
        }
        Some((at, facts))
    }

    /// What an element is: its tag, attributes and role, whether it may be acted on, and its
    /// paint bookkeeping. `None` for a frame that cannot be seen (nothing in it is walked).
    fn see(&mut self, (at, facts): (At, ElementFacts), ctx: &Ctx) -> Option<Seen> {
        let tag = facts.tag;
        // Only the attributes that decide candidacy so far; all of them for candidates.
        let mut attrs: Attrs = facts.attrs;
        let inert = ctx.inert || attrs.has("inert");
        let muted = ctx.muted || (ctx.within && attrs.get("aria-hidden") == Some("true"));
        self.order += 1;
        let me = Rc::new(Elem::new(
            at,
            ctx.doc.clone(),
            ctx.paint.clone(),
            facts.display,
            self.order,
        ));
        if let Some(r) = facts.rect {
            me.rect.set(Some(r));
        }
        let itype = semantics::input_type_with(&tag, &attrs, || {
            me.el().unchecked_ref::<HtmlInputElement>().type_()
        });
        let role = semantics::role(&attrs, &tag, itype.as_deref());
        let is_frame = tag == "iframe" || tag == "frame";
        let candidate = !inert
            && semantics::is_interactive(
                &attrs,
                &tag,
                itype.as_deref(),
                role.as_deref(),
                facts.pointer && !ctx.parent_pointer,
            );
        // A candidate's own box says whether it is within reach; only then is the rest read.
        if candidate {
            let (rect, rest) = read_candidate(&me.at, ctx.doc.reach, me.rect.get());
            me.rect.set(Some(rect));
            if let Some((all, visible)) = rest {
                attrs = all;
                me.visible.set(Some(visible));
            }
        }
        // Its box, and what it draws beyond it, may hide others' (see `overlap`).
        let cover = facts.cover.then(|| {
            let c = Rc::new(Cover::new(self.order, me.rect()));
            ctx.doc.covers.borrow_mut().push(c.clone());
            c
        });
        if is_frame && !me.visible() {
            return None;
        }
        // Only custom elements (and open roots, which the read reports) can host a shadow root.
        let root = if is_frame || !(facts.open_shadow || tag.contains('-')) {
            None
        } else {
            shadow_root_of(me.el(), &tag, facts.open_shadow)
        };
        Some(Seen {
            has_children: facts.has_children || root.is_some(),
            root,
            tag,
            attrs,
            me,
            itype,
            role,
            is_frame,
            candidate,
            inert,
            muted,
            pointer: facts.pointer,
            cover,
            clip: facts.clip,
            escapes_clips: facts.escapes_clips,
            open_shadow: facts.open_shadow,
            child_elements: facts.child_elements,
        })
    }

    /// Where the element is and whether a person could reach it. `None` for a frame out of
    /// reach.
    fn place(&self, seen: &Seen, ctx: &Ctx) -> Option<Place> {
        let measured = seen.candidate || seen.is_frame || (seen.has_children && !ctx.outside);
        let rect = if measured {
            seen.me.rect()
        } else {
            (0.0, 0.0, 0.0, 0.0)
        };
        if let (true, Some(c)) = (measured, &ctx.cover) {
            c.grow(rect);
        }
        let (x, y, w, h) = rect;
        // Placed where no scrolling reaches (left of the page, above its top): nobody sees it.
        let offscreen = x + w <= 0.0 || y + h + ctx.doc.scroll_y <= 0.0;
        let tiny = measured && (w < 2.0 || h < 2.0);
        let top_rect = ctx.doc.top_rect(rect);
        // For a candidate this is the rule `read_candidate` applied to the same box.
        let reached = !measured || ctx.doc.reaches(rect);
        if seen.is_frame && !reached {
            return None;
        }
        let interactive = seen.candidate && reached && seen.me.visible() && !offscreen && !tiny;
        // A box of its own wholly off screen (or out of reach): what it holds is too, unless
        // it escapes it (positioned content), which the candidates' own boxes still show.
        let outside = ctx.outside || (measured && !tiny && !in_view(rect, ctx.doc.viewport));
        let far = ctx.far || (measured && !tiny && !reached);
        let in_viewport = self.in_viewport(&top_rect);
        Some(Place {
            rect,
            measured,
            tiny,
            top_rect,
            interactive,
            outside,
            far,
            in_viewport,
            // Positioned out of its ancestors' clips, it may show outside all of them.
            exact_clip: if seen.escapes_clips {
                None
            } else {
                ctx.exact_clip
            },
        })
    }

    /// The element's own node, if it may become one (interactive elements, frames, shadow
    /// hosts and dialogs), described if it is interactive; and its hit test, left to `settle`.
    fn keep(&mut self, seen: &mut Seen, place: &Place, ctx: &Ctx) -> Option<DomNode> {
        let may_keep = place.interactive || seen.is_frame || seen.open_shadow || is_dialog(seen);
        let mut node = may_keep.then(|| DomNode {
            tag: seen.tag.to_string(),
            rect: place.top_rect,
            in_viewport: place.in_viewport,
            ..Default::default()
        });
        // Whether it is covered or clipped away is settled after the walk (`settle`).
        let tested = (place.interactive || seen.is_frame) && place.in_viewport && !self.covered;
        let test = tested.then(|| {
            if ctx.outside {
                ctx.doc.escaped.set(true);
            }
            let points = occlusion::points(place.rect, ctx.doc.viewport);
            Test {
                doc: ctx.doc.clone(),
                el: seen.me.el().clone(),
                in_clip: overlap::inside_somewhere(ctx.clip, &points),
                cut_away: overlap::wholly_outside(place.exact_clip, place.rect),
                points,
                holder: Some(seen.me.clone()),
                owns_inside: true,
                tested: Tested::Element,
            }
        });
        let mark = (place.interactive || test.is_some()).then(|| self.mark(test));
        if let Some(node) = &mut node {
            node.paint_order = mark.map_or(0, |m| m as u32 + 1);
            if place.interactive {
                seen.me.mark.set(mark);
                let (role, itype) = (seen.role.take(), seen.itype.take());
                self.describe(&seen.me, &seen.attrs, &seen.tag, role, itype, ctx, node);
            }
        }
        node
    }

    /// The context its content is walked in: what it is clipped to (for sure where the clip
    /// is exact and its box is where it is drawn, else at most), and what it passes down.
    fn inner(&self, seen: &Seen, place: &Place, ctx: &Ctx) -> Ctx {
        let (clip, exact_clip) = match seen.clip {
            Clip::None => (ctx.clip, place.exact_clip),
            _ if !seen.has_children => (ctx.clip, place.exact_clip),
            Clip::PaddingBox { exact } => {
                let (padding, untransformed) = read_clip_box(&seen.me.at, seen.me.rect());
                let clip = Some(overlap::intersect(ctx.clip, padding));
                if exact && untransformed {
                    (clip, Some(overlap::intersect(place.exact_clip, padding)))
                } else {
                    (clip, place.exact_clip)
                }
            }
            Clip::Shape => (Some(overlap::NOWHERE), place.exact_clip),
        };
        Ctx {
            doc: ctx.doc.clone(),
            depth: ctx.depth + 1,
            inert: seen.inert,
            parent_pointer: seen.pointer,
            within: ctx.within || place.interactive,
            muted: seen.muted,
            outside: place.outside,
            far: place.far,
            frame_path: ctx.frame_path.clone(),
            paint: Some(seen.me.clone()),
            container: Some(seen.me.clone()),
            clip,
            exact_clip,
            cover: seen.cover.clone().or_else(|| ctx.cover.clone()),
        }
    }

    /// Walks what the element holds into `out`: a frame (the source of a cross-origin one,
    /// which its own content script walks, comes back), a shadow root, or its children.
    fn walk_inside(
        &mut self,
        seen: &mut Seen,
        place: &Place,
        inner: Ctx,
        out: &mut Vec<DomNode>,
    ) -> Option<String> {
        let start = out.len();
        if seen.is_frame {
            return self.frame(seen.me.el(), (place.rect.0, place.rect.1), &inner, out);
        }
        if let Some(root) = seen.root.take() {
            self.path.push_str("/shadow");
            let shadow = Ctx {
                container: None,
                ..inner
            };
            self.children(&At::Held(root.into()), &shadow, out);
        } else if seen.has_children
            && (!place.tiny || seen.child_elements > 0)
            && !matches!(seen.tag.as_ref(), "select" | "textarea" | "option")
        {
            self.children(&seen.me.at, &inner, out);
            if place.tiny && out[start..].iter().any(|n| n.tag == "#text") {
                // A tiny box's own text is visually hidden (the sr-only pattern); its positioned children may not be.
                let walked = out.split_off(start);
                out.extend(walked.into_iter().filter(|n| n.tag != "#text"));
            }
        }
        None
    }

    /// Puts the element's node into `out` with what was walked inside it (`inside`): a
    /// cross-origin frame as a placeholder the background stitches, an interactive element or
    /// a frame, shadow host or dialog holding kept content with its children. Otherwise (an
    /// empty frame, shadow host or dialog) the kept content, if any, stays flattened.
    #[allow(clippy::too_many_arguments)]
    fn put(
        &self,
        mut node: DomNode,
        seen: &Seen,
        place: &Place,
        remote: Option<String>,
        ctx: &Ctx,
        inside: Vec<DomNode>,
        out: &mut Vec<DomNode>,
    ) {
        if let Some(src) = remote {
            // Its own content script walks it; the background stitches it in here.
            let el = seen.me.el();
            let (x, y, _, _) = place.rect;
            node.frame_id = Some(UNSTITCHED);
            node.href = Some(src);
            node.rect = ctx.doc.top_rect((
                x + f64::from(el.client_left()),
                y + f64::from(el.client_top()),
                f64::from(el.client_width()),
                f64::from(el.client_height()),
            ));
            out.push(node);
        } else if place.interactive {
            node.children = inside;
            out.push(node);
        } else if !inside.is_empty() && (seen.is_frame || seen.open_shadow || is_dialog(seen)) {
            // A dialog made of a `div` says so by its role: the agent confirms what it asks.
            if seen.tag != "dialog" {
                node.role = seen.role.clone();
            }
            if !place.measured {
                node.rect = ctx.doc.top_rect(seen.me.rect());
                node.in_viewport = self.in_viewport(&node.rect);
            }
            node.children = inside;
            node.occluded = false;
            node.scroll_container = read_scrolls(&seen.me.at, &ctx.doc.win);
            out.push(node);
        } else {
            out.extend(inside);
        }
    }

    /// Settles what the walk left open, now that every cover is known: which elements and
    /// texts in view are covered or clipped away (hit-testing only where something could
    /// hide them), then gives out indices, page text and paint keys in document order.
    /// `covered`: everything here is under something that covers it.
    fn settle(
        &mut self,
        nodes: Vec<DomNode>,
        covered: bool,
        keys: &mut Vec<Option<paint::Key>>,
    ) -> Vec<DomNode> {
        let mut out = Vec::with_capacity(nodes.len());
        for mut node in nodes {
            let mark = (node.paint_order as usize).checked_sub(1);
            node.paint_order = 0;
            if node.tag == "#text" {
                if covered || mark.is_some_and(|m| !self.text_shows(m)) {
                    continue;
                }
                push_page_text(&mut self.text, node.text.as_deref().unwrap_or_default());
                out.push(node);
                continue;
            }
            let mut hidden = covered;
            if let (Some(m), false) = (mark, covered) {
                match self.verdict(m) {
                    Verdict::Clipped => continue,
                    Verdict::Occluded(by) => {
                        hidden = true;
                        node.occluded_by = by;
                    }
                    Verdict::Shows => {}
                }
            }
            if let (Some(fp), Some(m)) = (&node.fingerprint, mark) {
                node.occluded = hidden;
                let mark = &mut self.marks[m];
                self.seen.extend(mark.seen);
                mark.shown = !hidden && mark.test.is_some();
                if !hidden {
                    if let Some(el) = &mark.el {
                        node.frame_id = self.frame_id;
                        node.index = Some(self.next_index);
                        self.next_index += 1;
                        self.indexed.push((el.clone(), fp.clone()));
                    }
                }
                node.paint_order = keys.len() as u32;
                keys.push(mark.key.take());
            } else if node.frame_id == Some(UNSTITCHED) {
                node.occluded = hidden;
                self.remote_frames += 1;
            }
            let children = std::mem::take(&mut node.children);
            node.children = self.settle(children, hidden, keys);
            out.push(node);
        }
        out
    }

    /// Whether an element's mark leaves it showing, covered, or clipped away.
    fn verdict(&self, m: usize) -> Verdict {
        let Some(test) = &self.marks[m].test else {
            return Verdict::Shows;
        };
        match test.by_layout() {
            Some(true) => return Verdict::Shows,
            Some(false) => return Verdict::Clipped,
            None => {}
        }
        let occ = occlusion::test(&test.doc.doc, &test.el, &test.points, test.doc.viewport);
        if occ.clipped {
            Verdict::Clipped
        } else if occ.occluded {
            Verdict::Occluded(occ.by)
        } else {
            Verdict::Shows
        }
    }

    /// Whether a text's mark leaves it showing: its indexed element shows, nothing could
    /// hide it, or a hit test finds its element on top.
    fn text_shows(&self, m: usize) -> bool {
        let Some(test) = &self.marks[m].test else {
            return true;
        };
        if let Tested::Text { owner: Some(o) } = test.tested {
            if self.marks[o].shown {
                return true;
            }
        }
        test.by_layout().unwrap_or_else(|| {
            occlusion::text_visible_at(&test.doc.doc, &test.el, test.points[0], test.doc.viewport)
        })
    }

    fn in_viewport(&self, r: &Rect) -> bool {
        r.x < self.top_viewport.0
            && r.y < self.top_viewport.1
            && r.x + r.width > 0.0
            && r.y + r.height > 0.0
    }

    /// Fills in what an indexed element is: name, value, states, fingerprint, index.
    #[allow(clippy::too_many_arguments)]
    fn describe(
        &mut self,
        me: &Elem,
        attrs: &Attrs,
        tag: &str,
        role: Option<String>,
        itype: Option<String>,
        ctx: &Ctx,
        node: &mut DomNode,
    ) {
        let doc = &ctx.doc.doc;
        // What the name, value and states need of its properties, and the element, in one crossing.
        let (mut props, element) = read_indexed(
            &me.at,
            &ctx.doc.win,
            semantics::is_form_control(tag),
            ctx.doc.active(),
            semantics::wants(attrs, tag, itype.as_deref()),
        );
        let el = me.el.get_or_init(|| element);
        let name = semantics::accessible_name(doc, el, attrs, tag, itype.as_deref(), Some(&props));
        let fingerprint = Fingerprint {
            tag: tag.to_owned(),
            role: role.clone(),
            name: name.clone(),
            id: non_empty(attrs.get("id")),
            name_attr: non_empty(attrs.get("name")),
            test_id: attrs
                .get("data-testid")
                .or_else(|| attrs.get("data-test-id"))
                .or_else(|| attrs.get("data-test"))
                .map(str::to_owned),
            aria_label: non_empty(attrs.get("aria-label")),
            text: None,
            path: self.path.clone(),
            frame_path: (*ctx.frame_path).clone(),
        };
        let seen = fingerprint_key(&fingerprint);
        node.is_new = self.previous.is_some_and(|p| !p.contains(&seen));
        node.role = role;
        node.name = name;
        node.value = semantics::value(tag, &props);
        node.href = props.href.take();
        if semantics::is_form_control(tag) || tag == "button" {
            node.sends_to = form_target::sends_to(el, ctx.doc.origin());
        }
        node.placeholder = non_empty(attrs.get("placeholder"));
        for a in ["name", "id", "aria-haspopup", "aria-controls"] {
            if let Some(v) = non_empty(attrs.get(a)) {
                node.attributes.push((a.to_owned(), v));
            }
        }
        // What a field is for (`username`, `current-password`, `one-time-code`): the sign-in
        // form finder reads it. A text field's `inputmode` says it keeps a number.
        if tag == "input" {
            if let Some(v) = non_empty(attrs.get("autocomplete")).filter(|v| v != "off") {
                node.attributes.push(("autocomplete".to_owned(), v));
            }
            if let Some(v) = non_empty(attrs.get("inputmode")) {
                node.attributes.push(("inputmode".to_owned(), v));
            }
        }
        node.states = semantics::states(el, attrs, tag, itype.as_deref(), &props);
        node.input_type = itype;
        node.scroll_container = props.scrolls;
        node.fingerprint = Some(fingerprint);
        if let Some(m) = me.mark.get() {
            self.marks[m].el = Some(el.clone());
            self.marks[m].key = node.in_viewport.then(|| me.key());
            self.marks[m].seen = Some(seen);
        }
    }

    /// Rendered content of a slot: its assigned nodes, else its fallback children.
    fn slot(&mut self, el: &Element, inner: Ctx, out: &mut Vec<DomNode>) {
        let assigned = get(el, "assignedNodes")
            .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
            .and_then(|f| {
                let opts = js_sys::Object::new();
                let _ =
                    js_sys::Reflect::set(&opts, &"flatten".into(), &wasm_bindgen::JsValue::TRUE);
                f.call1(el, &opts).ok()
            })
            .map(|v| js_sys::Array::from(&v))
            .unwrap_or_default();
        if assigned.length() == 0 {
            self.children(&At::Held(el.clone().into()), &inner, out);
        } else {
            let mut slot_counts = Vec::new();
            for n in assigned.iter() {
                self.node(n.unchecked_into(), &inner, &mut slot_counts, out);
            }
        }
    }

    /// Walks a same-origin iframe's document in place. A cross-origin one reports
    /// through its own content script: its `src` is returned, for the background to find it.
    fn frame(
        &mut self,
        el: &Element,
        (x, y): (f64, f64),
        ctx: &Ctx,
        out: &mut Vec<DomNode>,
    ) -> Option<String> {
        // Only called for `iframe`/`frame` elements; by tag, not `instanceof` (frames nest realms).
        let iframe: &HtmlIFrameElement = el.unchecked_ref();
        let Some(doc) = iframe.content_document() else {
            return iframe.content_window().map(|_| iframe.src());
        };
        let win = iframe.content_window()?;
        let body = doc.body()?;
        let viewport = viewport(&doc, &win);
        let scroll_y = win.scroll_y().unwrap_or(0.0);
        let offset = (
            ctx.doc.offset.0 + x + f64::from(el.client_left()),
            ctx.doc.offset.1 + y + f64::from(el.client_top()),
        );
        let frame = Rc::new(Doc {
            doc,
            win,
            viewport,
            offset,
            reach: self.reach.bounds(self.top_viewport, offset),
            scroll_y,
            range: OnceCell::new(),
            active: OnceCell::new(),
            covers: RefCell::new(Vec::new()),
            escaped: Cell::new(false),
            origin: OnceCell::new(),
        });
        let inner = Ctx {
            container: Some(Rc::new(Elem::new(
                At::Held(body.clone().into()),
                frame.clone(),
                None,
                Display::Unread,
                0,
            ))),
            doc: frame,
            parent_pointer: false,
            // Another document, with boxes and clips of its own.
            clip: None,
            exact_clip: None,
            cover: None,
            ..ctx.clone()
        };
        // Cut off again by `element`, with this iframe's own segment.
        self.path.push_str("/frame");
        self.children(&At::Held(body.into()), &inner, out);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::push_segment;

    #[test]
    fn path_segments_number_siblings_by_tag() {
        let mut path = String::new();
        push_segment(&mut path, "div", 0);
        assert_eq!(path, ">div[0]");
        push_segment(&mut path, "a", 12);
        assert_eq!(path, ">div[0]>a[12]");
        push_segment(&mut path, "x-y", u32::MAX);
        assert_eq!(path, ">div[0]>a[12]>x-y[4294967295]");
    }
}
