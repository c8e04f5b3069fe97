//! Shared by the integration tests: the reference data and the real models.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use itinero_engine::gguf::Gguf;
use itinero_engine::models::KnownModel;

/// `tests/reference/<name>`, parsed.
pub fn reference(name: &str) -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/reference")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "reading {}: {e} (regenerate with scripts/reference-vectors)",
            path.display()
        )
    });
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

pub fn hex(s: &str) -> Vec<u8> {
    assert!(s.len() % 2 == 0, "odd hex length");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// The model's path in the cache; fails the test with instructions when it is missing.
pub fn model_path(model: KnownModel) -> PathBuf {
    model.locate().unwrap_or_else(|e| panic!("{e}"))
}

pub fn open(model: KnownModel) -> Gguf {
    let path = model_path(model);
    Gguf::open(&path).unwrap_or_else(|e| panic!("opening {}: {e}", path.display()))
}
