//! One walk of a frame's document: the pruned tree of what a person can see and use.
//!
//! Hidden subtrees are cut as soon as they are met (`checkVisibility`), so
//! their text never leaks; interactive elements are hit-tested for occlusion
//! and indexed only when usable; text is kept only where it shows. Open and
//! closed shadow roots are walked through their slots as rendered, and
//! same-origin iframes in place, offset by the iframe's position.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

use itinero_shared::observation::{DomNode, Observation, Rect};
use itinero_shared::Fingerprint;
use wasm_bindgen::JsCast;
use web_sys::{Document, Element, HtmlIFrameElement, Node, Window};

use super::dom::{attr, clean_text, is_visible, shadow_root};
use super::occlusion;
use super::paint;
use super::semantics;

/// Bound on the page text sent with an observation.
const PAGE_TEXT_MAX: usize = 8_000;
const TEXT_RUN_MAX: usize = 300;
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
}

/// Per-document context: which frame, where it sits in the top viewport, what its ancestors imply.
#[derive(Clone)]
struct Ctx {
    doc: Document,
    win: Window,
    viewport: (f64, f64),
    /// Offset of this frame's viewport in the top frame's.
    offset: (f64, f64),
    /// This document's vertical scroll, read once per walk: it does not change while walking.
    scroll_y: f64,
    /// The iframe showing this document is covered: so is everything in it.
    covered: bool,
    inert: bool,
    /// Parent has a pointer cursor: children inherit it without being click targets themselves.
    parent_pointer: bool,
    path: String,
    frame_path: Vec<i64>,
    /// Paint key of the stacking context (or positioned box) the children are painted in.
    paint: paint::Key,
    parent_flex_or_grid: bool,
}

struct Walk<'a> {
    next_index: u32,
    indexed: Vec<(Element, Fingerprint)>,
    previous: Option<&'a HashSet<u64>>,
    seen: HashSet<u64>,
    text: String,
    top_viewport: (f64, f64),
    /// Document order, for paint keys.
    order: u32,
    /// Paint key of each interactive node, by its provisional `paint_order`.
    paint_keys: Vec<paint::Key>,
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
        self.indexed.get(index as usize)
    }

    /// Every indexed element of the last observation.
    pub fn all_indexed(&self) -> &[(Element, Fingerprint)] {
        &self.indexed
    }

    pub fn observe(&mut self, win: &Window) -> Observation {
        let perf = win.performance();
        let t0 = perf.as_ref().map(|p| p.now()).unwrap_or(0.0);
        let doc = win.document().expect("a window has a document");
        let (vw, vh) = viewport(&doc, win);
        let mut walk = Walk {
            next_index: 0,
            indexed: Vec::new(),
            order: 0,
            paint_keys: Vec::new(),
            previous: self.previous.as_ref(),
            seen: HashSet::new(),
            text: String::new(),
            top_viewport: (vw, vh),
        };
        let ctx = Ctx {
            doc: doc.clone(),
            win: win.clone(),
            viewport: (vw, vh),
            offset: (0.0, 0.0),
            scroll_y: win.scroll_y().unwrap_or(0.0),
            covered: false,
            inert: false,
            parent_pointer: false,
            path: String::new(),
            frame_path: Vec::new(),
            paint: paint::Key::default(),
            parent_flex_or_grid: false,
        };
        let mut children = Vec::new();
        if let Some(body) = doc.body() {
            walk.children(body.unchecked_ref(), &ctx, &mut children);
        }
        let seen = std::mem::take(&mut walk.seen);
        let text = std::mem::take(&mut walk.text);
        let indexed = std::mem::take(&mut walk.indexed);
        let ranks = paint::ranks(&walk.paint_keys);
        for child in &mut children {
            apply_ranks(child, &ranks);
        }
        self.previous = Some(seen);
        self.indexed = indexed;
        let scroll_x = win.scroll_x().unwrap_or(0.0);
        let scroll_y = ctx.scroll_y;
        let full_height = doc
            .document_element()
            .map(|e| f64::from(e.scroll_height()))
            .unwrap_or(vh);
        let below = ((full_height - scroll_y - vh) / vh.max(1.0)).max(0.0);
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
            pages_above: (scroll_y / vh.max(1.0) * 10.0).round() / 10.0,
            pages_below: (below * 10.0).round() / 10.0,
            root: DomNode {
                tag: "body".into(),
                children,
                ..Default::default()
            },
            text,
            snapshot_ms: perf.map(|p| p.now() - t0).unwrap_or(0.0),
        }
    }
}

