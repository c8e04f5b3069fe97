//! Matrix-vector bandwidth of the WGSL kernels at SmolLM2-135M's shapes and two of Llama 3.2 3B's
//! (the largest matrices, which a large GPU can stream near its bandwidth): the figure that
//! bounds decode speed, since every token reads every weight once.
//!
//! `cargo bench -p itinero-engine --bench matvec` first times a plain copy of 256 MiB, which
//! gives the device's own memory bandwidth (bytes read and written a second), then prints, per
//! type and shape (`MATVEC_TYPES=F32,Q6_K` picks other types than Q4_1, Q4_K and Q8_0), the
//! median time of one `y = W·x`, the weight bytes read per second, and that as a share of the
//! copy's bandwidth. Each sample is `REPEAT` products recorded in
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
            ("3B ffn_up 8192×3072", 8192, 3072),
            ("3B ffn_down 3072×8192", 3072, 8192),
        ]
    } else {
        vec![
            ("attn_q 576×576", 576, 576),
            ("attn_k 192×576", 192, 576),
            ("ffn_up 1536×576", 1536, 576),
            ("ffn_down 576×1536", 576, 1536),
            ("output 49152×576", 49152, 576),
            ("3B ffn_up 8192×3072", 8192, 3072),
            ("3B ffn_down 3072×8192", 3072, 8192),
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

/// Bytes the copy moves each way: far larger than any cache.
const COPY_BYTES: u64 = 256 << 20;

const COPY: &str = "
@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
    let i = id.x + id.y * n.x * 256u;
    if (i < arrayLength(&src)) {
        dst[i] = src[i];
    }
}
";

/// The device's memory bandwidth as a copy kernel reaches it: bytes read plus bytes written,
/// a second.
fn copy_bandwidth(gpu: &Gpu) -> f64 {
    let bytes = COPY_BYTES.min(gpu.max_binding_bytes() / 16 * 16);
    let device = gpu.device();
    let buffer = |label| {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        })
    };
    let (src, dst) = (buffer("copy source"), buffer("copy destination"));
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("copy"),
        source: wgpu::ShaderSource::Wgsl(COPY.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("copy"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("copy"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: src.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: dst.as_entire_binding(),
            },
        ],
    });
    let groups = (bytes / 16).div_ceil(256) as u32;
    let max = gpu.limits().max_compute_workgroups_per_dimension;
    let (x, y) = (groups.min(max), groups.div_ceil(max));
    let t = common::median_per_dispatch(gpu, SAMPLES, 4, |encoder| {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind, &[]);
        pass.dispatch_workgroups(x, y, 1);
    });
    2.0 * bytes as f64 / t.as_secs_f64() / 1e9
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
    let copy = copy_bandwidth(&gpu);
    println!(
        "copy of {} MiB: {copy:.1} GB/s (read and written), the device's bandwidth",
        COPY_BYTES >> 20
    );
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
                "{ty:5} {what:22} {:8.1} KiB  {:9.1} µs  {gbs:7.2} GB/s  {:5.1}% of the copy's",
                bytes as f64 / 1024.0,
                t.as_secs_f64() * 1e6,
                100.0 * gbs / copy
            );
        }
    }
}
