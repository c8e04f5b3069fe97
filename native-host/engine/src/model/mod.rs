//! Forward passes of the supported architectures on the GPU kernels.
//!
//! - [`hparams`]: the shape of a model, read from its GGUF metadata.
//! - [`transformer`]: the llama family (SmolLM2, Llama 3.x: RMSNorm, RoPE, grouped-query attention
//!   over a KV cache, SwiGLU, tied or separate output matrix) and Gemma 3 (q/k norms, post-norms,
//!   GELU, sliding-window layers with their own RoPE, a scaled embedding); decode one token per
//!   step, prompts in batches.

pub mod hparams;
pub mod transformer;

pub use hparams::HParams;
pub use transformer::{Fusion, PrefillTile, Transformer, PREFILL_BATCH};

use crate::gguf::GgufError;
use crate::gpu::rope::RopeError;
use crate::gpu::GpuError;

/// Why a model could not be loaded or run.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error(transparent)]
    Gguf(#[from] GgufError),
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error(transparent)]
    Rope(#[from] RopeError),
    #[error("{0}")]
    Unsupported(String),
    #[error("position {pos} is beyond the context of {capacity} tokens")]
    ContextFull { pos: u32, capacity: u32 },
    #[error("token id {token} is outside the vocabulary of {vocab}")]
    BadToken { token: u32, vocab: u32 },
}
