//! Which kernels run the model on this device: whether operations are fused, decode's product
//! kernel, prefill's tile of tokens and prefill's attention. What is fastest differs between
//! GPUs and CPU drivers, and some of it is measured as the model loads.

use crate::gpu::attention_tuning::{self, AttentionKernel, KernelChoice};
use crate::gpu::merge_tuning::{self, MergeChoice, MergeSite};
use crate::gpu::{tile_tuning, timing};
use crate::gpu::{
    Attention, AttentionBlock, AttentionShape, Blocking, Bound, CoopShape, Gpu, GpuError,
    GpuMatrix, JoinedMatMul, MatMul, MatVec, MatVecConfig, MergingMatVec, NormedMatVec, Output,
    TileChoice, BATCH_TILE,
};
use crate::tensor_type::TensorType;

use super::weights::Layer;
use super::ModelError;
use crate::gate::Gate;

/// Tokens per prefill batch: enough that the weights' decoding is spread over many tokens, small
/// enough that the batch's activations are a few megabytes even for an 8B model.
pub const PREFILL_BATCH: u32 = 128;

/// Whether operations are fused into fewer dispatches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fusion {
    /// The fastest known for the device: [`Self::Fused`] on GPUs (decode keeps a separate norm
    /// where the device's workgroup memory cannot hold a hidden state), [`Self::Separate`] on
    /// CPU drivers with subgroups, where decode's products are the matrix-matrix kernel.
    #[default]
    Auto,
    /// Decode: norms folded into the products, q/k/v and gate/up/activation in one dispatch each,
    /// keys and values written into the cache by the kernels that make them, RoPE done by
    /// attention where its kernel can (GPUs' forms) and the layer has no head norms, and
    /// attention's slices merged by the output product where [`SliceMerge`] says. Prefill:
    /// q/k/v and gate/up/activation in one dispatch each. (Tests force it on CPU drivers to
    /// check it.)
    Fused,
    /// One kernel per operation (to compare with [`Self::Fused`] on one device).
    Separate,
}

/// How many tokens each invocation of prefill's products takes (see `gpu::tile_tuning`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PrefillTile {
    /// On a GPU, the fastest of the candidates (cooperative matrices among them where the GPU
    /// has them), timed with the model's own products as it loads; on CPU drivers
    /// [`BATCH_TILE`].
    #[default]
    Auto,
    /// This tile (one of `gpu::TILES` but 1), untimed: to compare tiles on one device.
    Fixed(u32),
    /// Cooperative matrices (tensor cores), untimed: an error where the device has none.
    Cooperative,
}

/// How attention runs, for a prefill batch or for decode's token (see `gpu::attention_tuning`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AttentionTuning {
    /// On a GPU, the fastest of the per-token form and each block of query rows the device
    /// holds, timed as the model loads; on CPU drivers their per-token lane forms.
    #[default]
    Auto,
    /// The device's per-token form, untimed.
    PerToken,
    /// Blocks of query rows, untimed (a batch's the largest the device holds, decode's the
    /// smallest): an error where it holds none.
    Blocks,
}

/// Where decode's attention, its keys cut into slices on a GPU, has them merged (see
/// `gpu::merging_matvec`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SliceMerge {
    /// Where decode fuses on a GPU, the faster of the two, timed with the model's output
    /// product late in a long prompt as it loads; otherwise a dispatch of their own.
    #[default]
    Auto,
    /// By the output product as it reads them, untimed: an error where decode does not fuse or
    /// the device cannot (CPU drivers, too little workgroup memory).
    Product,
    /// In a dispatch of their own, untimed.
    Dispatch,
}

/// How the GPU pass is bound: each choice the model makes as it loads, or a forced one to
/// compare on one device.
#[derive(Debug, Clone, Copy, Default)]
pub struct GpuTuning {
    pub fusion: Fusion,
    pub tile: PrefillTile,
    pub prefill_attention: AttentionTuning,
    pub decode_attention: AttentionTuning,
    pub slice_merge: SliceMerge,
}

