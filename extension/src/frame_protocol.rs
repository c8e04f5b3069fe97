//! What the background tells a frame's content script when it asks for an
//! observation, inside the browser.
//!
//! A cross-origin iframe cannot be walked from its parent, so each frame's own
//! content script walks it and the background stitches the results into one
//! tree. For that the child walk must already speak in the top frame's terms:
//! its boxes offset to where the iframe sits, its indices following the ones
//! before it, covered when its iframe is covered.
//!
//! Content scripts cannot learn the frame id of an iframe element, so the
//! walk marks a cross-origin iframe with `frame_id` [`UNSTITCHED`], its `href`
//! (the iframe's `src`) and its content box; the background finds which of the
//! tab's frames it is (same parent, same URL, same viewport size) and stitches.
//!
//! The background sends `{kind: "observe_frame", frame: ObserveFrame}`; the
//! content script answers `{observation, remote_frames}`, the count saying
//! whether any placeholders wait to be stitched (so a page without
//! cross-origin frames passes through as it is, never decoded).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ObserveFrame {
    /// First index to hand out in this frame.
    pub base_index: u32,
    /// Where this frame's viewport sits in the top frame's viewport.
    pub offset: (f64, f64),
    /// The top frame's viewport size (`None` in the top frame: its own).
    pub top_viewport: Option<(f64, f64)>,
    /// The iframe showing this frame is covered: everything in it is.
    pub covered: bool,
    /// This frame's id (`chrome.runtime.getFrameId`), written on its indexed nodes.
    pub frame_id: Option<i64>,
    /// Frame ids from the top frame's child down to this one, for fingerprints.
    pub frame_path: Vec<i64>,
}

/// The message kind the background observes frames with.
pub const OBSERVE_FRAME: &str = "observe_frame";

/// `frame_id` of a placeholder whose frame has not been stitched in (yet, or
/// because its content script did not answer).
pub const UNSTITCHED: i64 = -1;
