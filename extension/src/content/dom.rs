//! DOM calls web-sys lacks, and small helpers that keep boundary crossings cheap.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Document, Element, Node, ShadowRoot};

#[wasm_bindgen]
extern "C" {
    /// `Element.checkVisibility()`: one call answers display/visibility/opacity/content-visibility.
    #[wasm_bindgen(extends = Element)]
    pub type VisibilityCheck;

    #[wasm_bindgen(method, js_name = checkVisibility)]
    fn check_visibility(this: &VisibilityCheck, options: &JsValue) -> bool;

    /// `chrome.dom.openOrClosedShadowRoot`: content scripts may see closed shadow roots.
    #[wasm_bindgen(js_namespace = ["chrome", "dom"], js_name = openOrClosedShadowRoot, catch)]
    fn open_or_closed_shadow_root(element: &Element) -> Result<JsValue, JsValue>;
}

thread_local! {
    static VISIBILITY_OPTIONS: JsValue = {
        let o = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&o, &"checkOpacity".into(), &JsValue::TRUE);
        let _ = js_sys::Reflect::set(&o, &"checkVisibilityCSS".into(), &JsValue::TRUE);
        o.into()
    };
}

/// Whether a person could see the element at all (not whether something covers it).
pub fn is_visible(el: &Element) -> bool {
    VISIBILITY_OPTIONS.with(|o| el.unchecked_ref::<VisibilityCheck>().check_visibility(o))
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
    open_or_closed_shadow_root(el)
        .ok()
        .and_then(|r| r.dyn_into::<ShadowRoot>().ok())
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
        node = n.parent_node().or_else(|| {
            n.dyn_ref::<ShadowRoot>()
                .map(|r| r.host().unchecked_into::<Node>())
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
