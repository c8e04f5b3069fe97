//! Paint order: which element a person sees on top where boxes overlap.
//!
//! CSS paints each stacking context in layers: negative z-index children, then
//! in-flow content, then positioned content with `z-index: auto`/0, then
//! positive z-index, each layer in document order. Every element gets a key,
//! its context's key plus `(layer, z, document order)`, and sorting the keys
//! gives the order in which things are painted. Floats, inline layering and
//! `order` in flex layouts are not modelled; hit-testing (see `occlusion`) is
//! what decides occlusion, this rank only orders what is visible.

use std::rc::Rc;

use super::dom::PaintFacts;

/// One step of a paint key: (layer, z-index, document order).
pub type Step = (u8, i32, u32);
pub type Key = Rc<Vec<Step>>;

/// How an element takes part in painting.
pub struct Paint {
    pub step: Step,
    /// Its descendants are painted inside it (a stacking context, or a positioned box).
    pub groups_children: bool,
}

/// `parent_is_flex_or_grid`: z-index applies to flex and grid items even when they are not positioned.
pub fn classify(style: &PaintFacts, parent_is_flex_or_grid: bool, order: u32) -> Paint {
    let positioned = style.positioned;
    let z = if positioned || parent_is_flex_or_grid {
        style.z_index
    } else {
        None
    };
    let context = z.is_some() || style.fixed_or_sticky || style.opacity < 1.0 || style.groups;
    let layer = match z {
        Some(z) if z < 0 => 0,
        Some(z) if z > 0 => 3,
        _ if positioned || context => 2,
        _ => 1,
    };
    Paint {
        step: (layer, z.unwrap_or(0), order),
        groups_children: context || positioned,
    }
}

/// Ranks keys: the returned vector gives each key's position in paint order (0 painted first).
/// Keys are only worked out in the viewport, where overlap can be seen: `None`
/// (outside it) ranks after every key, in the order given.
pub fn ranks(keys: &[Option<Key>]) -> Vec<u32> {
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by(|&a, &b| match (&keys[a], &keys[b]) {
        (Some(x), Some(y)) => x.cmp(y).then(a.cmp(&b)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.cmp(&b),
    });
    let mut rank = vec![0; keys.len()];
    for (r, i) in order.into_iter().enumerate() {
        rank[i] = r as u32;
    }
    rank
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contexts_and_layers_order_painting() {
        let root: Vec<Step> = vec![];
        let key = |steps: &[Step]| -> Option<Key> {
            Some(Rc::new(root.iter().chain(steps).copied().collect()))
        };
        let in_flow_first = key(&[(1, 0, 1)]);
        let in_flow_later = key(&[(1, 0, 5)]);
        let positioned_early = key(&[(2, 0, 2)]);
        let negative_z_late = key(&[(0, -1, 9)]);
        let modal = key(&[(3, 100, 3)]);
        let button_in_modal = key(&[(3, 100, 3), (1, 0, 4)]);
        let above_modal = key(&[(3, 200, 0)]);
        let r = ranks(&[
            in_flow_first,
            in_flow_later,
            positioned_early,
            negative_z_late,
            modal,
            button_in_modal,
            above_modal,
            None,
        ]);
        assert_eq!(r, vec![1, 2, 3, 0, 4, 5, 6, 7]);
    }
}
