//! DOM calls web-sys lacks, and small helpers that keep boundary crossings cheap.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Document, Element, Node, Range, ShadowRoot, Window};

#[wasm_bindgen]
extern "C" {
    /// `chrome.dom.openOrClosedShadowRoot`: content scripts may see closed shadow roots.
    #[wasm_bindgen(js_namespace = ["chrome", "dom"], js_name = openOrClosedShadowRoot, catch)]
    fn open_or_closed_shadow_root(element: &Element) -> Result<JsValue, JsValue>;
}

// Batched reads: one crossing per parent for its children, one per candidate (see read.js).
// Numbers and flags cross as f64 (a flag as 0 or 1): with nothing to convert, wasm-bindgen
// imports a function as it is, where an integer or a bool puts a JS shim in every call.
#[wasm_bindgen(module = "/src/content/read.js")]
extern "C" {
    fn bind(memory: &JsValue, ptr: u32, tags: &str);
    #[wasm_bindgen(js_name = bindText)]
    fn bind_text(ptr: u32, cap: u32);
    #[wasm_bindgen(js_name = readNode)]
    #[allow(clippy::too_many_arguments)]
    fn read_node_js(
        node: &Node,
        win: &Window,
        styled: f64,
        want_text: f64,
        left: f64,
        top: f64,
        right: f64,
        bottom: f64,
    );
    #[wasm_bindgen(js_name = takeGiven)]
    fn take_given_js() -> String;
    #[wasm_bindgen(js_name = readChildren)]
    #[allow(clippy::too_many_arguments)]
    fn read_children_js(
        parent: Option<&Node>,
        pd: f64,
        pi: f64,
        depth: f64,
        win: &Window,
        styled: f64,
        want_text: f64,
        left: f64,
        top: f64,
        right: f64,
        bottom: f64,
        ptr: f64,
        cap: f64,
    );
    #[wasm_bindgen(js_name = nodeAt)]
    fn node_at_js(d: f64, i: f64) -> Node;
    #[wasm_bindgen(js_name = endWalk)]
    fn end_walk_js();
    #[wasm_bindgen(js_name = readAttributes)]
    fn read_attributes_js(el: &Element) -> String;
    /// An attribute read through `Element`'s prototype: a form's controls cannot shadow it.
    #[wasm_bindgen(js_name = attributeOf)]
    pub fn attribute_of(el: &Element, name: &str) -> Option<String>;
    /// Attribute `name` of each element under `root` matching `selector` (empty where absent),
    /// read through the prototypes as [`attribute_of`] is.
    #[wasm_bindgen(js_name = attributesIn)]
    pub fn attributes_in(root: &Element, selector: &str, name: &str) -> Vec<String>;
    /// The text a person reads in an element (its name from content); see read.js.
    #[wasm_bindgen(js_name = contentText)]
    pub fn content_text(el: &Element) -> String;
    #[wasm_bindgen(js_name = readCandidate)]
    #[allow(clippy::too_many_arguments)]
    fn read_candidate_js(
        node: Option<&Node>,
        d: f64,
        i: f64,
        left: f64,
        top: f64,
        right: f64,
        bottom: f64,
        x: f64,
        y: f64,
        width: f64,
        height: f64,
    );
    #[wasm_bindgen(js_name = readRect)]
    fn read_rect_js(node: Option<&Node>, d: f64, i: f64);
    #[wasm_bindgen(js_name = isVisible)]
    fn is_visible_js(node: Option<&Node>, d: f64, i: f64) -> bool;
    #[wasm_bindgen(js_name = readIndexed)]
    fn read_indexed_js(
        node: Option<&Node>,
        d: f64,
        i: f64,
        win: &Window,
        control: f64,
        active: Option<&Element>,
        want: f64,
    ) -> Element;
    #[wasm_bindgen(js_name = composedContains)]
    fn composed_contains_js(outer: &Node, inner: &Node) -> bool;
    #[wasm_bindgen(js_name = readTextRect)]
    fn read_text_rect_js(range: &Range, node: Option<&Node>, d: f64, i: f64);
    #[wasm_bindgen(js_name = readClipBox)]
    fn read_clip_box_js(node: Option<&Node>, d: f64, i: f64);
    #[wasm_bindgen(js_name = readPaint)]
    fn read_paint_js(node: Option<&Node>, d: f64, i: f64, win: &Window, want_display: f64);
    #[wasm_bindgen(js_name = readScrolls)]
    fn read_scrolls_js(node: Option<&Node>, d: f64, i: f64, win: &Window) -> bool;
}

