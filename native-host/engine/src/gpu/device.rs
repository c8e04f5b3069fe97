//! Choosing the adapter and opening the device.
//!
//! The adapter is chosen here rather than by `request_adapter` so that a wrong `WGPU_ADAPTER_NAME`
//! can list what exists, and so the ranking (a real GPU before a CPU driver, a native API before
//! GL) is the same on every platform and can be tested.

use wgpu::{Backend, Backends, DeviceType, Features, PowerPreference};

use super::GpuError;

/// The optional features used when offered: f16 arithmetic, subgroup operations and cooperative
/// matrices (tensor cores) for the kernels (every kernel also has a path that needs none of
/// them), and timestamps inside passes for [`super::profile`].
const WANTED_FEATURES: Features = Features::SHADER_F16
    .union(Features::SUBGROUP)
    .union(Features::EXPERIMENTAL_COOPERATIVE_MATRIX)
    .union(super::profile::FEATURES);

/// How to choose the adapter.
#[derive(Debug, Clone)]
pub struct GpuOptions {
    pub backends: Backends,
    /// Pick the first adapter whose name contains this (case-insensitively) instead of ranking.
    pub adapter_name: Option<String>,
    pub power: PowerPreference,
    /// Have a CPU driver choose its kernels as a GPU does (timed shapes, fused decode, batches
    /// of 512, cooperative matrices where offered), so that the paths only a GPU takes run, and
    /// are tested, on lavapipe before a GPU is at hand. Slow there: no user wants it.
    pub choose_as_gpu: bool,
}

impl GpuOptions {
    /// All backends and the high-performance adapter, unless `WGPU_BACKEND` (e.g. `vulkan`, `gl`),
    /// `WGPU_ADAPTER_NAME` or `WGPU_POWER_PREF` (`low`/`high`) say otherwise;
    /// `ITINERO_GPU_CHOOSE_AS_GPU=1` sets [`choose_as_gpu`](Self::choose_as_gpu).
    pub fn from_env() -> Self {
        Self {
            backends: Backends::from_env().unwrap_or(Backends::PRIMARY | Backends::GL),
            adapter_name: std::env::var("WGPU_ADAPTER_NAME")
                .ok()
                .filter(|n| !n.is_empty()),
            power: PowerPreference::from_env().unwrap_or(PowerPreference::HighPerformance),
            choose_as_gpu: std::env::var("ITINERO_GPU_CHOOSE_AS_GPU").is_ok_and(|v| v == "1"),
        }
    }
}

/// An open device and what it offers.
pub struct Gpu {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    info: wgpu::AdapterInfo,
    limits: wgpu::Limits,
    features: Features,
    /// The square sizes of cooperative matrix with f16 inputs and f32 sums the adapter offers.
    cooperative_sizes: Vec<u32>,
    /// Whether the kernels are chosen for a CPU driver: see [`Gpu::chooses_cpu_kernels`].
    cpu_kernels: bool,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("adapter", &self.info.name)
            .field("backend", &self.info.backend)
            .field("device_type", &self.info.device_type)
            .field("features", &self.features)
            .finish()
    }
}

impl Gpu {
    /// Opens the adapter chosen by [`GpuOptions::from_env`].
    pub fn new() -> Result<Self, GpuError> {
        Self::with_options(&GpuOptions::from_env())
    }

