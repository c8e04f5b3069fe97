use crate::tensor_type::TensorType;

/// Why a GPU operation failed.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    #[error("no GPU adapter for backends {backends}: install a GPU driver, or mesa-vulkan-drivers and libvulkan1 for lavapipe (Vulkan on the CPU); WGPU_BACKEND limits the backends searched")]
    NoAdapter { backends: String },
    #[error("no GPU adapter's name contains {wanted:?} (WGPU_ADAPTER_NAME); adapters found: {available}")]
    AdapterNotFound { wanted: String, available: String },
    #[error("opening a device on {adapter}: {source}")]
    RequestDevice {
        adapter: String,
        #[source]
        source: wgpu::RequestDeviceError,
    },
    #[error("reading back {what}: {reason}")]
    ReadBack { what: String, reason: String },
    #[error("matrix {name}: {reason}")]
    Shape { name: String, reason: String },
    #[error(
        "{what} on cooperative matrices differs from the portable kernel by {relative:.2e} of its \
         output (at most {allowed:.0e}): this driver's cooperative matrices are not to be trusted"
    )]
    CooperativeMismatch {
        what: String,
        relative: f64,
        allowed: f64,
    },
    #[error("matrix {name}: a {ty} row of {row_bytes} bytes does not fit in one storage binding of {limit} bytes")]
    RowTooLarge {
        name: String,
        ty: TensorType,
        row_bytes: u64,
        limit: u64,
    },
    #[error("no {what} kernel was built for {ty} (built: {built})")]
    NoKernel {
        what: &'static str,
        ty: TensorType,
        built: String,
    },
    #[error("{adapter} does not offer {what}")]
    Unsupported { adapter: String, what: String },
    #[error("compiling the {what} kernel: {message}")]
    Compile { what: String, message: String },
}
