//! Where decode's attention slices are merged fastest on this device, measured: in a dispatch of
//! their own, or by the output product as it reads them (`merging_matvec.rs`).
//!
//! The merging product saves a dispatch, whose fixed cost sets the pace of a GPU's decode step,
//! but each of its workgroups reads every slice where the merge's dispatch read them once. Which
//! wins depends on the device, the model's width and how many slices hold keys, so it is timed
//! late in a long prompt (where the most slices hold keys) as the model loads.

use std::fmt;

use super::attention::{Attention, AttentionSlices};
use super::attention_shape::AttentionShape;
use super::attention_tuning::TIMED_END;
use super::kernel::StepUniform;
use super::matrix::{GpuMatrix, Output};
use super::matvec::MatVec;
use super::merging_matvec::MergingMatVec;
use super::timing;
use super::{Gpu, GpuError};

/// Where decode's slices are merged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeSite {
    /// By the output product as it reads them.
    Product,
    /// In a dispatch of their own, before the output product.
    Dispatch,
    /// Nowhere: decode does not cut its keys (the lane forms of CPU drivers, or a cache of one
    /// slice).
    Unsliced,
}

impl fmt::Display for MergeSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Product => "by the output product",
            Self::Dispatch => "in a dispatch of their own",
            Self::Unsliced => "nowhere: decode does not cut its keys into slices",
        })
    }
}

/// Where decode's slices are merged, and each way's time where they were timed.
pub type MergeChoice = timing::Choice<MergeSite>;

/// The faster, for layers of `shape` and their output product `wo`, of `attention`'s merge
/// followed by `matvec`'s product and of `merging`'s product alone, each adding into y as the
/// residual connection does. Attention itself is the same either way and is not timed.
pub fn fastest(
    gpu: &Gpu,
    attention: &Attention,
    merging: &MergingMatVec,
    matvec: &MatVec,
    shape: &AttentionShape,
    wo: &GpuMatrix,
) -> Result<MergeChoice, GpuError> {
    let slices = AttentionSlices::for_decode(gpu, *shape).ok_or_else(|| GpuError::Shape {
        name: "merge tuning".into(),
        reason: format!("decode does not cut the keys of {shape:?} into slices"),
    })?;
    // Zeros: the slices need no content to be timed.
    let step = StepUniform::new(shape.capacity.min(TIMED_END) - 1, 1).buffer(gpu);
    let out = gpu.storage_f32("merge tuning out", (shape.heads * shape.head_dim) as usize);
    let y = gpu.storage_f32("merge tuning y", wo.rows() as usize);
    let mut apart = vec![attention.bind_merge(gpu, &slices, &out, &step)];
    apart.extend(matvec.bind_output(gpu, wo, &out, &y, Output::Add)?);
    let merged = merging.bind(gpu, wo, &slices, &step, &y, Output::Add)?;
    let timings = vec![
        (
            MergeSite::Product,
            timing::median_pass(gpu, "merge tuning", &merged)?,
        ),
        (
            MergeSite::Dispatch,
            timing::median_pass(gpu, "merge tuning", &apart)?,
        ),
    ];
    let choice = MergeChoice::fastest(timings).ok_or_else(|| GpuError::Shape {
        name: "merge tuning".into(),
        reason: "no candidate to time".into(),
    })?;
    tracing::debug!(timings = ?choice.timings, chosen = %choice.chosen, "slice merge timed");
    Ok(choice)
}
