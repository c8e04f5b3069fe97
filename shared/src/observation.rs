//! The page as the agent sees it: a pruned, paint-ordered tree of what a person can see and use.
//!
//! The content script fills it; the host serialises it compactly for the model.

use serde::{Deserialize, Serialize};

use crate::action::Fingerprint;

#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

/// One node of the pruned tree: either an interactive element or text between elements.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DomNode {
    /// Index the model uses to name this element; `None` for text and for occluded elements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    pub tag: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attributes: Vec<(String, String)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub states: Vec<String>,
    #[serde(default)]
    pub rect: Rect,
    #[serde(default)]
    pub in_viewport: bool,
    #[serde(default)]
    pub occluded: bool,
    /// Rank in paint order: higher is painted later, i.e. on top.
    #[serde(default)]
    pub paint_order: u32,
    /// New since the previous observation of this tab.
    #[serde(default)]
    pub is_new: bool,
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
    #[serde(default)]
    pub pages_above: f64,
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
