//! The shape of the matrix-vector kernels, and the fastest known for a device: how a row is spread
//! over invocations is the one choice that matters per device (see `matvec`).

use super::Gpu;

/// Invocations a row of the shapes timed on a GPU (8, 16 and 32 rows a workgroup of 256). Fewer
/// give each invocation more of its row and let more rows share what a workgroup does once (the
/// staging of x, the normed products' norm); more give a short row more invocations.
pub const TIMED_THREADS_PER_ROW: [u32; 3] = [32, 16, 8];

/// How the invocations of one row combine their sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduction {
    /// Through workgroup memory and barriers: runs everywhere.
    Workgroup,
    /// Through subgroup shuffles: needs the SUBGROUP feature and `threads_per_row` no larger than
    /// the adapter's smallest subgroup.
    Subgroup,
}

/// The shape of the matrix-vector kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatVecConfig {
    pub workgroup_size: u32,
    /// Invocations that share one row: a power of two dividing `workgroup_size`.
    pub threads_per_row: u32,
    /// Ignored when `threads_per_row` is 1.
    pub reduction: Reduction,
}

impl MatVecConfig {
    /// The fastest known shape for `gpu`.
    pub fn for_gpu(gpu: &Gpu) -> Self {
        if gpu.chooses_cpu_kernels() {
            return Self {
                workgroup_size: 64,
                threads_per_row: 1,
                reduction: Reduction::Workgroup,
            };
        }
        Self::shared_rows(gpu)
    }

    /// A GPU's shape, each row shared by 32 invocations: what kernels that must share a row
    /// among a workgroup's invocations take on any device.
    pub fn shared_rows(gpu: &Gpu) -> Self {
        Self::rows_of(gpu, 32)
    }

    /// The shapes decode's products are timed in as a model loads on a GPU
    /// (`model::decode_products`); on a CPU driver only its own, untimed.
    pub fn candidates(gpu: &Gpu) -> Vec<Self> {
        if gpu.chooses_cpu_kernels() {
            return vec![Self::for_gpu(gpu)];
        }
        Self::gpu_shapes(gpu)
    }

    /// The shapes a GPU's decode is timed in, on any device.
    pub fn gpu_shapes(gpu: &Gpu) -> Vec<Self> {
        TIMED_THREADS_PER_ROW
            .iter()
            .map(|&tpr| Self::rows_of(gpu, tpr))
            .collect()
    }

    /// Workgroups of 256 with `tpr` invocations a row, their sums meeting through subgroup
    /// shuffles where the device's subgroups hold a row.
    pub fn rows_of(gpu: &Gpu, tpr: u32) -> Self {
        let reduction = if gpu.has_subgroups() && gpu.info().subgroup_min_size >= tpr {
            Reduction::Subgroup
        } else {
            Reduction::Workgroup
        };
        Self {
            workgroup_size: 256,
            threads_per_row: tpr,
            reduction,
        }
    }

    pub(super) fn check(&self, gpu: &Gpu) -> Result<(), String> {
        let (wg, tpr) = (self.workgroup_size, self.threads_per_row);
        if !tpr.is_power_of_two() || wg % tpr != 0 {
            return Err(format!(
                "threads_per_row {tpr} must be a power of two dividing workgroup_size {wg}"
            ));
        }
        if wg > gpu.limits().max_compute_invocations_per_workgroup
            || wg > gpu.limits().max_compute_workgroup_size_x
        {
            return Err(format!("workgroup_size {wg} is above the device's limits"));
        }
        if tpr > 1 && self.reduction == Reduction::Subgroup {
            if !gpu.has_subgroups() {
                return Err("subgroup reduction without the SUBGROUP feature".into());
            }
            if tpr > gpu.info().subgroup_min_size {
                return Err(format!(
                    "threads_per_row {tpr} is larger than the smallest subgroup ({})",
                    gpu.info().subgroup_min_size
                ));
            }
        }
        Ok(())
    }
}
