//! The gated activations of the feed-forward blocks: SwiGLU (llama family) and GeGLU (Gemma).

use super::kernel::{grid_for, record_pass, Bound, Kernel};
use super::{Gpu, GpuError};
use crate::gate::Gate;

/// The `ACT` constant of the kernels that apply the gate themselves (`gated_act.wgsl`).
pub(super) fn wgsl_act(gate: Gate) -> u32 {
    match gate {
        Gate::SwiGlu => 0,
        Gate::GeGlu => 1,
    }
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    _pad: [u32; 3],
}

#[derive(Debug)]
pub struct GatedActivation {
    gate: Gate,
    kernel: Kernel,
}

impl GatedActivation {
    pub fn new(gpu: &Gpu, gate: Gate) -> Result<Self, GpuError> {
        let kernel = match gate {
            Gate::SwiGlu => Kernel::new(gpu, "swiglu", include_str!("../kernels/swiglu.wgsl"))?,
            Gate::GeGlu => Kernel::new(gpu, "geglu", include_str!("../kernels/geglu.wgsl"))?,
        };
        Ok(Self { gate, kernel })
    }

    pub fn gate(&self) -> Gate {
        self.gate
    }

    /// `y[i] = act(gate[i]) * up[i]` for `i < n`.
    pub fn encode(
        &self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        gate: &wgpu::Buffer,
        up: &wgpu::Buffer,
        y: &wgpu::Buffer,
        n: u32,
    ) {
        record_pass(
            encoder,
            "gated activation",
            &[self.bind(gpu, gate, up, y, n)],
        );
    }

    /// The same dispatch, bound once to be recorded every step.
    pub fn bind(
        &self,
        gpu: &Gpu,
        gate: &wgpu::Buffer,
        up: &wgpu::Buffer,
        y: &wgpu::Buffer,
        n: u32,
    ) -> Bound {
        let params = Params { n, _pad: [0; 3] };
        self.kernel
            .bind(gpu, &[gate, up, y], &params, grid_for(gpu, n, 64))
    }
}
