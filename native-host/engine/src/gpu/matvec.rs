//! The dequantising matrix-vector product `y = W·x`: decode's every weight matrix.
//!
//! Decode reads each weight once per token, so this kernel's speed is memory bandwidth. How a row
//! is spread over invocations is the one choice that matters per device: on a CPU driver one
//! invocation per row (no barriers, each SIMD lane its own row) is fastest; on a GPU a row needs
//! many invocations, whose partial sums meet through subgroup shuffles where the adapter has them
//! and through workgroup memory where it does not.

use super::kernel::{grid, record_pass, Bound};
use super::matrix::{GpuMatrix, Output};
use super::matvec_config::MatVecConfig;
use super::typed_pipelines::{Slot, TypedPipelines};
use super::{shader, Gpu, GpuError};
use crate::tensor_type::TensorType;
use wgpu::util::DeviceExt;

/// Matrix-vector pipelines for a set of weight types.
#[derive(Debug)]
pub struct MatVec {
    config: MatVecConfig,
    /// The most columns a row may have, x being staged in workgroup memory (0: x is read from
    /// its storage binding).
    x_staged: u32,
    pipelines: TypedPipelines,
}

impl MatVec {
    /// Kernels for `types`, in `gpu`'s best shape.
    pub fn new(gpu: &Gpu, types: &[TensorType]) -> Result<Self, GpuError> {
        Self::with_config(gpu, types, MatVecConfig::for_gpu(gpu))
    }

    pub fn with_config(
        gpu: &Gpu,
        types: &[TensorType],
        config: MatVecConfig,
    ) -> Result<Self, GpuError> {
        Self::with_x_staged(gpu, types, config, 0)
    }

    /// How many columns products of `config`'s shape could stage x for on `gpu`, for rows of up
    /// to `max_cols` columns: where there is a GPU, a row shared by several invocations, and room
    /// in its workgroup memory.
    pub fn staging_for(gpu: &Gpu, config: MatVecConfig, max_cols: u32) -> Option<u32> {
        let staged = max_cols.div_ceil(32) * 32;
        let fits =
            shader::staged_x_bytes(staged) <= gpu.limits().max_compute_workgroup_storage_size;
        (!gpu.chooses_cpu_kernels() && config.threads_per_row > 1 && fits).then_some(staged)
    }

    /// As [`with_config`](Self::with_config), staging x in workgroup memory for rows of up to
    /// `x_staged` columns (a multiple of 32; 0: x is read from its storage binding).
    pub fn with_x_staged(
        gpu: &Gpu,
        types: &[TensorType],
        config: MatVecConfig,
        x_staged: u32,
    ) -> Result<Self, GpuError> {
        config.check(gpu).map_err(|message| GpuError::Compile {
            what: "matrix-vector".into(),
            message,
        })?;
        let need = shader::staged_x_bytes(x_staged);
        let have = gpu.limits().max_compute_workgroup_storage_size;
        if !x_staged.is_multiple_of(32) || need > have {
            return Err(GpuError::Compile {
                what: "matrix-vector".into(),
                message: format!(
                    "x staged for {x_staged} columns needs {need} bytes of workgroup memory \
                     (the device has {have}) and a multiple of 32 columns"
                ),
            });
        }
        Self::compiled(gpu, types, config, x_staged, 0, "matrix-vector", |ty| {
            shader::matvec(ty, &config, x_staged)
        })
    }

    /// The kernels of `source` (matvec.wgsl's bindings, then `uniforms` more uniforms after
    /// them), named `what`, for `types`.
    pub(super) fn compiled(
        gpu: &Gpu,
        types: &[TensorType],
        config: MatVecConfig,
        x_staged: u32,
        uniforms: usize,
        what: &'static str,
        source: impl Fn(TensorType) -> String,
    ) -> Result<Self, GpuError> {
        let mut slots = vec![
            Slot::Read,
            Slot::Read,
            Slot::ReadWrite,
            Slot::Uniform,
            Slot::Uniform,
        ];
        slots.extend(std::iter::repeat_n(Slot::Uniform, uniforms));
        let pipelines = TypedPipelines::new(gpu, what, &slots, types, source)?;
        Ok(Self {
            config,
            x_staged,
            pipelines,
        })
    }

