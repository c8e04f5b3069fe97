//! Prefill's products over matrices joined in one upload (`kernels/matmul_joined.wgsl`): q, k and
//! v in one dispatch, the FFN's gate and up with the activation in one more.
//!
//! A batch's product takes about as long for a 192-row matrix as for a 576-row one on a large
//! GPU (one invocation per weight row leaves most of it idle), so one dispatch over the joined
//! rows costs about what one of the separate ones did.

use wgpu::util::DeviceExt;

use super::kernel::{grid, Bound};
use super::matmul::{Blocking, MatMul, WORKGROUP};
use super::matrix::GpuMatrix;
use super::normed_matvec::Destination;
use super::typed_pipelines::{Slot, TypedPipelines};
use super::{shader, Gpu, GpuError};
use crate::gate::Gate;
use crate::tensor_type::TensorType;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Joined {
    split1: u32,
    split2: u32,
    bias: u32,
    total: u32,
    _pad: [u32; 4],
}

/// The joined matrix-matrix pipelines for a model's weight types and gate, shared out as
/// [`MatMul`]'s are.
#[derive(Debug)]
pub struct JoinedMatMul {
    blocking: Blocking,
    split: TypedPipelines,
    gated: TypedPipelines,
    /// Bound where a form leaves a binding unused (see `NormedMatVec`).
    spare: [wgpu::Buffer; 2],
    no_bias: wgpu::Buffer,
}

impl JoinedMatMul {
    pub fn new(gpu: &Gpu, types: &[TensorType], gate: Gate, tile: u32) -> Result<Self, GpuError> {
        Self::with_blocking(gpu, types, gate, Blocking::Rows(tile))
    }

