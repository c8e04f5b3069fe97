//! The shape of prefill's blocks on cooperative matrices (tensor cores): which fragments a
//! subgroup computes, how many columns a step stages, and whether a device can run it.
//!
//! `kernels/coop_block.wgsl` has four subgroups, two by two, each computing a grid of fragments;
//! a wider grid loads fewer fragments per multiply but holds more sums and more staged columns,
//! and which is faster is the device's to say, so `tile_tuning` times the shapes that fit.

use super::{Gpu, GpuError};

/// A block of tokens × weight rows on cooperative matrices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoopShape {
    /// The fragments' size: 8 or 16 ([`Gpu::cooperative_fragment`]).
    pub fragment: u32,
    /// Fragments a subgroup computes: along the tokens, along the rows.
    pub grid: [u32; 2],
    /// 32-element parts of each row staged in workgroup memory a step.
    pub parts: u32,
}

/// The grids tried: two by two, and twice as many tokens (a 128-token batch in one block of
/// 16×16 fragments, so each weight is decoded once a batch).
const GRIDS: [[u32; 2]; 2] = [[2, 2], [4, 2]];
/// The steps tried: fewer barriers against less workgroup memory.
const PARTS: [u32; 2] = [1, 2];

impl CoopShape {
    /// The first shape `gpu` can run, or why it can run none.
    pub fn first(gpu: &Gpu) -> Result<Self, GpuError> {
        let Some(fragment) = gpu.cooperative_fragment() else {
            return Err(refusal(no_cooperative_matrices(gpu)));
        };
        let mut why = None;
        for shape in Self::tried(fragment) {
            match shape.check(gpu) {
                Ok(()) => return Ok(shape),
                Err(e) => {
                    why.get_or_insert(e);
                }
            }
        }
        Err(why.expect("at least one shape is tried"))
    }

    /// Every shape tried that `gpu` can run.
    pub fn all(gpu: &Gpu) -> Vec<Self> {
        let Some(fragment) = gpu.cooperative_fragment() else {
            return Vec::new();
        };
        Self::tried(fragment)
            .filter(|shape| shape.check(gpu).is_ok())
            .collect()
    }

    /// The shapes tried with fragments of `fragment`, in order.
    fn tried(fragment: u32) -> impl Iterator<Item = Self> {
        GRIDS.iter().flat_map(move |&grid| {
            PARTS.iter().map(move |&parts| CoopShape {
                fragment,
                grid,
                parts,
            })
        })
    }

    /// Tokens a block covers.
    pub fn tokens(self) -> u32 {
        2 * self.grid[0] * self.fragment
    }

    /// Weight rows a block covers.
    pub fn rows(self) -> u32 {
        2 * self.grid[1] * self.fragment
    }

    /// Workgroup memory a block takes: the staged f16 columns of its tokens and rows (each
    /// row 8 halves longer than its columns) and one f32 fragment from each subgroup.
    fn workgroup_bytes(self) -> u32 {
        let stride = 32 * self.parts + 8;
        2 * (self.tokens() + self.rows()) * stride + 4 * 4 * self.fragment * self.fragment
    }

    /// Refuses a shape `gpu` cannot run, saying why.
    pub fn check(self, gpu: &Gpu) -> Result<(), GpuError> {
        let refuse = |why: String| Err(refusal(why));
        let fragment = self.fragment;
        match gpu.cooperative_fragment() {
            Some(f) if f == fragment => {}
            Some(f) => {
                return refuse(format!(
                    "fragments of {fragment}: {} offers fragments of {f}",
                    gpu.describe()
                ))
            }
            None => {
                return refuse(format!(
                    "fragments of {fragment}: {}",
                    no_cooperative_matrices(gpu)
                ))
            }
        }
        let subgroup = gpu.info().subgroup_min_size;
        if self.parts == 0
            || self.grid.contains(&0)
            || !(fragment * fragment).is_multiple_of(subgroup)
        {
            return refuse(format!("subgroups of {subgroup} cannot share out {self}"));
        }
        let (bytes, limit) = (
            self.workgroup_bytes(),
            gpu.limits().max_compute_workgroup_storage_size,
        );
        if bytes > limit {
            return refuse(format!(
                "{self} needs {bytes} bytes of workgroup memory, the device has {limit}"
            ));
        }
        Ok(())
    }

    /// The constants `coop_block.wgsl` reads, for subgroups of `subgroup` lanes.
    pub(super) fn wgsl_constants(self, subgroup: u32) -> String {
        let CoopShape {
            fragment: f,
            grid: [fm, fn_],
            parts,
        } = self;
        format!(
            "enable f16;\nenable wgpu_cooperative_matrix;\n\
             const F: u32 = {f}u;\nconst SG: u32 = {subgroup}u;\nconst WG: u32 = {}u;\n\
             const FM: u32 = {fm}u;\nconst FN: u32 = {fn_}u;\n\
             const BM: u32 = {}u;\nconst BN: u32 = {}u;\nconst PARTS: u32 = {parts}u;\n\
             const KS: u32 = {}u;\nconst E: u32 = {}u;\n\n",
            4 * subgroup,
            self.tokens(),
            self.rows(),
            32 * parts,
            f * f / subgroup
        )
    }
}

/// What a device without the cooperative matrices the kernels need lacks.
fn no_cooperative_matrices(gpu: &Gpu) -> String {
    format!(
        "{} has no cooperative matrices with f16 inputs and f32 sums, f16 arithmetic and \
         subgroups of one size",
        gpu.describe()
    )
}

fn refusal(why: String) -> GpuError {
    GpuError::Compile {
        what: "cooperative matrix-matrix".into(),
        message: why,
    }
}

impl std::fmt::Display for CoopShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cooperative {0}×{0}, {1}×{2} a subgroup ({3} tokens × {4} rows, {5} columns a step)",
            self.fragment,
            self.grid[0],
            self.grid[1],
            self.tokens(),
            self.rows(),
            32 * self.parts
        )
    }
}
