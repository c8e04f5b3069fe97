//! GGUF v3 files: the format llama.cpp and Ollama store models in.
//!
//! Layout (all little-endian): magic `GGUF`, version (u32, must be 3), tensor count (u64),
//! metadata count (u64), the metadata key/value pairs, one info record per tensor (name, dims,
//! ggml type, offset), padding to `general.alignment` (32 by default), then the tensor data, each
//! tensor at its offset from the start of that data section.
//!
//! The file is memory-mapped: opening a 250 MB model reads only the header pages, and a tensor's
//! bytes are a slice of the map that the GPU upload copies from directly.
//!
//! Everything is checked when the file is opened, so later code can index without fear: counts
//! the file cannot hold are refused before anything is allocated, every tensor's type must be
//! one the engine supports ([`TensorType`]), its data must lie inside the file, tensors may not
//! overlap or share a name. [`Gguf::architecture`] refuses, by name, architectures other than
//! llama, qwen2 and gemma3.

mod metadata;
mod reader;
mod writer;

use std::collections::HashMap;
use std::fs::File;
use std::ops::Deref;
use std::path::{Path, PathBuf};

use memmap2::Mmap;

pub use crate::tensor_type::{ggml_type_name, supported_list, TensorType, UnsupportedType};
pub use metadata::{Array, Metadata, Value, ValueType};
pub use writer::{TensorEntry, Writer};

use reader::Cursor;

use crate::quant::{self, QuantError};

/// What can go wrong reading a GGUF file. Every variant says what was being read.
#[derive(Debug, thiserror::Error)]
pub enum GgufError {
    #[error("cannot open {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("not a GGUF file: it starts with {found:?}, not \"GGUF\"")]
    BadMagic { found: [u8; 4] },
    #[error("GGUF version {0} is not supported (itinero reads version 3)")]
    UnsupportedVersion(u32),
    #[error("the file is truncated or corrupted: reading {what} at offset {offset} needs {needed} bytes, but the file has {file_len}")]
    Truncated {
        what: String,
        offset: u64,
        needed: u64,
        file_len: u64,
    },
    #[error("the file is corrupted: {what}: {reason}")]
    Corrupt { what: String, reason: String },
    #[error(
        "tensor {tensor:?} has type {ty}, which itinero does not support (supported: {supported})"
    )]
    UnsupportedTensorType {
        tensor: String,
        ty: UnsupportedType,
        supported: String,
    },
    #[error("the model's architecture is {0:?}, which itinero does not support (supported: {supported})", supported = Architecture::supported_list())]
    UnsupportedArchitecture(String),
    #[error("metadata key {key:?} is missing")]
    MissingKey { key: String },
    #[error("metadata key {key:?} should be {expected}, but is {found}")]
    WrongType {
        key: String,
        expected: String,
        found: String,
    },
    #[error("no tensor named {0:?}")]
    NoSuchTensor(String),
    #[error("dequantising tensor {tensor:?}: {source}")]
    Dequantize {
        tensor: String,
        #[source]
        source: QuantError,
    },
}

const MAGIC: &[u8; 4] = b"GGUF";
const DEFAULT_ALIGNMENT: u64 = 32;
/// ggml tensors have at most 4 dimensions.
const MAX_DIMS: u32 = 4;

/// The model architectures the engine will run. Files of other architectures still parse (so
/// `models info` can show them) but [`Gguf::architecture`] refuses them by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Architecture {
    /// The llama family: SmolLM2, Llama 3.x.
    Llama,
    /// Qwen 2 / 2.5: llama-like with biases on q/k/v.
    Qwen2,
    /// Gemma 3: sliding-window and global attention layers, extra norms, GELU.
    Gemma3,
}

impl Architecture {
    pub const ALL: [Architecture; 3] = [
        Architecture::Llama,
        Architecture::Qwen2,
        Architecture::Gemma3,
    ];

    /// The `general.architecture` string.
    pub fn name(self) -> &'static str {
        match self {
            Architecture::Llama => "llama",
            Architecture::Qwen2 => "qwen2",
            Architecture::Gemma3 => "gemma3",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.name() == name)
    }

    fn supported_list() -> String {
        Self::ALL
            .iter()
            .map(|a| a.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// One entry of the tensor table.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorInfo {
    pub name: String,
    /// ggml order: `dims[0]` is the innermost (contiguous) dimension, so a weight matrix applied as
    /// `y = W x` with `x` of length n and `y` of length m has dims `[n, m]`.
    pub dims: Vec<u64>,
    pub ty: TensorType,
    /// Offset of the data from the start of the data section.
    pub offset: u64,
    /// Size of the data in bytes.
    pub size: u64,
}

impl TensorInfo {
    pub fn element_count(&self) -> u64 {
        self.dims.iter().product()
    }
}

/// A tensor and its bytes.
#[derive(Debug, Clone, Copy)]
pub struct Tensor<'a> {
    pub info: &'a TensorInfo,
    pub data: &'a [u8],
}

