//! A model's weights for the CPU pass: matrices stay in the memory-mapped GGUF, in their
//! encoding, and are found by their place in the file; only the small vectors (norms, biases)
//! are read out as f32. Every matrix's shape is checked against the model's here, so a file
//! whose tensors do not fit its metadata fails at load with the tensor named, not mid-step.

use std::ops::Range;

use crate::cpu::{ActKind, Matrix};
use crate::gguf::{Gguf, GgufError};
use crate::tensor_type::TensorType;

use super::variant::Variant;
use super::{HParams, ModelError};

/// Where a matrix's bytes are in the file, and its shape.
#[derive(Debug, Clone)]
pub(super) struct MatrixAt {
    pub(super) ty: TensorType,
    bytes: Range<usize>,
    pub(super) rows: usize,
    pub(super) cols: usize,
}

impl MatrixAt {
    /// The matrix over `file` (the GGUF's bytes).
    pub(super) fn on<'a>(&self, file: &'a [u8]) -> Matrix<'a> {
        Matrix {
            ty: self.ty,
            data: &file[self.bytes.clone()],
            rows: self.rows,
            cols: self.cols,
        }
    }

    pub(super) fn kind(&self) -> ActKind {
        ActKind::for_type(self.ty)
    }

    pub(super) fn bytes(&self) -> u64 {
        (self.bytes.end - self.bytes.start) as u64
    }
}

#[derive(Debug)]
pub(super) struct CpuLayer {
    pub(super) attn_norm: Vec<f32>,
    pub(super) wq: MatrixAt,
    pub(super) wk: MatrixAt,
    pub(super) wv: MatrixAt,
    pub(super) wo: MatrixAt,
    pub(super) q_bias: Option<Vec<f32>>,
    pub(super) k_bias: Option<Vec<f32>>,
    pub(super) v_bias: Option<Vec<f32>>,
    pub(super) q_norm: Option<Vec<f32>>,
    pub(super) k_norm: Option<Vec<f32>>,
    pub(super) post_attn_norm: Option<Vec<f32>>,
    pub(super) post_ffn_norm: Option<Vec<f32>>,
    pub(super) ffn_norm: Vec<f32>,
    pub(super) gate: MatrixAt,
    pub(super) up: MatrixAt,
    pub(super) down: MatrixAt,
    pub(super) local: bool,
}

impl CpuLayer {
    pub(super) fn matrices(&self) -> [&MatrixAt; 7] {
        [
            &self.wq, &self.wk, &self.wv, &self.wo, &self.gate, &self.up, &self.down,
        ]
    }
}

#[derive(Debug)]
pub(super) struct CpuWeights {
    pub(super) layers: Vec<CpuLayer>,
    pub(super) embedding: MatrixAt,
    pub(super) output: MatrixAt,
    pub(super) output_norm: Vec<f32>,
}