    pub fn with_blocking(
        gpu: &Gpu,
        types: &[TensorType],
        gate: Gate,
        blocking: Blocking,
    ) -> Result<Self, GpuError> {
        blocking.check(gpu)?;
        let subgroup_x = MatMul::can_share_x(gpu);
        let subgroup = gpu.info().subgroup_min_size;
        let act = super::activation::wgsl_act(gate);
        let slots = [
            Slot::Read,
            Slot::Read,
            Slot::Read,
            Slot::ReadWrite,
            Slot::ReadWrite,
            Slot::ReadWrite,
            Slot::Uniform,
            Slot::Uniform,
            Slot::Uniform,
        ];
        let build = |gated: bool, what: &'static str| {
            TypedPipelines::new(gpu, what, &slots, types, |ty| match blocking {
                Blocking::Rows(tile) => {
                    shader::matmul_joined(ty, WORKGROUP, tile, subgroup_x, gated, act)
                }
                Blocking::Cooperative(shape) => {
                    shader::matmul_joined_coop(ty, shape, subgroup, gated, act)
                }
            })
        };
        let spare = |label: &str| gpu.storage_f32(label, 4);
        Ok(Self {
            blocking,
            split: build(false, "joined matrix-matrix")?,
            gated: build(true, "joined gated matrix-matrix")?,
            spare: [spare("spare 1"), spare("spare 2")],
            no_bias: spare("no bias"),
        })
    }

    /// `X·Wᵀ` for up to `max_tokens` tokens (whole tiles), each token's row of it split over
    /// `destinations` in order (two or three, each a buffer of `max_tokens` rows of its own
    /// width), plus `bias` (one value per row of W) where given.
    #[allow(clippy::too_many_arguments)]
    pub fn bind_split(
        &self,
        gpu: &Gpu,
        joined: &GpuMatrix,
        x: &wgpu::Buffer,
        destinations: &[Destination<'_>],
        bias: Option<&wgpu::Buffer>,
        step: &wgpu::Buffer,
        max_tokens: u32,
    ) -> Result<Vec<Bound>, GpuError> {
        let total: u32 = destinations.iter().map(|d| d.rows).sum();
        if !(2..=3).contains(&destinations.len()) || total != joined.rows() {
            return Err(GpuError::Shape {
                name: joined.name().to_owned(),
                reason: format!(
                    "{} destinations of {total} rows for {} joined rows",
                    destinations.len(),
                    joined.rows()
                ),
            });
        }
        let y2 = destinations.get(2).map_or(&self.spare[1], |d| d.buffer);
        let split1 = destinations[0].rows;
        let uniform = Joined {
            split1,
            split2: split1 + destinations[1].rows,
            bias: u32::from(bias.is_some()),
            total,
            _pad: [0; 4],
        };
        let outputs = [
            bias.unwrap_or(&self.no_bias),
            destinations[0].buffer,
            destinations[1].buffer,
            y2,
        ];
        self.bind(
            gpu,
            &self.split,
            joined,
            (total, uniform),
            x,
            outputs,
            step,
            max_tokens,
        )
    }

    /// `Y = act(X·Gateᵀ) * X·Upᵀ` for up to `max_tokens` tokens, where `gate_up` is the gate
    /// matrix joined to the up matrix.
    pub fn bind_gated(
        &self,
        gpu: &Gpu,
        gate_up: &GpuMatrix,
        x: &wgpu::Buffer,
        y: &wgpu::Buffer,
        step: &wgpu::Buffer,
        max_tokens: u32,
    ) -> Result<Vec<Bound>, GpuError> {
        let ffn = gate_up.rows() / 2;
        let uniform = Joined {
            split1: ffn,
            split2: ffn,
            bias: 0,
            total: gate_up.rows(),
            _pad: [0; 4],
        };
        let outputs = [&self.no_bias, y, &self.spare[0], &self.spare[1]];
        self.bind(
            gpu,
            &self.gated,
            gate_up,
            (ffn, uniform),
            x,
            outputs,
            step,
            max_tokens,
        )
    }

    /// The dispatch over `joined` (one binding), computing `rows` rows of each token.
    #[allow(clippy::too_many_arguments)]
    fn bind(
        &self,
        gpu: &Gpu,
        pipelines: &TypedPipelines,
        joined: &GpuMatrix,
        (rows, uniform): (u32, Joined),
        x: &wgpu::Buffer,
        [b, y0, y1, y2]: [&wgpu::Buffer; 4],
        step: &wgpu::Buffer,
        max_tokens: u32,
    ) -> Result<Vec<Bound>, GpuError> {
        let tokens = self.blocking.tokens();
        if joined.chunk_count() != 1 || max_tokens == 0 || !max_tokens.is_multiple_of(tokens) {
            return Err(GpuError::Shape {
                name: joined.name().to_owned(),
                reason: format!(
                    "joined matrices are one binding and a batch whole tiles of {tokens} \
                     ({} bindings, {max_tokens} tokens)",
                    joined.chunk_count()
                ),
            });
        }
        let (pipeline, name) = pipelines.get(joined.ty())?;
        let buffer = |label: &str, contents: &[u8]| {
            gpu.device
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some(label),
                    contents,
                    usage: wgpu::BufferUsages::UNIFORM,
                })
        };
        let params = buffer(
            "joined matmul params",
            bytemuck::cast_slice(&[rows, joined.cols(), 0, joined.row_bytes()]),
        );
        let uniform = buffer("joined matmul", bytemuck::bytes_of(&uniform));
        let chunk = &joined.chunks[0];
        let bind = pipelines.bind_group(
            gpu,
            joined.name(),
            chunk.binding(),
            &[x, b, y0, y1, y2, &params, step, &uniform],
        );
        let max_dim = gpu.limits().max_compute_workgroups_per_dimension;
        let (gx, gz) = grid(rows.div_ceil(self.blocking.rows()), max_dim);
        Ok(vec![Bound::new(
            name.clone(),
            pipeline.clone(),
            bind,
            (gx, max_tokens / tokens, gz),
        )])
    }
}
