//! Attention in blocks of query rows (`attention_block.wgsl`), flash-attention style: each tile
//! of keys and values is read once per block of rows instead of once per query head and token,
//! which is what a batch's attention costs on a GPU once its prompt is long.
//!
//! A block holds a KV head's query heads for consecutive tokens, so grouped-query heads share
//! their keys too; decode's token is one block per KV head and slice of the keys. Large blocks
//! share each tile among more rows; small ones run more workgroups, which a large GPU needs to
//! hide memory latency when there are few KV heads. Which wins is measured as the model loads,
//! against the per-token form (`attention_tuning.rs`).

use std::fmt;

use super::attention_shape::{
    kernel_source, AttentionBuffers, AttentionShape, CacheAccess, BLOCK_ROWS, MAX_HEAD_DIM,
    SLICE_BLOCK,
};
use super::kernel::{Bound, Kernel};
use super::{Gpu, GpuError};

/// Invocations in a block's workgroup.
const WG: u32 = 64;
/// Query rows per block, largest first: each divides [`WG`], and so do their invocations a row.
const ROWS: [u32; 3] = [16, 8, 4];
/// Keys per tile, largest first: the largest whose tile fits the device's workgroup memory.
const KEYS: [u32; 3] = [64, 32, 16];

/// The shape of a block: query rows, and keys per tile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttentionBlock {
    pub rows: u32,
    pub keys: u32,
}

impl fmt::Display for AttentionBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "blocks of {} query rows × {} keys", self.rows, self.keys)
    }
}

impl AttentionBlock {
    /// Each row count with the largest tile of keys `gpu` can hold, for heads of `head_dim`
    /// (none where the head is too wide for any).
    pub fn all(gpu: &Gpu, head_dim: u32) -> Vec<Self> {
        ROWS.iter()
            .filter_map(|&rows| {
                KEYS.iter()
                    .map(|&keys| Self { rows, keys })
                    .find(|b| b.check(gpu, head_dim).is_ok())
            })
            .collect()
    }

    /// Why `gpu` holds no block for heads of `head_dim` ([`Self::all`] is empty): the refusal of
    /// the block whose rows split a head most easily (the most rows, so the fewest invocations
    /// share a row's dims), with its smallest tile.
    pub fn why_none(gpu: &Gpu, head_dim: u32) -> GpuError {
        let least = Self {
            rows: ROWS[0],
            keys: KEYS[KEYS.len() - 1],
        };
        match least.check(gpu, head_dim) {
            Err(e) => e,
            Ok(()) => GpuError::Unsupported {
                adapter: gpu.describe(),
                what: format!("no attention block for heads of {head_dim} beside {least}"),
            },
        }
    }

    /// Invocations sharing a row.
    fn per_row(self) -> u32 {
        WG / self.rows
    }

    /// Workgroup memory for heads of `head_dim`: the staged queries (f32), keys and values
    /// (f16 pairs), each row padded by a word, the tile's scores, and the step's own key and
    /// value where decode rotates.
    pub fn workgroup_bytes(self, head_dim: u32) -> u64 {
        let (rows, keys) = (u64::from(self.rows), u64::from(self.keys));
        let row_words = u64::from(head_dim / 2 + 1);
        let fresh = u64::from(head_dim / 2) * 8;
        rows * row_words * 8 + 2 * keys * row_words * 4 + rows * (keys + 1) * 4 + fresh
    }