impl Tensor<'_> {
    /// All elements as f32, through the CPU reference dequantiser.
    pub fn to_f32(&self) -> Result<Vec<f32>, GgufError> {
        let mut out = vec![0.0; self.info.element_count() as usize];
        quant::dequantize(self.info.ty, self.data, &mut out).map_err(|source| {
            GgufError::Dequantize {
                tensor: self.info.name.clone(),
                source,
            }
        })?;
        Ok(out)
    }
}

enum Bytes {
    Mapped(Mmap),
    Owned(Vec<u8>),
}

impl Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Mapped(m) => m,
            Bytes::Owned(v) => v,
        }
    }
}

/// An opened GGUF file.
pub struct Gguf {
    bytes: Bytes,
    path: Option<PathBuf>,
    version: u32,
    metadata: Metadata,
    tensors: Vec<TensorInfo>,
    by_name: HashMap<String, usize>,
    alignment: u64,
    data_start: u64,
}

impl std::fmt::Debug for Gguf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gguf")
            .field("path", &self.path)
            .field("version", &self.version)
            .field("metadata_entries", &self.metadata.len())
            .field("tensors", &self.tensors.len())
            .finish()
    }
}

impl Gguf {
    /// Maps and parses the file at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, GgufError> {
        let path = path.as_ref();
        let io = |source| GgufError::Io {
            path: path.to_owned(),
            source,
        };
        let file = File::open(path).map_err(io)?;
        // SAFETY: the map is read-only. If another process truncates the file while it is mapped,
        // reads of the lost pages fault; model files are not rewritten in place by anything we know
        // (Ollama and pip write new files and rename), which is the usual memmap2 caveat.
        let map = unsafe { Mmap::map(&file) }.map_err(io)?;
        let mut gguf = Self::parse(Bytes::Mapped(map))?;
        gguf.path = Some(path.to_owned());
        tracing::debug!(
            path = %path.display(),
            tensors = gguf.tensors.len(),
            metadata = gguf.metadata.len(),
            "opened GGUF"
        );
        Ok(gguf)
    }

    /// Parses a GGUF held in memory (tests, and files assembled on the fly).
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Self, GgufError> {
        Self::parse(Bytes::Owned(bytes))
    }

    fn parse(bytes: Bytes) -> Result<Self, GgufError> {
        let mut c = Cursor::new(&bytes);
        let magic: [u8; 4] = c
            .take(4, &|| "the magic number".into())?
            .try_into()
            .expect("4 bytes");
        if &magic != MAGIC {
            return Err(GgufError::BadMagic { found: magic });
        }
        let version = c.u32(&|| "the version".into())?;
        if version != 3 {
            return Err(GgufError::UnsupportedVersion(version));
        }
        let tensor_count = c.u64(&|| "the tensor count".into())?;
        let kv_count = c.u64(&|| "the metadata count".into())?;
        let metadata = Metadata::read(&mut c, kv_count)?;

        let alignment = match metadata.get("general.alignment") {
            None => DEFAULT_ALIGNMENT,
            Some(v) => match v.as_i128() {
                Some(a) if a > 0 && (a as u64).is_power_of_two() => a as u64,
                _ => {
                    return Err(GgufError::Corrupt {
                        what: "general.alignment".into(),
                        reason: format!("must be a power of two, found {}", v.summary()),
                    })
                }
            },
        };

        // A tensor info is at least a name length, dim count, one dim, type and offset.
        c.ensure_room(tensor_count, 8 + 4 + 8 + 4 + 8, &|| {
            format!("{tensor_count} tensor infos")
        })?;
        let mut tensors = Vec::with_capacity(tensor_count as usize);
        let mut by_name = HashMap::with_capacity(tensor_count as usize);
        for i in 0..tensor_count {
            let info = read_tensor_info(&mut c, i, alignment)?;
            if by_name.insert(info.name.clone(), tensors.len()).is_some() {
                return Err(GgufError::Corrupt {
                    what: format!("tensor {:?}", info.name),
                    reason: "the name appears twice in the tensor table".into(),
                });
            }
            tensors.push(info);
        }

        let data_start = (c.position() as u64).next_multiple_of(alignment);
        let file_len = bytes.len() as u64;
        for t in &tensors {
            let end = data_start
                .checked_add(t.offset)
                .and_then(|start| start.checked_add(t.size));
            if end.is_none_or(|end| end > file_len) {
                return Err(GgufError::Truncated {
                    what: format!("the data of tensor {:?}", t.name),
                    offset: data_start.saturating_add(t.offset),
                    needed: t.size,
                    file_len,
                });
            }
        }
        check_no_overlap(&tensors)?;

        Ok(Gguf {
            bytes,
            path: None,
            version,
            metadata,
            tensors,
            by_name,
            alignment,
            data_start,
        })
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    pub fn version(&self) -> u32 {
        self.version
    }

    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// The data alignment (`general.alignment`, 32 when absent).
    pub fn alignment(&self) -> u64 {
        self.alignment
    }

    /// Offset of the tensor data section in the file.
    pub fn data_start(&self) -> u64 {
        self.data_start
    }

    /// The whole file, as mapped: tensors are read in place by their offset in it.
    pub fn file_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The tensor table in file order.
    pub fn tensor_infos(&self) -> &[TensorInfo] {
        &self.tensors
    }

    pub fn tensor(&self, name: &str) -> Result<Tensor<'_>, GgufError> {
        let &i = self
            .by_name
            .get(name)
            .ok_or_else(|| GgufError::NoSuchTensor(name.into()))?;
        Ok(self.tensor_at(i))
    }

    fn tensor_at(&self, i: usize) -> Tensor<'_> {
        let info = &self.tensors[i];
        let start = (self.data_start + info.offset) as usize;
        Tensor {
            info,
            data: &self.bytes[start..start + info.size as usize],
        }
    }

    pub fn tensors(&self) -> impl Iterator<Item = Tensor<'_>> {
        (0..self.tensors.len()).map(|i| self.tensor_at(i))
    }

    /// `general.architecture`, refused unless the engine can run it.
    pub fn architecture(&self) -> Result<Architecture, GgufError> {
        let name = self.metadata.str("general.architecture")?;
        Architecture::from_name(name).ok_or_else(|| GgufError::UnsupportedArchitecture(name.into()))
    }

    /// The raw `general.architecture` string (for keys such as `llama.block_count`).
    pub fn architecture_name(&self) -> Result<&str, GgufError> {
        self.metadata.str("general.architecture")
    }
}

