//! Gemma 3: q/k head norms and post-norms around attention and the feed-forward, GELU, an
//! embedding scaled by √dim, and five sliding-window layers (with their own RoPE) to each global
//! one.

use super::variant::{SlidingWindow, Variant};
use super::{HParams, ModelError};
use crate::gate::Gate;
use crate::gguf::Gguf;

/// llama.cpp's `set_swa_pattern(6)`: every sixth layer is global.
const GLOBAL_EVERY: u32 = 6;

/// Gemma 3 27B, the one size whose attention is not scaled by its head size.
const LAYERS_OF_27B: u32 = 62;

pub(super) fn variant(gguf: &Gguf, hp: &HParams) -> Result<Variant, ModelError> {
    Ok(Variant {
        embedding_scale: (hp.dim as f32).sqrt(),
        attention_scale: attention_scale(hp),
        gate: Gate::GeGlu,
        head_and_post_norms: true,
        sliding_window: Some(SlidingWindow {
            size: gguf.metadata().u32("gemma3.attention.sliding_window")?,
            global_every: GLOBAL_EVERY,
        }),
    })
}

/// llama.cpp's choice: Gemma 3 27B scales by its query_pre_attn_scalar (dim / heads), the others
/// by the head size.
fn attention_scale(hp: &HParams) -> f32 {
    if hp.layers == LAYERS_OF_27B {
        1.0 / ((hp.dim / hp.heads) as f32).sqrt()
    } else {
        1.0 / (hp.head_dim as f32).sqrt()
    }
}