impl Fusion {
    /// Whether the plans fuse, where decode's products are `decode`'s.
    fn fuses(self, decode: &DecodeProducts) -> bool {
        match self {
            Fusion::Fused => true,
            Fusion::Separate => false,
            Fusion::Auto => decode.matmul.is_none(),
        }
    }
}

/// How decode multiplies by a matrix on its own.
pub(super) struct DecodeProducts {
    pub(super) matvec: MatVec,
    /// On CPU drivers with subgroups, the matrix-matrix kernel with a tile of one token, which
    /// shares the loads of x across lanes.
    matmul: Option<MatMul>,
    /// Where the product reads x, and what timing measured where it was timed.
    pub(super) x_choice: String,
}

impl DecodeProducts {
    /// Products for matrices of `types` whose rows have at most `max_cols` columns; where x
    /// could be staged in workgroup memory, that and x read from its binding are timed with
    /// `timed` (a layer's products that stay on their own) and the faster kept.
    fn new(
        gpu: &Gpu,
        types: &[TensorType],
        max_cols: u32,
        timed: &[&GpuMatrix],
    ) -> Result<Self, ModelError> {
        let matmul = (gpu.is_cpu() && MatMul::can_share_x(gpu))
            .then(|| MatMul::new(gpu, types, 1))
            .transpose()?;
        let from_binding = MatVec::new(gpu, types)?;
        let Some(staged) = MatVec::staging_for(gpu, max_cols) else {
            return Ok(Self {
                matvec: from_binding,
                matmul,
                x_choice: "x read from its binding (not timed)".into(),
            });
        };
        let staged = MatVec::with_x_staged(gpu, types, from_binding.config(), staged)?;
        let rows = timed.iter().map(|m| m.rows()).max().unwrap_or(1);
        let x = gpu.storage_f32("decode tuning x", max_cols as usize);
        let y = gpu.storage_f32("decode tuning y", rows as usize);
        let time = |kernels: &MatVec| -> Result<std::time::Duration, GpuError> {
            let mut bound = Vec::new();
            for m in timed {
                bound.extend(kernels.bind(gpu, m, &x, &y)?);
            }
            timing::median_pass(gpu, "decode tuning", &bound)
        };
        let (t_staged, t_binding) = (time(&staged)?, time(&from_binding)?);
        let micros = |t: std::time::Duration| t.as_secs_f64() * 1e6;
        let timings = format!(
            "timed: staged {:.1} µs, from its binding {:.1} µs",
            micros(t_staged),
            micros(t_binding)
        );
        let (matvec, x_choice) = if t_staged <= t_binding {
            (staged, format!("x staged in workgroup memory ({timings})"))
        } else {
            (from_binding, format!("x read from its binding ({timings})"))
        };
        tracing::info!(decode = %x_choice, "decode's products");
        Ok(Self {
            matvec,
            matmul,
            x_choice,
        })
    }

    /// Binds `y = m x` (or `y += m x`) for the one token of `step`.
    pub(super) fn bind(
        &self,
        gpu: &Gpu,
        m: &GpuMatrix,
        x: &wgpu::Buffer,
        y: &wgpu::Buffer,
        step: &wgpu::Buffer,
        out: Output,
    ) -> Result<Vec<Bound>, GpuError> {
        match &self.matmul {
            Some(mm) => mm.bind_output(gpu, m, x, y, step, 1, out),
            None => self.matvec.bind_output(gpu, m, x, y, out),
        }
    }
}

/// The product kernels the plans bind.
pub(super) struct Products {
    pub(super) decode: DecodeProducts,
    /// Decode's products with the norm before them folded in, where decode fuses.
    pub(super) normed: Option<NormedMatVec>,
    /// Prefill's products, `prefill_tile` tokens an invocation.
    pub(super) matmul: MatMul,
    /// Prefill's joined products (q/k/v, gate/up with the activation), where prefill fuses.
    pub(super) joined: Option<JoinedMatMul>,
    pub(super) prefill_tile: TileChoice,
}