    pub fn with_options(options: &GpuOptions) -> Result<Self, GpuError> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: options.backends,
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        });
        let adapters = pollster::block_on(instance.enumerate_adapters(options.backends));
        let infos: Vec<wgpu::AdapterInfo> = adapters.iter().map(|a| a.get_info()).collect();
        let index = choose_adapter(&infos, options)?;
        let adapter = &adapters[index];
        let info = infos[index].clone();
        let mut features = adapter.features() & WANTED_FEATURES;
        if std::env::var("ITINERO_GPU_COOPERATIVE").is_ok_and(|v| v == "0") {
            features.remove(Features::EXPERIMENTAL_COOPERATIVE_MATRIX);
        }
        // Every limit the adapter offers: the largest storage binding decides how tensors split.
        let limits = adapter.limits();
        let request = |features: Features| {
            // wgpu counts cooperative matrices among its experimental features, which a device
            // must be opened with to use them.
            let experimental_features =
                if features.contains(Features::EXPERIMENTAL_COOPERATIVE_MATRIX) {
                    // SAFETY: wgpu asks the caller to accept that its experimental features may
                    // have bugs. The only one enabled is cooperative matrices, used by prefill's
                    // products and attention, which the tests check against the CPU reference
                    // wherever the adapter has them, and which prefill uses only after timing
                    // them against the portable kernels; `ITINERO_GPU_COOPERATIVE=0` leaves it
                    // off.
                    unsafe { wgpu::ExperimentalFeatures::enabled() }
                } else {
                    wgpu::ExperimentalFeatures::disabled()
                };
            pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
                label: Some("itinero-engine"),
                required_features: features,
                required_limits: limits.clone(),
                experimental_features,
                memory_hints: wgpu::MemoryHints::Performance,
                trace: wgpu::Trace::Off,
            }))
        };
        let opened = match request(features) {
            Err(e) if features.contains(Features::EXPERIMENTAL_COOPERATIVE_MATRIX) => {
                tracing::warn!(error = %e, "the device would not open with cooperative matrices; opening it without");
                features.remove(Features::EXPERIMENTAL_COOPERATIVE_MATRIX);
                request(features)
            }
            opened => opened,
        };
        let (device, queue) = opened.map_err(|source| GpuError::RequestDevice {
            adapter: describe(&info),
            source,
        })?;
        let cooperative_sizes = if features.contains(Features::EXPERIMENTAL_COOPERATIVE_MATRIX) {
            f16_cooperative_sizes(&adapter.cooperative_matrix_properties())
        } else {
            Vec::new()
        };
        tracing::info!(
            adapter = %describe(&info),
            ?features,
            max_storage_binding = limits.max_storage_buffer_binding_size,
            max_buffer = limits.max_buffer_size,
            subgroup_sizes = ?(info.subgroup_min_size, info.subgroup_max_size),
            ?cooperative_sizes,
            "GPU device opened"
        );
        let cpu_kernels = info.device_type == DeviceType::Cpu && !options.choose_as_gpu;
        Ok(Self {
            device,
            queue,
            info,
            limits,
            features,
            cooperative_sizes,
            cpu_kernels,
        })
    }

    pub fn info(&self) -> &wgpu::AdapterInfo {
        &self.info
    }

    pub fn limits(&self) -> &wgpu::Limits {
        &self.limits
    }

    /// The optional features that were enabled (a subset of [`WANTED_FEATURES`]).
    pub fn features(&self) -> Features {
        self.features
    }

    pub fn has_subgroups(&self) -> bool {
        self.features.contains(Features::SUBGROUP)
    }

    /// The size of the cooperative matrices (8 or 16, square, f16 inputs summed in f32) that
    /// prefill's products can run on: the largest the adapter offers, where it also has f16
    /// arithmetic and subgroups of one fixed size (the kernels lay their work out by subgroup),
    /// at least that size.
    pub fn cooperative_fragment(&self) -> Option<u32> {
        let needs = Features::SHADER_F16 | Features::SUBGROUP;
        let (min, max) = (self.info.subgroup_min_size, self.info.subgroup_max_size);
        if !self.features.contains(needs) || min != max {
            return None;
        }
        self.cooperative_sizes
            .iter()
            .copied()
            .filter(|&f| min >= f && min.is_multiple_of(f))
            .max()
    }

    /// A CPU implementation (lavapipe, llvmpipe, WARP), which runs on the cores the CPU engine
    /// would use.
    pub fn is_cpu(&self) -> bool {
        self.info.device_type == DeviceType::Cpu
    }

    /// Whether the kernels are chosen as for a CPU driver, where those that suit a GPU are slow:
    /// per-token lane forms and fixed shapes, untimed; not where
    /// [`GpuOptions::choose_as_gpu`] asked otherwise.
    pub fn chooses_cpu_kernels(&self) -> bool {
        self.cpu_kernels
    }

    /// The most bytes one buffer bound to one kernel can hold.
    pub fn max_binding_bytes(&self) -> u64 {
        self.limits
            .max_storage_buffer_binding_size
            .min(self.limits.max_buffer_size)
    }

    /// "name (backend, type)", for logs and messages.
    pub fn describe(&self) -> String {
        describe(&self.info)
    }

    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// Blocks until all submitted work is done.
    pub fn wait(&self) -> Result<(), GpuError> {
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map(|_| ())
            .map_err(|e| GpuError::ReadBack {
                what: "the queue".into(),
                reason: e.to_string(),
            })
    }
}

/// The square sizes among `offered` that take f16 inputs and sum in f32, each once.
fn f16_cooperative_sizes(offered: &[wgpu::CooperativeMatrixProperties]) -> Vec<u32> {
    let mut sizes: Vec<u32> = offered
        .iter()
        .filter(|p| {
            p.ab_type == wgpu::CooperativeScalarType::F16
                && p.cr_type == wgpu::CooperativeScalarType::F32
                && p.m_size == p.n_size
                && p.n_size == p.k_size
        })
        .map(|p| p.m_size)
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

fn describe(info: &wgpu::AdapterInfo) -> String {
    format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type)
}

