//! Decode's products with the RMSNorm before them folded in (`kernels/matvec_normed.wgsl`):
//! q, k and v from one dispatch, the FFN's gate, up and activation from one more.
//!
//! On a GPU a decode step is hundreds of dispatches each doing a few microseconds of work, and
//! each costs about as much again to start and to order after the one before. Fewer, larger
//! dispatches are what make decode faster there; the arithmetic is the same as the separate
//! kernels', in a different summation order for the norm.

use wgpu::util::DeviceExt;

use super::kernel::{grid, Bound};
use super::matrix::GpuMatrix;
use super::matvec_config::MatVecConfig;
use super::typed_pipelines::{Slot, TypedPipelines};
use super::{shader, Gpu, GpuError};
use crate::gate::Gate;
use crate::tensor_type::TensorType;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Fused {
    rows: u32,
    cols: u32,
    row_bytes: u32,
    eps: f32,
    split1: u32,
    split2: u32,
    bias: u32,
    y0_offset: u32,
    _pad: [u32; 4],
}

/// The normalised input of a product: x, the norm's weight and epsilon.
#[derive(Debug, Clone, Copy)]
pub struct NormedInput<'a> {
    pub x: &'a wgpu::Buffer,
    pub norm: &'a wgpu::Buffer,
    pub eps: f32,
}

/// Where some of a product's rows go: the next `rows` of them, from the buffer's start.
#[derive(Debug, Clone, Copy)]
pub struct Destination<'a> {
    pub buffer: &'a wgpu::Buffer,
    pub rows: u32,
}

impl<'a> Destination<'a> {
    pub fn new(buffer: &'a wgpu::Buffer, rows: u32) -> Self {
        Self { buffer, rows }
    }
}

/// The normed matrix-vector pipelines for a model's weight types, x length and gate.
#[derive(Debug)]
pub struct NormedMatVec {
    config: MatVecConfig,
    dim: u32,
    split: TypedPipelines,
    gated: TypedPipelines,
    /// Bound where a form leaves a binding unused: empty outputs (a writable binding each,
    /// since wgpu lets no buffer be both read and written by one dispatch) and no bias.
    spare: [wgpu::Buffer; 3],
    no_bias: wgpu::Buffer,
}

