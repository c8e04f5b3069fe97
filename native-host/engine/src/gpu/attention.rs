//! Causal attention of new tokens over the KV cache: a prefill batch, or decode's one token.
//!
//! Grouped-query heads, an optional sliding window, and an online softmax, so no scores are
//! stored. The per-token form depends on the device ([`AttentionForm`]): on a GPU a workgroup
//! per (head, token); on CPU drivers an invocation per (head, token) with no barrier, since on
//! lavapipe a barrier costs more than the arithmetic. Decode's single token on a GPU cuts the
//! cache into slices of whole 64-key blocks, a workgroup each, merged by
//! `attention_combine.wgsl`: one workgroup per head walking the whole cache leaves a large GPU
//! idle. Batches, decode or both can instead run in blocks of query rows (`attention_block.rs`),
//! decode's sliced and merged the same way, and a batch's on cooperative matrices
//! (`coop_attention.rs`); `attention_tuning.rs` chooses. Fused decode may
//! leave the slices to the output product, which merges them as it reads them
//! (`merging_matvec.rs`), and decode's GPU kernels can do the step's RoPE and cache store
//! themselves (`attention_rope.wgsl`): each is a dispatch fewer a layer, and each dispatch costs
//! a GPU a fixed few microseconds.

use super::attention_block::{AttentionBlock, BlockAttention};
use super::attention_shape::{
    kernel_source, with_keys, AttentionBuffers, AttentionShape, CacheAccess, CombineParams,
};
use super::coop_attention::{CoopAttention, CoopAttentionBlock};
use super::kernel::{record_pass, Bound, Kernel, StepUniform};
use super::rope::Rope;
use super::{Gpu, GpuError};

/// How the work of one attention call is spread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttentionForm {
    /// A workgroup per (head, token), sharing the keys among its invocations: for GPUs.
    Workgroup,
    /// An invocation per (head, token), with no barrier: for CPU drivers, where barriers cost
    /// more than the arithmetic.
    Lane,
    /// The lane form, with a prefill batch's loads of keys and values shared across the lanes of
    /// a subgroup (`attention_lane_shared.wgsl`): for CPU drivers with subgroups of 8 lanes or
    /// more, where every load is a gather across the SIMD lanes.
    SharedLane,
}

impl AttentionForm {
    pub fn for_gpu(gpu: &Gpu) -> Self {
        match (gpu.chooses_cpu_kernels(), Self::can_share(gpu)) {
            (true, true) => Self::SharedLane,
            (true, false) => Self::Lane,
            (false, _) => Self::Workgroup,
        }
    }

    /// Whether `gpu` can run [`AttentionForm::SharedLane`].
    pub fn can_share(gpu: &Gpu) -> bool {
        gpu.has_subgroups() && gpu.info().subgroup_min_size >= 8
    }
}

/// The step's key and value as decode's projection wrote them (f32, unrotated), and the RoPE
/// that rotates them and the query: for attention that rotates ([`Attention::bind_rotating`]).
#[derive(Debug, Clone, Copy)]
pub struct NewKeys<'a> {
    pub rope: &'a Rope,
    pub k: &'a wgpu::Buffer,
    pub v: &'a wgpu::Buffer,
}

/// Decode's keys cut into slices and attended to, not yet merged: per query head and slice,
/// the running maximum, sum and unnormalised output. `attention_combine.wgsl` merges them in a
/// dispatch of its own, or the product after attention does as it reads them
/// ([`MergingMatVec`](super::MergingMatVec)): a dispatch fewer a layer.
#[derive(Debug)]
pub struct AttentionSlices {
    pub(super) part: wgpu::Buffer,
    pub(super) params: CombineParams,
}