/// The index of the adapter to use among `infos`.
fn choose_adapter(infos: &[wgpu::AdapterInfo], options: &GpuOptions) -> Result<usize, GpuError> {
    if infos.is_empty() {
        return Err(GpuError::NoAdapter {
            backends: format!("{:?}", options.backends),
        });
    }
    if let Some(wanted) = &options.adapter_name {
        let lower = wanted.to_lowercase();
        return infos
            .iter()
            .position(|i| i.name.to_lowercase().contains(&lower))
            .ok_or_else(|| GpuError::AdapterNotFound {
                wanted: wanted.clone(),
                available: infos.iter().map(describe).collect::<Vec<_>>().join("; "),
            });
    }
    let best = (0..infos.len())
        .min_by_key(|&i| rank(&infos[i], options.power))
        .expect("not empty");
    Ok(best)
}

/// Lower is better: device type by power preference, then a native API before GL.
fn rank(info: &wgpu::AdapterInfo, power: PowerPreference) -> (u8, u8) {
    let device = match (info.device_type, power) {
        (DeviceType::DiscreteGpu, PowerPreference::LowPower) => 1,
        (DeviceType::IntegratedGpu, PowerPreference::LowPower) => 0,
        (DeviceType::DiscreteGpu, _) => 0,
        (DeviceType::IntegratedGpu, _) => 1,
        (DeviceType::VirtualGpu, _) => 2,
        (DeviceType::Other, _) => 3,
        (DeviceType::Cpu, _) => 4,
    };
    let backend = match info.backend {
        Backend::Vulkan | Backend::Metal | Backend::Dx12 => 0,
        Backend::Gl => 1,
        _ => 2,
    };
    (device, backend)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(name: &str, device_type: DeviceType, backend: Backend) -> wgpu::AdapterInfo {
        wgpu::AdapterInfo {
            name: name.into(),
            ..wgpu::AdapterInfo::new(device_type, backend)
        }
    }

    fn options(name: Option<&str>, power: PowerPreference) -> GpuOptions {
        GpuOptions {
            backends: Backends::all(),
            adapter_name: name.map(String::from),
            power,
            choose_as_gpu: false,
        }
    }

    #[test]
    fn a_real_gpu_comes_before_a_cpu_driver_and_a_native_api_before_gl() {
        let infos = [
            info("llvmpipe", DeviceType::Cpu, Backend::Gl),
            info("lavapipe", DeviceType::Cpu, Backend::Vulkan),
            info("Intel UHD", DeviceType::IntegratedGpu, Backend::Vulkan),
            info("NVIDIA H100", DeviceType::DiscreteGpu, Backend::Vulkan),
        ];
        let high = options(None, PowerPreference::HighPerformance);
        assert_eq!(choose_adapter(&infos, &high).unwrap(), 3);
        let low = options(None, PowerPreference::LowPower);
        assert_eq!(choose_adapter(&infos, &low).unwrap(), 2);
        assert_eq!(choose_adapter(&infos[..2], &high).unwrap(), 1);
    }

    #[test]
    fn the_adapter_name_picks_by_substring_or_lists_what_exists() {
        let infos = [
            info(
                "llvmpipe (LLVM 15.0.6, 256 bits)",
                DeviceType::Cpu,
                Backend::Gl,
            ),
            info("NVIDIA H100", DeviceType::DiscreteGpu, Backend::Vulkan),
        ];
        let o = options(Some("LLVMPIPE"), PowerPreference::HighPerformance);
        assert_eq!(choose_adapter(&infos, &o).unwrap(), 0);
        let o = options(Some("radeon"), PowerPreference::HighPerformance);
        let msg = choose_adapter(&infos, &o).unwrap_err().to_string();
        assert!(msg.contains("\"radeon\""), "{msg}");
        assert!(msg.contains("NVIDIA H100 (Vulkan, DiscreteGpu)"), "{msg}");
    }

    #[test]
    fn no_adapter_says_how_to_get_lavapipe() {
        let o = options(None, PowerPreference::HighPerformance);
        let msg = choose_adapter(&[], &o).unwrap_err().to_string();
        assert!(msg.starts_with("no GPU adapter"), "{msg}");
        assert!(msg.contains("mesa-vulkan-drivers"), "{msg}");
        assert!(msg.contains("WGPU_BACKEND"), "{msg}");
    }
}
