//! The GGUF loader on the two real models (from the model cache; `scripts/models` fetches them),
//! and its refusals on damaged copies of them.

mod common;

use std::collections::BTreeMap;

use itinero_engine::gguf::{Architecture, Gguf, GgufError, TensorType};
use itinero_engine::models::{GEMMA3_270M, SMOLLM2_135M};

fn type_counts(g: &Gguf) -> BTreeMap<&'static str, usize> {
    let mut counts = BTreeMap::new();
    for t in g.tensor_infos() {
        *counts.entry(t.ty.name()).or_default() += 1;
    }
    counts
}

fn dims(g: &Gguf, name: &str) -> (Vec<u64>, TensorType) {
    let t = g.tensor(name).unwrap();
    (t.info.dims.clone(), t.info.ty)
}

#[test]
fn smollm2_parses_with_its_known_shape() {
    let g = common::open(SMOLLM2_135M);
    let m = g.metadata();
    assert_eq!(g.version(), 3);
    assert_eq!(g.architecture().unwrap(), Architecture::Llama);
    assert_eq!(m.len(), 33);
    assert_eq!(g.tensor_infos().len(), 272);
    assert_eq!(g.alignment(), 32);
    assert_eq!(m.u32("llama.block_count").unwrap(), 30);
    assert_eq!(m.u32("llama.embedding_length").unwrap(), 576);
    assert_eq!(m.u32("llama.attention.head_count").unwrap(), 9);
    assert_eq!(m.u32("llama.attention.head_count_kv").unwrap(), 3);
    assert_eq!(m.f32("llama.rope.freq_base").unwrap(), 100000.0);
    assert_eq!(m.str("tokenizer.ggml.pre").unwrap(), "smollm");
    assert_eq!(
        type_counts(&g),
        BTreeMap::from([("F32", 61), ("Q4_1", 210), ("Q8_0", 1)])
    );
    assert_eq!(
        dims(&g, "token_embd.weight"),
        (vec![576, 49152], TensorType::Q8_0)
    );
    assert_eq!(
        dims(&g, "blk.0.attn_k.weight"),
        (vec![576, 192], TensorType::Q4_1)
    );
    assert_eq!(
        dims(&g, "blk.29.ffn_down.weight"),
        (vec![1536, 576], TensorType::Q4_1)
    );
    assert_eq!(dims(&g, "output_norm.weight"), (vec![576], TensorType::F32));
    // Tied embeddings: there is no separate output matrix.
    assert!(g.tensor("output.weight").is_err());
    let norm = g
        .tensor("blk.0.attn_norm.weight")
        .unwrap()
        .to_f32()
        .unwrap();
    assert_eq!(norm.len(), 576);
    assert!(norm.iter().all(|v| v.is_finite()) && norm.iter().any(|&v| v != 0.0));
}

#[test]
fn gemma3_parses_with_its_known_shape() {
    let g = common::open(GEMMA3_270M);
    let m = g.metadata();
    assert_eq!(g.architecture().unwrap(), Architecture::Gemma3);
    assert_eq!(g.tensor_infos().len(), 236);
    assert_eq!(m.u32("gemma3.block_count").unwrap(), 18);
    assert_eq!(m.u32("gemma3.embedding_length").unwrap(), 640);
    assert_eq!(m.u32("gemma3.attention.key_length").unwrap(), 256);
    assert_eq!(m.u32("gemma3.attention.sliding_window").unwrap(), 512);
    assert_eq!(m.str("tokenizer.ggml.model").unwrap(), "llama");
    assert_eq!(
        type_counts(&g),
        BTreeMap::from([
            ("F32", 109),
            ("Q4_K", 27),
            ("Q5_0", 81),
            ("Q6_K", 9),
            ("Q8_0", 10)
        ])
    );
    assert_eq!(
        dims(&g, "token_embd.weight"),
        (vec![640, 262144], TensorType::Q8_0)
    );
    assert_eq!(
        dims(&g, "blk.0.attn_q.weight"),
        (vec![640, 1024], TensorType::Q5_0)
    );
    assert_eq!(
        dims(&g, "blk.0.attn_output.weight"),
        (vec![1024, 640], TensorType::Q4_K)
    );
    assert_eq!(
        dims(&g, "blk.0.ffn_down.weight"),
        (vec![2048, 640], TensorType::Q6_K)
    );
    assert_eq!(
        dims(&g, "blk.0.attn_q_norm.weight"),
        (vec![256], TensorType::F32)
    );
    // The tokenizer arrays are typed, not per-element values.
    assert_eq!(m.array("tokenizer.ggml.tokens").unwrap().len(), 262144);
    assert_eq!(m.array("tokenizer.ggml.scores").unwrap().len(), 262144);
}

