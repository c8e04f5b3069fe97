//! The llama family (SmolLM2, Llama 3.x) and Qwen 2: RMSNorm before attention and the
//! feed-forward, SwiGLU, attention scaled by the head size, the embedding as it is.
//!
//! Qwen 2 differs from llama in its q/k/v biases (loaded wherever a GGUF has them) and its NeoX
//! RoPE order (which `RopeParams` reads from the architecture), so it needs nothing of its own.

use super::variant::Variant;
use super::HParams;
use crate::gate::Gate;

pub(super) fn variant(hp: &HParams) -> Variant {
    Variant {
        embedding_scale: 1.0,
        attention_scale: 1.0 / (hp.head_dim as f32).sqrt(),
        gate: Gate::SwiGlu,
        head_and_post_norms: false,
        sliding_window: None,
    }
}