/// Tags that cross as a number, not a string (read.js learns them in `bind`).
const TAGS: &[&str] = &[
    "div",
    "span",
    "a",
    "p",
    "li",
    "ul",
    "ol",
    "button",
    "input",
    "label",
    "img",
    "section",
    "article",
    "header",
    "footer",
    "nav",
    "main",
    "aside",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "table",
    "thead",
    "tbody",
    "tr",
    "td",
    "th",
    "form",
    "select",
    "option",
    "textarea",
    "strong",
    "em",
    "b",
    "i",
    "small",
    "br",
    "hr",
    "svg",
    "path",
    "g",
    "figure",
    "figcaption",
    "iframe",
    "pre",
    "code",
    "blockquote",
    "dl",
    "dt",
    "dd",
    "summary",
    "details",
    "dialog",
    "picture",
    "source",
    "time",
    "abbr",
    "sup",
    "sub",
    "fieldset",
    "legend",
    "canvas",
    "video",
    "script",
    "style",
    "noscript",
    "template",
    "link",
    "meta",
    "slot",
];

/// Where read.js writes numbers: room for a record, and where the last read's string went
/// (`STRING`). Single-threaded wasm; read right after each call.
static mut FACTS: [f64; FACTS_LEN] = [0.0; FACTS_LEN];

