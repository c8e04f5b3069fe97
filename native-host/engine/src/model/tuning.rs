//! Which kernels run the model on this device: whether operations are fused, decode's product
//! kernels (`decode_products.rs`), prefill's tile of tokens, attention's kernels and where
//! decode's attention slices are merged. What is fastest differs between GPUs and CPU drivers,
//! and some of it is measured as the model loads.

use crate::gpu::attention_tuning::{self, AttentionKernel, KernelChoice};
use crate::gpu::coop_check;
use crate::gpu::merge_tuning::{self, MergeChoice, MergeSite};
use crate::gpu::tile_tuning;
use crate::gpu::{
    Attention, AttentionBlock, AttentionShape, Blocking, CoopAttentionBlock, CoopShape, Gpu,
    GpuError, GpuMatrix, JoinedMatMul, MatMul, MatVecConfig, MergingMatVec, NormedMatVec,
    TileChoice, BATCH_TILE,
};
use crate::tensor_type::TensorType;

use super::decode_products::{DecodeProducts, NormedAsk};
use super::prefill_batch::PrefillBatch;
use super::weights::Layer;
use super::ModelError;
use crate::gate::Gate;

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
    /// holds (a batch's on cooperative matrices too, where it has them), timed as the model
    /// loads; on CPU drivers their per-token lane forms.
    #[default]
    Auto,
    /// The device's per-token form, untimed.
    PerToken,
    /// Blocks of query rows, untimed (a batch's the largest the device holds, decode's the
    /// smallest): an error where it holds none.
    Blocks,
    /// A batch's blocks on cooperative matrices (tensor cores), untimed (the first the device
    /// holds): an error where it holds none, and for decode, whose one token fills no fragment.
    Cooperative,
}

/// The shape of decode's products: how many invocations share a weight row (see
/// `decode_products.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DecodeShape {
    /// On a GPU, the fastest of 32, 16 and 8 invocations a row, timed with the model's products
    /// as it loads; on CPU drivers their own (a row an invocation), untimed.
    #[default]
    Auto,
    /// The GPU's shapes timed on any device (tests use it to check the timing on CPU drivers).
    Timed,
    /// This many invocations a row (32, 16 or 8), untimed: to compare shapes on one device.
    Threads(u32),
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
    pub decode_shape: DecodeShape,
    pub prefill_batch: PrefillBatch,
}

