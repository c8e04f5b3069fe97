//! A model's shape from its GGUF metadata (the `{arch}.*` keys llama.cpp reads).

use super::ModelError;
use crate::gguf::{Architecture, Gguf};

#[derive(Debug, Clone, PartialEq)]
pub struct HParams {
    pub arch: Architecture,
    pub dim: u32,
    pub layers: u32,
    pub heads: u32,
    pub kv_heads: u32,
    pub head_dim: u32,
    pub ffn: u32,
    pub vocab: u32,
    pub context: u32,
    pub rms_eps: f32,
}

impl HParams {
    pub fn from_gguf(g: &Gguf) -> Result<Self, ModelError> {
        let arch = g.architecture()?;
        let m = g.metadata();
        let key = |k: &str| format!("{}.{k}", arch.name());
        let dim = m.u32(&key("embedding_length"))?;
        let heads = m.u32(&key("attention.head_count"))?;
        let kv_heads = m.opt_u32(&key("attention.head_count_kv"))?.unwrap_or(heads);
        let head_dim = match m.opt_u32(&key("attention.key_length"))? {
            Some(d) => d,
            None => dim / heads.max(1),
        };
        let vocab = g.tensor("token_embd.weight")?.info.dims[1] as u32;
        let hp = Self {
            arch,
            dim,
            layers: m.u32(&key("block_count"))?,
            heads,
            kv_heads,
            head_dim,
            ffn: m.u32(&key("feed_forward_length"))?,
            vocab,
            context: m.u32(&key("context_length"))?,
            rms_eps: m
                .opt_f32(&key("attention.layer_norm_rms_epsilon"))?
                .unwrap_or(1e-5),
        };
        if heads == 0 || kv_heads == 0 || heads % kv_heads != 0 {
            return Err(ModelError::Unsupported(format!(
                "{heads} query heads cannot share {kv_heads} KV heads evenly"
            )));
        }
        Ok(hp)
    }

    /// Floats of one position's keys (or values) in the cache.
    pub fn kv_dim(&self) -> u32 {
        self.kv_heads * self.head_dim
    }
}
