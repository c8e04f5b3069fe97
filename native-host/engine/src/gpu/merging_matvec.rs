//! Decode's attention output product, reading attention's slices and merging them as it stages
//! x (`kernels/matvec_x_slices.wgsl`): the merge of the slices and the product in one dispatch.
//!
//! A decode step on a GPU is short enough that each dispatch's fixed cost sets its pace, so the
//! merge's own dispatch (`attention_combine.wgsl`) is worth folding away. The cost is that every
//! workgroup of the product reads all the slices, where the merge read them once: little for a
//! small model or early in the context, more for a wide model late in a long one. Which wins is
//! measured as a model loads (`merge_tuning.rs`).

use super::attention::AttentionSlices;
use super::attention_shape::{with_keys, MAX_SPLITS};
use super::kernel::Bound;
use super::matrix::{GpuMatrix, Output};
use super::matvec::MatVec;
use super::matvec_config::MatVecConfig;
use super::{shader, Gpu, GpuError};
use crate::tensor_type::TensorType;
use wgpu::util::DeviceExt;

/// The merging product's pipelines for a model's weight types and heads.
#[derive(Debug)]
pub struct MergingMatVec {
    matvec: MatVec,
    heads: u32,
}

impl MergingMatVec {
    /// Kernels for `types` in `config`'s shape, for outputs of up to `heads` query heads of
    /// `head_dim`. Refused where one workgroup cannot hold the merged x, and for the shape of a
    /// row an invocation (CPU drivers' own), whose products never stage x.
    pub fn new(
        gpu: &Gpu,
        types: &[TensorType],
        heads: u32,
        head_dim: u32,
        config: MatVecConfig,
    ) -> Result<Self, GpuError> {
        Self::why_not(gpu, heads, head_dim, config).map_or(Ok(()), |why| {
            Err(GpuError::Unsupported {
                adapter: gpu.describe(),
                what: why,
            })
        })?;
        let cols = heads * head_dim;
        let matvec =
            MatVec::compiled(gpu, types, config, cols, 2, "merging matrix-vector", |ty| {
                with_keys(&shader::matvec_merging(
                    ty, &config, cols, heads, MAX_SPLITS,
                ))
            })?;
        Ok(Self { matvec, heads })
    }

    /// Why `gpu` cannot merge x of `heads` × `head_dim` in the product of `config`'s shape;
    /// `None` where it can.
    pub fn why_not(gpu: &Gpu, heads: u32, head_dim: u32, config: MatVecConfig) -> Option<String> {
        let cols = heads * head_dim;
        let need = shader::merging_bytes(cols, heads, MAX_SPLITS);
        let have = gpu.limits().max_compute_workgroup_storage_size;
        if config.threads_per_row == 1 {
            Some("the product's merge of attention's slices (rows of one invocation)".into())
        } else if !cols.is_multiple_of(32) {
            Some(format!(
                "the product's merge of {cols} attention outputs (not a multiple of 32)"
            ))
        } else if need > have {
            Some(format!(
                "the product's merge of attention's slices ({need} bytes of workgroup memory; \
                 the device has {have})"
            ))
        } else {
            None
        }
    }

    /// `y = W·x` (or `y += W·x`), x being `slices` merged, at the position `step` holds: one
    /// dispatch per chunk of `matrix`, whose rows are as long as the merged output.
    pub fn bind(
        &self,
        gpu: &Gpu,
        matrix: &GpuMatrix,
        slices: &AttentionSlices,
        step: &wgpu::Buffer,
        y: &wgpu::Buffer,
        output: Output,
    ) -> Result<Vec<Bound>, GpuError> {
        if matrix.cols() != slices.width() || slices.params.heads > self.heads {
            return Err(GpuError::Shape {
                name: matrix.name().to_owned(),
                reason: format!(
                    "rows of {} columns, merged from {} heads of {} (the kernel holds {} heads)",
                    matrix.cols(),
                    slices.params.heads,
                    slices.params.head_dim,
                    self.heads
                ),
            });
        }
        let combine = gpu
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("merging matvec slices"),
                contents: bytemuck::bytes_of(&slices.params),
                usage: wgpu::BufferUsages::UNIFORM,
            });
        self.matvec
            .bind_with_tail(gpu, matrix, &slices.part, y, output, &[step, &combine])
    }
}