/// Tensor data slices start where gguf-py reads them: the bytes of the reference blocks (taken by
/// gguf-py from these files) are found at the same places through our offsets.
#[test]
fn tensor_data_offsets_agree_with_gguf_py() {
    let reference = common::reference("dequant.json");
    let models = [
        (SMOLLM2_135M.file, common::open(SMOLLM2_135M)),
        (GEMMA3_270M.file, common::open(GEMMA3_270M)),
    ];
    let mut checked = 0;
    for block in reference["blocks"].as_array().unwrap() {
        let source = block["source"].as_str().unwrap();
        let Some((file, rest)) = source.split_once(':') else {
            continue;
        };
        let (name, index) = rest.split_once(" block ").unwrap();
        let index: usize = index.parse().unwrap();
        let g = &models.iter().find(|(f, _)| *f == file).unwrap().1;
        let t = g.tensor(name).unwrap();
        let want = common::hex(block["hex"].as_str().unwrap());
        let at = index * want.len();
        assert_eq!(&t.data[at..at + want.len()], &want[..], "{source}");
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} blocks checked");
}

#[test]
fn damaged_copies_are_refused_with_a_message_that_says_what_broke() {
    let path = common::model_path(SMOLLM2_135M);
    let bytes = std::fs::read(&path).unwrap();
    let g = Gguf::from_bytes(bytes.clone()).unwrap();
    let data_start = g.data_start() as usize;

    // Cut inside the metadata (the vocabulary is the first ~1.5 MB).
    let err = Gguf::from_bytes(bytes[..500_000].to_vec()).unwrap_err();
    assert!(matches!(err, GgufError::Truncated { .. }), "{err}");
    let msg = err.to_string();
    assert!(
        msg.starts_with(
            "the file is truncated or corrupted: reading metadata value \"tokenizer.ggml."
        ),
        "{msg}"
    );

    // Cut inside the tensor data: the tensor that no longer fits is named.
    let last = g.tensor_infos().iter().max_by_key(|t| t.offset).unwrap();
    let err = Gguf::from_bytes(bytes[..bytes.len() - 100].to_vec())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&format!("the data of tensor {:?}", last.name)),
        "{err}"
    );

    // A tensor of a type the engine does not run (Q3_K) is refused by name.
    let name = b"blk.0.ffn_down.weight";
    let at = bytes[..data_start]
        .windows(name.len() + 4)
        .position(|w| &w[..name.len()] == name && w[name.len()..] == 2u32.to_le_bytes())
        .expect("the tensor info of blk.0.ffn_down.weight");
    let type_at = at + name.len() + 4 + 2 * 8;
    assert_eq!(bytes[type_at..type_at + 4], 3u32.to_le_bytes(), "Q4_1's id");
    let mut patched = bytes.clone();
    patched[type_at..type_at + 4].copy_from_slice(&11u32.to_le_bytes());
    let err = Gguf::from_bytes(patched).unwrap_err().to_string();
    assert!(
        err.starts_with("tensor \"blk.0.ffn_down.weight\" has type Q3_K (ggml type 11), which itinero does not support"),
        "{err}"
    );

    // Not a GGUF at all.
    let mut patched = bytes[..4096].to_vec();
    patched[..4].copy_from_slice(b"PK\x03\x04");
    let err = Gguf::from_bytes(patched).unwrap_err().to_string();
    assert!(err.starts_with("not a GGUF file"), "{err}");

    let err = Gguf::open(path.with_extension("missing"))
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("cannot open ") && err.contains(".missing"),
        "{err}"
    );
}