fn read_tensor_info(c: &mut Cursor<'_>, i: u64, alignment: u64) -> Result<TensorInfo, GgufError> {
    let name = c.string(&|| format!("the name of tensor {i}"))?;
    let what = || format!("tensor {name:?}");
    let n_dims = c.u32(&what)?;
    if n_dims == 0 || n_dims > MAX_DIMS {
        return Err(GgufError::Corrupt {
            what: what(),
            reason: format!("{n_dims} dimensions (ggml allows 1 to {MAX_DIMS})"),
        });
    }
    let mut dims = Vec::with_capacity(n_dims as usize);
    for _ in 0..n_dims {
        dims.push(c.u64(&what)?);
    }
    let type_id = c.u32(&what)?;
    let offset = c.u64(&what)?;
    let ty = TensorType::from_ggml_id(type_id).map_err(|ty| GgufError::UnsupportedTensorType {
        tensor: name.clone(),
        ty,
        supported: supported_list(),
    })?;
    let elements = dims
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(d))
        .filter(|&n| n > 0)
        .ok_or_else(|| GgufError::Corrupt {
            what: what(),
            reason: format!("impossible dimensions {dims:?}"),
        })?;
    if dims[0] % ty.block_elements() as u64 != 0 {
        return Err(GgufError::Corrupt {
            what: what(),
            reason: format!(
                "its rows of {} elements are not whole {} blocks of {}",
                dims[0],
                ty,
                ty.block_elements()
            ),
        });
    }
    let size = ty.bytes_for(elements).ok_or_else(|| GgufError::Corrupt {
        what: what(),
        reason: format!("dimensions {dims:?} make a tensor larger than any file"),
    })?;
    if offset % alignment != 0 {
        return Err(GgufError::Corrupt {
            what: what(),
            reason: format!("data offset {offset} is not a multiple of the alignment {alignment}"),
        });
    }
    Ok(TensorInfo {
        name,
        dims,
        ty,
        offset,
        size,
    })
}

fn check_no_overlap(tensors: &[TensorInfo]) -> Result<(), GgufError> {
    let mut spans: Vec<&TensorInfo> = tensors.iter().collect();
    spans.sort_by_key(|t| t.offset);
    for pair in spans.windows(2) {
        if pair[0].offset + pair[0].size > pair[1].offset {
            return Err(GgufError::Corrupt {
                what: format!("tensor {:?}", pair[1].name),
                reason: format!("its data overlaps tensor {:?}", pair[0].name),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests;
