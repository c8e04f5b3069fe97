//! Rotary position embedding, with the settings a GGUF gives it.
//!
//! Positions deep in the context give angles of thousands of radians, where drivers' `pow` and
//! `sin`/`cos` drift (lavapipe's by 1e-4 rad at 1000): so `base^(-2/n)` comes from the host
//! and the kernel (`rope_angle.wgsl`) brings each angle into [-π, π] before `sin`/`cos`, as the
//! CPU functions llama.cpp uses do. One kernel rotates a buffer in place; another rotates a
//! step's queries in place and writes its keys, and its values beside them, straight into the
//! f16 KV cache (`kv_cache.wgsl`), after Gemma's per-head norm where the model has one, so
//! layers need no separate dispatches or copies there.

use wgpu::util::DeviceExt;

use super::kernel::{grid, grid_for, record_pass, Bound, Kernel, StepUniform};
use super::{Gpu, GpuError};
pub use crate::rope::{RopeError, RopeOrder, RopeParams};

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    head_dim: u32,
    n_dims: u32,
    heads: u32,
    tokens: u32,
    kv_heads: u32,
    neox: u32,
    freq_base: f32,
    freq_scale: f32,
    ext_factor: f32,
    attn_factor: f32,
    corr_low: f32,
    corr_high: f32,
    theta_scale: f32,
    /// The head norms' epsilon (`rope_qk_normed.wgsl` only).
    eps: f32,
    _pad: [u32; 2],
}

/// Gemma's per-head RMSNorm of the queries and keys, folded into their rotation
/// ([`Rope::bind_qk_normed`]): the projections before the norm and the norms' weights.
#[derive(Debug, Clone, Copy)]
pub struct HeadNorms<'a> {
    pub q_raw: &'a wgpu::Buffer,
    pub k_raw: &'a wgpu::Buffer,
    pub q_norm: &'a wgpu::Buffer,
    pub k_norm: &'a wgpu::Buffer,
    pub eps: f32,
}

/// Where a step's keys and values go: the values as the projection wrote them, and the layer's
/// caches the rotated keys and the values are stored into (f16, two to a word).
#[derive(Debug, Clone, Copy)]
pub struct KvStore<'a> {
    pub v: &'a wgpu::Buffer,
    pub k_cache: &'a wgpu::Buffer,
    pub v_cache: &'a wgpu::Buffer,
}

/// The RoPE kernel for one set of parameters (its frequency factors live on the device).
#[derive(Debug)]
pub struct Rope {
    kernel: Kernel,
    /// Queries and keys in one dispatch, the keys and values into the cache.
    qk: Kernel,
    /// The same with each head normed first (Gemma's q/k norms).
    qk_normed: Kernel,
    params: RopeParams,
    freq_factors: wgpu::Buffer,
}

