//! Compiling a WGSL kernel and dispatching it, for the kernels whose bindings are simple buffers.

use std::sync::Arc;

use wgpu::util::DeviceExt;

use super::{Gpu, GpuError};

/// A compiled compute pipeline with its bind group layout derived from the shader. A clone
/// shares the compiled pipeline.
#[derive(Debug, Clone)]
pub struct Kernel {
    name: &'static str,
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
}

impl Kernel {
    /// Compiles `source` (entry point `main`); WGSL errors come back as [`GpuError::Compile`]
    /// rather than as wgpu's uncaptured-error panic.
    pub fn new(gpu: &Gpu, name: &'static str, source: &str) -> Result<Self, GpuError> {
        let pipeline = compile(gpu, name, source, None)?;
        let layout = pipeline.get_bind_group_layout(0);
        Ok(Self {
            name,
            pipeline,
            layout,
        })
    }

    /// A dispatch of `groups` workgroups with `buffers` bound at 0, 1, … and `params` (a
    /// plain-data struct) as a uniform at the next binding, ready to be recorded any number of
    /// times: a forward pass binds its dispatches once at load and only records them per token.
    pub fn bind<P: bytemuck::Pod>(
        &self,
        gpu: &Gpu,
        buffers: &[&wgpu::Buffer],
        params: &P,
        groups: (u32, u32, u32),
    ) -> Bound {
        self.bind_with_tail(gpu, buffers, params, &[], groups)
    }

    /// As [`bind`](Self::bind), with `tail` bound after the uniform: a variant of a kernel
    /// whose extra bindings follow the ones it shares with the plain kernel.
    pub fn bind_with_tail<P: bytemuck::Pod>(
        &self,
        gpu: &Gpu,
        buffers: &[&wgpu::Buffer],
        params: &P,
        tail: &[&wgpu::Buffer],
        groups: (u32, u32, u32),
    ) -> Bound {
        let params = gpu
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(self.name),
                contents: bytemuck::bytes_of(params),
                usage: wgpu::BufferUsages::UNIFORM,
            });
        let mut all = buffers.to_vec();
        all.push(&params);
        all.extend(tail);
        let bind_group = bind_group(gpu, self.name, &self.layout, &all);
        Bound::new(self.name, self.pipeline.clone(), bind_group, groups)
    }

    /// Binds and records one dispatch in a pass of its own (for one-off use and tests).
    pub fn dispatch<P: bytemuck::Pod>(
        &self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        buffers: &[&wgpu::Buffer],
        params: &P,
        groups: (u32, u32, u32),
    ) {
        record_pass(
            encoder,
            self.name,
            &[self.bind(gpu, buffers, params, groups)],
        );
    }
}

/// A kernel with its buffers bound: one dispatch, recorded as often as wanted.
#[derive(Debug, Clone)]
pub struct Bound {
    /// The kernel's name, for profiles.
    name: Arc<str>,
    pipeline: wgpu::ComputePipeline,
    bind_group: wgpu::BindGroup,
    groups: (u32, u32, u32),
}

impl Bound {
    pub(super) fn new(
        name: impl Into<Arc<str>>,
        pipeline: wgpu::ComputePipeline,
        bind_group: wgpu::BindGroup,
        groups: (u32, u32, u32),
    ) -> Self {
        Self {
            name: name.into(),
            pipeline,
            bind_group,
            groups,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Workgroups dispatched in x, y and z.
    pub fn groups(&self) -> (u32, u32, u32) {
        self.groups
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>) {
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.bind_group, &[]);
        pass.dispatch_workgroups(self.groups.0, self.groups.1, self.groups.2);
    }
}

/// Records `dispatches` in order in one compute pass (wgpu orders their reads after the writes
/// before them).
pub fn record_pass(encoder: &mut wgpu::CommandEncoder, label: &str, dispatches: &[Bound]) {
    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
        label: Some(label),
        timestamp_writes: None,
    });
    for d in dispatches {
        d.record(&mut pass);
    }
}

/// The per-step values of a forward pass, in a uniform buffer written once per step so that
/// the dispatches bound at load never change: the first new token's position and how many new
/// tokens there are (one in decode). The kernels declare it as `Step` (`step.wgsl`).
#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub struct StepUniform {
    pub pos: u32,
    pub tokens: u32,
    pub _pad: [u32; 2],
}

