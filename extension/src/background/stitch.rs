//! One tree for a tab from the observations of its frames.
//!
//! The top frame's walk leaves a placeholder where a cross-origin iframe sits
//! (a node with `frame_id` and no children; its rect is the iframe's content
//! area, in the top frame's viewport). Each such frame is then observed by its
//! own content script, placed in the top frame's terms (`ObserveFrame`), and
//! its nodes are spliced under the placeholder. Frames are observed one after
//! the other, so each starts its indices after everything seen before it.

use itinero_shared::observation::{DomNode, Observation};

use crate::frame_protocol::ObserveFrame;

/// Page text bound, as in the content script's walk.
const PAGE_TEXT_MAX: usize = 8_000;

/// A frame still to observe, and where its nodes go.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    pub frame_id: i64,
    pub placement: ObserveFrame,
    /// Child positions from the root to its placeholder.
    at: Vec<usize>,
}

/// The frames waiting behind placeholders in `obs`, which was observed with `placed`.
/// `under` is where `obs`'s root sits in the stitched tree (empty for the top frame).
pub fn pending(obs: &Observation, placed: &ObserveFrame, under: &[usize]) -> Vec<Pending> {
    let top_viewport = placed
        .top_viewport
        .unwrap_or((obs.viewport.width, obs.viewport.height));
    let mut out = Vec::new();
    let mut at = under.to_vec();
    collect(&obs.root, placed, top_viewport, &mut at, &mut out);
    out
}

fn collect(
    node: &DomNode,
    placed: &ObserveFrame,
    top_viewport: (f64, f64),
    at: &mut Vec<usize>,
    out: &mut Vec<Pending>,
) {
    for (i, child) in node.children.iter().enumerate() {
        at.push(i);
        match child.frame_id {
            Some(frame_id) if child.children.is_empty() && child.fingerprint.is_none() => {
                let mut frame_path = placed.frame_path.clone();
                frame_path.push(frame_id);
                out.push(Pending {
                    frame_id,
                    placement: ObserveFrame {
                        base_index: 0,
                        offset: (child.rect.x, child.rect.y),
                        top_viewport: Some(top_viewport),
                        covered: placed.covered || child.occluded,
                        frame_id: Some(frame_id),
                        frame_path,
                    },
                    at: at.clone(),
                });
            }
            _ => collect(child, placed, top_viewport, at, out),
        }
        at.pop();
    }
}

/// One past the highest index in `obs` (at least `floor`): where the next frame's indices start.
pub fn next_index(obs: &Observation, floor: u32) -> u32 {
    fn walk(n: &DomNode, max: &mut u32) {
        if let Some(i) = n.index {
            *max = (*max).max(i + 1);
        }
        n.children.iter().for_each(|c| walk(c, max));
    }
    let mut max = floor;
    walk(&obs.root, &mut max);
    max
}

/// Puts `frame`'s nodes under its placeholder in `into`, and its text after the page's.
pub fn splice(into: &mut Observation, pending: &Pending, frame: Observation) {
    let mut node = &mut into.root;
    for &i in &pending.at {
        match node.children.get_mut(i) {
            Some(child) => node = child,
            None => return,
        }
    }
    node.children = frame.root.children;
    if !frame.text.is_empty() && into.text.len() < PAGE_TEXT_MAX {
        if !into.text.is_empty() {
            into.text.push(' ');
        }
        into.text.push_str(&frame.text);
        if into.text.len() > PAGE_TEXT_MAX {
            let cut = (0..=PAGE_TEXT_MAX)
                .rev()
                .find(|i| into.text.is_char_boundary(*i))
                .unwrap_or(0);
            into.text.truncate(cut);
        }
    }
}

/// Where the root of `pending`'s frame sits in the stitched tree (for its own placeholders).
pub fn position(pending: &Pending) -> &[usize] {
    &pending.at
}

#[cfg(test)]
mod tests {
    use super::*;
    use itinero_shared::observation::Rect;

    fn node(tag: &str, index: Option<u32>, children: Vec<DomNode>) -> DomNode {
        DomNode {
            tag: tag.into(),
            index,
            children,
            ..Default::default()
        }
    }

    fn placeholder(frame_id: i64, x: f64, y: f64, occluded: bool) -> DomNode {
        DomNode {
            tag: "iframe".into(),
            frame_id: Some(frame_id),
            rect: Rect {
                x,
                y,
                width: 100.0,
                height: 50.0,
            },
            occluded,
            ..Default::default()
        }
    }

    fn observation(children: Vec<DomNode>, text: &str) -> Observation {
        Observation {
            root: node("body", None, children),
            text: text.into(),
            viewport: Rect {
                x: 0.0,
                y: 0.0,
                width: 1280.0,
                height: 720.0,
            },
            ..Default::default()
        }
    }

    #[test]
    fn frames_are_placed_numbered_and_spliced_in_order() {
        let mut top = observation(
            vec![
                node("button", Some(0), vec![]),
                node("div", None, vec![placeholder(7, 640.0, 80.0, false)]),
                placeholder(9, 40.0, 420.0, true),
                node("a", Some(1), vec![]),
            ],
            "Top",
        );
        let placed = ObserveFrame::default();
        let frames = pending(&top, &placed, &[]);
        assert_eq!(frames.len(), 2);
        assert_eq!(frames[0].frame_id, 7);
        assert_eq!(frames[0].placement.offset, (640.0, 80.0));
        assert_eq!(frames[0].placement.top_viewport, Some((1280.0, 720.0)));
        assert_eq!(frames[0].placement.frame_path, vec![7]);
        assert!(!frames[0].placement.covered);
        assert!(
            frames[1].placement.covered,
            "an occluded iframe covers its content"
        );

        let mut next = next_index(&top, 0);
        assert_eq!(next, 2);
        let mut first = frames[0].clone();
        first.placement.base_index = next;
        let child = observation(
            vec![
                node("input", Some(2), vec![]),
                placeholder(11, 650.0, 90.0, false),
            ],
            "Inner",
        );
        let nested = pending(&child, &first.placement, position(&first));
        next = next_index(&child, next);
        splice(&mut top, &first, child);
        assert_eq!(next, 3);
        assert_eq!(nested.len(), 1);
        assert_eq!(nested[0].placement.frame_path, vec![7, 11]);

        // The nested frame's placeholder is found where the splice put it.
        let grandchild = observation(vec![node("button", Some(3), vec![])], "");
        splice(&mut top, &nested[0], grandchild);
        let inner = &top.root.children[1].children[0];
        assert_eq!(inner.children[0].index, Some(2));
        assert_eq!(inner.children[1].children[0].index, Some(3));
        assert_eq!(top.text, "Top Inner");
    }
}
