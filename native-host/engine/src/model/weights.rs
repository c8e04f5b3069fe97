//! A model's weights on the device, in their GGUF encoding, and each layer's KV cache.
//!
//! Matrices a layer multiplies by the same input (q, k and v; gate and up) are uploaded into one
//! buffer where their types and the device's alignment allow, so that one dispatch can compute
//! them all; their parts stay addressable for the kernels that take one matrix.

use crate::gguf::Gguf;
use crate::gpu::{Gpu, GpuMatrix};
use crate::tensor_type::TensorType;

use super::variant::Variant;
use super::{HParams, ModelError};

pub(super) struct Layer {
    pub(super) attn_norm: wgpu::Buffer,
    pub(super) wq: GpuMatrix,
    pub(super) wk: GpuMatrix,
    pub(super) wv: GpuMatrix,
    pub(super) wo: GpuMatrix,
    /// Qwen 2: biases added to the q, k and v projections.
    pub(super) q_bias: Option<wgpu::Buffer>,
    pub(super) k_bias: Option<wgpu::Buffer>,
    pub(super) v_bias: Option<wgpu::Buffer>,
    /// Gemma: RMSNorm of each query and key head before RoPE.
    pub(super) q_norm: Option<wgpu::Buffer>,
    pub(super) k_norm: Option<wgpu::Buffer>,
    /// Gemma: RMSNorm of the attention and feed-forward outputs before the residual add.
    pub(super) post_attn_norm: Option<wgpu::Buffer>,
    pub(super) post_ffn_norm: Option<wgpu::Buffer>,
    pub(super) ffn_norm: wgpu::Buffer,
    pub(super) gate: GpuMatrix,
    pub(super) up: GpuMatrix,
    pub(super) down: GpuMatrix,
    /// q, k and v in one upload (the three above are its parts), where their types and the
    /// device's alignment allow.
    pub(super) qkv: Option<GpuMatrix>,
    /// The q, k and v biases joined likewise, where there are any.
    pub(super) qkv_bias: Option<wgpu::Buffer>,
    /// gate and up in one upload, likewise.
    pub(super) gate_up: Option<GpuMatrix>,
    pub(super) local: bool,
    /// capacity × kv_dim floats each.
    pub(super) k_cache: wgpu::Buffer,
    pub(super) v_cache: wgpu::Buffer,
}

impl Layer {
    /// Whether its queries or keys are normed per head (Gemma's), which RoPE's own dispatch
    /// does, so decode's attention cannot take RoPE over.
    pub(super) fn has_head_norms(&self) -> bool {
        self.q_norm.is_some() || self.k_norm.is_some()
    }

    /// The matrices of its products, each on its own (the joined uploads are these again).
    pub(super) fn matrices(&self) -> [&GpuMatrix; 7] {
        [
            &self.wq, &self.wk, &self.wv, &self.wo, &self.gate, &self.up, &self.down,
        ]
    }

    /// Bytes of its weights on the device (not its cache).
    fn bytes(&self) -> u64 {
        let vectors = [Some(&self.attn_norm), Some(&self.ffn_norm)]
            .into_iter()
            .chain(
                [
                    &self.q_norm,
                    &self.k_norm,
                    &self.post_attn_norm,
                    &self.post_ffn_norm,
                    &self.q_bias,
                    &self.k_bias,
                    &self.v_bias,
                ]
                .map(Option::as_ref),
            )
            .flatten()
            .map(wgpu::Buffer::size);
        self.matrices()
            .map(GpuMatrix::bytes)
            .into_iter()
            .chain(vectors)
            .sum()
    }
}

/// Every weight of the model on the device, each layer with its KV cache.
pub(super) struct Weights {
    pub(super) layers: Vec<Layer>,
    /// The output matrix (the embedding matrix where the model ties them).
    pub(super) output: GpuMatrix,
    pub(super) output_norm: wgpu::Buffer,
}

impl Weights {
    /// Uploads the layers' weights with a KV cache of `capacity` positions each, and the output
    /// weights.
    pub(super) fn load(
        gpu: &Gpu,
        gguf: &Gguf,
        hp: &HParams,
        variant: &Variant,
        capacity: u32,
    ) -> Result<Self, ModelError> {
        let reader = Reader { gpu, gguf };
        let layers = (0..hp.layers)
            .map(|l| {
                let cache = KvCache::new(gpu, hp, capacity);
                reader.layer(hp, variant, l, cache)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            layers,
            output: reader.output()?,
            output_norm: reader.vector("output_norm.weight")?,
        })
    }

    /// The tensor types of every matrix, each once in ggml id order: the product kernels to
    /// compile.
    pub(super) fn matrix_types(&self) -> Vec<TensorType> {
        let mut types: Vec<TensorType> = self
            .layers
            .iter()
            .flat_map(Layer::matrices)
            .chain([&self.output])
            .map(|m| m.ty())
            .collect();
        types.sort_by_key(|t| t.ggml_id());
        types.dedup();
        types
    }

    /// Bytes of weights on the device, in their GGUF encoding.
    pub(super) fn bytes(&self) -> u64 {
        self.layers.iter().map(Layer::bytes).sum::<u64>()
            + self.output.bytes()
            + self.output_norm.size()
    }
}

/// One layer's keys and values of every position.
struct KvCache {
    k: wgpu::Buffer,
    v: wgpu::Buffer,
}