impl StepUniform {
    /// `tokens` tokens at `pos..pos + tokens`.
    pub fn new(pos: u32, tokens: u32) -> Self {
        Self {
            pos,
            tokens,
            _pad: [0; 2],
        }
    }

    /// A buffer holding `self`, writable later with `queue.write_buffer`.
    pub fn buffer(&self, gpu: &Gpu) -> wgpu::Buffer {
        gpu.device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("step"),
                contents: bytemuck::bytes_of(self),
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            })
    }
}

/// A bind group of `buffers`, whole, at bindings 0, 1, … of `layout`.
pub(super) fn bind_group(
    gpu: &Gpu,
    label: &str,
    layout: &wgpu::BindGroupLayout,
    buffers: &[&wgpu::Buffer],
) -> wgpu::BindGroup {
    let resources: Vec<wgpu::BindingResource<'_>> =
        buffers.iter().map(|b| b.as_entire_binding()).collect();
    bind_group_of(gpu, label, layout, &resources)
}

/// A bind group of `resources` at bindings 0, 1, … of `layout`: for bindings of part of a
/// buffer (a matrix of a joined upload).
pub(super) fn bind_group_of(
    gpu: &Gpu,
    label: &str,
    layout: &wgpu::BindGroupLayout,
    resources: &[wgpu::BindingResource<'_>],
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry<'_>> = resources
        .iter()
        .enumerate()
        .map(|(i, r)| wgpu::BindGroupEntry {
            binding: i as u32,
            resource: r.clone(),
        })
        .collect();
    gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(label),
        layout,
        entries: &entries,
    })
}

/// Compiles `source` into a pipeline, its validation and internal errors returned as one.
pub(super) fn compile(
    gpu: &Gpu,
    name: &str,
    source: &str,
    layout: Option<&wgpu::PipelineLayout>,
) -> Result<wgpu::ComputePipeline, GpuError> {
    // A driver or shader backend that fails to build the pipeline reports an internal error,
    // which uncaptured would end the process: both kinds become this kernel's error.
    let internal = gpu.device.push_error_scope(wgpu::ErrorFilter::Internal);
    let validation = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
    let module = gpu
        .device
        .create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(name),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
    let pipeline = gpu
        .device
        .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(name),
            layout,
            module: &module,
            entry_point: Some("main"),
            compilation_options: wgpu::PipelineCompilationOptions {
                constants: &[],
                // Every kernel writes its workgroup memory before reading it.
                zero_initialize_workgroup_memory: false,
            },
            cache: None,
        });
    let errors = [validation.pop(), internal.pop()].map(pollster::block_on);
    if let Some(error) = errors.into_iter().flatten().next() {
        return Err(GpuError::Compile {
            what: name.to_owned(),
            message: error.to_string(),
        });
    }
    Ok(pipeline)
}

/// `groups` workgroups as an x × y grid within the per-dimension limit. Kernels rebuild the linear
/// index as `x + y * num_workgroups.x` and skip the surplus groups of the last line.
pub(super) fn grid(groups: u32, max_dim: u32) -> (u32, u32) {
    if groups <= max_dim {
        (groups.max(1), 1)
    } else {
        let y = groups.div_ceil(max_dim);
        (groups.div_ceil(y), y)
    }
}

/// Row-per-workgroup kernels dispatch one workgroup per row along x.
pub(super) fn check_rows(gpu: &Gpu, name: &str, rows: u32) -> Result<(), GpuError> {
    let max = gpu.limits().max_compute_workgroups_per_dimension;
    if rows > max {
        return Err(GpuError::Shape {
            name: name.to_owned(),
            reason: format!("{rows} rows in one dispatch; the device allows {max}"),
        });
    }
    Ok(())
}

/// The grid for `items` invocations in workgroups of `wg`.
pub(super) fn grid_for(gpu: &Gpu, items: u32, wg: u32) -> (u32, u32, u32) {
    let (x, y) = grid(
        items.div_ceil(wg),
        gpu.limits().max_compute_workgroups_per_dimension,
    );
    (x, y, 1)
}

#[cfg(test)]
mod tests {
    use super::grid;

    #[test]
    fn wide_dispatches_fold_into_two_dimensions() {
        assert_eq!(grid(0, 65535), (1, 1));
        assert_eq!(grid(4096, 65535), (4096, 1));
        let (x, y) = grid(131_073, 65535);
        assert!(x <= 65535 && x * y >= 131_073, "{x} × {y}");
    }
}
