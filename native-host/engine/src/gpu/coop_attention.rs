//! A prefill batch's attention on cooperative matrices (tensor cores): the block form's blocks of
//! query rows (`attention_block.rs`), with the scores and the output of each tile of keys
//! multiplied on fragments of f16 summed in f32 (`kernels/attention_coop.wgsl`).
//!
//! Once prefill's products run on tensor cores, a long prompt's attention is what is left on the
//! f32 units, and its two products are most of its work. The queries and probabilities are
//! rounded to f16 for them, as flash attention on tensor cores rounds them; the cache is f16
//! already.
//! Decode keeps the other forms: its one token is too few rows for a fragment. Whether this is
//! faster than the scalar blocks is timed as the model loads (`attention_tuning.rs`).

use std::fmt;

use super::attention_shape::{
    kernel_source, AttentionBuffers, AttentionShape, CacheAccess, BLOCK_ROWS,
};
use super::kernel::{Bound, Kernel};
use super::{Gpu, GpuError};

/// Fragments of query rows, and of keys, a block takes: the first, the smallest, fits most
/// devices' workgroup memory; more rows share each tile among more queries, more keys need
/// fewer barriers a key.
const SHAPES: [(u32, u32); 3] = [(2, 2), (2, 4), (4, 2)];

/// A block of query rows × keys a tile, on fragments of `fragment`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoopAttentionBlock {
    /// The fragments' size: 8 or 16 ([`Gpu::cooperative_fragment`]).
    pub fragment: u32,
    /// Query rows a block (a multiple of `fragment`).
    pub rows: u32,
    /// Keys a tile (a multiple of `fragment`).
    pub keys: u32,
}

impl fmt::Display for CoopAttentionBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cooperative {0}×{0}, blocks of {1} query rows × {2} keys",
            self.fragment, self.rows, self.keys
        )
    }
}

impl CoopAttentionBlock {
    /// Every block `gpu` runs for heads of `head_dim`, in [`SHAPES`]' order (none where the
    /// device has no cooperative matrices).
    pub fn all(gpu: &Gpu, head_dim: u32) -> Vec<Self> {
        let Some(fragment) = gpu.cooperative_fragment() else {
            return Vec::new();
        };
        SHAPES
            .iter()
            .map(|&(rows, keys)| Self {
                fragment,
                rows: rows * fragment,
                keys: keys * fragment,
            })
            .filter(|block| block.check(gpu, head_dim).is_ok())
            .collect()
    }

    /// Why `gpu` runs no block for heads of `head_dim` ([`Self::all`] is empty): the first
    /// shape's refusal.
    pub fn why_none(gpu: &Gpu, head_dim: u32) -> GpuError {
        let fragment = gpu.cooperative_fragment().unwrap_or(16);
        let (rows, keys) = SHAPES[0];
        let first = Self {
            fragment,
            rows: rows * fragment,
            keys: keys * fragment,
        };
        match first.check(gpu, head_dim) {
            Err(e) => e,
            Ok(()) => unsupported(gpu, format!("no attention block for heads of {head_dim}")),
        }
    }

    /// The workgroup: four subgroups.
    fn invocations(gpu: &Gpu) -> u32 {
        4 * gpu.info().subgroup_min_size
    }

    /// Workgroup memory for heads of `head_dim` and a workgroup of `invocations`: the staged
    /// f16 queries, and the tile's keys and then its values in one place (each row 8 halves
    /// longer than the head), the tile's f32 scores (each row 4 longer), its f16 probabilities
    /// (8 longer), and a float an invocation and two a row for the softmax.
    pub fn workgroup_bytes(self, head_dim: u32, invocations: u32) -> u64 {
        let (rows, keys, hd) = (
            u64::from(self.rows),
            u64::from(self.keys),
            u64::from(head_dim),
        );
        (rows + keys) * (hd + 8) * 2
            + rows * (keys + 4) * 4
            + rows * (keys + 8) * 2
            + 2 * u64::from(invocations) * 4
            + 2 * rows * 4
    }