thread_local! {
    static BOUND: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The numbers the last read wrote.
fn facts() -> [f64; FACTS_LEN] {
    // SAFETY: wasm32 here is single-threaded and read.js only writes during the calls above.
    unsafe { std::ptr::addr_of!(FACTS).read_volatile() }
}

/// Tells read.js where `FACTS` and `TEXT` are, once.
fn ensure_bound() {
    if !BOUND.with(|b| b.replace(true)) {
        bind(
            &wasm_bindgen::memory(),
            std::ptr::addr_of!(FACTS) as u32,
            &TAGS.join(","),
        );
        TEXT.with(|t| {
            let t = t.borrow();
            bind_text(t.as_ptr() as u32, t.len() as u32);
        });
    }
}

thread_local! {
    /// Where read.js puts the string a read gives (read.js `give`); grown, and read.js told,
    /// when one did not fit.
    static TEXT: std::cell::RefCell<Vec<u8>> = std::cell::RefCell::new(vec![0; 16 * 1024]);
}

/// `FACTS[STRING]`: where the string of the last read went (read.js `give`).
const STRING: usize = RECORD;
const NO_STRING: f64 = -1.0;
const KEPT: f64 = -2.0;

/// The string a read gave (`string`: `FACTS[STRING]` as the read left it): from `TEXT`, or
/// taken from read.js when it did not fit (`TEXT` then grows for the next one).
fn given<R>(string: f64, f: impl FnOnce(Option<&str>) -> R) -> R {
    if string == NO_STRING {
        return f(None);
    }
    if string == KEPT {
        let s = take_given_js();
        TEXT.with(|t| {
            let mut t = t.borrow_mut();
            let need = (s.len() * 3).next_power_of_two();
            if t.len() < need {
                *t = vec![0; need];
                bind_text(t.as_ptr() as u32, t.len() as u32);
            }
        });
        return f(Some(&s));
    }
    TEXT.with(|t| {
        let t = t.borrow();
        let bytes = &t[..(string as usize).min(t.len())];
        // TextEncoder writes well-formed UTF-8 (a lone surrogate becomes U+FFFD), so this
        // never fails; `from_utf8` checks ASCII a word at a time where the lossy form's
        // chunker goes a byte at a time.
        match std::str::from_utf8(bytes) {
            Ok(s) => f(Some(s)),
            Err(_) => f(Some(&String::from_utf8_lossy(bytes))),
        }
    })
}

/// A flag as read.js takes it (see the imports above).
fn flag(b: bool) -> f64 {
    f64::from(u8::from(b))
}

/// A node the walk visits: one it holds, or one read.js holds, named by its place in
/// the batch of children read at a depth (see read.js `readChildren`). Most nodes are
/// only ever named: asking for the object costs a crossing of its own.
#[derive(Clone)]
pub enum At {
    Held(Node),
    /// Valid while no other batch has been read at `depth`: for a node being walked, until
    /// the walk has left it.
    Batched {
        depth: u32,
        index: u32,
    },
}

impl At {
    fn parts(&self) -> (Option<&Node>, f64, f64) {
        match self {
            At::Held(n) => (Some(n), 0.0, 0.0),
            At::Batched { depth, index } => (None, f64::from(*depth), f64::from(*index)),
        }
    }

    /// The node itself.
    pub fn node(&self) -> Node {
        match self {
            At::Held(n) => n.clone(),
            At::Batched { depth, index } => node_at_js(f64::from(*depth), f64::from(*index)),
        }
    }
}

/// Lets read.js drop the nodes of a finished walk.
pub fn end_walk() {
    end_walk_js();
}

/// Whether a person could see the element at all (not whether something covers it):
/// `checkVisibility` with opacity and the `visibility` property checked.
pub fn is_visible(el: &Element) -> bool {
    is_visible_js(Some(el.unchecked_ref()), 0.0, 0.0)
}

/// What `read_indexed` is asked for besides what it always reads (read.js `WANT_*`).
pub mod want {
    /// Its text content, for a name from content.
    pub const CONTENT: u8 = 1;
    /// A link's resolved `href`.
    pub const HREF: u8 = 2;
    /// A field's value.
    pub const VALUE: u8 = 4;
    /// Whether a field's value is empty: all a password's value is asked.
    pub const EMPTY: u8 = 8;
    pub const CHECKED: u8 = 16;
    pub const SELECTED: u8 = 32;
    /// The text content of a form control's labels.
    pub const LABELS: u8 = 64;
    /// The text of a select's chosen options.
    pub const OPTIONS: u8 = 128;
}

/// What the walk reads of an element it indexes (read.js `readIndexed`).
pub struct Indexed {
    /// The `disabled` property.
    pub disabled: bool,
    /// `validity.valid` is false: read only for a form control, false for others.
    pub invalid: bool,
    /// As [`read_scrolls`].
    pub scrolls: bool,
    /// It is its document's focused element.
    pub focused: bool,
    /// Its `checked` property, when asked for (`want::CHECKED`).
    pub checked: bool,
    /// Its `selected` property, when asked for (`want::SELECTED`).
    pub selected: bool,
    /// Its value is empty, when asked for (`want::EMPTY`).
    pub empty: bool,
    /// Its text content, when asked for (`want::CONTENT`).
    pub content: Option<String>,
    /// Its resolved `href`, when asked for (`want::HREF`) and a string (not an SVG link's).
    pub href: Option<String>,
    /// Its value, when asked for (`want::VALUE`).
    pub value: Option<String>,
    /// Its labels' text content, NUL-separated, when asked for (`want::LABELS`) and it has
    /// a list of labels (a labelable element).
    pub labels: Option<String>,
    /// Its chosen options' text, NUL-separated, when asked for (`want::OPTIONS`).
    pub options: Option<String>,
    /// What was asked for (`want::*`).
    pub asked: u8,
}

/// Everything the walk reads of an element it indexes, in one crossing: its properties, the
/// strings `want` asks for, whether it is `active`, its document's focused element, and the
/// element itself (an indexed element is acted on later).
pub fn read_indexed(
    el: &At,
    win: &Window,
    form_control: bool,
    active: Option<&Element>,
    want: u8,
) -> (Indexed, Element) {
    ensure_bound();
    let (n, d, i) = el.parts();
    let element = read_indexed_js(n, d, i, win, flag(form_control), active, f64::from(want));
    let out = facts();
    let [content, href, value, labels, options] = given(out[STRING], |joined| {
        let mut strings = Utf16Cuts::new(joined.unwrap_or_default());
        std::array::from_fn(|k| {
            let len = out[7 + k];
            (len >= 0.0).then(|| strings.take(len as usize).to_owned())
        })
    });
    let indexed = Indexed {
        disabled: out[0] != 0.0,
        invalid: out[1] != 0.0,
        scrolls: out[2] != 0.0,
        focused: out[3] != 0.0,
        checked: out[4] != 0.0,
        selected: out[5] != 0.0,
        empty: out[6] != 0.0,
        content,
        href,
        value,
        labels,
        options,
        asked: want,
    };
    (indexed, element)
}

/// [`is_visible`], for a node the walk names.
pub fn is_visible_at(el: &At) -> bool {
    let (n, d, i) = el.parts();
    is_visible_js(n, d, i)
}

/// An element's attributes, read in one go: most lookups are for attributes it does not have.
/// Split once where they arrive, since a candidate is asked about some twenty of them.
#[derive(Default)]
pub struct Attrs {
    /// As read.js writes it: `\0name\0value` for each attribute.
    raw: String,
    /// Where each pair lies in `raw`: (name start, name end, value end); the value starts one
    /// byte after the name ends.
    spans: Vec<(usize, usize, usize)>,
}

impl Attrs {
    pub fn read(el: &Element) -> Self {
        Self::parse(read_attributes_js(el))
    }

    pub(super) fn parse(raw: String) -> Self {
        // NUL is one byte in UTF-8 and never inside a character, so byte offsets are boundaries.
        let mut cuts = raw
            .bytes()
            .enumerate()
            .filter_map(|(i, b)| (b == 0).then_some(i));
        let mut spans = Vec::new();
        while let (Some(a), Some(b)) = (cuts.next(), cuts.next()) {
            spans.push((a + 1, b, 0));
        }
        for i in 0..spans.len() {
            let end = spans.get(i + 1).map_or(raw.len(), |next| next.0 - 1);
            spans[i].2 = end;
        }
        Self { raw, spans }
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.spans
            .iter()
            .find(|(a, b, _)| &self.raw[*a..*b] == name)
            .map(|(_, b, end)| &self.raw[b + 1..*end])
    }

    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }
}