impl AttentionSlices {
    /// Room for decode's slices in layers of `s`; `None` where decode does not cut their keys
    /// (a cache or window of one block). Bound to attention by it; on their own, to time what
    /// merges them.
    pub fn for_decode(gpu: &Gpu, s: AttentionShape) -> Option<Self> {
        let splits = s.decode_splits();
        (splits > 1).then(|| Self {
            part: gpu.storage_f32(
                "attention slices",
                (s.heads * splits * (s.head_dim + 2)) as usize,
            ),
            params: s.combine_params(splits),
        })
    }

    /// The query heads × their width: the length of the merged output.
    pub(super) fn width(&self) -> u32 {
        self.params.heads * self.params.head_dim
    }
}

/// A batch's kernel in blocks of query rows: on the f32 units, or on cooperative matrices.
#[derive(Debug, Clone)]
enum BatchBlocks {
    Plain(BlockAttention),
    Cooperative(CoopAttention),
}

/// Decode's kernel compiled to rotate the step's query and store its key and value itself
/// (`attention_rope.wgsl`): RoPE's dispatch and attention's in one.
#[derive(Debug, Clone)]
enum Rotating {
    PerToken(Kernel),
    Blocks(BlockAttention),
}

#[derive(Debug, Clone)]
pub struct Attention {
    form: AttentionForm,
    kernel: Kernel,
    /// The shared-lane form's kernel for batches, and the subgroup size each head's tokens are
    /// padded to for it.
    batch: Option<(Kernel, u32)>,
    /// Merges the slices of the workgroup form's decode.
    combine: Kernel,
    /// Batches, and decode's token, in blocks of query rows sharing tiles of keys
    /// (`attention_block.rs`; a batch's may be on cooperative matrices, `coop_attention.rs`),
    /// where that was chosen; otherwise the form's own kernels.
    batch_blocks: Option<BatchBlocks>,
    decode_blocks: Option<BlockAttention>,
    /// Decode's kernel rotating as well, where that was asked for.
    rotating: Option<Rotating>,
}

impl Attention {
    /// The form that suits `gpu`.
    pub fn new(gpu: &Gpu) -> Result<Self, GpuError> {
        Self::with_form(gpu, AttentionForm::for_gpu(gpu))
    }

