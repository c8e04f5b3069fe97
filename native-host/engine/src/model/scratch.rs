//! The activations a plan's dispatches are bound over.

use crate::gpu::Gpu;

use super::HParams;

/// The activations of `tokens` tokens, reused by every layer.
pub(super) struct Scratch {
    pub(super) tokens: u32,
    pub(super) x: wgpu::Buffer,
    pub(super) h: wgpu::Buffer,
    pub(super) q: wgpu::Buffer,
    pub(super) k: wgpu::Buffer,
    pub(super) v: wgpu::Buffer,
    /// The projections before Gemma's q/k norms.
    pub(super) q_raw: wgpu::Buffer,
    pub(super) k_raw: wgpu::Buffer,
    pub(super) att: wgpu::Buffer,
    pub(super) o: wgpu::Buffer,
    pub(super) g: wgpu::Buffer,
    pub(super) u: wgpu::Buffer,
    pub(super) m: wgpu::Buffer,
}

impl Scratch {
    pub(super) fn new(gpu: &Gpu, hp: &HParams, tokens: u32) -> Self {
        let f = |label: &str, n: u32| gpu.storage_f32(label, (n * tokens) as usize);
        let q_dim = hp.heads * hp.head_dim;
        Self {
            tokens,
            x: f("x", hp.dim),
            h: f("h", hp.dim),
            q: f("q", q_dim),
            k: f("k", hp.kv_dim()),
            v: f("v", hp.kv_dim()),
            q_raw: f("q raw", q_dim),
            k_raw: f("k raw", hp.kv_dim()),
            att: f("att", q_dim),
            o: f("o", hp.dim),
            g: f("g", hp.ffn),
            u: f("u", hp.ffn),
            m: f("m", hp.ffn),
        }
    }
}