impl Rope {
    pub fn new(gpu: &Gpu, params: RopeParams) -> Result<Self, GpuError> {
        let ones = vec![1.0f32; (params.n_dims / 2).max(1) as usize];
        let factors = params.freq_factors.as_deref().unwrap_or(&ones);
        let freq_factors = gpu
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("rope freq factors"),
                contents: bytemuck::cast_slice(factors),
                usage: wgpu::BufferUsages::STORAGE,
            });
        let source = |main: &str| {
            super::shader::with_step(&format!(
                "{}\n{main}",
                include_str!("../kernels/rope_angle.wgsl")
            ))
        };
        let into_cache = |main: &str| {
            source(&format!(
                "{}\n{main}",
                include_str!("../kernels/kv_cache.wgsl")
            ))
        };
        Ok(Self {
            kernel: Kernel::new(gpu, "rope", &source(include_str!("../kernels/rope.wgsl")))?,
            qk: Kernel::new(
                gpu,
                "rope q, k and v into the cache",
                &into_cache(include_str!("../kernels/rope_qk.wgsl")),
            )?,
            qk_normed: Kernel::new(
                gpu,
                "q/k head norms and rope, k and v into the cache",
                &super::shader::with_workgroup_reduce(&into_cache(include_str!(
                    "../kernels/rope_qk_normed.wgsl"
                ))),
            )?,
            params,
            freq_factors,
        })
    }

    pub fn params(&self) -> &RopeParams {
        &self.params
    }

    /// Rotates, in place, `x` = `tokens` × `heads` × `head_dim` values, token t at position
    /// `pos0 + t`.
    #[allow(clippy::too_many_arguments)]
    pub fn encode(
        &self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        x: &wgpu::Buffer,
        tokens: u32,
        heads: u32,
        head_dim: u32,
        pos0: u32,
    ) {
        let step = StepUniform::new(pos0, tokens).buffer(gpu);
        let bound = self.bind(gpu, x, tokens, heads, head_dim, &step);
        record_pass(encoder, "rope", &[bound]);
    }

    /// The same dispatch, bound once, the first position read from `step` (a [`StepUniform`]).
    pub fn bind(
        &self,
        gpu: &Gpu,
        x: &wgpu::Buffer,
        tokens: u32,
        heads: u32,
        head_dim: u32,
        step: &wgpu::Buffer,
    ) -> Bound {
        let p = &self.params;
        let params = self.uniform(head_dim, heads, 0, tokens);
        let items = tokens * heads * (p.n_dims / 2);
        self.kernel.bind(
            gpu,
            &[x, &self.freq_factors, step],
            &params,
            grid_for(gpu, items, 64),
        )
    }

    /// Rotates `q` (`tokens` × `heads` heads) in place and `k` (`kv_heads` heads per token)
    /// into the key cache at the tokens' positions, and stores the values beside them: the
    /// step's RoPE and the KV cache's update in one dispatch.
    #[allow(clippy::too_many_arguments)]
    pub fn bind_qk(
        &self,
        gpu: &Gpu,
        q: &wgpu::Buffer,
        k: &wgpu::Buffer,
        store: KvStore<'_>,
        tokens: u32,
        (heads, kv_heads): (u32, u32),
        head_dim: u32,
        step: &wgpu::Buffer,
    ) -> Bound {
        let params = self.uniform(head_dim, heads, kv_heads, tokens);
        let items = tokens * (heads + kv_heads) * (head_dim / 2);
        self.qk.bind(
            gpu,
            &[
                q,
                k,
                store.v,
                store.k_cache,
                store.v_cache,
                &self.freq_factors,
                step,
            ],
            &params,
            grid_for(gpu, items, 64),
        )
    }

    /// As [`bind_qk`](Self::bind_qk), each head of the queries and keys normed first from
    /// its raw projection (`norms`): the two norm dispatches and the rotation in one. The
    /// queries go to `q`, the keys and values into the cache.
    #[allow(clippy::too_many_arguments)]
    pub fn bind_qk_normed(
        &self,
        gpu: &Gpu,
        norms: HeadNorms<'_>,
        q: &wgpu::Buffer,
        store: KvStore<'_>,
        tokens: u32,
        (heads, kv_heads): (u32, u32),
        head_dim: u32,
        step: &wgpu::Buffer,
    ) -> Bound {
        let params = Params {
            eps: norms.eps,
            ..self.uniform(head_dim, heads, kv_heads, tokens)
        };
        let max_dim = gpu.limits().max_compute_workgroups_per_dimension;
        let (gx, gy) = grid(tokens * (heads + kv_heads), max_dim);
        self.qk_normed.bind(
            gpu,
            &[
                norms.q_raw,
                norms.k_raw,
                store.v,
                q,
                store.k_cache,
                store.v_cache,
                norms.q_norm,
                norms.k_norm,
                &self.freq_factors,
                step,
            ],
            &params,
            (gx, gy, 1),
        )
    }

    /// What decode's attention needs to rotate its query and key itself
    /// (`attention_rope.wgsl`): this RoPE's uniform for heads of `head_dim`, and its frequency
    /// factors.
    pub fn for_attention(&self, gpu: &Gpu, head_dim: u32) -> (wgpu::Buffer, &wgpu::Buffer) {
        let params = self.uniform(head_dim, 0, 0, 1);
        let uniform = gpu
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("rope in attention"),
                contents: bytemuck::bytes_of(&params),
                usage: wgpu::BufferUsages::UNIFORM,
            });
        (uniform, &self.freq_factors)
    }

    fn uniform(&self, head_dim: u32, heads: u32, kv_heads: u32, tokens: u32) -> Params {
        let p = &self.params;
        Params {
            head_dim,
            n_dims: p.n_dims,
            heads,
            tokens,
            kv_heads,
            neox: u32::from(p.order == RopeOrder::Neox),
            freq_base: p.freq_base,
            freq_scale: p.freq_scale,
            ext_factor: p.ext_factor,
            attn_factor: p.attn_factor,
            corr_low: p.corr_dims[0],
            corr_high: p.corr_dims[1],
            theta_scale: p.freq_base.powf(-2.0 / p.n_dims as f32),
            eps: 0.0,
            _pad: [0; 2],
        }
    }
}