    /// Whether `gpu` runs this block for heads of `head_dim`, and if not, why.
    pub fn check(self, gpu: &Gpu, head_dim: u32) -> Result<(), GpuError> {
        let unsupported = |what: String| GpuError::Unsupported {
            adapter: gpu.describe(),
            what,
        };
        if !ROWS.contains(&self.rows) {
            return Err(unsupported(format!(
                "attention {self} (rows one of {ROWS:?})"
            )));
        }
        let per_row = self.per_row();
        if self.keys == 0 || !self.keys.is_multiple_of(per_row) {
            return Err(unsupported(format!(
                "attention {self} (keys a multiple of {per_row})"
            )));
        }
        if head_dim == 0
            || head_dim > MAX_HEAD_DIM
            || !(head_dim / 2).is_multiple_of(per_row)
            || !head_dim.is_multiple_of(2)
        {
            return Err(unsupported(format!(
                "attention {self} for heads of {head_dim} (at most {MAX_HEAD_DIM}, {per_row} \
                 invocations a row sharing its pairs of dims)"
            )));
        }
        let bytes = self.workgroup_bytes(head_dim);
        let limit = u64::from(gpu.limits().max_compute_workgroup_storage_size);
        if bytes > limit {
            return Err(unsupported(format!(
                "attention {self} for heads of {head_dim}: {bytes} bytes of workgroup memory, \
                 {limit} offered"
            )));
        }
        Ok(())
    }
}

/// The block kernel compiled for one head size, reading the cache or (decode) rotating the
/// step's query and storing its key and value itself.
#[derive(Debug, Clone)]
pub struct BlockAttention {
    kernel: Kernel,
    block: AttentionBlock,
    head_dim: u32,
    access: CacheAccess,
}

impl BlockAttention {
    pub fn new(gpu: &Gpu, block: AttentionBlock, head_dim: u32) -> Result<Self, GpuError> {
        Self::compile(gpu, block, head_dim, CacheAccess::Read)
    }

    /// The same block for decode, rotating as `attention_rope.wgsl` says.
    pub(super) fn rotating(&self, gpu: &Gpu) -> Result<Self, GpuError> {
        Self::compile(gpu, self.block, self.head_dim, CacheAccess::Rotate)
    }

    fn compile(
        gpu: &Gpu,
        block: AttentionBlock,
        head_dim: u32,
        access: CacheAccess,
    ) -> Result<Self, GpuError> {
        block.check(gpu, head_dim)?;
        let constants = format!(
            "const HD: u32 = {head_dim}u;\nconst ROWS: u32 = {}u;\nconst BK: u32 = {}u;\n\
             const WG: u32 = {WG}u;\nconst SLICE: u32 = {SLICE_BLOCK}u;\n",
            block.rows, block.keys
        );
        let source = kernel_source(
            &format!(
                "{constants}\n{BLOCK_ROWS}\n{}",
                include_str!("../kernels/attention_block.wgsl")
            ),
            access,
        );
        let name = match access {
            CacheAccess::Read => "attention (blocks)",
            CacheAccess::Rotate => "attention (blocks) with RoPE",
        };
        Ok(Self {
            kernel: Kernel::new(gpu, name, &source)?,
            block,
            head_dim,
            access,
        })
    }

    pub fn block(&self) -> AttentionBlock {
        self.block
    }

    /// The dispatch for up to `max_tokens` new tokens, bound once (see `Attention::bind`); with
    /// `splits` > 1 (decode), a workgroup per slice of the keys writing into `part`. A rotating
    /// block binds `rotating` (`attention_rope.wgsl`'s inputs) after its uniform.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn bind(
        &self,
        gpu: &Gpu,
        b: AttentionBuffers<'_>,
        s: AttentionShape,
        step: &wgpu::Buffer,
        (max_tokens, splits): (u32, u32),
        part: &wgpu::Buffer,
        rotating: &[&wgpu::Buffer],
    ) -> Result<Bound, GpuError> {
        debug_assert_eq!(
            self.access == CacheAccess::Rotate,
            !rotating.is_empty(),
            "a rotating block binds what it rotates, and only it"
        );
        let blocks = s.blocks_of(
            gpu,
            "attention (blocks)",
            (self.head_dim, self.block.rows),
            max_tokens,
        )?;
        Ok(self.kernel.bind_with_tail(
            gpu,
            &[b.q, b.k_cache, b.v_cache, b.out, step, part],
            &s.params(max_tokens, splits),
            rotating,
            (s.kv_heads, blocks, splits),
        ))
    }
}
