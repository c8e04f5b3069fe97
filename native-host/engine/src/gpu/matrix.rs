//! A weight matrix on the device, in its GGUF encoding.
//!
//! The bytes are uploaded as they are in the file (the kernels dequantise as they read), cut
//! into chunks of whole rows that each fit one storage binding. Most devices bind at most 128 MiB
//! to one kernel (lavapipe's limit too), and Gemma 3's 262 144-row embedding or a Llama 3 8B output
//! matrix is larger; whole rows per chunk mean no block or row straddles two bindings and each
//! chunk is one dispatch with no alignment rules for binding offsets.

use std::ops::Range;

use wgpu::util::DeviceExt;

use super::{Gpu, GpuError};
use crate::gguf::{Tensor, TensorType};

/// Elements per "part": the unit of work of the kernels, a whole number of blocks of every type.
pub(super) const PART: u64 = 32;

/// One binding's worth of rows.
#[derive(Debug)]
pub(super) struct Chunk {
    pub(super) weights: wgpu::Buffer,
    /// Where the chunk's bytes lie in `weights`: all of it, or one matrix's share of a joined
    /// upload (see [`GpuMatrix::upload_joined`]).
    pub(super) offset: u64,
    pub(super) size: u64,
    /// The kernel's `Params` for this chunk.
    pub(super) params: wgpu::Buffer,
    pub(super) rows: Range<u32>,
}

/// A `rows × cols` matrix of type `ty` (ggml dims `[cols, rows]`), applied as `y = W·x`.
#[derive(Debug)]
pub struct GpuMatrix {
    name: String,
    ty: TensorType,
    rows: u32,
    cols: u32,
    pub(super) chunks: Vec<Chunk>,
}

impl GpuMatrix {
    /// Uploads a two-dimensional GGUF tensor.
    pub fn from_tensor(gpu: &Gpu, tensor: &Tensor<'_>) -> Result<Self, GpuError> {
        Self::from_tensor_with_limit(gpu, tensor, gpu.max_binding_bytes())
    }

    /// As [`from_tensor`](Self::from_tensor), with chunks of at most `max_chunk_bytes`.
    pub fn from_tensor_with_limit(
        gpu: &Gpu,
        tensor: &Tensor<'_>,
        max_chunk_bytes: u64,
    ) -> Result<Self, GpuError> {
        let info = tensor.info;
        let [cols, rows] = info.dims[..] else {
            return Err(GpuError::Shape {
                name: info.name.clone(),
                reason: format!("has dims {:?}, not two", info.dims),
            });
        };
        Self::upload_with_limit(
            gpu,
            &info.name,
            info.ty,
            rows,
            cols,
            tensor.data,
            max_chunk_bytes,
        )
    }

    /// Uploads `rows` rows of `cols` elements of type `ty`, in ggml's row-major block layout.
    pub fn upload(
        gpu: &Gpu,
        name: &str,
        ty: TensorType,
        rows: u64,
        cols: u64,
        data: &[u8],
    ) -> Result<Self, GpuError> {
        Self::upload_with_limit(gpu, name, ty, rows, cols, data, gpu.max_binding_bytes())
    }