impl Walk<'_> {
    /// Walks the rendered children of `parent` (slots resolved), appending kept nodes to `out`.
    fn children(&mut self, parent: &Node, ctx: &Ctx, out: &mut Vec<DomNode>) {
        let mut counts: HashMap<String, u32> = HashMap::new();
        let mut child = parent.first_child();
        while let Some(node) = child {
            child = node.next_sibling();
            self.node(&node, ctx, &mut counts, out);
        }
    }

    fn node(
        &mut self,
        node: &Node,
        ctx: &Ctx,
        counts: &mut HashMap<String, u32>,
        out: &mut Vec<DomNode>,
    ) {
        match node.node_type() {
            Node::ELEMENT_NODE => self.element(node.unchecked_ref(), ctx, counts, out),
            Node::TEXT_NODE => self.text_node(node, ctx, out),
            _ => {}
        }
    }

    fn text_node(&mut self, node: &Node, ctx: &Ctx, out: &mut Vec<DomNode>) {
        let raw = node.text_content().unwrap_or_default();
        if raw.trim().is_empty() || ctx.covered {
            return;
        }
        let Some(parent) = node.parent_element() else {
            return;
        };
        // Where the text actually is: a range over it, hit-tested at its centre.
        let rect = ctx.doc.create_range().ok().and_then(|r| {
            r.select_node_contents(node).ok()?;
            Some(r.get_bounding_client_rect())
        });
        if let Some(r) = &rect {
            if r.width() < 2.0 || r.height() < 2.0 {
                return;
            }
            if r.right() <= 0.0 || r.bottom() + ctx.scroll_y <= 0.0 {
                return;
            }
            let (cx, cy) = (r.x() + r.width() / 2.0, r.y() + r.height() / 2.0);
            if !occlusion::text_visible_at(&ctx.doc, &parent, cx, cy, ctx.viewport) {
                return;
            }
        }
        let text = clean_text(&raw, TEXT_RUN_MAX);
        if self.text.len() < PAGE_TEXT_MAX {
            if !self.text.is_empty() {
                self.text.push(' ');
            }
            self.text.push_str(&text);
            if self.text.len() > PAGE_TEXT_MAX {
                let cut = (0..=PAGE_TEXT_MAX)
                    .rev()
                    .find(|i| self.text.is_char_boundary(*i))
                    .unwrap_or(0);
                self.text.truncate(cut);
            }
        }
        out.push(DomNode {
            tag: "#text".into(),
            text: Some(text),
            ..Default::default()
        });
    }

    fn element(
        &mut self,
        el: &Element,
        ctx: &Ctx,
        counts: &mut HashMap<String, u32>,
        out: &mut Vec<DomNode>,
    ) {
        let tag = el.local_name();
        if SKIPPED.contains(&tag.as_str()) {
            return;
        }
        let nth = {
            let c = counts.entry(tag.clone()).or_insert(0);
            *c += 1;
            *c - 1
        };
        let path = format!("{}>{}[{}]", ctx.path, tag, nth);
        if tag == "slot" {
            // Rendered content of a slot: its assigned nodes, else its fallback children.
            let assigned = js_sys::Reflect::get(el, &"assignedNodes".into())
                .ok()
                .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
                .and_then(|f| {
                    let opts = js_sys::Object::new();
                    let _ = js_sys::Reflect::set(
                        &opts,
                        &"flatten".into(),
                        &wasm_bindgen::JsValue::TRUE,
                    );
                    f.call1(el, &opts).ok()
                })
                .map(|v| js_sys::Array::from(&v))
                .unwrap_or_default();
            let inner = Ctx {
                path,
                ..ctx.clone()
            };
            if assigned.length() == 0 {
                self.children(el.unchecked_ref(), &inner, out);
            } else {
                let mut slot_counts = HashMap::new();
                for n in assigned.iter() {
                    self.node(n.unchecked_ref(), &inner, &mut slot_counts, out);
                }
            }
            return;
        }
        if !is_visible(el) {
            // display:contents boxes are "invisible" themselves while their children render.
            let contents = ctx
                .win
                .get_computed_style(el)
                .ok()
                .flatten()
                .and_then(|s| s.get_property_value("display").ok())
                .is_some_and(|d| d == "contents");
            if contents {
                let inner = Ctx {
                    path,
                    ..ctx.clone()
                };
                self.children(el.unchecked_ref(), &inner, out);
            }
            return;
        }
        let r = el.get_bounding_client_rect();
        let (x, y, w, h) = (r.x(), r.y(), r.width(), r.height());
        // Placed where no scrolling reaches (left of the page, above its top): nobody sees it.
        let offscreen = x + w <= 0.0 || y + h + ctx.scroll_y <= 0.0;
        let tiny = w < 2.0 || h < 2.0;
        let inert = ctx.inert || el.has_attribute("inert");
        let style = ctx.win.get_computed_style(el).ok().flatten();
        let pointer = style
            .as_ref()
            .and_then(|s| s.get_property_value("cursor").ok())
            .is_some_and(|c| c == "pointer");
        self.order += 1;
        let painting = style
            .as_ref()
            .map(|s| paint::classify(s, ctx.parent_flex_or_grid, self.order));
        let paint_key: paint::Key = {
            let mut k = (*ctx.paint).clone();
            if let Some(p) = &painting {
                k.push(p.step);
            }
            std::rc::Rc::new(k)
        };
        let overflow_scrolls = style.as_ref().is_some_and(|s| {
            let o = s.get_property_value("overflow-y").unwrap_or_default();
            (o == "auto" || o == "scroll") && el.scroll_height() > el.client_height() + 1
        });
        let itype = semantics::input_type(el);
        let role = semantics::role(el, &tag, itype.as_deref());
        let interactive = !inert
            && !offscreen
            && !tiny
            && semantics::is_interactive(el, &tag, role.as_deref(), pointer && !ctx.parent_pointer);
        let top_rect = Rect {
            x: px(x + ctx.offset.0),
            y: px(y + ctx.offset.1),
            width: px(w),
            height: px(h),
        };
        let in_viewport = top_rect.x < self.top_viewport.0
            && top_rect.y < self.top_viewport.1
            && top_rect.x + top_rect.width > 0.0
            && top_rect.y + top_rect.height > 0.0;
        let is_frame = tag == "iframe" || tag == "frame";

        let mut node = DomNode {
            tag: tag.clone(),
            rect: top_rect,
            in_viewport,
            scroll_container: overflow_scrolls,
            ..Default::default()
        };
        let mut covered = ctx.covered;
        if (interactive || is_frame) && in_viewport && !ctx.covered {
            let occ = occlusion::test(&ctx.doc, el, (x, y, w, h), ctx.viewport);
            if occ.clipped {
                return;
            }
            node.occluded = occ.occluded;
            node.occluded_by = occ.by;
            covered = occ.occluded;
        } else if ctx.covered {
            node.occluded = true;
        }
        if interactive {
            let name = semantics::accessible_name(&ctx.doc, el, &tag, itype.as_deref());
            let fingerprint = Fingerprint {
                tag: tag.clone(),
                role: role.clone(),
                name: name.clone(),
                id: attr(el, "id").filter(|v| !v.is_empty()),
                name_attr: attr(el, "name").filter(|v| !v.is_empty()),
                test_id: attr(el, "data-testid")
                    .or_else(|| attr(el, "data-test-id"))
                    .or_else(|| attr(el, "data-test")),
                aria_label: attr(el, "aria-label").filter(|v| !v.is_empty()),
                text: None,
                path: path.clone(),
                frame_path: ctx.frame_path.clone(),
            };
            let key = fingerprint_key(&fingerprint);
            node.is_new = self.previous.is_some_and(|p| !p.contains(&key));
            self.seen.insert(key);
            node.role = role;
            node.name = name;
            node.input_type = itype.clone();
            node.value = semantics::value(el, &tag, itype.as_deref());
            node.href = (tag == "a")
                .then(|| attr(el, "href"))
                .flatten()
                .and_then(|_| {
                    js_sys::Reflect::get(el, &"href".into())
                        .ok()
                        .and_then(|v| v.as_string())
                });
            node.placeholder = attr(el, "placeholder").filter(|v| !v.is_empty());
            for a in ["name", "id", "aria-haspopup", "aria-controls"] {
                if let Some(v) = attr(el, a).filter(|v| !v.is_empty()) {
                    node.attributes.push((a.to_owned(), v));
                }
            }
            node.states = semantics::states(&ctx.doc, el, &tag, itype.as_deref());
            if !node.occluded {
                node.index = Some(self.next_index);
                self.next_index += 1;
                self.indexed.push((el.clone(), fingerprint.clone()));
            }
            node.fingerprint = Some(fingerprint);
            node.paint_order = self.paint_keys.len() as u32;
            self.paint_keys.push(paint_key.clone());
        }

        let inner = Ctx {
            covered,
            inert,
            parent_pointer: pointer,
            path: path.clone(),
            paint: if painting.as_ref().is_some_and(|p| p.groups_children) {
                paint_key
            } else {
                ctx.paint.clone()
            },
            parent_flex_or_grid: style.as_ref().is_some_and(paint::is_flex_or_grid),
            ..ctx.clone()
        };
        let mut kids = Vec::new();
        if is_frame {
            self.frame(el, (x, y), &inner, &mut kids);
        } else if let Some(root) = shadow_root(el) {
            let shadow = Ctx {
                path: format!("{path}/shadow"),
                ..inner
            };
            self.children(root.unchecked_ref(), &shadow, &mut kids);
        } else if (!tiny || el.child_element_count() > 0)
            && !matches!(tag.as_str(), "select" | "textarea" | "option")
        {
            // A tiny box's own text is visually hidden (the sr-only pattern); its positioned children may not be.
            let mut walked = Vec::new();
            self.children(el.unchecked_ref(), &inner, &mut walked);
            if tiny {
                walked.retain(|n| n.tag != "#text");
            }
            kids = walked;
        }

        if interactive {
            node.children = kids;
            out.push(node);
        } else if is_frame || (el.shadow_root().is_some() && !kids.is_empty()) || tag == "dialog" {
            if !kids.is_empty() {
                node.children = kids;
                node.occluded = false;
                out.push(node);
            }
        } else {
            // Plain containers are flattened away: their kept content joins the parent's.
            out.extend(kids);
        }
    }

    /// Walks a same-origin iframe's document in place; cross-origin frames report through their own content script.
    fn frame(&mut self, el: &Element, (x, y): (f64, f64), ctx: &Ctx, out: &mut Vec<DomNode>) {
        let Some(iframe) = el.dyn_ref::<HtmlIFrameElement>() else {
            return;
        };
        let (Some(doc), Some(win)) = (iframe.content_document(), iframe.content_window()) else {
            return;
        };
        let Some(body) = doc.body() else { return };
        let (vw, vh) = viewport(&doc, &win);
        let scroll_y = win.scroll_y().unwrap_or(0.0);
        let inner = Ctx {
            doc,
            win,
            viewport: (vw, vh),
            offset: (
                ctx.offset.0 + x + f64::from(el.client_left()),
                ctx.offset.1 + y + f64::from(el.client_top()),
            ),
            path: format!("{}/frame", ctx.path),
            scroll_y,
            parent_pointer: false,
            ..ctx.clone()
        };
        self.children(body.unchecked_ref(), &inner, out);
    }
}