/// An element's computed `display`, as far as the walk cares.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Display {
    None,
    Contents,
    Block,
    FlexOrGrid,
    /// Not read (outside the viewport, the walk reads no style).
    Unread,
    /// Not read either: its box and everything it holds lie out of the region walked
    /// (read.js `farAndAlone`), so nothing in it needs walking.
    Far,
}

impl Display {
    fn from_code(code: f64) -> Self {
        match code as u8 {
            0 => Self::None,
            1 => Self::Contents,
            2 => Self::Block,
            3 => Self::FlexOrGrid,
            5 => Self::Far,
            _ => Self::Unread,
        }
    }
}

/// What the walk reads about every element it meets.
pub struct ElementFacts {
    /// Common tags are borrowed from `TAGS`: most elements allocate no tag.
    pub tag: std::borrow::Cow<'static, str>,
    /// Only the attributes that decide whether it is interactive (read.js `DECIDING`).
    pub attrs: Attrs,
    pub display: Display,
    pub pointer: bool,
    /// It may paint over content not its own (read.js `COVER`); unread outside the viewport.
    pub cover: bool,
    pub clip: Clip,
    /// Absolutely positioned or fixed: out of its ancestors' clips (read.js `ESCAPES_CLIPS`).
    pub escapes_clips: bool,
    pub has_children: bool,
    pub open_shadow: bool,
    pub child_elements: u32,
    /// Its border box, when read.js measured it (an element with children, in view).
    pub rect: Option<Box4>,
}

/// How an element clips its content, as far as hit tests care.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Clip {
    None,
    /// To its padding box (`overflow`); `exact`: to that box and no more (read.js
    /// `CLIPS_EXACTLY`), so content wholly outside it is cut away.
    PaddingBox {
        exact: bool,
    },
    /// To a shape its boxes do not give (`clip-path`, `clip`, a clip under a transform).
    Shape,
}

