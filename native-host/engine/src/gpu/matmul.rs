//! The dequantising matrix-matrix product `Y = X·Wᵀ`: prompt prefill's every weight matrix.
//!
//! Decode runs a prompt one token at a time and so decodes every weight once per token; a batch
//! of tokens decodes each 32-element part once per tile of [`BATCH_TILE`] tokens and reuses it
//! from registers. On CPU drivers the same kernel with a tile of one token is also the fastest
//! decode product there is, because it shares the loads of `x` across subgroup lanes (see
//! `matmul.wgsl`).
//!
//! Where the adapter has cooperative matrices (tensor cores), a second form computes a block of
//! tokens × rows per workgroup on them ([`Blocking::Cooperative`], `coop_block.wgsl`); the
//! portable form stays for every other device, and on a GPU the faster of the two is timed at
//! load (`tile_tuning`).
//!
//! The dispatches are bound once for a largest batch and read how many tokens there are from the
//! forward pass's [`StepUniform`](super::StepUniform), so a short batch costs only its own tiles.

use wgpu::util::DeviceExt;

use super::coop_shape::CoopShape;
use super::kernel::{self, grid, Bound};
use super::matrix::{GpuMatrix, Output};
use super::typed_pipelines::{Slot, TypedPipelines};
use super::{shader, Gpu, GpuError};
use crate::tensor_type::TensorType;

/// Tokens per invocation in prefill where nothing was measured: each dequantised part is used
/// this many times.
pub const BATCH_TILE: u32 = 8;
/// The tiles the kernels have. A smaller tile decodes each part more often but runs more
/// invocations: on a large GPU, where a small model's products leave most of it idle, that
/// can be the faster trade (see `tile_tuning`).
pub const TILES: [u32; 4] = [1, 2, 4, 8];
/// Weight rows per workgroup, one per invocation.
pub(super) const WORKGROUP: u32 = 64;

/// How a product's work is shared out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blocking {
    /// An invocation per weight row and tile of this many tokens (one of [`TILES`]).
    Rows(u32),
    /// A workgroup per block of tokens × rows, on cooperative matrices.
    Cooperative(CoopShape),
}

impl Blocking {
    /// The tokens one dispatch row covers: a batch is bound in whole multiples of it.
    pub fn tokens(self) -> u32 {
        match self {
            Blocking::Rows(tile) => tile,
            Blocking::Cooperative(shape) => shape.tokens(),
        }
    }

    /// The weight rows one workgroup covers.
    pub(super) fn rows(self) -> u32 {
        match self {
            Blocking::Rows(_) => WORKGROUP,
            Blocking::Cooperative(shape) => shape.rows(),
        }
    }

    /// Refuses a tile the kernels do not have, or cooperative matrices `gpu` cannot run.
    pub(super) fn check(self, gpu: &Gpu) -> Result<(), GpuError> {
        match self {
            Blocking::Rows(tile) => check_tile(tile),
            Blocking::Cooperative(shape) => shape.check(gpu),
        }
    }
}

impl std::fmt::Display for Blocking {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Blocking::Rows(tile) => write!(f, "{tile} tokens"),
            Blocking::Cooperative(shape) => shape.fmt(f),
        }
    }
}

/// Matrix-matrix pipelines for a set of weight types.
pub struct MatMul {
    blocking: Blocking,
    /// Loads of X shared across subgroup lanes (in rows).
    subgroup_x: bool,
    pipelines: TypedPipelines,
}

impl std::fmt::Debug for MatMul {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MatMul")
            .field("blocking", &self.blocking)
            .field("subgroup_x", &self.subgroup_x)
            .finish()
    }
}

impl MatMul {
    /// Kernels for `types` with tiles of `tile` tokens (one of [`TILES`]); loads of X are
    /// shared across subgroups where the adapter has them with at least 8 lanes.
    pub fn new(gpu: &Gpu, types: &[TensorType], tile: u32) -> Result<Self, GpuError> {
        Self::with_subgroup_x(gpu, types, tile, Self::can_share_x(gpu))
    }

    /// Kernels for `types` shared out as `blocking` says.
    pub fn with_blocking(
        gpu: &Gpu,
        types: &[TensorType],
        blocking: Blocking,
    ) -> Result<Self, GpuError> {
        match blocking {
            Blocking::Rows(tile) => Self::new(gpu, types, tile),
            Blocking::Cooperative(shape) => {
                shape.check(gpu)?;
                let subgroup = gpu.info().subgroup_min_size;
                let pipelines =
                    TypedPipelines::new(gpu, "cooperative matrix-matrix", &SLOTS, types, |ty| {
                        shader::matmul_coop(ty, shape, subgroup)
                    })?;
                Ok(Self {
                    blocking,
                    subgroup_x: false,
                    pipelines,
                })
            }
        }
    }

    pub fn blocking(&self) -> Blocking {
        self.blocking
    }

    /// Whether `gpu` can share loads of X across subgroup lanes.
    pub fn can_share_x(gpu: &Gpu) -> bool {
        gpu.has_subgroups() && gpu.info().subgroup_min_size >= 8
    }

