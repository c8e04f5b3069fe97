//! The residual connection `y += x`.

use super::kernel::{grid_for, Kernel};
use super::{Gpu, GpuError};

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    _pad: [u32; 3],
}

#[derive(Debug)]
pub struct Add {
    kernel: Kernel,
}

impl Add {
    pub fn new(gpu: &Gpu) -> Result<Self, GpuError> {
        Ok(Self {
            kernel: Kernel::new(gpu, "add", include_str!("../kernels/add.wgsl"))?,
        })
    }

    /// `y[i] += x[i]` for `i < n`.
    pub fn encode(
        &self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        x: &wgpu::Buffer,
        y: &wgpu::Buffer,
        n: u32,
    ) {
        let params = Params { n, _pad: [0; 3] };
        self.kernel
            .dispatch(gpu, encoder, &[x, y], &params, grid_for(gpu, n, 64));
    }
}
