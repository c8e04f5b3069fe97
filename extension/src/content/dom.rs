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

// Batched reads: one crossing per node instead of one per fact (see read.js).
#[wasm_bindgen(module = "/src/content/read.js")]
extern "C" {
    fn bind(memory: &JsValue, ptr: u32, tags: &str);
    #[wasm_bindgen(js_name = readNode)]
    fn read_node_js(node: &Node, win: &Window, styled: bool, want_text: bool) -> Option<String>;
    #[wasm_bindgen(js_name = readFirst)]
    fn read_first_js(parent: &Node, win: &Window, styled: bool, want_text: bool) -> Option<Node>;
    #[wasm_bindgen(js_name = readNext)]
    fn read_next_js(node: &Node, win: &Window, styled: bool, want_text: bool) -> Option<Node>;
    #[wasm_bindgen(js_name = takeString)]
    fn take_string_js() -> Option<String>;
    #[wasm_bindgen(js_name = readAttributes)]
    fn read_attributes_js(el: &Element) -> String;
    #[wasm_bindgen(js_name = readCandidate)]
    fn read_candidate_js(
        el: &Element,
        left: f64,
        top: f64,
        right: f64,
        bottom: f64,
    ) -> Option<String>;
    #[wasm_bindgen(js_name = readRect)]
    fn read_rect_js(el: &Element);
    #[wasm_bindgen(js_name = isVisible)]
    fn is_visible_js(el: &Element) -> bool;
    #[wasm_bindgen(js_name = readTextRect)]
    fn read_text_rect_js(range: &Range, node: &Node);
    #[wasm_bindgen(js_name = readPaint)]
    fn read_paint_js(el: &Element, win: &Window);
    /// Whether the element scrolls its content vertically (and has content to scroll).
    #[wasm_bindgen(js_name = readScrolls)]
    pub fn read_scrolls(el: &Element, win: &Window) -> bool;
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

/// Where read.js writes numbers. Single-threaded wasm; read right after each call.
static mut FACTS: [f64; 8] = [0.0; 8];

thread_local! {
    static BOUND: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The numbers the last read wrote.
fn facts() -> [f64; 8] {
    // SAFETY: wasm32 here is single-threaded and read.js only writes during the calls above.
    unsafe { std::ptr::addr_of!(FACTS).read_volatile() }
}

/// Tells read.js where `FACTS` is, once.
fn ensure_bound() {
    if !BOUND.with(|b| b.replace(true)) {
        bind(
            &wasm_bindgen::memory(),
            std::ptr::addr_of!(FACTS) as u32,
            &TAGS.join(","),
        );
    }
}

/// Whether a person could see the element at all (not whether something covers it):
/// `checkVisibility` with opacity and the `visibility` property checked.
pub fn is_visible(el: &Element) -> bool {
    is_visible_js(el)
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

    fn parse(raw: String) -> Self {
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
}

impl Display {
    fn from_code(code: f64) -> Self {
        match code as u8 {
            0 => Self::None,
            1 => Self::Contents,
            2 => Self::Block,
            3 => Self::FlexOrGrid,
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
    pub has_children: bool,
    pub open_shadow: bool,
    pub child_elements: u32,
}

/// What a node is, read in one crossing.
pub enum NodeFacts {
    Element(ElementFacts),
    /// A text node: its text, unless it is only whitespace or was not wanted.
    Text(Option<String>),
    Other,
}

/// `styled`: read an element's computed style too; `want_text`: read a text node's text.
pub fn read_node(node: &Node, win: &Window, styled: bool, want_text: bool) -> NodeFacts {
    ensure_bound();
    let text = read_node_js(node, win, styled, want_text);
    node_facts(text)
}

/// What `readNode` wrote (buffer[6]: the node's type) and returned.
fn node_facts(text: Option<String>) -> NodeFacts {
    match facts()[6] as u8 {
        1 => NodeFacts::Element(element_facts(text)),
        3 => NodeFacts::Text(text),
        _ => NodeFacts::Other,
    }
}

/// The first child of `parent` the walk has a use for (nodes that would read as
/// [`NodeFacts::Other`] or `Text(None)` are passed over) and what it is, in one crossing for
/// most nodes (see read.js `readFirst`).
pub fn read_first(
    parent: &Node,
    win: &Window,
    styled: bool,
    want_text: bool,
) -> Option<(Node, NodeFacts)> {
    ensure_bound();
    let node = read_first_js(parent, win, styled, want_text)?;
    Some((node, stepped_facts()))
}

/// The next sibling of `node` the walk has a use for, and what it is, as [`read_first`].
pub fn read_next(
    node: &Node,
    win: &Window,
    styled: bool,
    want_text: bool,
) -> Option<(Node, NodeFacts)> {
    ensure_bound();
    let node = read_next_js(node, win, styled, want_text)?;
    Some((node, stepped_facts()))
}

/// Decodes what `readFirst`/`readNext` wrote, fetching their string only when there is one.
fn stepped_facts() -> NodeFacts {
    let text = (facts()[7] != 0.0).then(take_string_js).flatten();
    node_facts(text)
}

/// Decodes what `readElement` wrote and returned.
fn element_facts(text: Option<String>) -> ElementFacts {
    let text = text.unwrap_or_default();
    let out = facts();
    let code = out[5] as usize;
    let (tag, attrs) = match code.checked_sub(1).and_then(|i| TAGS.get(i)) {
        Some(tag) => (std::borrow::Cow::Borrowed(*tag), Attrs::parse(text)),
        None => {
            let mut tag = text;
            let attrs = match tag.find('\0') {
                Some(i) => Attrs::parse(tag.split_off(i)),
                None => Attrs::default(),
            };
            (std::borrow::Cow::Owned(tag), attrs)
        }
    };
    ElementFacts {
        tag,
        attrs,
        display: Display::from_code(out[0]),
        pointer: out[1] != 0.0,
        has_children: out[2] != 0.0,
        open_shadow: out[3] != 0.0,
        child_elements: out[4] as u32,
    }
}

/// Everything the walk asks of a candidate, in one crossing: its border box and, when that
/// meets `reach` (or there is no bound), all its attributes and whether it is visible (as
/// [`is_visible`]).
pub fn read_candidate(el: &Element, reach: Option<Bounds>) -> (Box4, Option<(Attrs, bool)>) {
    ensure_bound();
    let r = reach.unwrap_or(Bounds::EVERYWHERE);
    let attrs = read_candidate_js(el, r.left, r.top, r.right, r.bottom);
    let out = facts();
    let rect = (out[0], out[1], out[2], out[3]);
    let rest = attrs.map(|a| (Attrs::parse(a), out[4] != 0.0));
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

pub fn read_rect(el: &Element) -> Box4 {
    ensure_bound();
    read_rect_js(el);
    let out = facts();
    (out[0], out[1], out[2], out[3])
}

/// Where a text node's text is drawn, measured with a range reused across the walk.
pub fn read_text_rect(range: &Range, node: &Node) -> Box4 {
    ensure_bound();
    read_text_rect_js(range, node);
    let out = facts();
    (out[0], out[1], out[2], out[3])
}

/// Computed style that decides painting (see paint.rs).
pub struct PaintFacts {
    pub positioned: bool,
    pub fixed_or_sticky: bool,
    pub z_index: Option<i32>,
    pub opacity: f64,
    pub transform: bool,
    pub filter: bool,
    pub isolate: bool,
    pub display: Display,
}

pub fn read_paint(el: &Element, win: &Window) -> PaintFacts {
    ensure_bound();
    read_paint_js(el, win);
    let out = facts();
    let position = out[0] as u8;
    PaintFacts {
        positioned: position != 0,
        fixed_or_sticky: position >= 3,
        z_index: (!out[1].is_nan()).then_some(out[1] as i32),
        opacity: out[2],
        transform: out[3] != 0.0,
        filter: out[4] != 0.0,
        isolate: out[5] != 0.0,
        display: Display::from_code(out[6]),
    }
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
    let mut node = Some(inner.clone());
    for _ in 0..4096 {
        let Some(n) = node else { return false };
        if &n == outer {
            return true;
        }
        // A shadow root's parent is its host (checked by node type: another realm's
        // roots fail `instanceof`).
        node = n.parent_node().or_else(|| {
            (n.node_type() == Node::DOCUMENT_FRAGMENT_NODE)
                .then(|| get(&n, "host"))
                .flatten()
                .filter(|h| h.is_object())
                .map(JsCast::unchecked_into)
        });
    }
    false
}

pub fn attr(el: &Element, name: &str) -> Option<String> {
    el.get_attribute(name)
}

/// Whitespace collapsed and trimmed, cut to `max` characters.
pub fn clean_text(s: &str, max: usize) -> String {
    let mut out = String::new();
    let mut count = 0;
    for word in s.split_whitespace() {
        if count > 0 {
            out.push(' ');
            count += 1;
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

#[cfg(test)]
mod tests {
    use super::Attrs;

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
