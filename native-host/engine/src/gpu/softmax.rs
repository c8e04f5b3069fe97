//! Row-wise softmax (attention scores; the sampler's probabilities).

use super::kernel::Kernel;
use super::{Gpu, GpuError};

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    scale: f32,
    _pad: [u32; 2],
}

#[derive(Debug)]
pub struct Softmax {
    kernel: Kernel,
}

impl Softmax {
    pub fn new(gpu: &Gpu) -> Result<Self, GpuError> {
        Ok(Self {
            kernel: Kernel::new(
                gpu,
                "softmax",
                &super::shader::with_workgroup_reduce(include_str!("../kernels/softmax.wgsl")),
            )?,
        })
    }

    /// Replaces each of the `rows` rows of `n` values in `x` by `softmax(scale * row)`.
    pub fn encode(
        &self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        x: &wgpu::Buffer,
        rows: u32,
        n: u32,
        scale: f32,
    ) -> Result<(), GpuError> {
        super::kernel::check_rows(gpu, "softmax", rows)?;
        let params = Params {
            n,
            scale,
            _pad: [0; 2],
        };
        self.kernel
            .dispatch(gpu, encoder, &[x], &params, (rows, 1, 1));
        Ok(())
    }
}
