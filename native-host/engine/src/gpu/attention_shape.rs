//! What every attention kernel agrees on: the layer's shape, the buffers of a call, the uniform
//! the kernels read, and the WGSL they share (bindings, which keys a token sees, the cache's
//! layout). The per-token forms (`attention.rs`) and the block form (`attention_block.rs`)
//! both build on it.

use super::GpuError;

/// The largest head the kernels' workgroup memory holds (Gemma 3's 256).
pub const MAX_HEAD_DIM: u32 = 256;

/// Keys per slice of decode's split keys are a multiple of this: `attention.wgsl`'s workgroup
/// block, which `attention_combine.wgsl` is told.
pub(super) const SLICE_BLOCK: u32 = 64;
/// The most slices decode's keys are cut into.
pub(super) const MAX_SPLITS: u32 = 32;

/// `attention_common.wgsl`'s `Params`.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub(super) struct Params {
    pub(super) head_dim: u32,
    pub(super) heads: u32,
    pub(super) kv_heads: u32,
    pub(super) window: u32,
    pub(super) capacity: u32,
    pub(super) scale: f32,
    /// The lane form's tokens per head in the dispatch (the other forms ignore it).
    pub(super) max_tokens: u32,
    /// Slices of the keys, a workgroup each (the workgroup form's decode); 1 otherwise.
    pub(super) splits: u32,
}

/// What the merge of decode's slices is told (`attention_combine.wgsl`'s `Params`, and
/// `matvec_x_slices.wgsl`'s `Combine`).
#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub(super) struct CombineParams {
    pub(super) head_dim: u32,
    pub(super) heads: u32,
    pub(super) splits: u32,
    pub(super) window: u32,
    pub(super) capacity: u32,
    pub(super) block: u32,
    pub(super) _pad: [u32; 2],
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

impl AttentionShape {
    /// Refuses a shape no kernel handles: KV heads that do not divide the heads, a head wider
    /// than [`MAX_HEAD_DIM`] or not a multiple of 4, an empty window.
    pub(super) fn check(&self) -> Result<(), GpuError> {
        if self.kv_heads == 0
            || !self.heads.is_multiple_of(self.kv_heads)
            || self.head_dim > MAX_HEAD_DIM
            || !self.head_dim.is_multiple_of(4)
            || self.window == Some(0)
        {
            return Err(GpuError::Shape {
                name: "attention".into(),
                reason: format!("{self:?} (heads of at most {MAX_HEAD_DIM}, a multiple of 4)"),
            });
        }
        Ok(())
    }

    /// How many slices decode's keys are cut into on a GPU, a workgroup each: one workgroup per
    /// head walking the whole cache leaves a large GPU idle.
    pub fn decode_splits(&self) -> u32 {
        // The keys one token can see: at most the window, at most the cache.
        let span = self.window.unwrap_or(self.capacity).min(self.capacity);
        span.div_ceil(SLICE_BLOCK).clamp(1, MAX_SPLITS)
    }

    /// How the merge of decode's keys cut into `splits` slices finds them.
    pub(super) fn combine_params(&self, splits: u32) -> CombineParams {
        CombineParams {
            head_dim: self.head_dim,
            heads: self.heads,
            splits,
            window: self.window.unwrap_or(0),
            capacity: self.capacity,
            block: SLICE_BLOCK,
            _pad: [0; 2],
        }
    }

    /// Query heads per KV head.
    pub(super) fn group(&self) -> u32 {
        self.heads / self.kv_heads
    }

    /// The blocks of `rows` query rows that `max_tokens` tokens make, for the block kernel
    /// `name` compiled for heads of `head_dim`: an error where these heads are not those, or
    /// the device dispatches too few workgroups.
    pub(super) fn blocks_of(
        &self,
        gpu: &super::Gpu,
        name: &str,
        (head_dim, rows): (u32, u32),
        max_tokens: u32,
    ) -> Result<u32, GpuError> {
        self.check()?;
        if self.head_dim != head_dim {
            return Err(GpuError::Shape {
                name: name.into(),
                reason: format!(
                    "heads of {}, compiled for heads of {head_dim}",
                    self.head_dim
                ),
            });
        }
        let blocks = (max_tokens * self.group()).div_ceil(rows);
        super::kernel::check_rows(gpu, name, blocks)?;
        Ok(blocks)
    }

    /// The uniform for a call over up to `max_tokens` tokens cut into `splits` slices of keys.
    pub(super) fn params(&self, max_tokens: u32, splits: u32) -> Params {
        Params {
            head_dim: self.head_dim,
            heads: self.heads,
            kv_heads: self.kv_heads,
            window: self.window.unwrap_or(0),
            capacity: self.capacity,
            scale: self.scale,
            max_tokens,
            splits,
        }
    }
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

/// Which keys a token sees and how decode slices them, for the attention kernels and the merge
/// of decode's slices.
const KEY_SLICES: &str = include_str!("../kernels/key_slices.wgsl");
/// Where a position's keys and values lie in the f16 cache.
const KV_CACHE: &str = include_str!("../kernels/kv_cache.wgsl");
/// How the block kernels (`attention_block.rs`, `coop_attention.rs`) lay out their query rows.
pub(super) const BLOCK_ROWS: &str = include_str!("../kernels/attention_rows.wgsl");

/// `src` with the step uniform and the key ranges it needs.
pub(super) fn with_keys(src: &str) -> String {
    format!("{}\n{KEY_SLICES}", super::shader::with_step(src))
}

/// How an attention kernel meets the cache: reading what RoPE's dispatch rotated and stored
/// (`attention_cache_read.wgsl`), or, for decode, rotating the step's query and storing its key
/// and value itself (`attention_rope.wgsl`), a dispatch fewer a layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CacheAccess {
    Read,
    Rotate,
}

/// An attention kernel's source: the shared bindings and helpers, how it meets the cache, then
/// `src` (the form's own `P` binding and `main`).
pub(super) fn kernel_source(src: &str, access: CacheAccess) -> String {
    let access = match access {
        CacheAccess::Read => include_str!("../kernels/attention_cache_read.wgsl").to_string(),
        CacheAccess::Rotate => format!(
            "{}\n{}",
            include_str!("../kernels/rope_angle.wgsl"),
            include_str!("../kernels/attention_rope.wgsl")
        ),
    };
    format!(
        "{}\n{KV_CACHE}\n{access}\n{src}",
        with_keys(include_str!("../kernels/attention_common.wgsl"))
    )
}
