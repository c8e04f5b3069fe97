//! f32 vectors to and from the device, and f16 ones (the KV cache's type) up.

use wgpu::util::DeviceExt;
use wgpu::BufferUsages;

use super::{Gpu, GpuError};

impl Gpu {
    /// A storage buffer holding `data`, readable by kernels and copyable back.
    pub fn upload_f32(&self, label: &str, data: &[f32]) -> wgpu::Buffer {
        self.device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytemuck::cast_slice(data),
                usage: BufferUsages::STORAGE | BufferUsages::COPY_SRC | BufferUsages::COPY_DST,
            })
    }

    /// A storage buffer holding `data` rounded to f16, two to a 32-bit word as WGSL's
    /// `unpack2x16float` reads them (the first in the low half). `data` is of even length.
    pub fn upload_f16(&self, label: &str, data: &[f32]) -> wgpu::Buffer {
        debug_assert!(data.len().is_multiple_of(2), "f16 pairs");
        let halves: Vec<half::f16> = data.iter().map(|&v| half::f16::from_f32(v)).collect();
        self.device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytemuck::cast_slice(&halves),
                usage: BufferUsages::STORAGE | BufferUsages::COPY_SRC | BufferUsages::COPY_DST,
            })
    }

    /// A zeroed storage buffer of `len` f32s for kernels to write.
    pub fn storage_f32(&self, label: &str, len: usize) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: (len * 4) as u64,
            usage: BufferUsages::STORAGE | BufferUsages::COPY_SRC | BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// Copies the first `len` f32s of `buffer` back, waiting for the work that writes them.
    pub fn read_f32(&self, buffer: &wgpu::Buffer, len: usize) -> Result<Vec<f32>, GpuError> {
        self.read(buffer, len)
    }

    /// Copies the first `len` values of type `T` of `buffer` back, waiting for the work that
    /// writes them.
    pub fn read<T: bytemuck::Pod>(
        &self,
        buffer: &wgpu::Buffer,
        len: usize,
    ) -> Result<Vec<T>, GpuError> {
        let bytes = (len * std::mem::size_of::<T>()) as u64;
        let staging = self.readback_buffer("read-back", bytes);
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, bytes);
        self.queue.submit([encoder.finish()]);
        self.read_mapped(&staging, len)
    }

    /// A buffer of `bytes` to copy into and read back through [`Self::read_mapped`]: kept by
    /// whatever reads the same values over and over (decode's logits), so that each read neither
    /// allocates nor submits work of its own.
    pub fn readback_buffer(&self, label: &str, bytes: u64) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes,
            usage: BufferUsages::MAP_READ | BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// The first `len` values of type `T` of `staging` (a [`Self::readback_buffer`]), once the
    /// work already submitted has written them: mapped, copied out, and unmapped again for the
    /// next copy into it.
    pub fn read_mapped<T: bytemuck::Pod>(
        &self,
        staging: &wgpu::Buffer,
        len: usize,
    ) -> Result<Vec<T>, GpuError> {
        let bytes = (len * std::mem::size_of::<T>()) as u64;
        let fail = |reason: String| GpuError::ReadBack {
            what: format!("{len} {} of {:?}", std::any::type_name::<T>(), staging),
            reason,
        };
        let slice = staging.slice(..bytes);
        let (tx, rx) = std::sync::mpsc::channel();
        slice.map_async(wgpu::MapMode::Read, move |r| drop(tx.send(r)));
        self.wait()?;
        rx.recv()
            .map_err(|_| fail("the map callback never ran".into()))?
            .map_err(|e| fail(e.to_string()))?;
        let view = slice.get_mapped_range().map_err(|e| fail(e.to_string()));
        let out = view.map(|v| bytemuck::pod_collect_to_vec::<u8, T>(&v));
        staging.unmap();
        out
    }
}
