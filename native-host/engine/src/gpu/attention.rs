//! Causal attention of new tokens over the KV cache: a prefill batch, or decode's one token.
//!
//! Grouped-query heads, an optional sliding window, and an online softmax, so no scores are
//! stored. The form depends on the device ([`AttentionForm`]): on a GPU a workgroup per (head,
//! token); on CPU drivers an invocation per (head, token) with no barrier, since on lavapipe a
//! barrier costs more than the arithmetic. Decode's single token on a GPU cuts the cache into
//! slices of whole 64-key blocks, a workgroup each, merged by `attention_combine.wgsl`: one
//! workgroup per head walking the whole cache leaves a large GPU idle.

use super::kernel::{record_pass, Bound, Kernel, StepUniform};
use super::{Gpu, GpuError};

/// The largest head the kernel's workgroup memory holds (Gemma 3's 256).
pub const MAX_HEAD_DIM: u32 = 256;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    head_dim: u32,
    heads: u32,
    kv_heads: u32,
    window: u32,
    capacity: u32,
    scale: f32,
    /// The lane form's tokens per head in the dispatch (the workgroup form ignores it).
    max_tokens: u32,
    /// Slices of the keys, a workgroup each (the workgroup form's decode); 1 otherwise.
    splits: u32,
}

/// `attention_combine.wgsl`'s parameters.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct CombineParams {
    head_dim: u32,
    heads: u32,
    splits: u32,
    window: u32,
    capacity: u32,
    block: u32,
    _pad: [u32; 2],
}

/// Which keys a token sees and how decode slices them, for both attention kernels.
const KEY_SLICES: &str = include_str!("../kernels/key_slices.wgsl");
/// Where a position's keys and values lie in the f16 cache.
const KV_CACHE: &str = include_str!("../kernels/kv_cache.wgsl");

/// Keys per workgroup block in `attention.wgsl` (its `WG`): slices are whole blocks.
const BLOCK: u32 = 64;
/// The most slices decode's keys are cut into.
const MAX_SPLITS: u32 = 32;

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
        match (gpu.is_cpu(), Self::can_share(gpu)) {
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

/// The shape of one attention layer.
#[derive(Debug, Clone, Copy)]
pub struct AttentionShape {
    pub heads: u32,
    pub kv_heads: u32,
    pub head_dim: u32,
    /// Positions the cache holds.
    pub capacity: u32,
    /// A sliding window: each token attends to at most this many positions, itself included.
    pub window: Option<u32>,
    /// Multiplies q·k: 1/sqrt(head_dim) in llama, Gemma's query_pre_attn_scalar^-½.
    pub scale: f32,
}

#[derive(Debug)]
pub struct Attention {
    form: AttentionForm,
    kernel: Kernel,
    /// The shared-lane form's kernel for batches, and the subgroup size each head's tokens are
    /// padded to for it.
    batch: Option<(Kernel, u32)>,
    /// Merges the slices of the workgroup form's decode.
    combine: Kernel,
}

/// The buffers of one attention call.
#[derive(Debug, Clone, Copy)]
pub struct AttentionBuffers<'a> {
    /// tokens × heads × head_dim
    pub q: &'a wgpu::Buffer,
    /// capacity × kv_heads × head_dim f16 values, two to a u32 (`kv_cache.wgsl`), filled up to
    /// the last new token
    pub k_cache: &'a wgpu::Buffer,
    pub v_cache: &'a wgpu::Buffer,
    /// tokens × heads × head_dim
    pub out: &'a wgpu::Buffer,
}

impl Attention {
    /// The form that suits `gpu`.
    pub fn new(gpu: &Gpu) -> Result<Self, GpuError> {
        Self::with_form(gpu, AttentionForm::for_gpu(gpu))
    }

    pub fn with_form(gpu: &Gpu, form: AttentionForm) -> Result<Self, GpuError> {
        // Every kernel here reads the step uniform and agrees on which keys a token sees.
        let with_keys = |src: &str| format!("{}\n{KEY_SLICES}", super::shader::with_step(src));
        let common = format!(
            "{}\n{KV_CACHE}",
            with_keys(include_str!("../kernels/attention_common.wgsl"))
        );
        let form_kernel =
            |label: &'static str, src: &str| Kernel::new(gpu, label, &format!("{common}\n{src}"));
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
            AttentionForm::Workgroup => Kernel::new(
                gpu,
                "attention",
                &super::shader::with_workgroup_reduce(&format!(
                    "{common}\n{}",
                    include_str!("../kernels/attention.wgsl")
                )),
            )?,
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
        })
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
        if s.kv_heads == 0
            || !s.heads.is_multiple_of(s.kv_heads)
            || s.head_dim > MAX_HEAD_DIM
            || !s.head_dim.is_multiple_of(4)
            || s.window == Some(0)
        {
            return Err(GpuError::Shape {
                name: "attention".into(),
                reason: format!("{s:?} (heads of at most {MAX_HEAD_DIM}, a multiple of 4)"),
            });
        }
        super::kernel::check_rows(gpu, "attention", max_tokens)?;
        // The keys one token can see: at most the window, at most the cache.
        let span = s.window.unwrap_or(s.capacity).min(s.capacity);
        let splits = match self.form {
            AttentionForm::Workgroup if max_tokens == 1 => {
                span.div_ceil(BLOCK).clamp(1, MAX_SPLITS)
            }
            _ => 1,
        };
        let mut params = Params {
            head_dim: s.head_dim,
            heads: s.heads,
            kv_heads: s.kv_heads,
            window: s.window.unwrap_or(0),
            capacity: s.capacity,
            scale: s.scale,
            max_tokens,
            splits,
        };
        match self.form {
            AttentionForm::Lane | AttentionForm::SharedLane => {
                let (kernel, per_head) = match &self.batch {
                    Some((kernel, lanes)) if max_tokens > 1 => {
                        (kernel, max_tokens.next_multiple_of(*lanes))
                    }
                    _ => (&self.kernel, max_tokens),
                };
                params.max_tokens = per_head;
                Ok(vec![kernel.bind(
                    gpu,
                    &[b.q, b.k_cache, b.v_cache, b.out, step],
                    &params,
                    super::kernel::grid_for(gpu, s.heads * per_head, 64),
                )])
            }
            AttentionForm::Workgroup => {
                // Unused (but bound) when there is one slice.
                let parts = if splits > 1 {
                    (s.heads * max_tokens * splits * (s.head_dim + 2)) as usize
                } else {
                    1
                };
                let part = gpu.storage_f32("attention slices", parts);
                let attend = self.kernel.bind(
                    gpu,
                    &[b.q, b.k_cache, b.v_cache, b.out, step, &part],
                    &params,
                    (s.heads, max_tokens, splits),
                );
                if splits == 1 {
                    return Ok(vec![attend]);
                }
                let combine = CombineParams {
                    head_dim: s.head_dim,
                    heads: s.heads,
                    splits,
                    window: params.window,
                    capacity: s.capacity,
                    block: BLOCK,
                    _pad: [0; 2],
                };
                Ok(vec![
                    attend,
                    self.combine.bind(
                        gpu,
                        &[&part, b.out, step],
                        &combine,
                        (s.heads, max_tokens, 1),
                    ),
                ])
            }
        }
    }
}