    /// As [`new`](Self::new), choosing how X is loaded (tests run both).
    pub fn with_subgroup_x(
        gpu: &Gpu,
        types: &[TensorType],
        tile: u32,
        subgroup_x: bool,
    ) -> Result<Self, GpuError> {
        check_tile(tile)?;
        let pipelines = TypedPipelines::new(gpu, "matrix-matrix", &SLOTS, types, |ty| {
            shader::matmul(ty, WORKGROUP, tile, subgroup_x)
        })?;
        Ok(Self {
            blocking: Blocking::Rows(tile),
            subgroup_x,
            pipelines,
        })
    }

    /// The dispatches of `y = x·Wᵀ` for up to `max_tokens` tokens (whole tiles): `x`
    /// holds `max_tokens` rows of `matrix.cols()` floats, `y` as many rows of `matrix.rows()`;
    /// `step` (a [`StepUniform`](super::StepUniform)) says how many rows are tokens.
    pub fn bind(
        &self,
        gpu: &Gpu,
        matrix: &GpuMatrix,
        x: &wgpu::Buffer,
        y: &wgpu::Buffer,
        step: &wgpu::Buffer,
        max_tokens: u32,
    ) -> Result<Vec<Bound>, GpuError> {
        self.bind_output(gpu, matrix, x, y, step, max_tokens, Output::Write)
    }

    /// As [`bind`](Self::bind), writing `y = x·Wᵀ` or adding `y += x·Wᵀ` as `output` says.
    #[allow(clippy::too_many_arguments)]
    pub fn bind_output(
        &self,
        gpu: &Gpu,
        matrix: &GpuMatrix,
        x: &wgpu::Buffer,
        y: &wgpu::Buffer,
        step: &wgpu::Buffer,
        max_tokens: u32,
        output: Output,
    ) -> Result<Vec<Bound>, GpuError> {
        let tokens = self.blocking.tokens();
        if max_tokens == 0 || !max_tokens.is_multiple_of(tokens) {
            return Err(GpuError::Shape {
                name: matrix.name().to_owned(),
                reason: format!("a batch of {max_tokens} tokens is not whole tiles of {tokens}"),
            });
        }
        let (pipeline, name) = self.pipelines.get(matrix.ty())?;
        let shape: [u32; 4] = [matrix.rows(), output as u32, 0, 0];
        let shape = gpu
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("matmul shape"),
                contents: bytemuck::cast_slice(&shape),
                usage: wgpu::BufferUsages::UNIFORM,
            });
        let max_dim = gpu.limits().max_compute_workgroups_per_dimension;
        Ok(matrix
            .chunks
            .iter()
            .map(|chunk| {
                let bind = self.pipelines.bind_group(
                    gpu,
                    matrix.name(),
                    chunk.binding(),
                    &[x, y, &chunk.params, step, &shape],
                );
                let groups = (chunk.rows.end - chunk.rows.start).div_ceil(self.blocking.rows());
                let (gx, gz) = grid(groups, max_dim);
                Bound::new(
                    name.clone(),
                    pipeline.clone(),
                    bind,
                    (gx, max_tokens / tokens, gz),
                )
            })
            .collect())
    }

    /// `X·Wᵀ` for the `tokens` rows of `x`, computed and read back: for tests and one-off use.
    pub fn run(
        &self,
        gpu: &Gpu,
        matrix: &GpuMatrix,
        x: &[f32],
        tokens: u32,
    ) -> Result<Vec<f32>, GpuError> {
        if x.len() != (tokens * matrix.cols()) as usize {
            return Err(GpuError::Shape {
                name: matrix.name().to_owned(),
                reason: format!(
                    "x has {} elements, not {tokens} rows of {}",
                    x.len(),
                    matrix.cols()
                ),
            });
        }
        let whole = self.blocking.tokens();
        let max = tokens.div_ceil(whole).max(1) * whole;
        let mut padded = x.to_vec();
        padded.resize((max * matrix.cols()) as usize, 0.0);
        let xb = gpu.upload_f32("x", &padded);
        let yb = gpu.storage_f32("y", (tokens * matrix.rows()) as usize);
        let step = super::StepUniform::new(0, tokens).buffer(gpu);
        let bound = self.bind(gpu, matrix, &xb, &yb, &step, max)?;
        let mut encoder = gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        kernel::record_pass(&mut encoder, matrix.name(), &bound);
        gpu.queue.submit([encoder.finish()]);
        gpu.read_f32(&yb, (tokens * matrix.rows()) as usize)
    }
}

/// The matrix-matrix kernels' bindings: W, X, Y, the matrix's params, the step, the shape.
const SLOTS: [Slot; 6] = [
    Slot::Read,
    Slot::Read,
    Slot::ReadWrite,
    Slot::Uniform,
    Slot::Uniform,
    Slot::Uniform,
];

/// Refuses a tile the kernels do not have.
pub(super) fn check_tile(tile: u32) -> Result<(), GpuError> {
    if TILES.contains(&tile) {
        Ok(())
    } else {
        Err(GpuError::Compile {
            what: "matrix-matrix".into(),
            message: format!("tiles of {tile} tokens: the kernels have tiles of {TILES:?}"),
        })
    }
}