impl Products {
    /// The kernels for matrices of `types` in a model of hidden size `dim`, as `fusion` and
    /// `tile` ask; a tile is timed with the products of the first of `layers`.
    pub(super) fn choose(
        gpu: &Gpu,
        types: &[TensorType],
        dim: u32,
        gate: Gate,
        layers: &[Layer],
        fusion: Fusion,
        tile: PrefillTile,
    ) -> Result<Self, ModelError> {
        let max_cols = layers
            .iter()
            .flat_map(|l| [&l.wq, &l.wk, &l.wv, &l.wo, &l.gate, &l.up, &l.down])
            .map(|m| m.cols())
            .fold(dim, u32::max);
        let decode = DecodeProducts::new(gpu, types, max_cols, &[&layers[0].wo, &layers[0].down])?;
        let fused = fusion.fuses(&decode);
        let normed = normed_matvec(gpu, fusion, fused, types, dim, gate, &decode.matvec)?;
        let prefill_tile = prefill_tile(gpu, tile, types, layers, fused)?;
        let matmul = MatMul::with_blocking(gpu, types, prefill_tile.chosen)?;
        let joined = fused
            .then(|| JoinedMatMul::with_blocking(gpu, types, gate, prefill_tile.chosen))
            .transpose()?;
        Ok(Self {
            decode,
            normed,
            matmul,
            joined,
            prefill_tile,
        })
    }
}

/// Decode's norm folded into the products after it, where the plans fuse. Asked for
/// ([`Fusion::Fused`]) it must compile; chosen ([`Fusion::Auto`]) the norm stays separate where
/// the device's workgroup memory cannot hold a hidden state.
fn normed_matvec(
    gpu: &Gpu,
    fusion: Fusion,
    fused: bool,
    types: &[TensorType],
    dim: u32,
    gate: Gate,
    matvec: &MatVec,
) -> Result<Option<NormedMatVec>, ModelError> {
    Ok(match fusion {
        _ if !fused => None,
        Fusion::Auto => match NormedMatVec::new(gpu, types, dim, gate, matvec.config()) {
            Ok(normed) => Some(normed),
            Err(e) => {
                tracing::info!(error = %e, "decode keeps a separate norm");
                None
            }
        },
        _ => Some(NormedMatVec::new(gpu, types, dim, gate, matvec.config())?),
    })
}

/// Prefill's tile of tokens as `tile` asks; chosen on a GPU by timing the first layer's products
/// as prefill binds them (joined where it joins them).
fn prefill_tile(
    gpu: &Gpu,
    tile: PrefillTile,
    types: &[TensorType],
    layers: &[Layer],
    fused: bool,
) -> Result<TileChoice, ModelError> {
    let choice = match tile {
        PrefillTile::Fixed(1) => {
            return Err(GpuError::Compile {
                what: "prefill".into(),
                message: "a tile of 1 token is decode's, not a batch's".into(),
            }
            .into())
        }
        PrefillTile::Fixed(t) => TileChoice::fixed(Blocking::Rows(t)),
        PrefillTile::Cooperative => {
            TileChoice::fixed(Blocking::Cooperative(CoopShape::first(gpu)?))
        }
        PrefillTile::Auto if gpu.is_cpu() => TileChoice::fixed(Blocking::Rows(BATCH_TILE)),
        PrefillTile::Auto => {
            let l = &layers[0];
            let mut timed: Vec<&GpuMatrix> = Vec::new();
            match (&l.qkv, fused) {
                (Some(qkv), true) => timed.push(qkv),
                _ => timed.extend([&l.wq, &l.wk, &l.wv]),
            }
            timed.push(&l.wo);
            match (&l.gate_up, fused) {
                (Some(gate_up), true) => timed.push(gate_up),
                _ => timed.extend([&l.gate, &l.up]),
            }
            timed.push(&l.down);
            let candidates = tile_tuning::candidates(gpu);
            tile_tuning::fastest(gpu, types, &timed, PREFILL_BATCH, &candidates)?
        }
    };
    tracing::info!(tile = %choice.describe(), "prefill's tile of tokens");
    Ok(choice)
}

