//! Biases (Qwen 2's on q, k and v) added to each token's row. The residual connection is
//! added by the products and norms that make it (`Output::Add`), not here.

use super::kernel::{grid_for, Bound, Kernel};
use super::{Gpu, GpuError};

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    period: u32,
    _pad: [u32; 2],
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

    /// `y[i] += b[i % period]` for `i < n`: a bias of `period` floats added to each of the
    /// `n / period` rows of `y`.
    pub fn bind_repeating(
        &self,
        gpu: &Gpu,
        b: &wgpu::Buffer,
        y: &wgpu::Buffer,
        n: u32,
        period: u32,
    ) -> Bound {
        let params = Params {
            n,
            period: period.max(1),
            _pad: [0; 2],
        };
        self.kernel
            .bind(gpu, &[b, y], &params, grid_for(gpu, n, 64))
    }
}