impl KvCache {
    fn new(gpu: &Gpu, hp: &HParams, capacity: u32) -> Self {
        // f16, two values to a word (`kv_cache.wgsl`).
        let bytes = u64::from(capacity) * u64::from(hp.kv_dim()) * 2;
        let buffer = |label: &str| {
            gpu.device().create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        Self {
            k: buffer("k cache"),
            v: buffer("v cache"),
        }
    }
}

/// Reads tensors out of the GGUF onto the device.
struct Reader<'a> {
    gpu: &'a Gpu,
    gguf: &'a Gguf,
}

impl Reader<'_> {
    fn layer(
        &self,
        hp: &HParams,
        variant: &Variant,
        l: u32,
        cache: KvCache,
    ) -> Result<Layer, ModelError> {
        let t = |s: &str| format!("blk.{l}.{s}");
        let (qkv, parts) =
            self.joined(&[t("attn_q.weight"), t("attn_k.weight"), t("attn_v.weight")])?;
        let [wq, wk, wv]: [GpuMatrix; 3] = parts.try_into().expect("three names, three parts");
        let (gate_up, parts) = self.joined(&[t("ffn_gate.weight"), t("ffn_up.weight")])?;
        let [gate, up]: [GpuMatrix; 2] = parts.try_into().expect("two names, two parts");
        let q_bias = self.optional(&t("attn_q.bias"))?;
        let k_bias = self.optional(&t("attn_k.bias"))?;
        let v_bias = self.optional(&t("attn_v.bias"))?;
        let qkv_bias = self.joined_bias(hp, l)?;
        let extra = |name: &str| {
            variant
                .head_and_post_norms
                .then(|| self.vector(name))
                .transpose()
        };
        Ok(Layer {
            attn_norm: self.vector(&t("attn_norm.weight"))?,
            wq,
            wk,
            wv,
            wo: self.matrix(&t("attn_output.weight"))?,
            q_bias,
            k_bias,
            v_bias,
            qkv,
            qkv_bias,
            gate_up,
            q_norm: extra(&t("attn_q_norm.weight"))?,
            k_norm: extra(&t("attn_k_norm.weight"))?,
            post_attn_norm: extra(&t("post_attention_norm.weight"))?,
            post_ffn_norm: extra(&t("post_ffw_norm.weight"))?,
            ffn_norm: self.vector(&t("ffn_norm.weight"))?,
            gate,
            up,
            down: self.matrix(&t("ffn_down.weight"))?,
            local: variant.is_local(l),
            k_cache: cache.k,
            v_cache: cache.v,
        })
    }

    /// Tied embeddings (SmolLM2, Gemma) reuse the embedding matrix as the output.
    fn output(&self) -> Result<GpuMatrix, ModelError> {
        match self.gguf.tensor("output.weight") {
            Ok(_) => self.matrix("output.weight"),
            Err(_) => self.matrix("token_embd.weight"),
        }
    }

    fn matrix(&self, name: &str) -> Result<GpuMatrix, ModelError> {
        Ok(GpuMatrix::from_tensor(self.gpu, &self.gguf.tensor(name)?)?)
    }

    fn vector(&self, name: &str) -> Result<wgpu::Buffer, ModelError> {
        Ok(self
            .gpu
            .upload_f32(name, &self.gguf.tensor(name)?.to_f32()?))
    }

    /// The vector `name` where the file has it.
    fn optional(&self, name: &str) -> Result<Option<wgpu::Buffer>, ModelError> {
        let has = self.gguf.tensor_infos().iter().any(|t| t.name == name);
        has.then(|| self.vector(name)).transpose()
    }

    /// Matrices uploaded into one buffer where they can be, else apart.
    fn joined(&self, names: &[String]) -> Result<(Option<GpuMatrix>, Vec<GpuMatrix>), ModelError> {
        let tensors = names
            .iter()
            .map(|n| self.gguf.tensor(n))
            .collect::<Result<Vec<_>, _>>()?;
        let refs: Vec<_> = tensors.iter().collect();
        match GpuMatrix::upload_joined(self.gpu, &names.join(" + "), &refs)? {
            Some(j) => Ok((Some(j.whole), j.parts)),
            None => Ok((
                None,
                names
                    .iter()
                    .map(|n| self.matrix(n))
                    .collect::<Result<_, _>>()?,
            )),
        }
    }

    /// The q, k and v biases of layer `l` joined as the joined q/k/v upload's rows are (zeros for
    /// a missing one), where the layer has any.
    fn joined_bias(&self, hp: &HParams, l: u32) -> Result<Option<wgpu::Buffer>, ModelError> {
        let parts = [
            ("attn_q.bias", hp.heads * hp.head_dim),
            ("attn_k.bias", hp.kv_dim()),
            ("attn_v.bias", hp.kv_dim()),
        ];
        let mut any = false;
        let mut joined = Vec::new();
        for (name, len) in parts {
            match self.gguf.tensor(&format!("blk.{l}.{name}")) {
                Ok(t) => {
                    any = true;
                    joined.extend(t.to_f32()?);
                }
                Err(_) => joined.extend(std::iter::repeat_n(0.0, len as usize)),
            }
        }
        Ok(any.then(|| self.gpu.upload_f32("q, k, v biases", &joined)))
    }
}
