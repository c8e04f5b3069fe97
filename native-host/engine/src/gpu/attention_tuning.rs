//! Which kernel runs attention fastest on this device, for a prefill batch and for decode's
//! token, measured.
//!
//! Blocks of query rows read each tile of keys once per block, where the per-token form reads
//! it once per query head and token; but they run fewer workgroups, and with few KV heads a
//! large GPU may sit partly idle. Which wins depends on the device and the model's heads, so on
//! a GPU each is timed late in a long prompt as the model loads, and the fastest kept. A batch's
//! candidates include blocks on cooperative matrices (`coop_attention.rs`) where the adapter
//! has them.

use std::fmt;

use super::attention::Attention;
use super::attention_block::AttentionBlock;
use super::attention_shape::{AttentionBuffers, AttentionShape};
use super::coop_attention::CoopAttentionBlock;
use super::kernel::StepUniform;
use super::timing;
use super::{Gpu, GpuError};

/// What is timed ends at this position (or the cache's end): the length of a long agent
/// prompt, where attention's share of a step has grown.
pub const TIMED_END: u32 = 2048;

/// One kind of work's attention kernel: the device's per-token form, or blocks of one shape
/// (a batch's may be on cooperative matrices).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttentionKernel {
    PerToken,
    Blocks(AttentionBlock),
    Cooperative(CoopAttentionBlock),
}

impl fmt::Display for AttentionKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::PerToken => f.write_str("per query head and token"),
            Self::Blocks(b) => b.fmt(f),
            Self::Cooperative(b) => b.fmt(f),
        }
    }
}

/// The kernels for `shape` on `gpu`, with batches and decode's token as given: `base` (the
/// device's per-token form, compiled once and shared by every candidate) with the blocks added.
/// Decode has no cooperative form: asking for one is an error.
pub fn build(
    gpu: &Gpu,
    base: &Attention,
    shape: &AttentionShape,
    batch: AttentionKernel,
    decode: AttentionKernel,
) -> Result<Attention, GpuError> {
    let mut attention = base.clone();
    match batch {
        AttentionKernel::PerToken => {}
        AttentionKernel::Blocks(block) => {
            attention = attention.with_blocks(gpu, block, shape.head_dim)?;
        }
        AttentionKernel::Cooperative(block) => {
            attention = attention.with_cooperative_blocks(gpu, block, shape.head_dim)?;
        }
    }
    match decode {
        AttentionKernel::PerToken => {}
        AttentionKernel::Blocks(block) => {
            attention = attention.with_decode_blocks(gpu, block, shape.head_dim)?;
        }
        AttentionKernel::Cooperative(block) => {
            return Err(GpuError::Unsupported {
                adapter: gpu.describe(),
                what: format!("decode's attention in {block}: its one token fills no fragment"),
            })
        }
    }
    Ok(attention)
}

/// A kernel chosen, and each candidate's time where they were timed.
pub type KernelChoice = timing::Choice<AttentionKernel>;

/// The per-token form and every block shape `gpu` holds for `shape`'s heads; for a batch
/// (`tokens` > 1), its blocks on cooperative matrices too.
pub fn candidates(gpu: &Gpu, shape: &AttentionShape, tokens: u32) -> Vec<AttentionKernel> {
    let cooperative = match tokens {
        1 => Vec::new(),
        _ => CoopAttentionBlock::all(gpu, shape.head_dim),
    };
    std::iter::once(AttentionKernel::PerToken)
        .chain(
            AttentionBlock::all(gpu, shape.head_dim)
                .into_iter()
                .map(AttentionKernel::Blocks),
        )
        .chain(cooperative.into_iter().map(AttentionKernel::Cooperative))
        .collect()
}

/// The fastest of `candidates` (added to `base`, as [`build`] adds them) for `tokens` new
/// tokens of `shape` (a batch, or decode's one), their keys and values in scratch caches, timed
/// late in a long prompt.
pub fn fastest(
    gpu: &Gpu,
    base: &Attention,
    shape: &AttentionShape,
    tokens: u32,
    candidates: &[AttentionKernel],
) -> Result<KernelChoice, GpuError> {
    let tokens = tokens.min(shape.capacity).max(1);
    let pos = shape.capacity.min(TIMED_END).saturating_sub(tokens);
    let rows = (tokens * shape.heads * shape.head_dim) as usize;
    let cache = (shape.capacity * shape.kv_heads * shape.head_dim / 2) as usize;
    let (q, out) = (
        gpu.storage_f32("attention tuning q", rows),
        gpu.storage_f32("attention tuning out", rows),
    );
    // Zeros are f16 zeros: the keys and values need no other content to be timed.
    let (k, v) = (
        gpu.storage_f32("attention tuning keys", cache),
        gpu.storage_f32("attention tuning values", cache),
    );
    let buffers = AttentionBuffers {
        q: &q,
        k_cache: &k,
        v_cache: &v,
        out: &out,
    };
    let step = StepUniform::new(pos, tokens).buffer(gpu);
    let mut timings = Vec::new();
    let mut left_out = Vec::new();
    for &candidate in candidates {
        let built = match tokens {
            1 => build(gpu, base, shape, AttentionKernel::PerToken, candidate),
            _ => build(gpu, base, shape, candidate, AttentionKernel::PerToken),
        };
        let attention = match built {
            Ok(attention) => attention,
            // Cooperative matrices are experimental in wgpu: a driver that will not compile
            // them leaves the other kernels, not a model that will not load.
            Err(e) if matches!(candidate, AttentionKernel::Cooperative(_)) => {
                tracing::warn!(%candidate, error = %e, "left out of attention's kernels");
                left_out.push(format!("{candidate}: {e}"));
                continue;
            }
            Err(e) => return Err(e),
        };
        let bound = attention.bind(gpu, buffers, *shape, &step, tokens)?;
        timings.push((
            candidate,
            timing::median_pass(gpu, "attention tuning", &bound)?,
        ));
    }
    let mut choice = KernelChoice::fastest(timings).ok_or_else(|| GpuError::Shape {
        name: "attention tuning".into(),
        reason: "no candidate to time".into(),
    })?;
    choice.left_out = (!left_out.is_empty()).then(|| left_out.join("; "));
    tracing::debug!(timings = ?choice.timings, chosen = %choice.chosen, tokens, "attention timed");
    Ok(choice)
}