/// Attention's kernels for layers of `shape` (its global layers': Gemma's local ones see fewer
/// keys), for a batch and for decode as `prefill` and `decode` ask, with what was chosen for
/// each; chosen on a GPU by timing late in a long prompt.
pub(super) fn attention(
    gpu: &Gpu,
    shape: &AttentionShape,
    prefill: AttentionTuning,
    decode: AttentionTuning,
) -> Result<(Attention, KernelChoice, KernelChoice), ModelError> {
    let base = Attention::new(gpu)?;
    let batch = attention_kernel(gpu, &base, shape, prefill, PREFILL_BATCH)?;
    let token = attention_kernel(gpu, &base, shape, decode, 1)?;
    tracing::info!(
        prefill = %batch.describe(),
        decode = %token.describe(),
        "attention's kernels"
    );
    let attention = attention_tuning::build(gpu, &base, shape, batch.chosen, token.chosen)?;
    Ok((attention, batch, token))
}

/// The kernel for `tokens` new tokens (a batch, or decode's 1) as `tuning` asks.
fn attention_kernel(
    gpu: &Gpu,
    base: &Attention,
    shape: &AttentionShape,
    tuning: AttentionTuning,
    tokens: u32,
) -> Result<KernelChoice, ModelError> {
    Ok(match tuning {
        AttentionTuning::PerToken => KernelChoice::fixed(AttentionKernel::PerToken),
        AttentionTuning::Blocks => {
            let blocks = AttentionBlock::all(gpu, shape.head_dim);
            let block = match tokens {
                1 => blocks.last(),
                _ => blocks.first(),
            };
            let block = block
                .copied()
                .ok_or_else(|| AttentionBlock::why_none(gpu, shape.head_dim))?;
            KernelChoice::fixed(AttentionKernel::Blocks(block))
        }
        AttentionTuning::Auto if gpu.is_cpu() => KernelChoice::fixed(AttentionKernel::PerToken),
        AttentionTuning::Auto => {
            let candidates = attention_tuning::candidates(gpu, shape);
            attention_tuning::fastest(gpu, base, shape, tokens, &candidates)?
        }
    })
}

/// Where decode merges its attention's slices, as `tuning` asks, for layers of `shape` (the
/// global layers'), with the output product `wo` of the first layer timed both ways where it is
/// chosen: the merging product where that wins (or is asked for).
pub(super) fn slice_merge(
    gpu: &Gpu,
    tuning: SliceMerge,
    products: &Products,
    attention: &Attention,
    shape: &AttentionShape,
    wo: &GpuMatrix,
    types: &[TensorType],
) -> Result<(Option<MergingMatVec>, MergeChoice), ModelError> {
    let fused = products.normed.is_some();
    // A CPU driver's products take a row an invocation; the merge, forced there to check it,
    // takes a GPU's shape.
    let config = match products.decode.matvec.config() {
        c if c.threads_per_row > 1 => c,
        _ => MatVecConfig::shared_rows(gpu),
    };
    let why_not = MergingMatVec::why_not(gpu, shape.heads, shape.head_dim, config);
    let fixed = |site| Ok((None, MergeChoice::fixed(site)));
    if !attention.slices_decode() || shape.decode_splits() == 1 {
        return fixed(MergeSite::Unsliced);
    }
    let merging = || MergingMatVec::new(gpu, types, shape.heads, shape.head_dim, config);
    match tuning {
        SliceMerge::Dispatch => return fixed(MergeSite::Dispatch),
        SliceMerge::Product if !fused => {
            return Err(ModelError::Unsupported(
                "decode's slices merged by the output product need fused decode".into(),
            ))
        }
        SliceMerge::Product => {
            return Ok((Some(merging()?), MergeChoice::fixed(MergeSite::Product)))
        }
        SliceMerge::Auto if !fused || gpu.is_cpu() => return fixed(MergeSite::Dispatch),
        SliceMerge::Auto => {}
    }
    if let Some(why) = why_not {
        tracing::info!(%why, "decode merges its attention's slices in a dispatch of their own");
        return fixed(MergeSite::Dispatch);
    }
    let merging = merging()?;
    let matvec = &products.decode.matvec;
    let choice = merge_tuning::fastest(gpu, attention, &merging, matvec, shape, wo)?;
    tracing::info!(merge = %choice.describe(), "decode's attention slices");
    let merging = (choice.chosen == MergeSite::Product).then_some(merging);
    Ok((merging, choice))
}