impl NormedMatVec {
    /// Kernels for `types` with x of `dim` floats. Refused where one workgroup cannot hold x (a
    /// model wider than the device's workgroup memory): the caller then keeps the separate norm.
    pub fn new(
        gpu: &Gpu,
        types: &[TensorType],
        dim: u32,
        gate: Gate,
        config: MatVecConfig,
    ) -> Result<Self, GpuError> {
        let wg = config.workgroup_size;
        // x, staged, and the sums of squares.
        let need = shader::staged_x_bytes(dim) + 2 * wg * 4;
        let have = gpu.limits().max_compute_workgroup_storage_size;
        if need > have || !dim.is_multiple_of(32) {
            return Err(GpuError::Compile {
                what: "normed matrix-vector".into(),
                message: format!(
                    "x of {dim} floats needs {need} bytes of workgroup memory; the device has {have}"
                ),
            });
        }
        let act = super::activation::wgsl_act(gate);
        let slots = [
            Slot::Read,
            Slot::Read,
            Slot::Read,
            Slot::Read,
            Slot::ReadWrite,
            Slot::ReadWrite,
            Slot::ReadWrite,
            Slot::Uniform,
        ];
        let build = |gated: bool, what: &'static str| {
            TypedPipelines::new(gpu, what, &slots, types, |ty| {
                shader::matvec_normed(ty, &config, dim, gated, act)
            })
        };
        let spare = |label: &str| gpu.storage_f32(label, 4);
        Ok(Self {
            config,
            dim,
            split: build(false, "normed matrix-vector")?,
            gated: build(true, "normed gated matrix-vector")?,
            spare: [spare("spare 0"), spare("spare 1"), spare("spare 2")],
            no_bias: spare("no bias"),
        })
    }

    /// `norm(x)·Wᵀ`, its rows going to `destinations` in order (at most three; their rows add up
    /// to the matrix's), plus `bias` (one value per row) where given. One dispatch per chunk of
    /// `matrix`; a matrix in several chunks has one destination.
    pub fn bind_split(
        &self,
        gpu: &Gpu,
        matrix: &GpuMatrix,
        input: NormedInput<'_>,
        destinations: &[Destination<'_>],
        bias: Option<&wgpu::Buffer>,
    ) -> Result<Vec<Bound>, GpuError> {
        let shape = |reason: String| GpuError::Shape {
            name: matrix.name().to_owned(),
            reason,
        };
        let total: u32 = destinations.iter().map(|d| d.rows).sum();
        if destinations.is_empty() || destinations.len() > 3 || total != matrix.rows() {
            return Err(shape(format!(
                "{} destinations of {total} rows for a matrix of {}",
                destinations.len(),
                matrix.rows()
            )));
        }
        if matrix.chunk_count() > 1 && destinations.len() > 1 {
            return Err(shape(
                "a matrix in several chunks has one destination".into(),
            ));
        }
        let rows = |i: usize| destinations.get(i).map_or(0, |d| d.rows);
        let buffers: [&wgpu::Buffer; 3] =
            std::array::from_fn(|i| destinations.get(i).map_or(&self.spare[i], |d| d.buffer));
        let bias_buffer = bias.unwrap_or(&self.no_bias);
        self.bind(gpu, &self.split, matrix, input, |chunk_rows, start| {
            let split1 = if matrix.chunk_count() > 1 {
                chunk_rows
            } else {
                rows(0)
            };
            (
                Fused {
                    split1,
                    split2: split1 + rows(1),
                    bias: u32::from(bias.is_some()),
                    y0_offset: start,
                    ..Fused::for_rows(chunk_rows)
                },
                [bias_buffer, buffers[0], buffers[1], buffers[2]],
            )
        })
    }

    /// `y = act(norm(x)·Gateᵀ) * norm(x)·Upᵀ` where `gate_up` is the gate matrix joined to the up
    /// matrix (see [`GpuMatrix::upload_joined`]).
    pub fn bind_gated(
        &self,
        gpu: &Gpu,
        gate_up: &GpuMatrix,
        input: NormedInput<'_>,
        y: &wgpu::Buffer,
    ) -> Result<Vec<Bound>, GpuError> {
        if gate_up.chunk_count() != 1 || !gate_up.rows().is_multiple_of(2) {
            return Err(GpuError::Shape {
                name: gate_up.name().to_owned(),
                reason: "a gate joined to its up matrix is one binding of an even row count".into(),
            });
        }
        let ffn = gate_up.rows() / 2;
        self.bind(gpu, &self.gated, gate_up, input, |_, _| {
            (
                Fused {
                    split1: ffn,
                    ..Fused::for_rows(ffn)
                },
                [&self.no_bias, y, &self.spare[1], &self.spare[2]],
            )
        })
    }

    /// One dispatch per chunk of `matrix`, its uniform and output bindings from `per_chunk`
    /// (given the chunk's rows and its first row).
    fn bind<'c>(
        &'c self,
        gpu: &Gpu,
        pipelines: &TypedPipelines,
        matrix: &GpuMatrix,
        input: NormedInput<'_>,
        per_chunk: impl Fn(u32, u32) -> (Fused, [&'c wgpu::Buffer; 4]),
    ) -> Result<Vec<Bound>, GpuError> {
        if matrix.cols() != self.dim {
            return Err(GpuError::Shape {
                name: matrix.name().to_owned(),
                reason: format!("rows of {}, x of {}", matrix.cols(), self.dim),
            });
        }
        let (pipeline, name) = pipelines.get(matrix.ty())?;
        let rows_per_wg = self.config.workgroup_size / self.config.threads_per_row;
        let max_dim = gpu.limits().max_compute_workgroups_per_dimension;
        Ok(matrix
            .chunks
            .iter()
            .map(|chunk| {
                let chunk_rows = chunk.rows.end - chunk.rows.start;
                let (mut fused, [b, y0, y1, y2]) = per_chunk(chunk_rows, chunk.rows.start);
                fused.cols = matrix.cols();
                fused.eps = input.eps;
                fused.row_bytes = matrix.row_bytes();
                let uniform = gpu
                    .device
                    .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                        label: Some("normed matvec"),
                        contents: bytemuck::bytes_of(&fused),
                        usage: wgpu::BufferUsages::UNIFORM,
                    });
                let bind = pipelines.bind_group(
                    gpu,
                    matrix.name(),
                    chunk.binding(),
                    &[input.x, input.norm, b, y0, y1, y2, &uniform],
                );
                let (gx, gy) = grid(fused.rows.div_ceil(rows_per_wg), max_dim);
                Bound::new(name.clone(), pipeline.clone(), bind, (gx, gy, 1))
            })
            .collect())
    }
}

impl Fused {
    fn for_rows(rows: u32) -> Self {
        Self {
            rows,
            cols: 0,
            row_bytes: 0,
            eps: 0.0,
            split1: 0,
            split2: 0,
            bias: 0,
            y0_offset: 0,
            _pad: [0; 4],
        }
    }
}
