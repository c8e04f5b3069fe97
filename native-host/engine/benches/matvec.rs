//! Matrix-vector bandwidth of the WGSL kernels at SmolLM2-135M's shapes: the figure that bounds
//! decode speed, since every token reads every weight once.
//!
//! `cargo bench -p itinero-engine --bench matvec` prints, per type and shape (`MATVEC_TYPES=F32,Q6_K`
//! picks other types than Q4_1, Q4_K and Q8_0), the median time of
//! one `y = W·x` and the weight bytes read per second. Each sample is `REPEAT` products recorded in
//! one submission and timed from submit to completion, so submission overhead is amortised the way
//! a forward pass amortises it. `WGPU_BACKEND` / `WGPU_ADAPTER_NAME` choose the device; a
//! `MATVEC_TPR=<n>`, `MATVEC_WG=<n>` and `MATVEC_REDUCTION=workgroup|subgroup` override the kernel
//! shape.

mod common;

use itinero_engine::gguf::TensorType;
use itinero_engine::gpu::{Gpu, GpuMatrix, MatVec, MatVecConfig, Reduction};

const SAMPLES: usize = 15;
const REPEAT: usize = 20;

/// (what, rows, cols): SmolLM2-135M's matrices (dim 576, FFN 1536, 3 KV heads of 64, vocab 49152).
/// Q4_K needs rows of whole 256-element blocks, so its shapes with 576 columns use 512 or 768.
fn shapes(ty: TensorType) -> Vec<(&'static str, u64, u64)> {
    if ty.block_elements() == 256 {
        vec![
            ("attn_q 576×512", 576, 512),
            ("ffn_up 1536×768", 1536, 768),
            ("ffn_down 576×1536", 576, 1536),
            ("output 49152×512", 49152, 512),
        ]
    } else {
        vec![
            ("attn_q 576×576", 576, 576),
            ("attn_k 192×576", 192, 576),
            ("ffn_up 1536×576", 1536, 576),
            ("ffn_down 576×1536", 576, 1536),
            ("output 49152×576", 49152, 576),
        ]
    }
}

fn config(gpu: &Gpu) -> MatVecConfig {
    let mut config = MatVecConfig::for_gpu(gpu);
    if let Some(tpr) = std::env::var("MATVEC_TPR")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        config.threads_per_row = tpr;
        config.workgroup_size = config.workgroup_size.max(tpr);
    }
    if let Some(wg) = std::env::var("MATVEC_WG").ok().and_then(|v| v.parse().ok()) {
        config.workgroup_size = wg;
    }
    match std::env::var("MATVEC_REDUCTION").as_deref() {
        Ok("workgroup") => config.reduction = Reduction::Workgroup,
        Ok("subgroup") => config.reduction = Reduction::Subgroup,
        _ => {}
    }
    config
}

/// Bytes of random blocks; the scales are irrelevant to speed, so plain random bytes will do.
fn random_bytes(n: usize, seed: &mut u64) -> Vec<u8> {
    (0..n)
        .map(|_| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            (*seed >> 32) as u8 & 0x77
        })
        .collect()
}

fn main() {
    let gpu = Gpu::new().unwrap_or_else(|e| panic!("{e}"));
    let config = config(&gpu);
    let types: Vec<TensorType> = match std::env::var("MATVEC_TYPES") {
        Ok(list) => list
            .split(',')
            .map(|n| {
                TensorType::ALL
                    .into_iter()
                    .find(|t| t.name().eq_ignore_ascii_case(n.trim()))
                    .unwrap_or_else(|| panic!("MATVEC_TYPES: unknown type {n}"))
            })
            .collect(),
        Err(_) => vec![TensorType::Q4_1, TensorType::Q4_K, TensorType::Q8_0],
    };
    let kernels = MatVec::with_config(&gpu, &types, config).unwrap_or_else(|e| panic!("{e}"));
    println!("device: {}", gpu.describe());
    println!("kernel: {config:?}");
    println!("{SAMPLES} samples of {REPEAT} products each; median per product");
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for &ty in &types {
        for (what, rows, cols) in shapes(ty) {
            let bytes = ty.bytes_for(rows * cols).unwrap() as usize;
            let data = random_bytes(bytes, &mut seed);
            let m = GpuMatrix::upload(&gpu, what, ty, rows, cols, &data).unwrap();
            let x = gpu.upload_f32("x", &vec![0.5; cols as usize]);
            let y = gpu.storage_f32("y", rows as usize);
            let t = common::median_per_dispatch(&gpu, SAMPLES, REPEAT, |encoder| {
                kernels.encode(&gpu, encoder, &m, &x, &y).unwrap();
            });
            let gbs = bytes as f64 / t.as_secs_f64() / 1e9;
            println!(
                "{ty:5} {what:20} {:8.1} KiB  {:9.1} µs  {gbs:6.2} GB/s",
                bytes as f64 / 1024.0,
                t.as_secs_f64() * 1e6
            );
        }
    }
}
