//! Which tile of tokens prefill's products run fastest with on this device, measured.
//!
//! With one invocation per weight row and tile, a 576-row product over 128 tokens in tiles of
//! 8 runs about 9 000 invocations: a few warps per multiprocessor of a large GPU, which then
//! waits on memory instead of hiding it. Smaller tiles run more invocations and decode each
//! weight part more often. Which wins depends on the device and the model's shapes, so on a
//! GPU the model's own products are timed with each tile when it loads, and the fastest kept.
//! Where the adapter has cooperative matrices (tensor cores), their kernels are one more
//! candidate, timed the same way. CPU drivers are not timed: there the tile of [`BATCH_TILE`] is
//! known to be best, and timing a product there takes seconds.

use super::coop_shape::CoopShape;
use super::kernel::{Bound, StepUniform};
use super::matmul::{Blocking, MatMul, BATCH_TILE};
use super::matrix::GpuMatrix;
use super::timing;
use super::{Gpu, GpuError};
use crate::tensor_type::TensorType;

/// The tiles tried: 8 (most reuse of each decoded part) down to 2.
pub const CANDIDATES: [u32; 3] = [BATCH_TILE, 4, 2];

/// The candidates on `gpu`: each of [`CANDIDATES`], and where it has cooperative matrices,
/// each block shape that fits.
pub fn candidates(gpu: &Gpu) -> Vec<Blocking> {
    CANDIDATES
        .iter()
        .map(|&tile| Blocking::Rows(tile))
        .chain(CoopShape::all(gpu).into_iter().map(Blocking::Cooperative))
        .collect()
}

/// The tile chosen, and each candidate's time where they were timed.
pub type TileChoice = timing::Choice<Blocking>;

/// The tile among `candidates` with which the products by `matrices` (of `types`) over a batch
/// of `max_tokens` tokens take the least time on `gpu`.
pub fn fastest(
    gpu: &Gpu,
    types: &[TensorType],
    matrices: &[&GpuMatrix],
    max_tokens: u32,
    candidates: &[Blocking],
) -> Result<TileChoice, GpuError> {
    let cols = matrices.iter().map(|m| m.cols()).max().unwrap_or(0);
    let rows = matrices.iter().map(|m| m.rows()).max().unwrap_or(0);
    let x = gpu.storage_f32("tuning x", (max_tokens * cols).max(1) as usize);
    let y = gpu.storage_f32("tuning y", (max_tokens * rows).max(1) as usize);
    let step = StepUniform::new(0, max_tokens).buffer(gpu);
    let mut timings = Vec::new();
    let mut left_out = Vec::new();
    for &tile in candidates
        .iter()
        .filter(|t| max_tokens.is_multiple_of(t.tokens()))
    {
        let matmul = match MatMul::with_blocking(gpu, types, tile) {
            Ok(matmul) => matmul,
            // Cooperative matrices are experimental in wgpu: a driver that will not compile
            // them leaves the portable kernels, not a model that will not load.
            Err(e) if matches!(tile, Blocking::Cooperative(_)) => {
                tracing::warn!(%tile, error = %e, "left out of prefill's tiles");
                left_out.push(format!("{tile}: {e}"));
                continue;
            }
            Err(e) => return Err(e),
        };
        let mut bound: Vec<Bound> = Vec::new();
        for m in matrices {
            bound.extend(matmul.bind(gpu, m, &x, &y, &step, max_tokens)?);
        }
        timings.push((tile, timing::median_pass(gpu, "tile tuning", &bound)?));
    }
    let mut choice = TileChoice::fastest(timings).ok_or_else(|| GpuError::Shape {
        name: "tile tuning".into(),
        reason: format!("no tile of {candidates:?} divides a batch of {max_tokens} tokens"),
    })?;
    choice.left_out = (!left_out.is_empty()).then(|| left_out.join("; "));
    tracing::debug!(timings = ?choice.timings, best = %choice.chosen, "prefill tiles timed");
    Ok(choice)
}
