//! RMSNorm: every block of both architectures starts with one.

use super::kernel::{record_pass, Bound, Kernel};
use super::matrix::Output;
use super::{Gpu, GpuError};

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    eps: f32,
    /// [`Output`]: written over `y`, or added to it.
    add: u32,
    _pad: u32,
}

#[derive(Debug)]
pub struct RmsNorm {
    kernel: Kernel,
}

impl RmsNorm {
    pub fn new(gpu: &Gpu) -> Result<Self, GpuError> {
        Ok(Self {
            kernel: Kernel::new(
                gpu,
                "rmsnorm",
                &super::shader::with_workgroup_reduce(include_str!("../kernels/rmsnorm.wgsl")),
            )?,
        })
    }

    /// `y[r] = x[r] / rms(x[r]) * weight` for each of the `rows` rows of `weight.len()` = `n`
    /// columns.
    #[allow(clippy::too_many_arguments)]
    pub fn encode(
        &self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        x: &wgpu::Buffer,
        weight: &wgpu::Buffer,
        y: &wgpu::Buffer,
        rows: u32,
        n: u32,
        eps: f32,
    ) -> Result<(), GpuError> {
        let bound = self.bind(gpu, x, weight, y, rows, n, eps)?;
        record_pass(encoder, "rmsnorm", &[bound]);
        Ok(())
    }

    /// The same dispatch, bound once to be recorded every step.
    #[allow(clippy::too_many_arguments)]
    pub fn bind(
        &self,
        gpu: &Gpu,
        x: &wgpu::Buffer,
        weight: &wgpu::Buffer,
        y: &wgpu::Buffer,
        rows: u32,
        n: u32,
        eps: f32,
    ) -> Result<Bound, GpuError> {
        self.bind_output(gpu, x, weight, y, (rows, n, eps), Output::Write)
    }

    /// As [`bind`](Self::bind), writing the norm over `y` or adding it to `y` as `output`
    /// says: a post-norm and the residual add after it in one dispatch.
    pub fn bind_output(
        &self,
        gpu: &Gpu,
        x: &wgpu::Buffer,
        weight: &wgpu::Buffer,
        y: &wgpu::Buffer,
        (rows, n, eps): (u32, u32, f32),
        output: Output,
    ) -> Result<Bound, GpuError> {
        super::kernel::check_rows(gpu, "rmsnorm", rows)?;
        let params = Params {
            n,
            eps,
            add: output as u32,
            _pad: 0,
        };
        Ok(self
            .kernel
            .bind(gpu, &[x, weight, y], &params, (rows, 1, 1)))
    }
}