    /// Whether `gpu` runs this block for heads of `head_dim`, and if not, why.
    pub fn check(self, gpu: &Gpu, head_dim: u32) -> Result<(), GpuError> {
        let f = self.fragment;
        match gpu.cooperative_fragment() {
            Some(offered) if offered == f => {}
            Some(offered) => {
                return Err(unsupported(
                    gpu,
                    format!("attention {self}: the device offers fragments of {offered}"),
                ))
            }
            None => {
                return Err(unsupported(
                    gpu,
                    format!(
                        "attention {self}: no cooperative matrices with f16 inputs and f32 \
                         sums, f16 arithmetic and subgroups of one size"
                    ),
                ))
            }
        }
        let invocations = Self::invocations(gpu);
        // Two fragments of rows and of keys at least: the scores' f32 rows then hold a
        // fragment of each subgroup's output too.
        if self.rows < 2 * f
            || self.keys < 2 * f
            || !self.rows.is_multiple_of(f)
            || !self.keys.is_multiple_of(f)
            || !invocations.is_multiple_of(self.rows)
        {
            return Err(unsupported(
                gpu,
                format!(
                    "attention {self} (rows and keys whole fragments, at least two, and rows \
                     dividing the {invocations} invocations)"
                ),
            ));
        }
        if head_dim == 0
            || !head_dim.is_multiple_of(f)
            || !((self.rows / f) * (head_dim / f)).is_multiple_of(4)
        {
            return Err(unsupported(
                gpu,
                format!(
                    "attention {self} for heads of {head_dim} (whole fragments, the output's \
                     shared by four subgroups)"
                ),
            ));
        }
        let bytes = self.workgroup_bytes(head_dim, invocations);
        let limit = u64::from(gpu.limits().max_compute_workgroup_storage_size);
        if bytes > limit {
            return Err(unsupported(
                gpu,
                format!(
                    "attention {self} for heads of {head_dim}: {bytes} bytes of workgroup \
                     memory, {limit} offered"
                ),
            ));
        }
        Ok(())
    }
}

fn unsupported(gpu: &Gpu, what: String) -> GpuError {
    GpuError::Unsupported {
        adapter: gpu.describe(),
        what,
    }
}

/// The kernel compiled for one block and head size.
#[derive(Debug, Clone)]
pub struct CoopAttention {
    kernel: Kernel,
    block: CoopAttentionBlock,
    head_dim: u32,
}

impl CoopAttention {
    pub fn new(gpu: &Gpu, block: CoopAttentionBlock, head_dim: u32) -> Result<Self, GpuError> {
        block.check(gpu, head_dim)?;
        let CoopAttentionBlock {
            fragment: f,
            rows,
            keys,
        } = block;
        let subgroup = gpu.info().subgroup_min_size;
        let invocations = CoopAttentionBlock::invocations(gpu);
        let constants = format!(
            "const F: u32 = {f}u;\nconst SG: u32 = {subgroup}u;\nconst WG: u32 = {invocations}u;\n\
             const HD: u32 = {head_dim}u;\nconst BR: u32 = {rows}u;\nconst BK: u32 = {keys}u;\n\
             const PER_ROW: u32 = {}u;\nconst E: u32 = {}u;\n",
            invocations / rows,
            f * f / subgroup
        );
        let body = kernel_source(
            &format!(
                "{constants}\n{BLOCK_ROWS}\n{}",
                include_str!("../kernels/attention_coop.wgsl")
            ),
            CacheAccess::Read,
        );
        // Enables come before every declaration.
        let source = format!("enable f16;\nenable wgpu_cooperative_matrix;\n{body}")
            .replace("coop_matFxF", &format!("coop_mat{f}x{f}"));
        Ok(Self {
            kernel: Kernel::new(gpu, "attention (cooperative blocks)", &source)?,
            block,
            head_dim,
        })
    }

    pub fn block(&self) -> CoopAttentionBlock {
        self.block
    }

    /// The dispatch for up to `max_tokens` new tokens, bound once (see `Attention::bind`).
    pub(super) fn bind(
        &self,
        gpu: &Gpu,
        b: AttentionBuffers<'_>,
        s: AttentionShape,
        step: &wgpu::Buffer,
        max_tokens: u32,
    ) -> Result<Bound, GpuError> {
        let blocks = s.blocks_of(
            gpu,
            "attention (cooperative blocks)",
            (self.head_dim, self.block.rows),
            max_tokens,
        )?;
        Ok(self.kernel.bind(
            gpu,
            &[b.q, b.k_cache, b.v_cache, b.out, step],
            &s.params(max_tokens, 1),
            (s.kv_heads, blocks, 1),
        ))
    }
}
