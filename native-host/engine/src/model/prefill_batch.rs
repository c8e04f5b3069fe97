//! How many tokens a prefill batch holds: the unit a prompt is run in, which every plan, tiling
//! and timing of prefill is sized for.

use crate::gpu::Gpu;

use super::{HParams, ModelError};

/// Tokens per prefill batch on the CPU and through CPU drivers: enough that the weights'
/// decoding is spread over many tokens, few enough that a cancelled task stops within a batch
/// (about a second on two cores).
pub const PREFILL_BATCH: u32 = 128;

/// The batches a GPU's prefill tries, largest first: llama.cpp's 512 (its `n_ubatch`) gives a
/// large GPU's products four times the workgroups of 128 and reads each weight once for four
/// times the tokens; smaller ones where the activations of 512 exceed a storage binding.
const GPU_PREFILL_BATCHES: [u32; 3] = [512, 256, PREFILL_BATCH];

/// The most tokens a prefill batch may be asked to hold.
pub const MAX_PREFILL_BATCH: u32 = 4096;

/// How many tokens a prefill batch holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PrefillBatch {
    /// On a GPU, 512 (or 256 or 128, the largest whose activations each fit a storage
    /// binding); [`PREFILL_BATCH`] on CPU drivers.
    #[default]
    Auto,
    /// This many (a multiple of [`PREFILL_BATCH`], which every tile and block of tokens
    /// divides, up to [`MAX_PREFILL_BATCH`]): to compare batches on one device, and for tests.
    Tokens(u32),
}

/// Whether a prefill batch may hold `tokens`: whole tiles and blocks of tokens, within bounds.
pub fn valid_prefill_batch(tokens: u32) -> bool {
    tokens.is_multiple_of(PREFILL_BATCH) && (PREFILL_BATCH..=MAX_PREFILL_BATCH).contains(&tokens)
}

/// The tokens of a prefill batch for a model of `hp` on `gpu`, as `asked`: an error where the
/// batch asked for is out of range or its activations exceed what the device binds.
pub(super) fn for_model(gpu: &Gpu, hp: &HParams, asked: PrefillBatch) -> Result<u32, ModelError> {
    // The widest activation a token has, in bytes (Scratch's buffers).
    let widest = [hp.dim, hp.ffn, hp.heads * hp.head_dim, hp.kv_dim()]
        .into_iter()
        .max()
        .map_or(0, |w| u64::from(w) * 4);
    let limits = gpu.limits();
    let bound = limits
        .max_storage_buffer_binding_size
        .min(limits.max_buffer_size);
    let fits = |tokens: u32| widest * u64::from(tokens) <= bound;
    match asked {
        PrefillBatch::Tokens(n) if !valid_prefill_batch(n) => {
            Err(ModelError::Unsupported(format!(
                "a prefill batch of {n} tokens (a multiple of {PREFILL_BATCH} up to \
                 {MAX_PREFILL_BATCH})"
            )))
        }
        PrefillBatch::Tokens(n) if !fits(n) => Err(ModelError::Unsupported(format!(
            "a prefill batch of {n} tokens: its activations of {} bytes exceed the {bound} \
             bytes {} binds",
            widest * u64::from(n),
            gpu.describe()
        ))),
        PrefillBatch::Tokens(n) => Ok(n),
        PrefillBatch::Auto if gpu.chooses_cpu_kernels() => Ok(PREFILL_BATCH),
        PrefillBatch::Auto => Ok(GPU_PREFILL_BATCHES
            .into_iter()
            .find(|&tokens| fits(tokens))
            .unwrap_or(PREFILL_BATCH)),
    }
}
