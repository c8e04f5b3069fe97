//! Decode attention: one new token's queries over the KV cache.

use super::kernel::{record_pass, Bound, Kernel, StepUniform};
use super::{Gpu, GpuError};

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    head_dim: u32,
    heads: u32,
    kv_heads: u32,
    _unused: u32,
    scratch_stride: u32,
    scale: f32,
    _pad: [u32; 2],
}

/// The shape of one attention call.
#[derive(Debug, Clone, Copy)]
pub struct AttentionShape {
    pub heads: u32,
    pub kv_heads: u32,
    pub head_dim: u32,
    /// Positions attended to: 0..n_kv. [`Attention::bind`] ignores it: there the step uniform
    /// says.
    pub n_kv: u32,
    /// Floats per head in the scratch buffer (at least `n_kv`; the cache's capacity).
    pub scratch_stride: u32,
    /// Multiplies q·k: 1/sqrt(head_dim) in llama, Gemma's query_pre_attn_scalar^-½.
    pub scale: f32,
}

#[derive(Debug)]
pub struct Attention {
    kernel: Kernel,
}

/// The buffers of one attention call.
#[derive(Debug, Clone, Copy)]
pub struct AttentionBuffers<'a> {
    /// heads × head_dim
    pub q: &'a wgpu::Buffer,
    /// capacity × kv_heads × head_dim, positions 0..n_kv filled
    pub k_cache: &'a wgpu::Buffer,
    pub v_cache: &'a wgpu::Buffer,
    /// heads × scratch_stride
    pub scratch: &'a wgpu::Buffer,
    /// heads × head_dim
    pub out: &'a wgpu::Buffer,
}

impl Attention {
    pub fn new(gpu: &Gpu) -> Result<Self, GpuError> {
        Ok(Self {
            kernel: Kernel::new(
                gpu,
                "attention",
                &super::shader::with_workgroup_reduce(include_str!("../kernels/attention.wgsl")),
            )?,
        })
    }

    pub fn encode(
        &self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        b: AttentionBuffers<'_>,
        s: AttentionShape,
    ) -> Result<(), GpuError> {
        let step = StepUniform::new(s.n_kv.saturating_sub(1), s.n_kv).buffer(gpu);
        let bound = self.bind(gpu, b, s, &step)?;
        record_pass(encoder, "attention", &[bound]);
        Ok(())
    }

    /// The same dispatch, bound once, the positions read from `step` (a [`StepUniform`] whose
    /// `n_kv` must not exceed `s.scratch_stride`).
    pub fn bind(
        &self,
        gpu: &Gpu,
        b: AttentionBuffers<'_>,
        s: AttentionShape,
        step: &wgpu::Buffer,
    ) -> Result<Bound, GpuError> {
        if s.kv_heads == 0 || !s.heads.is_multiple_of(s.kv_heads) || s.n_kv > s.scratch_stride {
            return Err(GpuError::Shape {
                name: "attention".into(),
                reason: format!("{s:?}"),
            });
        }
        let params = Params {
            head_dim: s.head_dim,
            heads: s.heads,
            kv_heads: s.kv_heads,
            _unused: 0,
            scratch_stride: s.scratch_stride,
            scale: s.scale,
            _pad: [0; 2],
        };
        Ok(self.kernel.bind(
            gpu,
            &[b.q, b.k_cache, b.v_cache, b.scratch, b.out, step],
            &params,
            (s.heads, 1, 1),
        ))
    }
}