impl CpuWeights {
    pub(super) fn read(gguf: &Gguf, hp: &HParams, variant: &Variant) -> Result<Self, ModelError> {
        let r = Reader { gguf, hp };
        let (dim, q_dim, kv) = (
            hp.dim as usize,
            (hp.heads * hp.head_dim) as usize,
            hp.kv_dim() as usize,
        );
        let ffn = hp.ffn as usize;
        let layers = (0..hp.layers)
            .map(|l| {
                let t = |s: &str| format!("blk.{l}.{s}");
                let extra = |name: &str| {
                    variant
                        .head_and_post_norms
                        .then(|| r.vector(&t(name), None))
                        .transpose()
                };
                Ok(CpuLayer {
                    attn_norm: r.vector(&t("attn_norm.weight"), Some(dim))?,
                    wq: r.matrix(&t("attn_q.weight"), q_dim, dim)?,
                    wk: r.matrix(&t("attn_k.weight"), kv, dim)?,
                    wv: r.matrix(&t("attn_v.weight"), kv, dim)?,
                    wo: r.matrix(&t("attn_output.weight"), dim, q_dim)?,
                    q_bias: r.optional(&t("attn_q.bias"), q_dim)?,
                    k_bias: r.optional(&t("attn_k.bias"), kv)?,
                    v_bias: r.optional(&t("attn_v.bias"), kv)?,
                    q_norm: extra("attn_q_norm.weight")?,
                    k_norm: extra("attn_k_norm.weight")?,
                    post_attn_norm: extra("post_attention_norm.weight")?,
                    post_ffn_norm: extra("post_ffw_norm.weight")?,
                    ffn_norm: r.vector(&t("ffn_norm.weight"), Some(dim))?,
                    gate: r.matrix(&t("ffn_gate.weight"), ffn, dim)?,
                    up: r.matrix(&t("ffn_up.weight"), ffn, dim)?,
                    down: r.matrix(&t("ffn_down.weight"), dim, ffn)?,
                    local: variant.is_local(l),
                })
            })
            .collect::<Result<Vec<_>, ModelError>>()?;
        let vocab = hp.vocab as usize;
        let embedding = r.matrix("token_embd.weight", vocab, dim)?;
        // Tied embeddings (SmolLM2, Gemma) are the output matrix too.
        let output = match gguf.tensor("output.weight") {
            Ok(_) => r.matrix("output.weight", vocab, dim)?,
            Err(_) => embedding.clone(),
        };
        Ok(Self {
            layers,
            embedding,
            output,
            output_norm: r.vector("output_norm.weight", Some(dim))?,
        })
    }

    /// Bytes of the matrices in the file, and of the vectors read out.
    pub(super) fn bytes(&self) -> u64 {
        let vectors: usize = self
            .layers
            .iter()
            .map(|l| {
                let opt = [
                    &l.q_bias,
                    &l.k_bias,
                    &l.v_bias,
                    &l.q_norm,
                    &l.k_norm,
                    &l.post_attn_norm,
                    &l.post_ffn_norm,
                ];
                l.attn_norm.len()
                    + l.ffn_norm.len()
                    + opt
                        .iter()
                        .filter_map(|v| v.as_ref())
                        .map(Vec::len)
                        .sum::<usize>()
            })
            .sum::<usize>()
            + self.output_norm.len();
        let mut matrices: u64 = self
            .layers
            .iter()
            .flat_map(CpuLayer::matrices)
            .map(MatrixAt::bytes)
            .sum();
        matrices += self.embedding.bytes();
        if self.output.bytes != self.embedding.bytes {
            matrices += self.output.bytes();
        }
        matrices + 4 * vectors as u64
    }
}

struct Reader<'a> {
    gguf: &'a Gguf,
    hp: &'a HParams,
}

impl Reader<'_> {
    fn matrix(&self, name: &str, rows: usize, cols: usize) -> Result<MatrixAt, ModelError> {
        let t = self.gguf.tensor(name)?;
        let dims = &t.info.dims;
        if dims.len() != 2 || dims[0] as usize != cols || dims[1] as usize != rows {
            return Err(ModelError::Unsupported(format!(
                "tensor {name:?} has dimensions {dims:?}; a {:?} model of this shape needs [{cols}, {rows}]",
                self.hp.arch
            )));
        }
        let start = t.data.as_ptr() as usize - self.gguf.file_bytes().as_ptr() as usize;
        Ok(MatrixAt {
            ty: t.info.ty,
            bytes: start..start + t.data.len(),
            rows,
            cols,
        })
    }

    fn vector(&self, name: &str, len: Option<usize>) -> Result<Vec<f32>, ModelError> {
        let v = self.gguf.tensor(name)?.to_f32()?;
        if let Some(len) = len.filter(|&l| l != v.len()) {
            return Err(ModelError::Unsupported(format!(
                "tensor {name:?} has {} values where the model needs {len}",
                v.len()
            )));
        }
        Ok(v)
    }

    fn optional(&self, name: &str, len: usize) -> Result<Option<Vec<f32>>, ModelError> {
        match self.gguf.tensor(name) {
            Ok(_) => self.vector(name, Some(len)).map(Some),
            Err(GgufError::NoSuchTensor(_)) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}
