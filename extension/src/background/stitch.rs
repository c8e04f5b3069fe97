//! One tree for a tab from the observations of its frames.
//!
//! The top frame's walk leaves a placeholder where a cross-origin iframe sits
//! (`frame_id` [`UNSTITCHED`], its `src` as `href`, its content box as `rect`,
//! in the top frame's viewport). Which of the tab's frames it is gets decided
//! here ([`best_match`]); that frame is then observed by its own content
//! script, placed in the top frame's terms (`ObserveFrame`), and its nodes are
//! spliced under the placeholder. Frames are observed one after the other, so
//! each starts its indices after everything seen before it.

use itinero_shared::observation::{push_page_text, DomNode, Observation};

use crate::frame_protocol::{ObserveFrame, UNSTITCHED};

/// A frame still to observe, and where its nodes go.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    /// The frame whose walk left the placeholder.
    pub parent_frame: i64,
    /// The iframe's `src`.
    pub src: String,
    /// The iframe's content box: the child frame's viewport size.
    pub size: (f64, f64),
    pub placement: ObserveFrame,
    /// Child positions from the root to its placeholder.
    at: Vec<usize>,
}

impl Pending {
    /// Decides which frame this is.
    pub fn assign(&mut self, frame_id: i64) {
        self.placement.frame_id = Some(frame_id);
        self.placement.frame_path.push(frame_id);
    }

    /// Where the root of this frame sits in the stitched tree (for its own placeholders).
    pub fn position(&self) -> &[usize] {
        &self.at
    }
}

/// A frame of the tab as the browser lists it, with what its content script said about itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub frame_id: i64,
    pub url: String,
    pub viewport: (f64, f64),
}

/// The candidate a placeholder most likely is: same URL and same size, then
/// same size, then same URL (the frame may have navigated), then the first.
pub fn best_match<'a>(pending: &Pending, candidates: &'a [Candidate]) -> Option<&'a Candidate> {
    let same_size = |c: &Candidate| {
        (c.viewport.0 - pending.size.0).abs() <= 1.0 && (c.viewport.1 - pending.size.1).abs() <= 1.0
    };
    let score = |c: &Candidate| 2 * u8::from(same_size(c)) + u8::from(c.url == pending.src);
    // `max_by_key` keeps the last of equals; the first in the browser's order should win.
    candidates.iter().rev().max_by_key(|c| score(c))
}

/// The frames waiting behind placeholders in `obs`, which frame `frame_id` produced
/// placed as `placed`. `under` is where `obs`'s root sits in the stitched tree (empty
/// for the top frame).
pub fn pending(
    obs: &Observation,
    frame_id: i64,
    placed: &ObserveFrame,
    under: &[usize],
) -> Vec<Pending> {
    let top_viewport = placed
        .top_viewport
        .unwrap_or((obs.viewport.width, obs.viewport.height));
    let mut out = Vec::new();
    let mut at = under.to_vec();
    let parent = Parent {
        frame_id,
        placed,
        top_viewport,
    };
    collect(&obs.root, &parent, &mut at, &mut out);
    out
}

struct Parent<'a> {
    frame_id: i64,
    placed: &'a ObserveFrame,
    top_viewport: (f64, f64),
}

fn collect(node: &DomNode, parent: &Parent, at: &mut Vec<usize>, out: &mut Vec<Pending>) {
    for (i, child) in node.children.iter().enumerate() {
        at.push(i);
        if child.frame_id == Some(UNSTITCHED) {
            out.push(Pending {
                parent_frame: parent.frame_id,
                src: child.href.clone().unwrap_or_default(),
                size: (child.rect.width, child.rect.height),
                placement: ObserveFrame {
                    base_index: 0,
                    offset: (child.rect.x, child.rect.y),
                    top_viewport: Some(parent.top_viewport),
                    covered: parent.placed.covered || child.occluded,
                    frame_id: None,
                    frame_path: parent.placed.frame_path.clone(),
                },
                at: at.clone(),
            });
        } else {
            collect(child, parent, at, out);
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
    node.frame_id = pending.placement.frame_id;
    node.children = frame.root.children;
    push_page_text(&mut into.text, &frame.text);
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

    fn placeholder(src: &str, x: f64, y: f64, occluded: bool) -> DomNode {
        DomNode {
            tag: "iframe".into(),
            frame_id: Some(UNSTITCHED),
            href: Some(src.into()),
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
    fn frames_are_matched_placed_numbered_and_spliced_in_order() {
        let mut top = observation(
            vec![
                node("button", Some(0), vec![]),
                node(
                    "div",
                    None,
                    vec![placeholder("https://pay.example/", 640.0, 80.0, false)],
                ),
                placeholder("https://ads.example/", 40.0, 420.0, true),
                node("a", Some(1), vec![]),
            ],
            "Top",
        );
        let placed = ObserveFrame::default();
        let mut frames = pending(&top, 0, &placed, &[]);
        assert_eq!(frames.len(), 2);
        assert_eq!(frames[0].parent_frame, 0);
        assert_eq!(frames[0].src, "https://pay.example/");
        assert_eq!(frames[0].placement.offset, (640.0, 80.0));
        assert_eq!(frames[0].placement.top_viewport, Some((1280.0, 720.0)));
        assert!(!frames[0].placement.covered);
        assert!(
            frames[1].placement.covered,
            "an occluded iframe covers its content"
        );

        let candidates = [
            Candidate {
                frame_id: 4,
                url: "https://ads.example/".into(),
                viewport: (100.0, 50.0),
            },
            Candidate {
                frame_id: 7,
                url: "https://pay.example/step2".into(),
                viewport: (100.0, 50.0),
            },
            Candidate {
                frame_id: 8,
                url: "https://pay.example/".into(),
                viewport: (300.0, 50.0),
            },
        ];
        // Same size and URL wins; a frame that navigated is still found by its size.
        assert_eq!(best_match(&frames[1], &candidates).unwrap().frame_id, 4);
        assert_eq!(
            best_match(&frames[0], &candidates[1..]).unwrap().frame_id,
            7
        );

        let mut first = frames.remove(0);
        first.assign(7);
        assert_eq!(first.placement.frame_path, vec![7]);
        let mut next = next_index(&top, 0);
        assert_eq!(next, 2);
        first.placement.base_index = next;
        let child = observation(
            vec![
                node("input", Some(2), vec![]),
                placeholder("https://3ds.example/", 650.0, 90.0, false),
            ],
            "Inner",
        );
        let mut nested = pending(&child, 7, &first.placement, first.position());
        next = next_index(&child, next);
        splice(&mut top, &first, child);
        assert_eq!(next, 3);
        assert_eq!(nested.len(), 1);
        assert_eq!(nested[0].parent_frame, 7);
        nested[0].assign(11);
        assert_eq!(nested[0].placement.frame_path, vec![7, 11]);

        // The nested frame's placeholder is found where the splice put it.
        let grandchild = observation(vec![node("button", Some(3), vec![])], "");
        splice(&mut top, &nested[0], grandchild);
        let inner = &top.root.children[1].children[0];
        assert_eq!(inner.frame_id, Some(7));
        assert_eq!(inner.children[0].index, Some(2));
        assert_eq!(inner.children[1].frame_id, Some(11));
        assert_eq!(inner.children[1].children[0].index, Some(3));
        assert_eq!(top.text, "Top Inner");
    }
}
