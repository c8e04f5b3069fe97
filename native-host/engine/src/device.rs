//! Which backend runs a model: the GPU through wgpu, or the CPU pass.
//!
//! `auto` takes a real GPU where wgpu finds one, and the CPU otherwise — also where the only
//! adapter is a CPU implementation of Vulkan, Direct3D or GL (lavapipe, llvmpipe, WARP,
//! SwiftShader), through which the WGSL kernels run many times slower than the CPU pass's native
//! code. `gpu` insists on wgpu (a software adapter included), `cpu` never opens one.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use crate::generate::{Decoder, GpuModel};
use crate::gguf::Gguf;
use crate::gpu::Gpu;
use crate::model::{CpuTransformer, GpuTuning, ModelError, Transformer};
use crate::tokenizer::TokenId;

/// Names the device when nothing else does (`auto`, `cpu` or `gpu`).
pub const DEVICE_ENV: &str = "ITINERO_DEVICE";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Device {
    #[default]
    Auto,
    Cpu,
    Gpu,
}

impl Device {
    /// [`DEVICE_ENV`] when set to a device's name, else `Auto`.
    pub fn from_env() -> Result<Self, String> {
        match std::env::var(DEVICE_ENV) {
            Ok(v) if !v.is_empty() => v.parse(),
            _ => Ok(Device::Auto),
        }
    }
}

impl FromStr for Device {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Device::Auto),
            "cpu" => Ok(Device::Cpu),
            "gpu" => Ok(Device::Gpu),
            other => Err(format!("unknown device {other:?}: use auto, cpu or gpu")),
        }
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Device::Auto => "auto",
            Device::Cpu => "cpu",
            Device::Gpu => "gpu",
        })
    }
}

/// A model loaded on the device [`Device`] chose.
#[allow(clippy::large_enum_variant)] // one per loaded model, moved once
pub enum LoadedModel {
    Gpu(GpuModel<Arc<Gpu>>),
    Cpu(CpuTransformer),
}

impl fmt::Debug for LoadedModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

impl LoadedModel {
    /// Loads `gguf` with a KV cache of `capacity` positions on the device `device` picks.
    pub fn load(device: Device, gguf: Gguf, capacity: u32) -> Result<Self, ModelError> {
        Self::load_tuned(device, gguf, capacity, GpuTuning::default())
    }

    pub fn load_tuned(
        device: Device,
        gguf: Gguf,
        capacity: u32,
        tuning: GpuTuning,
    ) -> Result<Self, ModelError> {
        let gpu = match device {
            Device::Cpu => None,
            Device::Gpu => Some(Gpu::new()?),
            Device::Auto => match Gpu::new() {
                Ok(gpu) if gpu.is_cpu() => {
                    tracing::info!(
                        adapter = %gpu.describe(),
                        "the only GPU adapter is a software one: the model runs on the CPU pass"
                    );
                    None
                }
                Ok(gpu) => Some(gpu),
                Err(e) => {
                    tracing::info!("no GPU ({e}): the model runs on the CPU");
                    None
                }
            },
        };
        Ok(match gpu {
            Some(gpu) => {
                let model = Transformer::load_tuned(&gpu, gguf, capacity, tuning)?;
                LoadedModel::Gpu(GpuModel {
                    gpu: Arc::new(gpu),
                    model,
                })
            }
            None => LoadedModel::Cpu(CpuTransformer::load(
                gguf,
                capacity,
                crate::model::cpu_pass::default_threads(),
            )?),
        })
    }

    /// What runs it: the adapter, or "CPU (avx2, 2 threads)".
    pub fn describe(&self) -> String {
        match self {
            LoadedModel::Gpu(g) => g.gpu.describe(),
            LoadedModel::Cpu(c) => c.describe(),
        }
    }

    /// Which of the two it is on.
    pub fn device(&self) -> Device {
        match self {
            LoadedModel::Gpu(_) => Device::Gpu,
            LoadedModel::Cpu(_) => Device::Cpu,
        }
    }

    pub fn weights_bytes(&self) -> u64 {
        match self {
            LoadedModel::Gpu(g) => g.model.weights_bytes(),
            LoadedModel::Cpu(c) => c.weights_bytes(),
        }
    }

    pub fn kv_cache_bytes(&self) -> u64 {
        match self {
            LoadedModel::Gpu(g) => g.model.kv_cache_bytes(),
            LoadedModel::Cpu(c) => c.kv_cache_bytes(),
        }
    }

    /// The GPU and its model, where it runs on one.
    pub fn on_gpu(&self) -> Option<(&Gpu, &Transformer)> {
        match self {
            LoadedModel::Gpu(g) => Some((&g.gpu, &g.model)),
            LoadedModel::Cpu(_) => None,
        }
    }
}

impl Decoder for LoadedModel {
    fn capacity(&self) -> u32 {
        match self {
            LoadedModel::Gpu(g) => g.capacity(),
            LoadedModel::Cpu(c) => c.capacity(),
        }
    }
    fn feed(&mut self, tokens: &[TokenId], pos: u32) -> Result<(), ModelError> {
        match self {
            LoadedModel::Gpu(g) => g.feed(tokens, pos),
            LoadedModel::Cpu(c) => c.feed(tokens, pos),
        }
    }
    fn step(&mut self, token: TokenId, pos: u32) -> Result<Vec<f32>, ModelError> {
        match self {
            LoadedModel::Gpu(g) => g.step(token, pos),
            LoadedModel::Cpu(c) => c.step(token, pos),
        }
    }
    fn busies_the_cpu(&self) -> bool {
        match self {
            LoadedModel::Gpu(g) => g.busies_the_cpu(),
            LoadedModel::Cpu(c) => c.busies_the_cpu(),
        }
    }
    fn feed_chunk(&self) -> usize {
        match self {
            LoadedModel::Gpu(g) => g.feed_chunk(),
            LoadedModel::Cpu(c) => c.feed_chunk(),
        }
    }
}
