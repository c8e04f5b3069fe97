//! The page as the agent sees it: a pruned, paint-ordered tree of what a person can see and use.
//!
//! The content script fills it (the background stitches in cross-origin frames) and the host
//! writes it out compactly for the model (the host's `agent/render.rs`). Each indexed element
//! carries its fingerprint, so an action decided on it can find its target again later.

use serde::{Deserialize, Serialize};

use crate::action::Fingerprint;

#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

/// One node of the pruned tree: an interactive element, a container kept for
/// structure (a frame, a shadow host, a dialog), or text between elements.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DomNode {
    /// Index the model uses to name this element; `None` for text, containers and occluded elements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    /// Lower-case tag name; `"#text"` for a text node.
    pub tag: String,
    /// Explicit or implicit ARIA role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Accessible name (aria-labelledby, aria-label, label, placeholder, title, alt, text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Visible text of a text node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// `type` of inputs and buttons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_type: Option<String>,
    /// Current value of form controls (never the value of a password field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub href: Option<String>,
    /// The origin a form control's form sends to, only when that is not the page's own: what
    /// is typed there and submitted leaves the site as surely as a link does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sends_to: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    /// Other attributes worth showing the model, e.g. `name`, `id`, `aria-haspopup`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attributes: Vec<(String, String)>,
    /// Among: checked, selected, disabled, expanded, collapsed, required, empty, invalid, readonly, focused.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub states: Vec<String>,
    /// In the top frame's viewport: an element's border box, a text's glyphs (the render
    /// lines text up with the element on its row by it).
    #[serde(default)]
    pub rect: Rect,
    #[serde(default)]
    pub in_viewport: bool,
    /// Covered by something painted above it (a modal, a banner): it gets no index.
    #[serde(default)]
    pub occluded: bool,
    /// A short description of what covers it, for action reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub occluded_by: Option<String>,
    /// The element scrolls its own content.
    #[serde(default)]
    pub scroll_container: bool,
    /// Rank in paint order: higher is painted later, i.e. on top.
    #[serde(default)]
    pub paint_order: u32,
    /// New since the previous observation of this tab.
    #[serde(default)]
    pub is_new: bool,
    /// Frame the node lives in, set on indexed nodes stitched in from cross-origin frames
    /// (actions on them go to that frame). On an `iframe` node: the frame its children
    /// came from, or -1 when its content could not be observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_id: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<Fingerprint>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<DomNode>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Observation {
    pub url: String,
    pub title: String,
    #[serde(default)]
    pub viewport: Rect,
    /// Scroll offset of the page.
    #[serde(default)]
    pub scroll_x: f64,
    #[serde(default)]
    pub scroll_y: f64,
    /// How much of the page lies above what is shown, in lengths of what scrolls it: the
    /// document's windows, or, where the document does not scroll (an app fixed to the
    /// window), the full-height pane under the middle of the window, which a scroll with no
    /// target moves.
    #[serde(default)]
    pub pages_above: f64,
    /// As `pages_above`, below.
    #[serde(default)]
    pub pages_below: f64,
    #[serde(default)]
    pub root: DomNode,
    /// Visible page text, bounded.
    #[serde(default)]
    pub text: String,
    /// How long the snapshot took in the page, in milliseconds.
    #[serde(default)]
    pub snapshot_ms: f64,
}

impl Observation {
    /// The node that carries `index`, if any.
    /// The target an action needs for the element numbered `index`: its index and fingerprint.
    pub fn target_at(&self, index: u32) -> Option<crate::Target> {
        let node = self.find_indexed(index)?;
        Some(crate::Target {
            index: node.index?,
            fingerprint: node.fingerprint.clone()?,
        })
    }

    pub fn find_indexed(&self, index: u32) -> Option<&DomNode> {
        fn walk(node: &DomNode, index: u32) -> Option<&DomNode> {
            if node.index == Some(index) {
                return Some(node);
            }
            node.children.iter().find_map(|c| walk(c, index))
        }
        walk(&self.root, index)
    }

    /// The address of frame `frame_id`: the `src` of the `iframe` it was stitched into (the
    /// page's own address for the top frame, 0).
    pub fn frame_src(&self, frame_id: i64) -> Option<&str> {
        if frame_id == 0 {
            return Some(&self.url);
        }
        fn find(node: &DomNode, frame_id: i64) -> Option<&DomNode> {
            if node.tag == "iframe" && node.frame_id == Some(frame_id) {
                return Some(node);
            }
            node.children.iter().find_map(|c| find(c, frame_id))
        }
        find(&self.root, frame_id).and_then(|n| n.href.as_deref())
    }

