//! Forward passes of the supported architectures on the GPU kernels.
//!
//! One graph runs every architecture: the llama block (RMSNorm, RoPE, grouped-query attention
//! over a KV cache, a gated feed-forward, tied or separate output matrix), with what each
//! architecture changes in it said by its own file. Decode runs one token per step, prompts go in
//! batches.
//!
//! - [`hparams`]: the shape of a model, read from its GGUF metadata.
//! - [`transformer`]: the loaded model: loading in phases, and running a step or a batch.
//! - `llama`, `gemma3`: what sets each architecture apart (norms, activation, scales, local
//!   layers), as a `Variant` (`variant`) the graph reads.
//! - `weights`: the weights on the device and each layer's KV cache.
//! - `tuning`: fusion, prefill's tile of tokens, attention's kernels and where decode's attention
//!   slices are merged, for the device; `decode_products`: decode's product kernels, their shape
//!   timed on a GPU.
//! - `prefill_batch`: how many tokens a prefill batch holds on the device.
//! - `bind`, `plan`, `scratch`: the layers' dispatches bound once over their activations.

mod bind;
pub mod cpu_pass;
mod cpu_weights;
mod decode_products;
mod gemma3;
pub mod hparams;
mod llama;
mod plan;
mod prefill_batch;
mod scratch;
pub mod transformer;
mod tuning;
mod variant;
mod weights;

pub use cpu_pass::CpuTransformer;
pub use hparams::HParams;
pub use prefill_batch::{valid_prefill_batch, PrefillBatch, MAX_PREFILL_BATCH, PREFILL_BATCH};
pub use transformer::Transformer;
pub use tuning::{AttentionTuning, DecodeShape, Fusion, GpuTuning, PrefillTile, SliceMerge};

use crate::gguf::GgufError;
use crate::gpu::GpuError;
use crate::rope::RopeError;

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

/// Whether `tokens` more positions from `pos` fit a KV cache of `capacity` (both passes check
/// before they write).
fn check_room(pos: u32, tokens: usize, capacity: u32) -> Result<(), ModelError> {
    if pos as usize + tokens > capacity as usize {
        return Err(ModelError::ContextFull {
            pos: pos + tokens.saturating_sub(1) as u32,
            capacity,
        });
    }
    Ok(())
}
