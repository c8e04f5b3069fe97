//! What sets an architecture's block apart from the llama block, as the shared graph reads it.
//!
//! Each architecture's file (`llama`, `gemma3`) says what its values are, so the graph asks its
//! questions of a `Variant` rather than of the architecture.

use super::{gemma3, llama, HParams, ModelError};
use crate::gate::Gate;
use crate::gguf::{Architecture, Gguf};

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Variant {
    /// Multiplies the token embedding.
    pub(super) embedding_scale: f32,
    /// Multiplies q·k.
    pub(super) attention_scale: f32,
    pub(super) gate: Gate,
    /// RMSNorm of each query and key head before RoPE, and of the attention and feed-forward
    /// outputs before the residual add: every layer has all four.
    pub(super) head_and_post_norms: bool,
    /// Layers that attend over a window of recent positions (with their own RoPE) between
    /// global ones.
    pub(super) sliding_window: Option<SlidingWindow>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct SlidingWindow {
    /// Positions a local layer attends over.
    pub(super) size: u32,
    /// One layer in every `global_every` is global, the last of each run.
    pub(super) global_every: u32,
}

impl Variant {
    /// Whether `layer` attends over the sliding window rather than the whole context.
    pub(super) fn is_local(&self, layer: u32) -> bool {
        self.sliding_window
            .is_some_and(|w| layer % w.global_every < w.global_every - 1)
    }

    /// The positions a layer attends over, local or not (`None`: every cached one).
    pub(super) fn window(&self, layer_is_local: bool) -> Option<u32> {
        if layer_is_local {
            self.sliding_window.map(|w| w.size)
        } else {
            None
        }
    }
}

/// What sets the model's architecture apart, from the file of that architecture: both passes
/// (GPU and CPU) read it from here.
pub(super) fn of(gguf: &Gguf, hp: &HParams) -> Result<Variant, ModelError> {
    match hp.arch {
        Architecture::Llama | Architecture::Qwen2 => Ok(llama::variant(hp)),
        Architecture::Gemma3 => gemma3::variant(gguf, hp),
    }
}