    /// Every indexed node, in tree order.
    pub fn indexed(&self) -> Vec<&DomNode> {
        fn walk<'a>(node: &'a DomNode, out: &mut Vec<&'a DomNode>) {
            if node.index.is_some() {
                out.push(node);
            }
            for c in &node.children {
                walk(c, out);
            }
        }
        let mut out = Vec::new();
        walk(&self.root, &mut out);
        out
    }
}

/// The deepest tree an observation carries, in nodes from its root. Each node is two levels of
/// JSON (the node and its `children`), and JSON readers stop at a depth (serde_json at 128): a
/// page nested deeper would not be read at all.
pub const MAX_TREE_DEPTH: usize = 48;

impl DomNode {
    /// Keeps the tree within `max` levels: the descendants of a node at level `max - 1` become
    /// its children, in document order, each without children of its own. Nothing is dropped;
    /// only the nesting below that level is lost.
    pub fn cap_depth(&mut self, max: usize) {
        let mut stack: Vec<(&mut DomNode, usize)> = vec![(self, 1)];
        while let Some((node, depth)) = stack.pop() {
            if depth + 1 >= max {
                let mut flat = Vec::new();
                let mut pending: Vec<DomNode> = node.children.drain(..).rev().collect();
                while let Some(mut n) = pending.pop() {
                    pending.extend(n.children.drain(..).rev());
                    flat.push(n);
                }
                node.children = flat;
            } else {
                stack.extend(node.children.iter_mut().map(|c| (c, depth + 1)));
            }
        }
    }
}

/// Bound on an observation's page text (bytes): the top frame's and its stitched frames' together.
pub const PAGE_TEXT_MAX: usize = 8_000;

/// Appends `piece` to page text, space-separated, keeping it within [`PAGE_TEXT_MAX`] (cut on a
/// character boundary). Text that arrives once the bound is reached is dropped.
pub fn push_page_text(text: &mut String, piece: &str) {
    if piece.is_empty() || text.len() >= PAGE_TEXT_MAX {
        return;
    }
    if !text.is_empty() {
        text.push(' ');
    }
    text.push_str(piece);
    if text.len() > PAGE_TEXT_MAX {
        let cut = (0..=PAGE_TEXT_MAX)
            .rev()
            .find(|i| text.is_char_boundary(*i))
            .unwrap_or(0);
        text.truncate(cut);
    }
}

#[cfg(test)]
mod page_text_tests {
    use super::*;

    #[test]
    fn a_deep_tree_is_flattened_below_the_cap_and_keeps_every_node_in_order() {
        let leaf = |i: u32| DomNode {
            tag: "a".into(),
            index: Some(i),
            ..Default::default()
        };
        let mut node = leaf(99);
        for i in (0..80).rev() {
            node = DomNode {
                tag: "div".into(),
                index: Some(i),
                children: vec![node, leaf(100 + i)],
                ..Default::default()
            };
        }
        let before = Observation {
            root: node.clone(),
            ..Default::default()
        }
        .indexed()
        .len();
        node.cap_depth(10);
        fn depth(n: &DomNode) -> usize {
            1 + n.children.iter().map(depth).max().unwrap_or(0)
        }
        assert_eq!(depth(&node), 10);
        let obs = Observation {
            root: node,
            ..Default::default()
        };
        let order: Vec<u32> = obs.indexed().iter().filter_map(|n| n.index).collect();
        assert_eq!(order.len(), before);
        // Document order: each div, its nested div's subtree, then its own link.
        assert_eq!(&order[..9], &[0, 1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(order.last(), Some(&100));
        let json = serde_json::to_string(&obs).unwrap();
        serde_json::from_str::<Observation>(&json).unwrap();
    }

    #[test]
    fn page_text_is_joined_and_cut_on_a_character_boundary() {
        let mut text = String::new();
        push_page_text(&mut text, "Top");
        push_page_text(&mut text, "");
        push_page_text(&mut text, "Inner");
        assert_eq!(text, "Top Inner");
        push_page_text(&mut text, &"é".repeat(PAGE_TEXT_MAX));
        assert!(text.len() <= PAGE_TEXT_MAX && text.len() >= PAGE_TEXT_MAX - 1);
        assert!(text.ends_with('é'));
        let full = text.clone();
        push_page_text(&mut text, "more");
        assert_eq!(text, full, "nothing joins a full page text");
    }
}
