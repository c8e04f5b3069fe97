//! The CPU dequantisers against gguf-py's `quants.dequantize` on real blocks from both models and
//! on random blocks of every supported type (tests/reference/dequant.json, written by
//! scripts/reference-vectors). The comparison is bit for bit: both follow ggml's arithmetic.

mod common;

use std::collections::BTreeSet;

use itinero_engine::gguf::TensorType;
use itinero_engine::quant::dequantize_to_vec;

fn tensor_type(name: &str) -> TensorType {
    TensorType::ALL
        .into_iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| panic!("reference block of unknown type {name}"))
}

#[test]
fn every_reference_block_dequantises_bit_identically_to_gguf_py() {
    let reference = common::reference("dequant.json");
    let blocks = reference["blocks"].as_array().expect("blocks");
    let mut seen = BTreeSet::new();
    let mut from_models = BTreeSet::new();
    for block in blocks {
        let ty = tensor_type(block["type"].as_str().unwrap());
        let source = block["source"].as_str().unwrap();
        let data = common::hex(block["hex"].as_str().unwrap());
        let want: Vec<u32> = common::hex(block["values_hex"].as_str().unwrap())
            .as_chunks::<4>()
            .0
            .iter()
            .map(|c| u32::from_le_bytes(*c))
            .collect();
        let got = dequantize_to_vec(ty, &data).unwrap_or_else(|e| panic!("{source}: {e}"));
        assert_eq!(got.len(), want.len(), "{ty} {source}: element count");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                g.to_bits(),
                *w,
                "{ty} {source}: element {i} is {g}, gguf-py gives {}",
                f32::from_bits(*w)
            );
        }
        seen.insert(ty.name());
        if !source.starts_with("random") {
            from_models.insert(ty.name());
        }
    }
    let all: BTreeSet<_> = TensorType::ALL.iter().map(|t| t.name()).collect();
    assert_eq!(seen, all, "every supported type has reference blocks");
    for ty in ["F32", "Q8_0", "Q4_1", "Q5_0", "Q4_K", "Q6_K"] {
        assert!(
            from_models.contains(ty),
            "{ty} has blocks from a real model"
        );
    }
}
