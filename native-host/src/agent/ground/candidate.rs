//! What the grounding offers for a want: candidate actions with how sure each is, a value
//! read, or nothing; and how an element is named and targeted in them.

use itinero_shared::{Action, Target};

use super::page::Element;

/// A grounding this sure acts without asking a model.
pub const SURE: f32 = 0.85;

/// One possible next action for a want.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub action: Action,
    pub confidence: f32,
    /// What it does, for the panel and the model: `type "alice" into "Username"`.
    pub why: String,
    /// Doing it fulfils the want (otherwise it only brings the want closer: opening a message
    /// to delete it, scrolling to find it).
    pub finishes: bool,
}

/// What the grounding makes of one want on this page.
#[derive(Debug, Clone, PartialEq)]
pub enum Grounded {
    /// Already so on the page (the field holds the value, the box is ticked).
    Satisfied,
    /// Actions that would do it, best first.
    Candidates(Vec<Candidate>),
    /// The value the question asks for, with the page's words around it.
    Answer {
        value: String,
        quote: String,
        confidence: f32,
    },
    /// Nothing on this page for it.
    Absent,
}

impl Grounded {
    /// This when it is sure, else `other`.
    pub(super) fn sure_or(self, other: Grounded) -> Grounded {
        match &self {
            Grounded::Candidates(c) if c.first().is_some_and(|c| c.confidence >= SURE) => self,
            Grounded::Satisfied => self,
            _ => other,
        }
    }
}

pub(super) fn target(e: &Element) -> Option<Target> {
    Some(Target {
        index: e.node.index?,
        fingerprint: e.node.fingerprint.clone()?,
    })
}

pub(super) fn named(e: &Element) -> String {
    e.labels
        .first()
        .cloned()
        .unwrap_or_else(|| e.node.tag.clone())
}