/// read.js style flags.
const POINTER: u8 = 1;
const COVER: u8 = 2;
const CLIPS: u8 = 4;
const CLIPS_ANYHOW: u8 = 8;
const ESCAPES_CLIPS: u8 = 16;
const CLIPS_EXACTLY: u8 = 32;

/// Whitespace runs in a text node's text are collapsed and the text cut to this many
/// characters: the tree carries runs, not whole articles.
pub const TEXT_RUN_MAX: usize = 300;

/// What a node is, read in one crossing.
pub enum NodeFacts {
    Element(ElementFacts),
    /// A text node: its text, cleaned (`clean_text`, `TEXT_RUN_MAX`), unless it is only
    /// whitespace or was not wanted.
    Text(Option<String>),
    Other,
}

/// `styled`: read an element's computed style too; `want_text`: read a text node's text;
/// `reach`: the region walked, out of which an element may be found `Display::Far`.
pub fn read_node(
    node: &Node,
    win: &Window,
    styled: bool,
    want_text: bool,
    reach: Option<Bounds>,
) -> NodeFacts {
    ensure_bound();
    let r = reach.unwrap_or(Bounds::EVERYWHERE);
    read_node_js(
        node,
        win,
        flag(styled),
        flag(want_text),
        r.left,
        r.top,
        r.right,
        r.bottom,
    );
    let out = facts();
    given(out[STRING], |text| node_facts(&out, text))
}

/// Numbers per node in a batch (read.js: kind, five facts, tag code, string length, box).
const RECORD: usize = 12;
const FACTS_LEN: usize = RECORD + 1;

thread_local! {
    /// Where read.js writes the records of a batch; grown when a parent has more children.
    static RECORDS: std::cell::RefCell<Vec<f64>> = std::cell::RefCell::new(vec![0.0; 64 * RECORD]);
}

/// The children of `parent` the walk has a use for (elements, and texts that are not blank
/// when `want_text`), and what each is, in one crossing; they become the batch at `depth`,
/// named `At::Batched { depth, index }` in the order appended to `out` (emptied first).
/// `reach` as [`read_node`].
pub fn read_children(
    parent: &At,
    depth: u32,
    win: &Window,
    styled: bool,
    want_text: bool,
    reach: Option<Bounds>,
    out: &mut Vec<NodeFacts>,
) {
    ensure_bound();
    let (node, pd, pi) = parent.parts();
    let r = reach.unwrap_or(Bounds::EVERYWHERE);
    RECORDS.with(|cell| {
        let mut records = cell.borrow_mut();
        loop {
            let cap = records.len() / RECORD;
            read_children_js(
                node,
                pd,
                pi,
                f64::from(depth),
                win,
                flag(styled),
                flag(want_text),
                r.left,
                r.top,
                r.right,
                r.bottom,
                f64::from(records.as_mut_ptr() as u32),
                cap as f64,
            );
            let read = facts();
            let n = read[0] as usize;
            if n > cap {
                records.resize(n.next_power_of_two() * RECORD, 0.0);
                continue;
            }
            out.clear();
            return given(read[STRING], |joined| {
                let mut strings = Utf16Cuts::new(joined.unwrap_or_default());
                out.extend((0..n).map(|k| {
                    let mut rec = [0.0; RECORD];
                    for (j, slot) in rec.iter_mut().enumerate() {
                        // SAFETY: in bounds (k < n <= cap); read.js wrote it during the call above.
                        *slot = unsafe { records.as_ptr().add(k * RECORD + j).read_volatile() };
                    }
                    let text = (rec[7] >= 0.0).then(|| strings.take(rec[7] as usize));
                    node_facts(&rec, text)
                }));
            });
        }
    })
}

/// Cuts a string JS joined into the pieces it was joined from, given their lengths in
/// UTF-16 units (JS's measure), in order.
struct Utf16Cuts<'a> {
    rest: &'a str,
}

impl<'a> Utf16Cuts<'a> {
    fn new(s: &'a str) -> Self {
        Self { rest: s }
    }

