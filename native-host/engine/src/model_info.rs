//! What a GGUF holds, for `itinero-host models info` and `list`: its architecture and whether
//! the engine runs it, its shape, size and tensor types, and its tokenizer and chat template.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::gguf::Gguf;
use crate::model::HParams;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelInfo {
    /// `general.name`, when the file has one.
    pub name: Option<String>,
    pub architecture: String,
    /// `None` when the engine can run it; otherwise why not.
    pub unsupported: Option<String>,
    pub parameters: u64,
    pub file_bytes: u64,
    pub context: Option<u32>,
    pub layers: Option<u32>,
    pub dim: Option<u32>,
    pub heads: Option<u32>,
    pub kv_heads: Option<u32>,
    pub vocab: Option<u64>,
    /// `tokenizer.ggml.model`: `gpt2` (byte-level BPE) or `llama` (SentencePiece-style).
    pub tokenizer: Option<String>,
    pub chat_template: bool,
    /// Tensor type → how many tensors have it.
    pub tensor_types: BTreeMap<String, usize>,
}

impl ModelInfo {
    pub fn read(g: &Gguf) -> Self {
        let m = g.metadata();
        let arch = g.architecture_name().unwrap_or("(none)").to_owned();
        let hp = HParams::from_gguf(g);
        let unsupported = match (&g.architecture(), &hp) {
            (Err(e), _) => Some(e.to_string()),
            (Ok(_), Err(e)) => Some(e.to_string()),
            (Ok(_), Ok(_)) => None,
        };
        let hp = hp.ok();
        let mut tensor_types = BTreeMap::new();
        for t in g.tensor_infos() {
            *tensor_types.entry(t.ty.to_string()).or_insert(0) += 1;
        }
        let vocab = m
            .get("tokenizer.ggml.tokens")
            .and_then(|v| v.as_array())
            .map(|a| a.len() as u64);
        ModelInfo {
            name: m.opt_str("general.name").ok().flatten().map(str::to_owned),
            architecture: arch,
            unsupported,
            parameters: g.tensor_infos().iter().map(|t| t.element_count()).sum(),
            file_bytes: g
                .path()
                .and_then(|p| std::fs::metadata(p).ok())
                .map_or(0, |md| md.len()),
            context: hp.as_ref().map(|h| h.context),
            layers: hp.as_ref().map(|h| h.layers),
            dim: hp.as_ref().map(|h| h.dim),
            heads: hp.as_ref().map(|h| h.heads),
            kv_heads: hp.as_ref().map(|h| h.kv_heads),
            vocab,
            tokenizer: m
                .opt_str("tokenizer.ggml.model")
                .ok()
                .flatten()
                .map(str::to_owned),
            chat_template: m.get("tokenizer.chat_template").is_some()
                || g.architecture_name().ok() == Some("gemma3"),
            tensor_types,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::SMOLLM2_135M;

    #[test]
    fn smollm2_is_described() {
        let g = Gguf::open(SMOLLM2_135M.locate().expect("the test model")).unwrap();
        let info = ModelInfo::read(&g);
        assert_eq!(info.architecture, "llama");
        assert_eq!(info.unsupported, None);
        assert_eq!(info.layers, Some(30));
        assert_eq!(info.tokenizer.as_deref(), Some("gpt2"));
        assert!(info.chat_template);
        assert!(
            (130_000_000..140_000_000).contains(&info.parameters),
            "{}",
            info.parameters
        );
        assert!(
            info.tensor_types.contains_key("Q4_1"),
            "{:?}",
            info.tensor_types
        );
    }
}