    pub fn with_form(gpu: &Gpu, form: AttentionForm) -> Result<Self, GpuError> {
        let form_kernel = |label: &'static str, src: &str| {
            Kernel::new(gpu, label, &kernel_source(src, CacheAccess::Read))
        };
        let batch = match form {
            AttentionForm::SharedLane => {
                if !AttentionForm::can_share(gpu) {
                    return Err(GpuError::Unsupported {
                        adapter: gpu.describe(),
                        what: "subgroups of at least 8 lanes (shared-lane attention)".into(),
                    });
                }
                let kernel = form_kernel(
                    "attention (shared lanes)",
                    include_str!("../kernels/attention_lane_shared.wgsl"),
                )?;
                Some((kernel, gpu.info().subgroup_max_size.max(8)))
            }
            _ => None,
        };
        let kernel = match form {
            AttentionForm::Workgroup => workgroup_kernel(gpu, CacheAccess::Read)?,
            AttentionForm::Lane | AttentionForm::SharedLane => form_kernel(
                "attention (lane)",
                include_str!("../kernels/attention_lane.wgsl"),
            )?,
        };
        let combine = Kernel::new(
            gpu,
            "attention combine",
            &with_keys(include_str!("../kernels/attention_combine.wgsl")),
        )?;
        Ok(Self {
            form,
            kernel,
            batch,
            combine,
            batch_blocks: None,
            decode_blocks: None,
            rotating: None,
        })
    }

    /// Whether decode's kernel can rotate the step's query and store its key and value itself:
    /// the workgroup form's and the blocks' can; the lane forms, for CPU drivers, leave that to
    /// RoPE's dispatch.
    pub fn can_rotate(&self) -> bool {
        self.slices_decode()
    }

    /// Compiles decode's kernel (the blocks, where decode has them) to rotate as well, for
    /// [`Self::bind_rotating`]: an error where it cannot ([`Self::can_rotate`]).
    pub fn with_rotating_decode(mut self, gpu: &Gpu) -> Result<Self, GpuError> {
        let rotating = match (&self.decode_blocks, self.form) {
            (Some(blocks), _) => Rotating::Blocks(blocks.rotating(gpu)?),
            (None, AttentionForm::Workgroup) => {
                Rotating::PerToken(workgroup_kernel(gpu, CacheAccess::Rotate)?)
            }
            (None, form) => {
                return Err(GpuError::Unsupported {
                    adapter: gpu.describe(),
                    what: format!("decode's attention rotating its query and key ({form:?} form)"),
                })
            }
        };
        self.rotating = Some(rotating);
        Ok(self)
    }

    /// Whether decode cuts its keys into slices, a workgroup each, to be merged after (GPUs'
    /// forms: the workgroup form and the blocks; the lane forms, for CPU drivers, do not).
    pub fn slices_decode(&self) -> bool {
        self.decode_blocks.is_some() || self.form == AttentionForm::Workgroup
    }

    /// Whether decode rotates (see [`Self::with_rotating_decode`]).
    pub fn rotates(&self) -> bool {
        self.rotating.is_some()
    }

    /// Batches (prefill) in blocks of `block` for heads of `head_dim`. An error where the device
    /// cannot run the block.
    pub fn with_blocks(
        mut self,
        gpu: &Gpu,
        block: AttentionBlock,
        head_dim: u32,
    ) -> Result<Self, GpuError> {
        self.batch_blocks = Some(BatchBlocks::Plain(BlockAttention::new(
            gpu, block, head_dim,
        )?));
        Ok(self)
    }

    /// Batches (prefill) in blocks of `block` on cooperative matrices, for heads of `head_dim`.
    /// An error where the device cannot run the block.
    pub fn with_cooperative_blocks(
        mut self,
        gpu: &Gpu,
        block: CoopAttentionBlock,
        head_dim: u32,
    ) -> Result<Self, GpuError> {
        self.batch_blocks = Some(BatchBlocks::Cooperative(CoopAttention::new(
            gpu, block, head_dim,
        )?));
        Ok(self)
    }

    /// Decode's token in blocks of `block` (its KV heads' query heads), its keys cut into slices
    /// as the workgroup form cuts them.
    pub fn with_decode_blocks(
        mut self,
        gpu: &Gpu,
        block: AttentionBlock,
        head_dim: u32,
    ) -> Result<Self, GpuError> {
        self.decode_blocks = Some(BlockAttention::new(gpu, block, head_dim)?);
        Ok(self)
    }

    /// For tests: the shared-lane form with each head's tokens not padded to whole subgroups, so
    /// that a subgroup can hold two KV heads' tokens and must load its keys itself.
    #[doc(hidden)]
    pub fn unpadded(mut self) -> Self {
        if let Some((_, lanes)) = &mut self.batch {
            *lanes = 1;
        }
        self
    }

    /// Records attention for `tokens` new tokens at positions `pos..pos + tokens` (one-off use
    /// and tests).
    #[allow(clippy::too_many_arguments)]
    pub fn encode(
        &self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        b: AttentionBuffers<'_>,
        s: AttentionShape,
        pos: u32,
        tokens: u32,
    ) -> Result<(), GpuError> {
        let step = StepUniform::new(pos, tokens).buffer(gpu);
        let bound = self.bind(gpu, b, s, &step, tokens)?;
        record_pass(encoder, "attention", &bound);
        Ok(())
    }

    /// The dispatches for up to `max_tokens` new tokens, bound once; the batch's first position
    /// and length are read from `step` (a [`StepUniform`]). On a GPU, decode (`max_tokens` 1)
    /// cuts the keys into slices, a workgroup each, and a second dispatch merges them.
    pub fn bind(
        &self,
        gpu: &Gpu,
        b: AttentionBuffers<'_>,
        s: AttentionShape,
        step: &wgpu::Buffer,
        max_tokens: u32,
    ) -> Result<Vec<Bound>, GpuError> {
        let (attend, slices) = self.attend(gpu, b, s, step, max_tokens, None)?;
        Ok(self.merged(gpu, attend, slices.as_ref(), b.out, step))
    }

    /// Records decode's rotating attention for the token at `pos` (one-off use and tests).
    pub fn encode_rotating(
        &self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        b: AttentionBuffers<'_>,
        s: AttentionShape,
        pos: u32,
        new: NewKeys<'_>,
    ) -> Result<(), GpuError> {
        let step = StepUniform::new(pos, 1).buffer(gpu);
        let bound = self.bind_rotating(gpu, b, s, &step, new)?;
        record_pass(encoder, "attention", &bound);
        Ok(())
    }

    /// Decode's dispatches, bound once: `b.q` holds the step's query unrotated, and `new` its
    /// key and value as the projections wrote them; the attention rotates them, stores the key
    /// and value into the cache at the step's position, and attends. RoPE's dispatch and
    /// attention's in one, where [`Self::bind`] needs RoPE's dispatch before it.
    pub fn bind_rotating(
        &self,
        gpu: &Gpu,
        b: AttentionBuffers<'_>,
        s: AttentionShape,
        step: &wgpu::Buffer,
        new: NewKeys<'_>,
    ) -> Result<Vec<Bound>, GpuError> {
        let (attend, slices) = self.attend(gpu, b, s, step, 1, Some(new))?;
        Ok(self.merged(gpu, attend, slices.as_ref(), b.out, step))
    }

    /// Decode's attention alone, rotating where `new` is given (as [`Self::bind_rotating`]),
    /// with its slices left for the product after it to merge. Where decode does not cut the
    /// keys there are none, and the one dispatch writes `b.out` as [`Self::bind`]'s do.
    pub fn bind_unmerged(
        &self,
        gpu: &Gpu,
        b: AttentionBuffers<'_>,
        s: AttentionShape,
        step: &wgpu::Buffer,
        new: Option<NewKeys<'_>>,
    ) -> Result<(Bound, Option<AttentionSlices>), GpuError> {
        self.attend(gpu, b, s, step, 1, new)
    }

    /// The merge of decode's `slices` into `out` (heads × head_dim), a dispatch of its own.
    pub fn bind_merge(
        &self,
        gpu: &Gpu,
        slices: &AttentionSlices,
        out: &wgpu::Buffer,
        step: &wgpu::Buffer,
    ) -> Bound {
        self.combine.bind(
            gpu,
            &[&slices.part, out, step],
            &slices.params,
            (slices.params.heads, 1, 1),
        )
    }

    /// The attention dispatch for up to `max_tokens` tokens, rotating decode's where `new` is
    /// given, and the slices it leaves where it cuts decode's keys.
    fn attend(
        &self,
        gpu: &Gpu,
        b: AttentionBuffers<'_>,
        s: AttentionShape,
        step: &wgpu::Buffer,
        max_tokens: u32,
        new: Option<NewKeys<'_>>,
    ) -> Result<(Bound, Option<AttentionSlices>), GpuError> {
        s.check()?;
        super::kernel::check_rows(gpu, "attention", max_tokens)?;
        let decode = max_tokens == 1;
        if let Some(new) = new {
            return self.attend_rotating(gpu, b, s, step, new);
        }
        // Decode's keys are sliced on GPUs (the workgroup form and the blocks).
        let (slices, part, splits) = slice_binding(gpu, s, decode && self.slices_decode());
        let blocks = match (decode, &self.decode_blocks, &self.batch_blocks) {
            (true, Some(blocks), _) | (false, _, Some(BatchBlocks::Plain(blocks))) => Some(blocks),
            (false, _, Some(BatchBlocks::Cooperative(coop))) => {
                return Ok((coop.bind(gpu, b, s, step, max_tokens)?, slices));
            }
            _ => None,
        };
        if let Some(blocks) = blocks {
            let attend = blocks.bind(gpu, b, s, step, (max_tokens, splits), &part, &[])?;
            return Ok((attend, slices));
        }
        let mut params = s.params(max_tokens, splits);
        let attend = match self.form {
            AttentionForm::Lane | AttentionForm::SharedLane => {
                let (kernel, per_head) = match &self.batch {
                    Some((kernel, lanes)) if max_tokens > 1 => {
                        (kernel, max_tokens.next_multiple_of(*lanes))
                    }
                    _ => (&self.kernel, max_tokens),
                };
                params.max_tokens = per_head;
                kernel.bind(
                    gpu,
                    &[b.q, b.k_cache, b.v_cache, b.out, step],
                    &params,
                    super::kernel::grid_for(gpu, s.heads * per_head, 64),
                )
            }
            AttentionForm::Workgroup => self.kernel.bind(
                gpu,
                &[b.q, b.k_cache, b.v_cache, b.out, step, &part],
                &params,
                (s.heads, max_tokens, splits),
            ),
        };
        Ok((attend, slices))
    }

    /// Decode's rotating dispatch (see [`Self::bind_rotating`]) and its slices.
    fn attend_rotating(
        &self,
        gpu: &Gpu,
        b: AttentionBuffers<'_>,
        s: AttentionShape,
        step: &wgpu::Buffer,
        new: NewKeys<'_>,
    ) -> Result<(Bound, Option<AttentionSlices>), GpuError> {
        let Some(rotating) = &self.rotating else {
            return Err(GpuError::Unsupported {
                adapter: gpu.describe(),
                what: "rotating decode from an attention compiled without it".into(),
            });
        };
        let (uniform, freq_factors) = new.rope.for_attention(gpu, s.head_dim);
        let tail = [new.k, new.v, freq_factors, &uniform];
        let (slices, part, splits) = slice_binding(gpu, s, true);
        let attend = match rotating {
            Rotating::Blocks(blocks) => blocks.bind(gpu, b, s, step, (1, splits), &part, &tail)?,
            Rotating::PerToken(kernel) => kernel.bind_with_tail(
                gpu,
                &[b.q, b.k_cache, b.v_cache, b.out, step, &part],
                &s.params(1, splits),
                &tail,
                (s.heads, 1, splits),
            ),
        };
        Ok((attend, slices))
    }

    /// `attend`, then, where it left `slices`, their merge into `out`.
    fn merged(
        &self,
        gpu: &Gpu,
        attend: Bound,
        slices: Option<&AttentionSlices>,
        out: &wgpu::Buffer,
        step: &wgpu::Buffer,
    ) -> Vec<Bound> {
        match slices {
            None => vec![attend],
            Some(slices) => vec![attend, self.bind_merge(gpu, slices, out, step)],
        }
    }
}

/// What a dispatch binds for its slices, where `sliced` asks for decode's: the slices where `s`'s
/// keys are cut into more than one, the buffer to bind (theirs, or a placeholder the kernel
/// does not touch), and how many slices there are.
fn slice_binding(
    gpu: &Gpu,
    s: AttentionShape,
    sliced: bool,
) -> (Option<AttentionSlices>, wgpu::Buffer, u32) {
    let slices = if sliced {
        AttentionSlices::for_decode(gpu, s)
    } else {
        None
    };
    match slices {
        Some(slices) => {
            let (part, splits) = (slices.part.clone(), slices.params.splits);
            (Some(slices), part, splits)
        }
        None => (None, gpu.storage_f32("attention slices (unused)", 1), 1),
    }
}

/// The workgroup form's kernel, reading the cache or rotating.
fn workgroup_kernel(gpu: &Gpu, access: CacheAccess) -> Result<Kernel, GpuError> {
    let name = match access {
        CacheAccess::Read => "attention",
        CacheAccess::Rotate => "attention with RoPE",
    };
    let source = kernel_source(include_str!("../kernels/attention.wgsl"), access);
    Kernel::new(gpu, name, &super::shader::with_workgroup_reduce(&source))
}