    /// As [`upload`](Self::upload), with chunks of at most `max_chunk_bytes` (tests force small
    /// chunks to exercise the split).
    pub fn upload_with_limit(
        gpu: &Gpu,
        name: &str,
        ty: TensorType,
        rows: u64,
        cols: u64,
        data: &[u8],
        max_chunk_bytes: u64,
    ) -> Result<Self, GpuError> {
        let shape = |reason: String| GpuError::Shape {
            name: name.to_owned(),
            reason,
        };
        if cols == 0
            || !cols.is_multiple_of(PART)
            || !cols.is_multiple_of(ty.block_elements() as u64)
        {
            return Err(shape(format!(
                "rows of {cols} {ty} elements: the kernels need a multiple of {PART} and of the block size {}",
                ty.block_elements()
            )));
        }
        let row_bytes = ty.bytes_for(cols).expect("whole blocks checked above");
        if u32::try_from(rows).is_err() || u32::try_from(cols).is_err() {
            return Err(shape(format!("{rows} × {cols} is too large")));
        }
        if data.len() as u64 != rows * row_bytes {
            return Err(shape(format!(
                "{} bytes given for {rows} rows of {row_bytes} bytes",
                data.len()
            )));
        }
        let rows_per_chunk = max_chunk_bytes / row_bytes;
        if rows_per_chunk == 0 {
            return Err(GpuError::RowTooLarge {
                name: name.to_owned(),
                ty,
                row_bytes,
                limit: max_chunk_bytes,
            });
        }
        let mut chunks = Vec::new();
        let mut start = 0u64;
        while start < rows {
            let end = (start + rows_per_chunk).min(rows);
            let bytes = &data[(start * row_bytes) as usize..(end * row_bytes) as usize];
            chunks.push(upload_chunk(
                gpu,
                name,
                bytes,
                start as u32..end as u32,
                cols as u32,
                row_bytes as u32,
            ));
            start = end;
        }
        tracing::debug!(name, %ty, rows, cols, chunks = chunks.len(), "matrix uploaded");
        Ok(Self {
            name: name.to_owned(),
            ty,
            rows: rows as u32,
            cols: cols as u32,
            chunks,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn ty(&self) -> TensorType {
        self.ty
    }

    /// The length of `y`.
    pub fn rows(&self) -> u32 {
        self.rows
    }

    /// The length of `x`.
    pub fn cols(&self) -> u32 {
        self.cols
    }

    /// Bytes of one row in its GGUF encoding.
    pub fn row_bytes(&self) -> u32 {
        self.ty
            .bytes_for(u64::from(self.cols))
            .expect("whole blocks, checked at upload") as u32
    }

    /// Bytes on the device.
    pub fn bytes(&self) -> u64 {
        self.chunks.iter().map(|c| c.size).sum()
    }

    /// How many bindings (and dispatches) the matrix takes.
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// Matrices of one type and width uploaded into one buffer, one after the other: the
    /// `whole` (all their rows, for a kernel that computes several products in one dispatch)
    /// and each part on its own (for the kernels that take one matrix), sharing its bytes.
    /// `None` where that cannot be bound: more than one binding's worth, or a part that would
    /// start off the device's offset alignment. The caller then uploads them apart.
    pub fn upload_joined(
        gpu: &Gpu,
        name: &str,
        parts: &[&Tensor<'_>],
    ) -> Result<Option<Joined>, GpuError> {
        let Some(first) = parts.first() else {
            return Ok(None);
        };
        let (ty, cols) = (first.info.ty, first.info.dims.first().copied().unwrap_or(0));
        let mut rows = Vec::with_capacity(parts.len());
        for t in parts {
            match t.info.dims[..] {
                [c, r] if c == cols && t.info.ty == ty => rows.push(r),
                _ => return Ok(None),
            }
        }
        let Some(row_bytes) = ty.bytes_for(cols) else {
            return Ok(None);
        };
        let align = u64::from(gpu.limits().min_storage_buffer_offset_alignment);
        let total: u64 = rows.iter().sum::<u64>() * row_bytes;
        let mut offset = 0u64;
        for r in &rows {
            let size = r * row_bytes;
            if !offset.is_multiple_of(align) || !size.is_multiple_of(4) {
                return Ok(None);
            }
            offset += size;
        }
        if total > gpu.max_binding_bytes() {
            return Ok(None);
        }
        let data: Vec<u8> = parts.iter().flat_map(|t| t.data.iter().copied()).collect();
        let whole = Self::upload_with_limit(
            gpu,
            name,
            ty,
            rows.iter().sum(),
            cols,
            &data,
            gpu.max_binding_bytes(),
        )?;
        let buffer = whole.chunks[0].weights.clone();
        let mut views = Vec::with_capacity(parts.len());
        let mut first_row = 0u64;
        for (t, &r) in parts.iter().zip(&rows) {
            let params: [u32; 4] = [r as u32, cols as u32, 0, row_bytes as u32];
            views.push(Self {
                name: t.info.name.clone(),
                ty,
                rows: r as u32,
                cols: cols as u32,
                chunks: vec![Chunk {
                    weights: buffer.clone(),
                    offset: first_row * row_bytes,
                    size: r * row_bytes,
                    params: params_buffer(gpu, &params),
                    rows: 0..r as u32,
                }],
            });
            first_row += r;
        }
        Ok(Some(Joined {
            whole,
            parts: views,
        }))
    }
}

/// Matrices sharing one upload (see [`GpuMatrix::upload_joined`]).
#[derive(Debug)]
pub struct Joined {
    pub whole: GpuMatrix,
    pub parts: Vec<GpuMatrix>,
}

impl Chunk {
    /// The chunk's bytes as a binding.
    pub(super) fn binding(&self) -> wgpu::BindingResource<'_> {
        wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: &self.weights,
            offset: self.offset,
            size: std::num::NonZeroU64::new(self.size),
        })
    }
}

fn params_buffer(gpu: &Gpu, params: &[u32; 4]) -> wgpu::Buffer {
    gpu.device
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("matvec params"),
            contents: bytemuck::cast_slice(params),
            usage: wgpu::BufferUsages::UNIFORM,
        })
}

fn upload_chunk(
    gpu: &Gpu,
    name: &str,
    bytes: &[u8],
    rows: Range<u32>,
    cols: u32,
    row_bytes: u32,
) -> Chunk {
    // Storage buffers are read as u32 words: pad 2-byte-aligned formats (Q8_0, Q6_K…) to 4.
    let padded;
    let contents = if bytes.len().is_multiple_of(4) {
        bytes
    } else {
        padded = [bytes, &[0u8; 3][..4 - bytes.len() % 4]].concat();
        &padded[..]
    };
    let weights = gpu
        .device
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(name),
            contents,
            usage: wgpu::BufferUsages::STORAGE,
        });
    let params: [u32; 4] = [rows.end - rows.start, cols, rows.start, row_bytes];
    Chunk {
        size: weights.size(),
        weights,
        offset: 0,
        params: params_buffer(gpu, &params),
        rows,
    }
}

/// Where a product's result goes: over what `y` held, or added to it (a residual connection folded
/// into the product, which saves the dispatch of a separate add).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    Write = 0,
    Add = 1,
}