impl Fusion {
    /// Whether the plans fuse, where decode's products are the matrix-matrix kernel or not.
    fn fuses(self, decode_matmul: bool) -> bool {
        match self {
            Fusion::Fused => true,
            Fusion::Separate => false,
            Fusion::Auto => !decode_matmul,
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
    /// The kernels for matrices of `types` in a model of hidden size `dim`, as `tuning` asks;
    /// decode's shape and prefill's tile (for batches of `batch` tokens) are timed with the
    /// products of the first of `layers`.
    pub(super) fn choose(
        gpu: &Gpu,
        types: &[TensorType],
        (dim, batch): (u32, u32),
        gate: Gate,
        layers: &[Layer],
        tuning: GpuTuning,
    ) -> Result<Self, ModelError> {
        let (fusion, tile) = (tuning.fusion, tuning.tile);
        let max_cols = layers
            .iter()
            .flat_map(|l| [&l.wq, &l.wk, &l.wv, &l.wo, &l.gate, &l.up, &l.down])
            .map(|m| m.cols())
            .fold(dim, u32::max);
        let matmul = DecodeProducts::matmul_for(gpu, types)?;
        let fused = fusion.fuses(matmul.is_some());
        let ask = fused.then_some(NormedAsk {
            required: fusion == Fusion::Fused,
            dim,
            gate,
        });
        let shapes = match tuning.decode_shape {
            DecodeShape::Auto => MatVecConfig::candidates(gpu),
            DecodeShape::Timed => MatVecConfig::gpu_shapes(gpu),
            DecodeShape::Threads(n) => vec![MatVecConfig::rows_of(gpu, n)],
        };
        let layer = &layers[0];
        let (decode, normed) =
            DecodeProducts::choose(gpu, types, max_cols, layer, shapes, matmul, ask)?;
        let prefill_tile = prefill_tile(gpu, tile, types, layers, (fused, batch))?;
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

/// Prefill's tile of tokens as `tile` asks; chosen on a GPU by timing the first layer's products
/// as prefill binds them (joined where it `fused`), for a batch of `batch` tokens.
fn prefill_tile(
    gpu: &Gpu,
    tile: PrefillTile,
    types: &[TensorType],
    layers: &[Layer],
    (fused, batch): (bool, u32),
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
            let blocking = Blocking::Cooperative(CoopShape::first(gpu)?);
            coop_check::check_products(gpu, types, &prefill_products(&layers[0], fused), blocking)?;
            TileChoice::fixed(blocking)
        }
        PrefillTile::Auto if gpu.chooses_cpu_kernels() => {
            TileChoice::fixed(Blocking::Rows(BATCH_TILE))
        }
        PrefillTile::Auto => {
            let timed = prefill_products(&layers[0], fused);
            let candidates = tile_tuning::candidates(gpu);
            let choice = tile_tuning::fastest(gpu, types, &timed, batch, &candidates)?;
            match choice.chosen {
                Blocking::Cooperative(_) => {
                    match coop_check::check_products(gpu, types, &timed, choice.chosen) {
                        Ok(relative) => {
                            tracing::debug!(relative, "prefill's cooperative products checked");
                            choice
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "prefill keeps its portable products");
                            choice
                                .without(|b| matches!(b, Blocking::Rows(_)), e.to_string())
                                .unwrap_or_else(|| TileChoice::fixed(Blocking::Rows(BATCH_TILE)))
                        }
                    }
                }
                Blocking::Rows(_) => choice,
            }
        }
    };
    tracing::info!(tile = %choice.describe(), "prefill's tile of tokens");
    Ok(choice)
}

/// The first layer's products as prefill binds them (joined where it `fused`): what its tile is
/// timed and checked with.
fn prefill_products(l: &Layer, fused: bool) -> Vec<&GpuMatrix> {
    let mut products: Vec<&GpuMatrix> = Vec::new();
    match (&l.qkv, fused) {
        (Some(qkv), true) => products.push(qkv),
        _ => products.extend([&l.wq, &l.wk, &l.wv]),
    }
    products.push(&l.wo);
    match (&l.gate_up, fused) {
        (Some(gate_up), true) => products.push(gate_up),
        _ => products.extend([&l.gate, &l.up]),
    }
    products.push(&l.down);
    products
}

/// Attention's kernels for layers of `shape` (its global layers': Gemma's local ones see fewer
/// keys), for a batch of `batch` tokens and for decode as `prefill` and `decode` ask, with what
/// was chosen for each; chosen on a GPU by timing late in a long prompt.
pub(super) fn attention(
    gpu: &Gpu,
    shape: &AttentionShape,
    (prefill, batch): (AttentionTuning, u32),
    decode: AttentionTuning,
) -> Result<(Attention, KernelChoice, KernelChoice), ModelError> {
    let base = Attention::new(gpu)?;
    let batch = attention_kernel(gpu, &base, shape, prefill, batch)?;
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
        AttentionTuning::Cooperative => {
            let block = CoopAttentionBlock::all(gpu, shape.head_dim)
                .first()
                .copied()
                .ok_or_else(|| CoopAttentionBlock::why_none(gpu, shape.head_dim))?;
            if tokens > 1 {
                coop_check::check_attention(gpu, base, shape, block)?;
            }
            KernelChoice::fixed(AttentionKernel::Cooperative(block))
        }
        AttentionTuning::Auto if gpu.chooses_cpu_kernels() => {
            KernelChoice::fixed(AttentionKernel::PerToken)
        }
        AttentionTuning::Auto => {
            let candidates = attention_tuning::candidates(gpu, shape, tokens);
            let choice = attention_tuning::fastest(gpu, base, shape, tokens, &candidates)?;
            let AttentionKernel::Cooperative(block) = choice.chosen else {
                return Ok(choice);
            };
            match coop_check::check_attention(gpu, base, shape, block) {
                Ok(relative) => {
                    tracing::debug!(relative, "cooperative attention checked");
                    choice
                }
                Err(e) => {
                    tracing::warn!(error = %e, "attention keeps its portable kernels");
                    choice
                        .without(
                            |k| !matches!(k, AttentionKernel::Cooperative(_)),
                            e.to_string(),
                        )
                        .unwrap_or_else(|| KernelChoice::fixed(AttentionKernel::PerToken))
                }
            }
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
        SliceMerge::Auto if !fused || gpu.chooses_cpu_kernels() => {
            return fixed(MergeSite::Dispatch)
        }
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
