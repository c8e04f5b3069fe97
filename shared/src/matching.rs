//! Whether an element seen now is the one a fingerprint recorded, even after the page changed.
//!
//! The content script uses it before acting (the index from the last observation is trusted
//! only if the element still looks like what the model saw; otherwise the target is looked up by
//! fingerprint) and the host's recovery uses it on a fresh observation, so both sides agree on
//! what "the same element" means. Matching is strict on identity (tag, frame) and weighs stable
//! attributes over position, so a control that now means something else (same id, different
//! label) is refused rather than clicked.

use crate::action::Fingerprint;

/// Score at or above which a candidate is taken to be the recorded element.
pub const ACCEPT: i32 = 3;

fn same(a: &Option<String>, b: &Option<String>) -> Option<bool> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.trim().eq_ignore_ascii_case(y.trim())),
        (None, None) => None,
        _ => Some(false),
    }
}

/// How well `candidate` matches `recorded`; `None` when it cannot be the same element.
pub fn score(recorded: &Fingerprint, candidate: &Fingerprint) -> Option<i32> {
    if recorded.tag != candidate.tag || recorded.frame_path != candidate.frame_path {
        return None;
    }
    let mut s = 0;
    let weigh = |m: Option<bool>, hit: i32, miss: i32| match m {
        Some(true) => hit,
        Some(false) => -miss,
        None => 0,
    };
    // Ids are often generated per build or per render: agreeing says much, differing little.
    s += weigh(same(&recorded.id, &candidate.id), 3, 1);
    s += weigh(same(&recorded.test_id, &candidate.test_id), 3, 2);
    s += weigh(same(&recorded.name_attr, &candidate.name_attr), 2, 1);
    // The accessible name is what the model chose by: a different name is a different
    // control, whatever its id says. A refinement ("Add to cart" → "Add to cart (2)") is allowed.
    match (&recorded.name, &candidate.name) {
        (Some(a), Some(b)) => {
            let (a, b) = (a.trim().to_lowercase(), b.trim().to_lowercase());
            if a == b {
                s += 3;
            } else if a.contains(&b) || b.contains(&a) {
                s += 1;
            } else {
                return None;
            }
        }
        (None, None) => {}
        _ => s -= 2,
    }
    s += weigh(same(&recorded.aria_label, &candidate.aria_label), 1, 1);
    s += weigh(same(&recorded.role, &candidate.role), 1, 3);
    if recorded.path == candidate.path {
        s += 2;
    }
    Some(s)
}

/// The best candidate at or above [`ACCEPT`], if exactly one is best.
pub fn best<'a, T>(
    recorded: &Fingerprint,
    candidates: impl IntoIterator<Item = (&'a Fingerprint, T)>,
) -> Option<T> {
    let mut top: Option<(i32, T)> = None;
    let mut tied = false;
    for (fp, item) in candidates {
        let Some(s) = score(recorded, fp) else {
            continue;
        };
        if s < ACCEPT {
            continue;
        }
        match &top {
            Some((best, _)) if s < *best => {}
            Some((best, _)) if s == *best => tied = true,
            _ => {
                top = Some((s, item));
                tied = false;
            }
        }
    }
    if tied {
        return None;
    }
    top.map(|(_, item)| item)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(tag: &str, id: Option<&str>, name: Option<&str>, path: &str) -> Fingerprint {
        Fingerprint {
            tag: tag.into(),
            id: id.map(Into::into),
            name: name.map(Into::into),
            role: Some("button".into()),
            path: path.into(),
            ..Default::default()
        }
    }

    #[test]
    fn same_element_moved_in_the_tree_still_matches() {
        let rec = fp("button", Some("buy"), Some("Buy now"), ">div[0]>button[0]");
        let moved = fp(
            "button",
            Some("buy"),
            Some("Buy now"),
            ">div[1]>section[0]>button[2]",
        );
        assert!(score(&rec, &moved).unwrap() >= ACCEPT);
    }

    #[test]
    fn renamed_ids_still_match_by_name_and_role_at_the_same_place() {
        let rec = fp(
            "button",
            Some("btn-17"),
            Some("Add to cart"),
            ">main[0]>button[0]",
        );
        let now = fp(
            "button",
            Some("btn-93"),
            Some("Add to cart"),
            ">main[0]>button[0]",
        );
        assert!(score(&rec, &now).unwrap() >= ACCEPT);
    }

    #[test]
    fn renamed_ids_and_a_moved_button_still_match() {
        let rec = fp(
            "button",
            Some("btn-17"),
            Some("Add to cart"),
            ">main[0]>button[0]",
        );
        let now = fp(
            "button",
            Some("c-2"),
            Some("Add to cart"),
            ">main[0]>aside[0]>button[1]",
        );
        assert!(score(&rec, &now).unwrap() >= ACCEPT);
    }

    #[test]
    fn same_id_but_another_meaning_is_refused() {
        let rec = fp(
            "button",
            Some("primary"),
            Some("Save draft"),
            ">form[0]>button[0]",
        );
        let now = fp(
            "button",
            Some("primary"),
            Some("Delete account"),
            ">form[0]>button[0]",
        );
        assert_eq!(score(&rec, &now), None);
        assert_eq!(best(&rec, [(&now, 1)]), None);
        let refined = fp(
            "button",
            Some("primary"),
            Some("Save draft (2)"),
            ">form[0]>button[0]",
        );
        assert!(score(&rec, &refined).unwrap() >= ACCEPT);
    }

    #[test]
    fn another_tag_or_frame_never_matches() {
        let rec = fp("button", Some("x"), Some("Go"), ">button[0]");
        assert_eq!(
            score(&rec, &fp("a", Some("x"), Some("Go"), ">button[0]")),
            None
        );
        let mut other_frame = rec.clone();
        other_frame.frame_path = vec![3];
        assert_eq!(score(&rec, &other_frame), None);
    }

    #[test]
    fn ambiguous_candidates_are_refused() {
        let rec = fp("button", None, Some("Choose"), ">ul[0]>li[9]>button[0]");
        let a = fp("button", None, Some("Choose"), ">ul[0]>li[1]>button[0]");
        let b = fp("button", None, Some("Choose"), ">ul[0]>li[2]>button[0]");
        assert_eq!(best(&rec, [(&a, 1), (&b, 2)]), None);
        let exact = fp("button", None, Some("Choose"), ">ul[0]>li[9]>button[0]");
        assert_eq!(best(&rec, [(&a, 1), (&exact, 3), (&b, 2)]), Some(3));
    }
}
