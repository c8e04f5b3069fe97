//! A check of the kernels on cooperative matrices against the portable ones, on the model's own
//! weights and shapes, before a model uses them.
//!
//! wgpu counts cooperative matrices among its experimental features, and a driver that gets them
//! wrong gives wrong text, not an error. A model that chose them runs one batch both ways as it
//! loads; where the two disagree by more than f16 inputs explain, it keeps the portable kernels
//! and says why.

use super::attention::Attention;
use super::attention_shape::{AttentionBuffers, AttentionShape};
use super::coop_attention::CoopAttentionBlock;
use super::kernel::{record_pass, Bound, StepUniform};
use super::matmul::{Blocking, MatMul, BATCH_TILE};
use super::matrix::GpuMatrix;
use super::{Gpu, GpuError};
use crate::tensor_type::TensorType;

/// The largest disagreement allowed, as the root mean square of the difference over that of
/// the portable kernel's output. Rounding inputs to f16 (2⁻¹¹ of each) moves a sum of products
/// with random signs by about 2⁻¹¹ of itself, so a working kernel is near 1e-3; a broken one
/// (a misplaced fragment, a lost sum) is off by tenths or more.
pub const MOST_RELATIVE_ERROR: f64 = 1e-2;

/// How far `got` is from `want`: the root mean square of their difference over that of `want`,
/// or an error naming `what` where it exceeds [`MOST_RELATIVE_ERROR`] or is not a number.
pub fn agree(what: &str, got: &[f32], want: &[f32]) -> Result<f64, GpuError> {
    let square = |v: &mut dyn Iterator<Item = f64>| v.map(|x| x * x).sum::<f64>();
    let off = square(
        &mut got
            .iter()
            .zip(want)
            .map(|(&g, &w)| f64::from(g) - f64::from(w)),
    );
    let size = square(&mut want.iter().map(|&w| f64::from(w)));
    let relative = if size > 0.0 {
        (off / size).sqrt()
    } else {
        off.sqrt()
    };
    if got.len() != want.len() || relative.is_nan() || relative > MOST_RELATIVE_ERROR {
        return Err(GpuError::CooperativeMismatch {
            what: what.into(),
            relative,
            allowed: MOST_RELATIVE_ERROR,
        });
    }
    Ok(relative)
}

/// A deterministic input of `n` values in [-1, 1): the same on every run, varied enough that a
/// misplaced element shows.
fn pattern(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}

/// Runs `bound` once and reads `len` floats of `out`.
fn run(
    gpu: &Gpu,
    label: &str,
    bound: &[Bound],
    out: &wgpu::Buffer,
    len: usize,
) -> Result<Vec<f32>, GpuError> {
    let mut encoder = gpu
        .device()
        .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
    record_pass(&mut encoder, label, bound);
    gpu.queue().submit([encoder.finish()]);
    gpu.read_f32(out, len)
}

/// Prefill's products in `blocking` (on cooperative matrices) against tiles of [`BATCH_TILE`],
/// for one block of tokens through each of `matrices` (of `types`): the worst relative
/// difference, or an error naming the matrix that disagrees.
pub fn check_products(
    gpu: &Gpu,
    types: &[TensorType],
    matrices: &[&GpuMatrix],
    blocking: Blocking,
) -> Result<f64, GpuError> {
    let tokens = blocking.tokens();
    let candidate = MatMul::with_blocking(gpu, types, blocking)?;
    let portable = MatMul::with_blocking(gpu, types, Blocking::Rows(BATCH_TILE))?;
    let step = StepUniform::new(0, tokens).buffer(gpu);
    let mut worst = 0.0f64;
    for (i, m) in matrices.iter().enumerate() {
        let x = gpu.upload_f32(
            "product check x",
            &pattern((tokens * m.cols()) as usize, i as u64),
        );
        let len = (tokens * m.rows()) as usize;
        let mut outputs = Vec::new();
        for kernels in [&candidate, &portable] {
            let y = gpu.storage_f32("product check y", len);
            let bound = kernels.bind(gpu, m, &x, &y, &step, tokens)?;
            outputs.push(run(gpu, "product check", &bound, &y, len)?);
        }
        let what = format!("prefill's product by {} ({})", m.name(), m.ty());
        worst = worst.max(agree(&what, &outputs[0], &outputs[1])?);
    }
    Ok(worst)
}

/// A batch's attention in `block` (on cooperative matrices) against `base`, the device's
/// per-token form, for heads of `shape` over random keys and values late in a cache of their
/// own: the relative difference, or an error.
pub fn check_attention(
    gpu: &Gpu,
    base: &Attention,
    shape: &AttentionShape,
    block: CoopAttentionBlock,
) -> Result<f64, GpuError> {
    let (pos, tokens) = (
        100u32,
        2 * block.rows.div_ceil(shape.heads / shape.kv_heads),
    );
    let shape = AttentionShape {
        capacity: pos + tokens,
        ..*shape
    };
    let rows = (tokens * shape.heads * shape.head_dim) as usize;
    let cache = (shape.capacity * shape.kv_heads * shape.head_dim) as usize;
    // Queries four times the keys' size: a peaked softmax, where a slip in it shows.
    let queries: Vec<f32> = pattern(rows, 1).into_iter().map(|x| 4.0 * x).collect();
    let q = gpu.upload_f32("attention check q", &queries);
    let k = gpu.upload_f16("attention check keys", &pattern(cache, 2));
    let v = gpu.upload_f16("attention check values", &pattern(cache, 3));
    let candidate = base
        .clone()
        .with_cooperative_blocks(gpu, block, shape.head_dim)?;
    let step = StepUniform::new(pos, tokens).buffer(gpu);
    let mut outputs = Vec::new();
    for attention in [&candidate, base] {
        let out = gpu.storage_f32("attention check out", rows);
        let buffers = AttentionBuffers {
            q: &q,
            k_cache: &k,
            v_cache: &v,
            out: &out,
        };
        let bound = attention.bind(gpu, buffers, shape, &step, tokens)?;
        outputs.push(run(gpu, "attention check", &bound, &out, rows)?);
    }
    agree(
        &format!("a batch's attention in {block}"),
        &outputs[0],
        &outputs[1],
    )
}