    fn take(&mut self, units: usize) -> &'a str {
        // ASCII (most of it): a UTF-16 unit is a byte.
        let bytes = self.rest.as_bytes();
        if units <= bytes.len() && bytes[..units].is_ascii() {
            let (piece, rest) = self.rest.split_at(units);
            self.rest = rest;
            return piece;
        }
        let mut seen = 0;
        let mut end = self.rest.len();
        for (i, c) in self.rest.char_indices() {
            if seen >= units {
                end = i;
                break;
            }
            seen += c.len_utf16();
        }
        let (piece, rest) = self.rest.split_at(end);
        self.rest = rest;
        piece
    }
}

/// What read.js wrote for one node (`rec`: its record) and gave.
fn node_facts(rec: &[f64], text: Option<&str>) -> NodeFacts {
    match rec[0] as u8 {
        1 => NodeFacts::Element(element_facts(rec, text.unwrap_or_default())),
        // Cleaned as it is copied out of the batch's string: one allocation, not two.
        3 => NodeFacts::Text(text.map(|t| clean_text(t, TEXT_RUN_MAX))),
        _ => NodeFacts::Other,
    }
}

/// Decodes an element's record and string.
fn element_facts(out: &[f64], text: &str) -> ElementFacts {
    let code = out[6] as usize;
    // Most elements have a coded tag and none of the deciding attributes: nothing to copy.
    let (tag, attrs) = match code.checked_sub(1).and_then(|i| TAGS.get(i)) {
        Some(tag) => (
            std::borrow::Cow::Borrowed(*tag),
            Attrs::parse(text.to_owned()),
        ),
        None => {
            let (tag, attrs) = text.split_at(text.find('\0').unwrap_or(text.len()));
            (
                std::borrow::Cow::Owned(tag.to_owned()),
                Attrs::parse(attrs.to_owned()),
            )
        }
    };
    let flags = out[2] as u8;
    ElementFacts {
        tag,
        attrs,
        display: Display::from_code(out[1]),
        pointer: flags & POINTER != 0,
        cover: flags & COVER != 0,
        clip: if flags & CLIPS_ANYHOW != 0 {
            Clip::Shape
        } else if flags & CLIPS != 0 {
            Clip::PaddingBox {
                exact: flags & CLIPS_EXACTLY != 0,
            }
        } else {
            Clip::None
        },
        escapes_clips: flags & ESCAPES_CLIPS != 0,
        has_children: out[3] != 0.0,
        open_shadow: out[4] != 0.0,
        child_elements: out[5] as u32,
        rect: (!out[8].is_nan()).then(|| (out[8], out[9], out[10], out[11])),
    }
}

/// Everything the walk asks of a candidate, in one crossing: its border box and, when that
/// meets `reach` (or there is no bound), all its attributes and whether it is visible (as
/// [`is_visible`]). `known`: its box, when measured already.
pub fn read_candidate(
    el: &At,
    reach: Option<Bounds>,
    known: Option<Box4>,
) -> (Box4, Option<(Attrs, bool)>) {
    ensure_bound();
    let r = reach.unwrap_or(Bounds::EVERYWHERE);
    let (n, d, i) = el.parts();
    let (x, y, w, h) = known.unwrap_or((f64::NAN, 0.0, 0.0, 0.0));
    read_candidate_js(n, d, i, r.left, r.top, r.right, r.bottom, x, y, w, h);
    let out = facts();
    let rect = (out[0], out[1], out[2], out[3]);
    let rest = given(out[STRING], |a| {
        a.map(|a| (Attrs::parse(a.to_owned()), out[4] != 0.0))
    });
    (rect, rest)
}

/// A region of a frame's viewport, edges excluded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    pub left: f64,
    pub top: f64,
    pub right: f64,
    pub bottom: f64,
}

impl Bounds {
    const EVERYWHERE: Bounds = Bounds {
        left: f64::NEG_INFINITY,
        top: f64::NEG_INFINITY,
        right: f64::INFINITY,
        bottom: f64::INFINITY,
    };

    /// Whether a box overlaps the region: the rule read.js `readCandidate` applies too.
    pub fn meets(&self, (x, y, w, h): Box4) -> bool {
        x < self.right && y < self.bottom && x + w > self.left && y + h > self.top
    }
}

/// Border box in the frame's viewport: (x, y, width, height).
pub type Box4 = (f64, f64, f64, f64);

