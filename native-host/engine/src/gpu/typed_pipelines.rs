//! One compute pipeline per weight type over one bind-group layout: how the matrix kernels
//! (matrix-vector and matrix-matrix) are built, looked up and bound.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{kernel, Gpu, GpuError};
use crate::tensor_type::TensorType;

/// What a binding of the layout holds, in binding order.
#[derive(Debug, Clone, Copy)]
pub(super) enum Slot {
    Read,
    ReadWrite,
    Uniform,
}

#[derive(Debug)]
pub(super) struct TypedPipelines {
    /// The kernel's name in messages: "matrix-vector", "matrix-matrix".
    what: &'static str,
    layout: wgpu::BindGroupLayout,
    /// Per type: the type, its pipeline and its name ("q4_1 matrix-vector") for profiles.
    pipelines: BTreeMap<u32, (TensorType, wgpu::ComputePipeline, Arc<str>)>,
}

impl TypedPipelines {
    /// Compiles `source(ty)` for each of `types` against a layout of `slots`.
    pub(super) fn new(
        gpu: &Gpu,
        what: &'static str,
        slots: &[Slot],
        types: &[TensorType],
        source: impl Fn(TensorType) -> String,
    ) -> Result<Self, GpuError> {
        let entries: Vec<wgpu::BindGroupLayoutEntry> = slots
            .iter()
            .enumerate()
            .map(|(i, slot)| wgpu::BindGroupLayoutEntry {
                binding: i as u32,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: match slot {
                        Slot::Read => wgpu::BufferBindingType::Storage { read_only: true },
                        Slot::ReadWrite => wgpu::BufferBindingType::Storage { read_only: false },
                        Slot::Uniform => wgpu::BufferBindingType::Uniform,
                    },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            })
            .collect();
        let layout = gpu
            .device
            .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some(what),
                entries: &entries,
            });
        let pipeline_layout = gpu
            .device
            .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(what),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            });
        let mut pipelines = BTreeMap::new();
        for &ty in types {
            let name = format!("{ty} {what}");
            let pipeline = kernel::compile(gpu, &name, &source(ty), Some(&pipeline_layout))?;
            pipelines.insert(ty.ggml_id(), (ty, pipeline, Arc::from(name)));
        }
        Ok(Self {
            what,
            layout,
            pipelines,
        })
    }

    /// The pipeline for weights of type `ty`, or which types were built.
    pub(super) fn get(
        &self,
        ty: TensorType,
    ) -> Result<(&wgpu::ComputePipeline, &Arc<str>), GpuError> {
        self.pipelines
            .get(&ty.ggml_id())
            .map(|(_, p, name)| (p, name))
            .ok_or_else(|| GpuError::NoKernel {
                what: self.what,
                ty,
                built: self
                    .pipelines
                    .values()
                    .map(|(t, _, _)| t.name())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// A bind group of a matrix chunk's `weights` at binding 0 and `buffers`, whole, at 1, 2, …
    /// of the layout.
    pub(super) fn bind_group(
        &self,
        gpu: &Gpu,
        label: &str,
        weights: wgpu::BindingResource<'_>,
        buffers: &[&wgpu::Buffer],
    ) -> wgpu::BindGroup {
        let resources: Vec<wgpu::BindingResource<'_>> = std::iter::once(weights)
            .chain(buffers.iter().map(|b| b.as_entire_binding()))
            .collect();
        kernel::bind_group_of(gpu, label, &self.layout, &resources)
    }
}
