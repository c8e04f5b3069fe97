//! Shared by the integration tests: the reference data and the real models.

#![allow(dead_code)]

pub mod gguf_writer;
pub mod llama_cpp;

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

/// Token ids from a reference file's JSON array.
pub fn ids(v: &serde_json::Value) -> Vec<u32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as u32)
        .collect()
}

/// Numbers from a reference file's JSON array (e.g. the top-2 logit gaps).
pub fn floats(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

pub fn hex(s: &str) -> Vec<u8> {
    assert!(s.len().is_multiple_of(2), "odd hex length");
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

/// The device the GPU tests share, opened once per test binary. With no adapter the test fails
/// with the reason and the packages to install: CI installs lavapipe, so a missing adapter is a
/// broken set-up, never a reason to skip.
pub fn gpu() -> &'static itinero_engine::gpu::Gpu {
    static GPU: std::sync::OnceLock<itinero_engine::gpu::Gpu> = std::sync::OnceLock::new();
    GPU.get_or_init(|| {
        itinero_engine::gpu::Gpu::new()
            .unwrap_or_else(|e| panic!("{e} (scripts/setup.sh installs them)"))
    })
}

/// A small deterministic generator (xorshift64), so random test data is the same on every run.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform in [lo, hi).
    pub fn uniform(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32)
    }

    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}