pub fn read_rect(el: &At) -> Box4 {
    ensure_bound();
    let (n, d, i) = el.parts();
    read_rect_js(n, d, i);
    let out = facts();
    (out[0], out[1], out[2], out[3])
}

/// The padding box (which content is clipped to) of an element measured at `border`, and
/// whether that box is where it is drawn. Where it or an ancestor is scaled or turned, its
/// measured box bounds a transformed one and differs in size from its layout box, so the
/// answer is false. A half turn keeps the size and is not caught.
pub fn read_clip_box(el: &At, border: Box4) -> (Box4, bool) {
    ensure_bound();
    let (n, d, i) = el.parts();
    read_clip_box_js(n, d, i);
    let out = facts();
    let untransformed = (border.2 - out[4]).abs() < 1.0 && (border.3 - out[5]).abs() < 1.0;
    (
        (border.0 + out[0], border.1 + out[1], out[2], out[3]),
        untransformed,
    )
}

/// Where a text node's text is drawn, measured with a range reused across the walk.
pub fn read_text_rect(range: &Range, node: &At) -> Box4 {
    ensure_bound();
    let (n, d, i) = node.parts();
    read_text_rect_js(range, n, d, i);
    let out = facts();
    (out[0], out[1], out[2], out[3])
}

/// Computed style that decides painting (see paint.rs).
pub struct PaintFacts {
    pub positioned: bool,
    pub fixed_or_sticky: bool,
    pub z_index: Option<i32>,
    pub opacity: f64,
    /// A transform, a filter or `isolation: isolate`: each makes a stacking context,
    /// and paint.rs needs only to know whether any does. Only looked for where
    /// position, z-index and opacity do not already make one (false there).
    pub groups: bool,
    /// `Unread` unless asked for: the walk has usually read it with the element.
    pub display: Display,
}

pub fn read_paint(el: &At, win: &Window, want_display: bool) -> PaintFacts {
    ensure_bound();
    let (n, d, i) = el.parts();
    read_paint_js(n, d, i, win, flag(want_display));
    let out = facts();
    let position = out[0] as u8;
    PaintFacts {
        positioned: position != 0,
        fixed_or_sticky: position >= 3,
        z_index: (!out[1].is_nan()).then_some(out[1] as i32),
        opacity: out[2],
        groups: out[3] != 0.0,
        display: Display::from_code(out[4]),
    }
}

/// Whether the element scrolls its content vertically (and has content to scroll).
pub fn read_scrolls(el: &At, win: &Window) -> bool {
    let (n, d, i) = el.parts();
    read_scrolls_js(n, d, i, win)
}

/// The shadow root of an element already read: `open` says whether it has an open one.
pub fn shadow_root_of(el: &Element, tag: &str, open: bool) -> Option<ShadowRoot> {
    if open {
        return el.shadow_root();
    }
    if !tag.contains('-') {
        return None;
    }
    closed_root(el)
}

/// `chrome.dom.openOrClosedShadowRoot`, checked by shape: a same-origin frame's
/// roots belong to another realm and fail `instanceof`.
fn closed_root(el: &Element) -> Option<ShadowRoot> {
    open_or_closed_shadow_root(el)
        .ok()
        .filter(|r| r.is_object())
        .map(JsCast::unchecked_into)
}

/// The element's shadow root, open or closed.
pub fn shadow_root(el: &Element) -> Option<ShadowRoot> {
    if let Some(root) = el.shadow_root() {
        return Some(root);
    }
    // Only custom elements (and a few built-ins) can host shadow roots; asking for each element costs.
    if !el.local_name().contains('-') {
        return None;
    }
    closed_root(el)
}

/// Topmost element at a point, descending into shadow roots (open and closed).
pub fn element_at(doc: &Document, x: f64, y: f64) -> Option<Element> {
    let mut top = doc.element_from_point(x as f32, y as f32)?;
    for _ in 0..32 {
        let Some(root) = shadow_root(&top) else { break };
        match root.element_from_point(x as f32, y as f32) {
            Some(inner) if inner != top => top = inner,
            _ => break,
        }
    }
    Some(top)
}