    pub fn config(&self) -> MatVecConfig {
        self.config
    }

    /// Records `y = W·x` into `encoder`: one dispatch per chunk of `matrix`. `x` holds
    /// `matrix.cols()` f32s, `y` room for `matrix.rows()`.
    pub fn encode(
        &self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        matrix: &GpuMatrix,
        x: &wgpu::Buffer,
        y: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let bound = self.bind(gpu, matrix, x, y)?;
        record_pass(encoder, matrix.name(), &bound);
        Ok(())
    }

    /// The dispatches of `y = W·x` (one per chunk of `matrix`), bound once to be recorded every
    /// step.
    pub fn bind(
        &self,
        gpu: &Gpu,
        matrix: &GpuMatrix,
        x: &wgpu::Buffer,
        y: &wgpu::Buffer,
    ) -> Result<Vec<Bound>, GpuError> {
        self.bind_output(gpu, matrix, x, y, Output::Write)
    }

    /// As [`bind`](Self::bind), writing `y = W·x` or adding `y += W·x` as `output` says.
    pub fn bind_output(
        &self,
        gpu: &Gpu,
        matrix: &GpuMatrix,
        x: &wgpu::Buffer,
        y: &wgpu::Buffer,
        output: Output,
    ) -> Result<Vec<Bound>, GpuError> {
        self.bind_with_tail(gpu, matrix, x, y, output, &[])
    }

    /// As [`bind_output`](Self::bind_output), with `tail` bound after the usual bindings (the
    /// uniforms of a kernel built by [`compiled`](Self::compiled)).
    pub(super) fn bind_with_tail(
        &self,
        gpu: &Gpu,
        matrix: &GpuMatrix,
        x: &wgpu::Buffer,
        y: &wgpu::Buffer,
        output: Output,
        tail: &[&wgpu::Buffer],
    ) -> Result<Vec<Bound>, GpuError> {
        let (pipeline, name) = self.pipelines.get(matrix.ty())?;
        if self.x_staged != 0 && matrix.cols() > self.x_staged {
            return Err(GpuError::Shape {
                name: matrix.name().to_owned(),
                reason: format!(
                    "rows of {} columns, where the kernel stages x for {}",
                    matrix.cols(),
                    self.x_staged
                ),
            });
        }
        let words: [u32; 4] = [output as u32, 0, 0, 0];
        let output = gpu
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("matvec output"),
                contents: bytemuck::cast_slice(&words),
                usage: wgpu::BufferUsages::UNIFORM,
            });
        let rows_per_wg = self.config.workgroup_size / self.config.threads_per_row;
        let max_dim = gpu.limits().max_compute_workgroups_per_dimension;
        Ok(matrix
            .chunks
            .iter()
            .map(|chunk| {
                let mut buffers = vec![x, y, &chunk.params, &output];
                buffers.extend(tail);
                let bind = self
                    .pipelines
                    .bind_group(gpu, matrix.name(), chunk.binding(), &buffers);
                let groups = (chunk.rows.end - chunk.rows.start).div_ceil(rows_per_wg);
                let (gx, gy) = grid(groups, max_dim);
                Bound::new(name.clone(), pipeline.clone(), bind, (gx, gy, 1))
            })
            .collect())
    }

    /// `W·x` computed and read back: for tests and one-off use.
    pub fn run(&self, gpu: &Gpu, matrix: &GpuMatrix, x: &[f32]) -> Result<Vec<f32>, GpuError> {
        if x.len() != matrix.cols() as usize {
            return Err(GpuError::Shape {
                name: matrix.name().to_owned(),
                reason: format!("x has {} elements, the rows {}", x.len(), matrix.cols()),
            });
        }
        let xb = gpu.upload_f32("x", x);
        let yb = gpu.storage_f32("y", matrix.rows() as usize);
        let mut encoder = gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        self.encode(gpu, &mut encoder, matrix, &xb, &yb)?;
        gpu.queue.submit([encoder.finish()]);
        gpu.read_f32(&yb, matrix.rows() as usize)
    }
}