/// Composed-tree containment: `inner` is `outer` or inside it, across shadow boundaries.
pub fn composed_contains(outer: &Node, inner: &Node) -> bool {
    composed_contains_js(outer, inner)
}

pub fn attr(el: &Element, name: &str) -> Option<String> {
    el.get_attribute(name)
}

/// Whitespace collapsed and trimmed, cut to `max` characters.
pub fn clean_text(s: &str, max: usize) -> String {
    // Room for all of it, or for the most that can be kept (a char is at most 4 bytes).
    let mut out = String::with_capacity(s.len().min(max.saturating_mul(4).saturating_add(4)));
    let mut count = 0;
    for word in s.split_whitespace() {
        if count > 0 {
            out.push(' ');
            count += 1;
        }
        // Whole words while they fit (most of them): copied at once, not a char at a time.
        let chars = word.chars().count();
        if count + chars <= max {
            out.push_str(word);
            count += chars;
            continue;
        }
        for c in word.chars() {
            if count >= max {
                out.push('…');
                return out;
            }
            out.push(c);
            count += 1;
        }
    }
    out
}

thread_local! {
    /// Property names as JS strings, made once: a `&str` key is decoded on every use.
    static KEYS: std::cell::RefCell<Vec<(&'static str, JsValue)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `obj[key]`, with the key's JS string made once per walk's lifetime.
pub fn get(obj: &JsValue, key: &'static str) -> Option<JsValue> {
    KEYS.with(|keys| {
        let mut keys = keys.borrow_mut();
        let i = match keys.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                keys.push((key, JsValue::from_str(key)));
                keys.len() - 1
            }
        };
        js_sys::Reflect::get(obj, &keys[i].1).ok()
    })
}

/// The part of the window that shows the page: scrollbars excluded, since nothing under them can be seen or hit.
pub fn viewport(doc: &Document, win: &Window) -> (f64, f64) {
    let inner = (
        win.inner_width()
            .ok()
            .and_then(|v| v.as_f64())
            .unwrap_or(0.0),
        win.inner_height()
            .ok()
            .and_then(|v| v.as_f64())
            .unwrap_or(0.0),
    );
    match doc.document_element() {
        Some(root) if root.client_width() > 0 && root.client_height() > 0 => (
            f64::from(root.client_width()).min(inner.0),
            f64::from(root.client_height()).min(inner.1),
        ),
        _ => inner,
    }
}

#[cfg(test)]
mod tests {
    use super::{clean_text, Attrs, Utf16Cuts};

    #[test]
    fn text_is_collapsed_and_cut_by_characters() {
        assert_eq!(clean_text("  a\n\t bc   d ", 100), "a bc d");
        assert_eq!(clean_text("", 10), "");
        assert_eq!(clean_text("abc def", 7), "abc def");
        assert_eq!(clean_text("abc defg", 6), "abc de…");
        // Counted in characters, not bytes: the whole word fits.
        assert_eq!(clean_text("ééé ü", 5), "ééé ü");
        assert_eq!(clean_text("ééé üü", 5), "ééé ü…");
        assert_eq!(clean_text("abc", 3), "abc");
        assert_eq!(clean_text("abc d", 3), "abc …");
    }

    #[test]
    fn joined_strings_are_cut_by_utf16_units() {
        let mut cuts = Utf16Cuts::new("ab€😀cd");
        assert_eq!(cuts.take(2), "ab");
        assert_eq!(cuts.take(0), "");
        // € is one unit, 😀 two.
        assert_eq!(cuts.take(3), "€😀");
        assert_eq!(cuts.take(2), "cd");
        assert_eq!(cuts.take(5), "");
    }

    #[test]
    fn attributes_are_split_once_into_pairs() {
        let a = Attrs::parse("\0id\0main\0hidden\0\0aria-label\0Zoom ×2".to_owned());
        assert_eq!(a.get("id"), Some("main"));
        assert_eq!(a.get("hidden"), Some(""));
        assert_eq!(a.get("aria-label"), Some("Zoom ×2"));
        assert_eq!(a.get("role"), None);
        assert!(!a.is_empty());
        assert!(Attrs::parse(String::new()).is_empty());
    }
}
