//! The WGSL matrix-vector kernels against the CPU reference (`quant::dequantize`, then an f64 dot
//! product), on seeded random blocks of every type, in every kernel shape, split across bindings,
//! and on real tensors of both test models; and the decode kernels with the RMSNorm folded in
//! (rows split over three outputs, or gate and up with the activation), against the same
//! reference on the normalised x; and prefill's products over joined matrices per token.
//!
//! Tolerance: |y_gpu − y_ref| ≤ 1e-6 · Σ|w_i·x_i| per row (the worst seen on lavapipe is 7.5e-8). The kernels sum in f32 and in a different
//! order (and factor the `_1`/k-quant minimums out of the sum), so bit equality is not expected;
//! one wrongly decoded element of a 1536-wide row moves the sum by ~1/1536 of Σ|w·x|, far above it.

mod common;

use half::{bf16, f16};
use itinero_engine::gate::Gate;
use itinero_engine::gguf::TensorType;
use itinero_engine::gpu::{coop_check, merge_tuning, tile_tuning};
use itinero_engine::gpu::{
    record_pass, Attention, AttentionBlock, AttentionBuffers, AttentionForm, AttentionShape,
    AttentionSlices, Blocking, CoopShape, Destination, GpuError, GpuMatrix, JoinedMatMul, MatMul,
    MatVec, MatVecConfig, MergingMatVec, NormedInput, NormedMatVec, Output, Reduction, StepUniform,
    BATCH_TILE, TILES,
};
use itinero_engine::models::{GEMMA3_270M, SMOLLM2_135M};
use itinero_engine::quant::dequantize_to_vec;

use common::Rng;

const TOLERANCE: f64 = 1e-6;

/// The types the kernels cover.
const TYPES: [TensorType; 11] = TensorType::ALL;

/// Random rows of `ty`: random quants, with the f16 scales and minimums set to sane magnitudes
/// (random bits would give infinities and NaNs).
fn random_rows(ty: TensorType, rows: usize, cols: usize, rng: &mut Rng) -> Vec<u8> {
    let blocks = rows * cols / ty.block_elements();
    let mut data = Vec::with_capacity(blocks * ty.block_bytes());
    let put = |b: &mut [u8], at: usize, v: f32| {
        b[at..at + 2].copy_from_slice(&f16::from_f32(v).to_le_bytes());
    };
    for _ in 0..blocks {
        let mut b = rng.bytes(ty.block_bytes());
        let scale = rng.uniform(0.001, 0.05) * if rng.next() & 1 == 0 { 1.0 } else { -1.0 };
        let min = rng.uniform(-0.2, 0.2);
        match ty {
            TensorType::F32 => b.copy_from_slice(&rng.uniform(-1.0, 1.0).to_le_bytes()),
            TensorType::F16 => put(&mut b, 0, rng.uniform(-1.0, 1.0)),
            TensorType::BF16 => {
                b.copy_from_slice(&bf16::from_f32(rng.uniform(-1.0, 1.0)).to_le_bytes())
            }
            TensorType::Q8_0 | TensorType::Q4_0 | TensorType::Q5_0 => put(&mut b, 0, scale),
            TensorType::Q4_1 | TensorType::Q5_1 | TensorType::Q4_K | TensorType::Q5_K => {
                put(&mut b, 0, scale);
                put(&mut b, 2, min);
            }
            TensorType::Q6_K => put(&mut b, 208, scale),
        }
        data.extend_from_slice(&b);
    }
    data
}

/// The reference `W·x` and each row's Σ|w·x|, in f64 from the CPU dequantisation.
fn reference(ty: TensorType, data: &[u8], rows: usize, x: &[f32]) -> (Vec<f64>, Vec<f64>) {
    let w = dequantize_to_vec(ty, data).expect("reference dequantisation");
    let cols = x.len();
    assert_eq!(w.len(), rows * cols);
    w.chunks_exact(cols)
        .map(|row| {
            row.iter().zip(x).fold((0.0, 0.0), |(s, a), (&w, &x)| {
                let p = f64::from(w) * f64::from(x);
                (s + p, a + p.abs())
            })
        })
        .unzip()
}

/// Checks `got` against the reference; returns the largest error relative to Σ|w·x|.
fn check(what: &str, got: &[f32], want: &[f64], scale: &[f64]) -> f64 {
    check_within(what, got, want, scale, TOLERANCE)
}

/// As [`check`], allowing `tolerance` of Σ|w·x|.
fn check_within(what: &str, got: &[f32], want: &[f64], scale: &[f64], tolerance: f64) -> f64 {
    assert_eq!(got.len(), want.len(), "{what}: row count");
    let mut worst = 0.0f64;
    for (r, ((&g, &w), &s)) in got.iter().zip(want).zip(scale).enumerate() {
        let err = (f64::from(g) - w).abs() / s.max(f64::MIN_POSITIVE);
        assert!(
            err <= tolerance,
            "{what}: row {r} is {g}, the reference {w} (error {err:.2e} of Σ|w·x| = {s:.4}, allowed {tolerance:.0e})"
        );
        worst = worst.max(err);
    }
    worst
}

/// Every kernel shape the device can run: one invocation per row (CPU drivers), 32 per row with
/// workgroup memory (the portable GPU path), and subgroup shuffles when offered.
fn configs() -> Vec<MatVecConfig> {
    let gpu = common::gpu();
    let mut configs = vec![
        MatVecConfig {
            workgroup_size: 64,
            threads_per_row: 1,
            reduction: Reduction::Workgroup,
        },
        MatVecConfig {
            workgroup_size: 256,
            threads_per_row: 32,
            reduction: Reduction::Workgroup,
        },
    ];
    if gpu.has_subgroups() {
        let tpr = gpu.info().subgroup_min_size.min(32);
        configs.push(MatVecConfig {
            workgroup_size: 64,
            threads_per_row: tpr,
            reduction: Reduction::Subgroup,
        });
    }
    // The shapes a GPU's decode is timed in (16 and 8 invocations a row among them).
    for config in MatVecConfig::gpu_shapes(gpu) {
        if !configs.contains(&config) {
            configs.push(config);
        }
    }
    configs
}

fn random_x(cols: usize, rng: &mut Rng) -> Vec<f32> {
    (0..cols).map(|_| rng.uniform(-1.0, 1.0)).collect()
}

#[test]
fn every_type_matches_the_cpu_reference_in_every_kernel_shape() {
    let gpu = common::gpu();
    eprintln!("device: {}", gpu.describe());
    let mut rng = Rng(0x5eed_0001);
    // Each shape reading x from its binding, and staging it in workgroup memory (as decode does
    // on a GPU) for rows up to the widest here and for exactly the narrower ones' width.
    let kernels = configs().into_iter().flat_map(|config| {
        [0, 1536, 576].map(|staged| {
            let k = MatVec::with_x_staged(gpu, &TYPES, config, staged).unwrap();
            (config, staged, k)
        })
    });
    for (config, staged, kernels) in kernels {
        let config = format!("{config:?}, x staged for {staged} columns");
        for ty in TYPES {
            // Rows that do not fill the last workgroup; rows of fewer parts than invocations.
            let k = ty.block_elements() == 256;
            for (rows, cols) in [
                (67, if k { 1536 } else { 576 }),
                (5, if k { 256 } else { 96 }),
            ] {
                if staged != 0 && cols > staged as usize {
                    continue;
                }
                let data = random_rows(ty, rows, cols, &mut rng);
                let x = random_x(cols, &mut rng);
                let m =
                    GpuMatrix::upload(gpu, "random", ty, rows as u64, cols as u64, &data).unwrap();
                let got = kernels.run(gpu, &m, &x).unwrap();
                let (want, scale) = reference(ty, &data, rows, &x);
                let worst = check(&format!("{ty} {rows}×{cols} {config}"), &got, &want, &scale);
                eprintln!("{ty} {rows}×{cols} {config}: worst error {worst:.1e} of Σ|w·x|");
            }
        }
    }
}

/// x / rms(x) * g in f64, as ggml_rms_norm then ggml_mul.
fn rms_normed(x: &[f32], g: &[f32], eps: f32) -> Vec<f64> {
    let mean = x.iter().map(|&v| f64::from(v) * f64::from(v)).sum::<f64>() / x.len() as f64;
    let scale = 1.0 / (mean + f64::from(eps)).sqrt();
    x.iter()
        .zip(g)
        .map(|(&v, &g)| f64::from(v) * scale * f64::from(g))
        .collect()
}

/// The normed products: every type in every kernel shape, a matrix's rows split over three
/// outputs with a bias, and a gate matrix joined to its up matrix with each activation.
#[test]
fn normed_products_match_the_cpu_reference_on_the_normalised_x() {
    let gpu = common::gpu();
    let mut rng = Rng(0x5eed_0009);
    let (cols, eps) = (512usize, 1e-5f32);
    let (rows0, rows1, rows2) = (67usize, 13usize, 20usize);
    let rows = rows0 + rows1 + rows2;
    let x = random_x(cols, &mut rng);
    let g: Vec<f32> = (0..cols).map(|_| rng.uniform(0.5, 1.5)).collect();
    // The reference's x is the normalised one, rounded to f32 as the kernel's is.
    let xn: Vec<f32> = rms_normed(&x, &g, eps).iter().map(|&v| v as f32).collect();
    let xb = gpu.upload_f32("x", &x);
    let gb = gpu.upload_f32("norm", &g);
    let input = NormedInput {
        x: &xb,
        norm: &gb,
        eps,
    };
    let run = |bound: Vec<itinero_engine::gpu::Bound>| {
        let mut enc = gpu
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        record_pass(&mut enc, "normed", &bound);
        gpu.queue().submit([enc.finish()]);
    };
    let mut gates = vec![Gate::SwiGlu];
    for (c, config) in configs().into_iter().enumerate() {
        if c == 0 {
            gates.push(Gate::GeGlu);
        }
        for &gate in &gates {
            let kernels = NormedMatVec::new(gpu, &TYPES, cols as u32, gate, config).unwrap();
            for ty in TYPES {
                let what = format!("{ty} {config:?} {gate:?}");
                let data = random_rows(ty, rows, cols, &mut rng);
                let m =
                    GpuMatrix::upload(gpu, "random", ty, rows as u64, cols as u64, &data).unwrap();
                let (want, scale) = reference(ty, &data, rows, &xn);
                // Split, with a bias; the last output longer than its rows, written from its
                // start only.
                let bias: Vec<f32> = (0..rows).map(|_| rng.uniform(-1.0, 1.0)).collect();
                let bb = gpu.upload_f32("bias", &bias);
                let (y0, y1) = (gpu.storage_f32("y0", rows0), gpu.storage_f32("y1", rows1));
                let y2 = gpu.storage_f32("y2", rows2 * 2);
                run(kernels
                    .bind_split(
                        gpu,
                        &m,
                        input,
                        &[
                            Destination::new(&y0, rows0 as u32),
                            Destination::new(&y1, rows1 as u32),
                            Destination::new(&y2, rows2 as u32),
                        ],
                        Some(&bb),
                    )
                    .unwrap());
                let mut got = gpu.read_f32(&y0, rows0).unwrap();
                got.extend(gpu.read_f32(&y1, rows1).unwrap());
                let y2 = gpu.read_f32(&y2, rows2 * 2).unwrap();
                got.extend(&y2[..rows2]);
                assert!(
                    y2[rows2..].iter().all(|&v| v == 0.0),
                    "{what}: rows written past the last output's"
                );
                check_biased(
                    &format!("{what} split"),
                    &got,
                    (&want, &scale),
                    &bias,
                    TOLERANCE,
                );
                // Gate and up joined (the first and last `half` rows), the activation applied.
                let half = rows / 2;
                let gu = GpuMatrix::upload(
                    gpu,
                    "gate + up",
                    ty,
                    2 * half as u64,
                    cols as u64,
                    &data[..2 * half * ty.bytes_for(cols as u64).unwrap() as usize],
                )
                .unwrap();
                let y = gpu.storage_f32("y", half);
                run(kernels.bind_gated(gpu, &gu, input, &y).unwrap());
                let got = gpu.read_f32(&y, half).unwrap();
                check_gated(
                    &format!("{what} gated"),
                    gate,
                    &got,
                    (&want, &scale),
                    TOLERANCE,
                );
            }
        }
    }
}

/// Prefill's joined products: every type, a batch that is not whole tiles, a matrix's rows split
/// over three outputs with a bias, and gate and up with each activation, per token against the
/// CPU reference.
#[test]
fn joined_matrix_matrix_products_match_the_cpu_reference_per_token() {
    let gpu = common::gpu();
    let mut rng = Rng(0x5eed_000a);
    // Each activation, with the tile of most reuse and a smaller one (see `tile_tuning`).
    for (gate, tile) in [
        (Gate::SwiGlu, BATCH_TILE),
        (Gate::GeGlu, BATCH_TILE),
        (Gate::SwiGlu, 2),
        (Gate::GeGlu, 4),
    ] {
        let kernels = JoinedMatMul::new(gpu, &TYPES, gate, tile).unwrap();
        let what = format!("joined {gate:?}, tiles of {tile}");
        check_joined(&kernels, gate, &what, (11, 16), TOLERANCE, &mut rng);
    }
}

/// `kernels`' split and gated products over `max` tokens of which `tokens` are the batch's, for
/// every type, against the reference within `tolerance`; rows of tokens past the batch's must
/// stay unwritten.
fn check_joined(
    kernels: &JoinedMatMul,
    gate: Gate,
    what: &str,
    (tokens, max): (u32, u32),
    tolerance: f64,
    rng: &mut Rng,
) {
    let gpu = common::gpu();
    let (rows0, rows1, rows2) = (40usize, 13usize, 20usize);
    let rows = rows0 + rows1 + rows2;
    let step = StepUniform::new(0, tokens).buffer(gpu);
    for ty in TYPES {
        let what = format!("{ty} {what}");
        let cols = if ty.block_elements() == 256 { 512 } else { 96 };
        let data = random_rows(ty, rows, cols, rng);
        let mut xs: Vec<f32> = (0..tokens).flat_map(|_| random_x(cols, rng)).collect();
        xs.resize(max as usize * cols, 0.0);
        let xb = gpu.upload_f32("x", &xs);
        let m = GpuMatrix::upload(gpu, "joined", ty, rows as u64, cols as u64, &data).unwrap();
        let bias: Vec<f32> = (0..rows).map(|_| rng.uniform(-1.0, 1.0)).collect();
        let bb = gpu.upload_f32("bias", &bias);
        let ys: Vec<wgpu::Buffer> = [rows0, rows1, rows2]
            .iter()
            .map(|&r| gpu.storage_f32("y", r * max as usize))
            .collect();
        let to: Vec<Destination<'_>> = ys
            .iter()
            .zip([rows0, rows1, rows2])
            .map(|(b, r)| Destination::new(b, r as u32))
            .collect();
        let gu_rows = 2 * (rows / 2);
        let gu = GpuMatrix::upload(
            gpu,
            "gate + up",
            ty,
            gu_rows as u64,
            cols as u64,
            &data[..gu_rows * ty.bytes_for(cols as u64).unwrap() as usize],
        )
        .unwrap();
        let y = gpu.storage_f32("y", rows / 2 * max as usize);
        let mut bound = kernels
            .bind_split(gpu, &m, &xb, &to, Some(&bb), &step, max)
            .unwrap();
        bound.extend(kernels.bind_gated(gpu, &gu, &xb, &y, &step, max).unwrap());
        let mut enc = gpu
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        record_pass(&mut enc, "joined", &bound);
        gpu.queue().submit([enc.finish()]);
        let split: Vec<Vec<f32>> = ys
            .iter()
            .zip([rows0, rows1, rows2])
            .map(|(b, r)| gpu.read_f32(b, r * max as usize).unwrap())
            .collect();
        let gated = gpu.read_f32(&y, rows / 2 * max as usize).unwrap();
        for t in 0..max as usize {
            if t >= tokens as usize {
                // Tokens past the batch's are not written.
                assert!(
                    split
                        .iter()
                        .zip([rows0, rows1, rows2])
                        .all(|(y, r)| y[t * r..(t + 1) * r].iter().all(|&v| v == 0.0))
                        && gated[t * (rows / 2)..(t + 1) * (rows / 2)]
                            .iter()
                            .all(|&v| v == 0.0),
                    "{what}: token {t} is past the batch but was written"
                );
                continue;
            }
            let x = &xs[t * cols..(t + 1) * cols];
            let (want, scale) = reference(ty, &data, rows, x);
            let got: Vec<f32> = split
                .iter()
                .zip([rows0, rows1, rows2])
                .flat_map(|(y, r)| y[t * r..(t + 1) * r].to_vec())
                .collect();
            check_biased(
                &format!("{what} split, token {t}"),
                &got,
                (&want, &scale),
                &bias,
                tolerance,
            );
            let half = rows / 2;
            check_gated(
                &format!("{what} gated, token {t}"),
                gate,
                &gated[t * half..(t + 1) * half],
                (&want, &scale),
                tolerance,
            );
        }
    }
}

/// `got` against the reference plus `bias`, which the kernels add in f32 after the sum: its
/// rounding is allowed too.
fn check_biased(
    what: &str,
    got: &[f32],
    (want, scale): (&[f64], &[f64]),
    bias: &[f32],
    tolerance: f64,
) {
    let biased: Vec<f64> = want
        .iter()
        .zip(bias)
        .map(|(w, &b)| w + f64::from(b))
        .collect();
    let scale: Vec<f64> = scale
        .iter()
        .zip(bias)
        .map(|(s, &b)| s + f64::from(b.abs()))
        .collect();
    check_within(what, got, &biased, &scale, tolerance);
}

/// `got[r]` = act(gate row r) · (up row r), the reference's rows being the gate's then the
/// up's: each product's error bound carried through act(g)·u (|act'| < 1.2).
fn check_gated(
    what: &str,
    gate: Gate,
    got: &[f32],
    (want, scale): (&[f64], &[f64]),
    tolerance: f64,
) {
    let half = got.len();
    for (r, &g) in got.iter().enumerate() {
        let (gv, uv) = (want[r], want[half + r]);
        let act = gate_reference(gate, gv);
        let exact = act * uv;
        let allowed = 4.0 * tolerance * (1.2 * scale[r] * uv.abs() + scale[half + r] * act.abs())
            + 1e-6 * exact.abs();
        let err = (f64::from(g) - exact).abs();
        assert!(
            err <= allowed,
            "{what}: row {r} is {g}, the reference {exact} (error {err:.2e}, allowed {allowed:.2e})"
        );
    }
}

/// The FFN's gate function in f64.
fn gate_reference(gate: Gate, v: f64) -> f64 {
    match gate {
        Gate::SwiGlu => v / (1.0 + (-v).exp()),
        Gate::GeGlu => {
            0.5 * v
                * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (v + 0.044715 * v.powi(3))).tanh())
        }
    }
}

/// The prefill kernel: every type, a batch that is not whole tiles (the last tile's surplus rows
/// must not be written), and a matrix split across bindings; each token's row of `Y` against the
/// reference for that token alone.
#[test]
fn the_matrix_matrix_kernel_matches_the_cpu_reference_per_token() {
    let gpu = common::gpu();
    let mut rng = Rng(0x5eed_0004);
    let mut variants = Vec::new();
    for tile in TILES {
        variants.push(MatMul::with_subgroup_x(gpu, &TYPES, tile, false).unwrap());
        if MatMul::can_share_x(gpu) {
            variants.push(MatMul::with_subgroup_x(gpu, &TYPES, tile, true).unwrap());
        }
    }
    for (kernels, ty) in variants
        .iter()
        .flat_map(|k| TYPES.iter().map(move |&ty| (k, ty)))
    {
        check_matmul(kernels, ty, 11, TOLERANCE, &mut rng);
    }
    let m = GpuMatrix::upload(gpu, "q8", TensorType::Q8_0, 1, 32, &[0; 34]).unwrap();
    let only_q4 = MatMul::new(gpu, &[TensorType::Q4_0], BATCH_TILE).unwrap();
    let err = only_q4.run(gpu, &m, &[0.0; 32], 1).unwrap_err();
    assert_eq!(
        err.to_string(),
        "no matrix-matrix kernel was built for Q8_0 (built: Q4_0)"
    );
    // A tile the kernels do not have is refused by name, in both forms.
    let err = MatMul::new(gpu, &[TensorType::Q4_0], 3).unwrap_err();
    assert!(err.to_string().contains("tiles of 3 tokens"), "{err}");
    let err = JoinedMatMul::new(gpu, &[TensorType::Q4_0], Gate::SwiGlu, 16).unwrap_err();
    assert!(err.to_string().contains("tiles of 16 tokens"), "{err}");
}

/// `kernels` on 67 random rows of `ty` and `tokens` random tokens, whole and split across
/// bindings: each token's row of `Y` against the reference for that token alone, within
/// `tolerance`.
fn check_matmul(kernels: &MatMul, ty: TensorType, tokens: u32, tolerance: f64, rng: &mut Rng) {
    let gpu = common::gpu();
    let cols = if ty.block_elements() == 256 { 512 } else { 96 };
    let rows = 67;
    let data = random_rows(ty, rows, cols, rng);
    let xs: Vec<Vec<f32>> = (0..tokens).map(|_| random_x(cols, rng)).collect();
    let row_bytes = (data.len() / rows) as u64;
    for limit in [gpu.max_binding_bytes(), 5 * row_bytes] {
        let m =
            GpuMatrix::upload_with_limit(gpu, "random", ty, rows as u64, cols as u64, &data, limit)
                .unwrap();
        let got = kernels.run(gpu, &m, &xs.concat(), tokens).unwrap();
        assert_eq!(got.len(), rows * tokens as usize);
        let mut worst = 0.0f64;
        for (t, x) in xs.iter().enumerate() {
            let (want, scale) = reference(ty, &data, rows, x);
            let what = format!("{ty} {kernels:?}, token {t}, {} bindings", m.chunk_count());
            let got = &got[t * rows..(t + 1) * rows];
            worst = worst.max(check_within(&what, got, &want, &scale, tolerance));
        }
        eprintln!(
            "{ty} {} ({} bindings): worst error {worst:.1e} of Σ|w·x|",
            kernels.blocking(),
            m.chunk_count()
        );
    }
}

/// f16 inputs: rounding x and the dequantised w to f16 moves each product by up to 2⁻¹⁰ of
/// itself, so the sum by up to 2⁻¹⁰ of Σ|w·x|, and the f32 sums by less than a millionth more.
/// One wrongly decoded element of a 512-wide row moves it by about 2⁻⁹.
const F16_TOLERANCE: f64 = 1.0 / 1024.0 + TOLERANCE;

/// Prefill's products on cooperative matrices, where the adapter has them (Mesa's lavapipe from
/// 25.x, NVIDIA, AMD and Intel GPUs; not this project's CI, whose lavapipe is older): every type,
/// a batch of two blocks of tokens with the second partial, a matrix whose rows are not whole
/// blocks, split across bindings, and the joined products with each activation.
#[test]
fn cooperative_matrix_products_match_the_cpu_reference_per_token() {
    let gpu = common::gpu();
    let shapes = CoopShape::all(gpu);
    if shapes.is_empty() {
        eprintln!(
            "{} has no cooperative matrices with f16 inputs: nothing to check here",
            gpu.describe()
        );
        return;
    }
    // Every shape tuning may choose: grids of 2×2 and 4×2 fragments, steps of one and two parts
    // (two leave an odd part of the 96-wide rows to pad).
    let mut rng = Rng(0x5eed_0011);
    for shape in shapes {
        eprintln!("device: {}, {shape}", gpu.describe());
        check_cooperative(Blocking::Cooperative(shape), &mut rng);
    }
}

/// The plain and joined products in `blocking` against the reference.
fn check_cooperative(blocking: Blocking, rng: &mut Rng) {
    let gpu = common::gpu();
    let kernels = MatMul::with_blocking(gpu, &TYPES, blocking).unwrap();
    let block = blocking.tokens();
    let tokens = block + 5;
    for ty in TYPES {
        check_matmul(&kernels, ty, tokens, F16_TOLERANCE, rng);
    }
    for gate in [Gate::SwiGlu, Gate::GeGlu] {
        let kernels = JoinedMatMul::with_blocking(gpu, &TYPES, gate, blocking).unwrap();
        let what = format!("joined {gate:?}, {blocking}");
        check_joined(
            &kernels,
            gate,
            &what,
            (tokens, 2 * block),
            F16_TOLERANCE,
            rng,
        );
    }
}

/// The check a model makes of its products on cooperative matrices before it uses them: every
/// type and shape passes it where the adapter has them, a matrix whose rows are not whole blocks
/// included; and outputs that differ as a broken kernel's would fail it, by name.
#[test]
fn cooperative_products_pass_their_check_and_wrong_outputs_fail_it() {
    let want: Vec<f32> = (0..256)
        .map(|i| ((i * 37) % 101) as f32 / 50.0 - 1.0)
        .collect();
    let rounded: Vec<f32> = want.iter().map(|&w| f16::from_f32(w).to_f32()).collect();
    assert!(coop_check::agree("rounded", &rounded, &want).unwrap() < 1e-3);
    // One fragment's sums lost, and every output shifted by one.
    let mut lost = want.clone();
    lost[64..128].fill(0.0);
    let mut shifted = want.clone();
    shifted.rotate_left(1);
    for (what, got) in [("lost", lost), ("shifted", shifted)] {
        let err = coop_check::agree(what, &got, &want)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(what) && err.contains("portable kernel"),
            "{err}"
        );
    }
    let nan = vec![f32::NAN; want.len()];
    assert!(coop_check::agree("nan", &nan, &want).is_err());

    let gpu = common::gpu();
    let shapes = CoopShape::all(gpu);
    if shapes.is_empty() {
        eprintln!(
            "{} has no cooperative matrices: nothing more to check here",
            gpu.describe()
        );
        return;
    }
    let mut rng = Rng(0x5eed_0012);
    let matrices: Vec<GpuMatrix> = TYPES
        .into_iter()
        .map(|ty| {
            let cols = if ty.block_elements() == 256 { 512 } else { 96 };
            let data = random_rows(ty, 67, cols, &mut rng);
            GpuMatrix::upload(gpu, "random", ty, 67, cols as u64, &data).unwrap()
        })
        .collect();
    let refs: Vec<&GpuMatrix> = matrices.iter().collect();
    for shape in shapes {
        let worst =
            coop_check::check_products(gpu, &TYPES, &refs, Blocking::Cooperative(shape)).unwrap();
        eprintln!("{shape}: worst relative difference {worst:.1e}");
    }
}

/// A device without cooperative matrices refuses them by name, saying what it lacks.
#[test]
fn cooperative_matrices_a_device_lacks_are_refused() {
    let gpu = common::gpu();
    let missing = match gpu.cooperative_fragment() {
        Some(8) => 16,
        _ => 8,
    };
    let blocking = Blocking::Cooperative(CoopShape {
        fragment: missing,
        grid: [2, 2],
        parts: 1,
    });
    let err = MatMul::with_blocking(gpu, &[TensorType::Q4_0], blocking)
        .unwrap_err()
        .to_string();
    assert!(err.contains(&format!("fragments of {missing}")), "{err}");
    assert!(err.contains(&gpu.describe()), "{err}");
}

/// Tuning times every candidate tile that divides the batch and keeps one of them; a batch no
/// candidate divides is an error, not a guess.
#[test]
fn tile_tuning_times_each_tile_that_fits_the_batch() {
    let gpu = common::gpu();
    let mut rng = Rng(0x5eed_0010);
    let (ty, rows, cols) = (TensorType::Q4_1, 64usize, 96usize);
    let data = random_rows(ty, rows, cols, &mut rng);
    let m = GpuMatrix::upload(gpu, "w", ty, rows as u64, cols as u64, &data).unwrap();
    let o = GpuMatrix::upload(
        gpu,
        "o",
        ty,
        32,
        cols as u64,
        &data[..32 * data.len() / rows],
    )
    .unwrap();
    let candidates = tile_tuning::candidates(gpu);
    let batch = 128;
    let choice = tile_tuning::fastest(gpu, &[ty], &[&m, &o], batch, &candidates).unwrap();
    let timed: Vec<Blocking> = choice.timings.iter().map(|t| t.0).collect();
    assert_eq!(timed, candidates);
    assert!(choice.timings.iter().all(|t| !t.1.is_zero()));
    let best = choice.timings.iter().min_by_key(|t| t.1).unwrap();
    assert_eq!(choice.chosen, best.0);
    assert!(choice
        .describe()
        .starts_with(&format!("{} (timed: 8 tokens: ", choice.chosen)));
    // Only 2 of the candidates divides 6 tokens.
    let choice = tile_tuning::fastest(gpu, &[ty], &[&m], 6, &candidates).unwrap();
    assert_eq!(choice.chosen, Blocking::Rows(2));
    assert_eq!(choice.timings.len(), 1);
    let err = tile_tuning::fastest(gpu, &[ty], &[&m], 3, &candidates).unwrap_err();
    assert!(
        err.to_string().contains("divides a batch of 3 tokens"),
        "{err}"
    );
}

/// Decode's output product merging attention's slices as it stages x gives what attention's own
/// merge dispatch and then the product give, to the bit (the same arithmetic in the same order):
/// in each kernel shape that shares a row among invocations, after the per-token form and every
/// block form of attention, early and late in the cache and under a window, writing and adding.
#[test]
fn products_that_merge_attentions_slices_match_the_merge_then_the_product() {
    let gpu = common::gpu();
    let mut rng = Rng(0x5eed_0005);
    let (heads, kv_heads, head_dim, capacity, rows) = (8u32, 2u32, 64u32, 300u32, 40usize);
    let cols = (heads * head_dim) as usize;
    let kv = (capacity * kv_heads * head_dim) as usize;
    let types = [
        TensorType::Q4_1,
        TensorType::Q8_0,
        TensorType::Q6_K,
        TensorType::F16,
    ];
    let q = gpu.upload_f32("q", &random_x(cols, &mut rng));
    let k_cache = gpu.upload_f16("k cache", &random_x(kv, &mut rng));
    let v_cache = gpu.upload_f16("v cache", &random_x(kv, &mut rng));
    let out = gpu.storage_f32("attention out", cols);
    let buffers = AttentionBuffers {
        q: &q,
        k_cache: &k_cache,
        v_cache: &v_cache,
        out: &out,
    };
    let per_token = Attention::with_form(gpu, AttentionForm::Workgroup).unwrap();
    let mut attentions = vec![("per token".to_owned(), per_token.clone())];
    for block in AttentionBlock::all(gpu, head_dim) {
        let blocks = per_token.clone().with_decode_blocks(gpu, block, head_dim);
        attentions.push((block.to_string(), blocks.unwrap()));
    }
    let matrices: Vec<(TensorType, GpuMatrix)> = types
        .iter()
        .map(|&ty| {
            let data = random_rows(ty, rows, cols, &mut rng);
            let m = GpuMatrix::upload(gpu, "wo", ty, rows as u64, cols as u64, &data);
            (ty, m.unwrap())
        })
        .collect();
    let before: Vec<f32> = (0..rows).map(|_| rng.uniform(-4.0, 4.0)).collect();
    let shared = configs().into_iter().filter(|c| c.threads_per_row > 1);
    for config in shared {
        let merging = MergingMatVec::new(gpu, &types, heads, head_dim, config).unwrap();
        let plain = MatVec::with_x_staged(gpu, &types, config, cols as u32).unwrap();
        for (label, attention) in &attentions {
            for (pos, window) in [
                (0u32, None),
                (63, None),
                (64, None),
                (200, Some(70)),
                (299, None),
            ] {
                let shape = AttentionShape {
                    heads,
                    kv_heads,
                    head_dim,
                    capacity,
                    window,
                    scale: 1.0 / (head_dim as f32).sqrt(),
                };
                let step = StepUniform::new(pos, 1).buffer(gpu);
                let (attend, slices) = attention
                    .bind_unmerged(gpu, buffers, shape, &step, None)
                    .unwrap();
                let slices = slices.expect("300 positions are cut into slices");
                for (i, (ty, m)) in matrices.iter().enumerate() {
                    let output = [Output::Write, Output::Add][i % 2];
                    let what = format!(
                        "{config:?}, {label}, position {pos}, window {window:?}, {ty}, {output:?}"
                    );
                    let run = |product: Vec<itinero_engine::gpu::Bound>, y: &wgpu::Buffer| {
                        let mut encoder = gpu
                            .device()
                            .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
                        record_pass(&mut encoder, "attention", std::slice::from_ref(&attend));
                        record_pass(&mut encoder, "product", &product);
                        gpu.queue().submit([encoder.finish()]);
                        gpu.read::<u32>(y, rows).unwrap()
                    };
                    let apart_y = gpu.upload_f32("y", &before);
                    let mut apart = vec![attention.bind_merge(gpu, &slices, &out, &step)];
                    apart.extend(plain.bind_output(gpu, m, &out, &apart_y, output).unwrap());
                    let want = run(apart, &apart_y);
                    let merged_y = gpu.upload_f32("y", &before);
                    let merged = merging.bind(gpu, m, &slices, &step, &merged_y, output);
                    let got = run(merged.unwrap(), &merged_y);
                    assert_eq!(got, want, "{what}: the merging product differs");
                    assert!(got.iter().all(|b| f32::from_bits(*b).is_finite()), "{what}");
                }
            }
        }
    }
}

/// Where decode's slices are merged is timed both ways late in a long prompt, and the faster
/// kept.
#[test]
fn merge_tuning_times_both_ways_and_keeps_the_faster() {
    let gpu = common::gpu();
    let mut rng = Rng(0x5eed_0006);
    let (ty, heads, head_dim) = (TensorType::Q4_1, 8u32, 64u32);
    let cols = (heads * head_dim) as usize;
    let data = random_rows(ty, cols, cols, &mut rng);
    let wo = GpuMatrix::upload(gpu, "wo", ty, cols as u64, cols as u64, &data).unwrap();
    let config = MatVecConfig::shared_rows(gpu);
    let merging = MergingMatVec::new(gpu, &[ty], heads, head_dim, config).unwrap();
    let matvec = MatVec::with_x_staged(gpu, &[ty], config, cols as u32).unwrap();
    let attention = Attention::with_form(gpu, AttentionForm::Workgroup).unwrap();
    let shape = AttentionShape {
        heads,
        kv_heads: 2,
        head_dim,
        capacity: 1024,
        window: None,
        scale: 0.125,
    };
    let choice = merge_tuning::fastest(gpu, &attention, &merging, &matvec, &shape, &wo).unwrap();
    eprintln!("{}", choice.describe());
    assert_eq!(choice.timings.len(), 2, "{}", choice.describe());
    let fastest = choice.timings.iter().min_by_key(|(_, t)| *t).unwrap().0;
    assert_eq!(choice.chosen, fastest);
    let unsliced = AttentionShape {
        capacity: 64,
        ..shape
    };
    let err = merge_tuning::fastest(gpu, &attention, &merging, &matvec, &unsliced, &wo);
    assert!(err.unwrap_err().to_string().contains("does not cut"));
}

/// The merging product says why where it cannot run: a row per invocation (CPU drivers), or a
/// matrix whose rows are not the merged output's length.
#[test]
fn products_that_cannot_merge_attentions_slices_say_why() {
    let gpu = common::gpu();
    let ty = TensorType::Q8_0;
    let lane = MatVecConfig {
        workgroup_size: 64,
        threads_per_row: 1,
        reduction: Reduction::Workgroup,
    };
    let err = MergingMatVec::new(gpu, &[ty], 6, 64, lane).unwrap_err();
    assert!(matches!(err, GpuError::Unsupported { .. }), "{err}");
    assert!(err.to_string().contains("rows of one invocation"), "{err}");
    let shared = MatVecConfig {
        threads_per_row: 32,
        workgroup_size: 256,
        ..lane
    };
    let merging = MergingMatVec::new(gpu, &[ty], 6, 64, shared).unwrap();
    let shape = AttentionShape {
        heads: 6,
        kv_heads: 2,
        head_dim: 64,
        capacity: 300,
        window: None,
        scale: 0.125,
    };
    let slices = AttentionSlices::for_decode(gpu, shape).expect("300 positions are sliced");
    let narrow = GpuMatrix::upload(gpu, "narrow", ty, 1, 64, &[0; 68]).unwrap();
    let step = StepUniform::new(0, 1).buffer(gpu);
    let y = gpu.storage_f32("y", 1);
    let err = merging
        .bind(gpu, &narrow, &slices, &step, &y, Output::Write)
        .unwrap_err();
    assert!(err.to_string().contains("rows of 64 columns"), "{err}");
    let short = AttentionShape {
        capacity: 64,
        ..shape
    };
    assert!(AttentionSlices::for_decode(gpu, short).is_none());
}

/// The residual connection folded into a product: with `Output::Add` every kernel adds W·x to
/// what y held (each binding of a split matrix its own rows), where `Output::Write` overwrites it.
#[test]
fn adding_products_add_to_what_y_held() {
    let gpu = common::gpu();
    let mut rng = Rng(0x5eed_0004);
    let (ty, rows, cols, tokens) = (TensorType::Q4_1, 40usize, 96usize, 3usize);
    let data = random_rows(ty, rows, cols, &mut rng);
    let row_bytes = (data.len() / rows) as u64;
    let m = GpuMatrix::upload_with_limit(
        gpu,
        "random",
        ty,
        rows as u64,
        cols as u64,
        &data,
        7 * row_bytes,
    )
    .unwrap();
    assert!(m.chunk_count() > 1);
    let matvec = MatVec::new(gpu, &[ty]).unwrap();
    let mut matmuls = vec![
        MatMul::new(gpu, &[ty], 1).unwrap(),
        MatMul::new(gpu, &[ty], BATCH_TILE).unwrap(),
    ];
    for shape in CoopShape::all(gpu) {
        let coop = Blocking::Cooperative(shape);
        matmuls.push(MatMul::with_blocking(gpu, &[ty], coop).unwrap());
    }
    let xs: Vec<Vec<f32>> = (0..tokens).map(|_| random_x(cols, &mut rng)).collect();
    let before: Vec<f32> = (0..rows * tokens).map(|_| rng.uniform(-4.0, 4.0)).collect();
    for output in [Output::Write, Output::Add] {
        // (kernel, tokens it computes): matrix-vector, then matrix-matrix in each tile.
        let kernels = std::iter::once(("matrix-vector".to_owned(), None, 1)).chain(
            matmuls.iter().map(|mm| {
                (
                    format!("matrix-matrix, {}", mm.blocking()),
                    Some(mm),
                    tokens,
                )
            }),
        );
        for (what, matmul, n) in kernels {
            let whole = matmul.map_or(1, |mm| mm.blocking().tokens());
            let max = (n as u32).div_ceil(whole) * whole;
            let mut x = xs[..n].concat();
            x.resize(max as usize * cols, 0.0);
            let xb = gpu.upload_f32("x", &x);
            let yb = gpu.upload_f32("y", &before[..rows * n]);
            let mut encoder = gpu
                .device()
                .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
            let bound = match matmul {
                None => matvec.bind_output(gpu, &m, &xb, &yb, output),
                Some(mm) => {
                    let step = StepUniform::new(0, n as u32).buffer(gpu);
                    mm.bind_output(gpu, &m, &xb, &yb, &step, max, output)
                }
            }
            .unwrap();
            record_pass(&mut encoder, "product", &bound);
            gpu.queue().submit([encoder.finish()]);
            let got = gpu.read_f32(&yb, rows * n).unwrap();
            for (t, x) in xs[..n].iter().enumerate() {
                let (product, scale) = reference(ty, &data, rows, x);
                let held = &before[t * rows..(t + 1) * rows];
                let want: Vec<f64> = match output {
                    Output::Write => product,
                    Output::Add => product
                        .iter()
                        .zip(held)
                        .map(|(p, &h)| p + f64::from(h))
                        .collect(),
                };
                // What y held is exact in f32: the tolerance stays that of the product.
                let scale: Vec<f64> = scale.iter().map(|s| s.max(1.0)).collect();
                let tolerance = match matmul.map(|mm| mm.blocking()) {
                    Some(Blocking::Cooperative(_)) => F16_TOLERANCE,
                    _ => TOLERANCE,
                };
                check_within(
                    &format!("{what}, {output:?}, token {t}"),
                    &got[t * rows..(t + 1) * rows],
                    &want,
                    &scale,
                    tolerance,
                );
            }
        }
    }
}

#[test]
fn matrices_larger_than_a_binding_are_split_and_give_the_same_result() {
    let gpu = common::gpu();
    let mut rng = Rng(0x5eed_0002);
    let kernels = MatVec::new(gpu, &TYPES).unwrap();
    // Q8_0 rows of 102 bytes: chunks of three rows are 306 bytes, not a whole number of words.
    for (ty, rows, cols) in [
        (TensorType::Q8_0, 67, 96),
        (TensorType::Q6_K, 67, 512),
        (TensorType::Q4_1, 40, 576),
        (TensorType::F16, 9, 64),
    ] {
        let data = random_rows(ty, rows, cols, &mut rng);
        let x = random_x(cols, &mut rng);
        let row_bytes = (data.len() / rows) as u64;
        let whole = GpuMatrix::upload(gpu, "whole", ty, rows as u64, cols as u64, &data).unwrap();
        assert_eq!(whole.chunk_count(), 1);
        let split = GpuMatrix::upload_with_limit(
            gpu,
            "split",
            ty,
            rows as u64,
            cols as u64,
            &data,
            3 * row_bytes + row_bytes / 2,
        )
        .unwrap();
        assert_eq!(split.chunk_count(), rows.div_ceil(3), "{ty}");
        let a = kernels.run(gpu, &whole, &x).unwrap();
        let b = kernels.run(gpu, &split, &x).unwrap();
        assert_eq!(a, b, "{ty}: the split changes nothing per row");
        let (want, scale) = reference(ty, &data, rows, &x);
        check(&format!("{ty} split"), &b, &want, &scale);
    }
    let err = GpuMatrix::upload_with_limit(gpu, "wide", TensorType::F32, 1, 64, &[0; 256], 255)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "matrix wide: a F32 row of 256 bytes does not fit in one storage binding of 255 bytes"
    );
}

#[test]
fn shapes_the_kernels_cannot_run_are_refused() {
    let gpu = common::gpu();
    let err = GpuMatrix::upload(gpu, "odd", TensorType::F32, 1, 40, &[0; 160]).unwrap_err();
    assert!(err.to_string().contains("multiple of 32"), "{err}");
    let err = GpuMatrix::upload(gpu, "short", TensorType::Q8_0, 2, 32, &[0; 34]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "matrix short: 34 bytes given for 2 rows of 34 bytes"
    );
    // Rows wider than x is staged for are refused, not read past the staging.
    let config = configs()[0];
    let staged = MatVec::with_x_staged(gpu, &[TensorType::Q8_0], config, 32).unwrap();
    let wide = GpuMatrix::upload(gpu, "wide", TensorType::Q8_0, 1, 64, &[0; 68]).unwrap();
    let err = staged.run(gpu, &wide, &[0.0; 64]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "matrix wide: rows of 64 columns, where the kernel stages x for 32"
    );
    let err = MatVec::with_x_staged(gpu, &[TensorType::Q8_0], config, 48).unwrap_err();
    assert!(err.to_string().contains("multiple of 32 columns"), "{err}");
    let kernels = MatVec::new(gpu, &[TensorType::Q4_0]).unwrap();
    let m = GpuMatrix::upload(gpu, "q8", TensorType::Q8_0, 1, 32, &[0; 34]).unwrap();
    let err = kernels.run(gpu, &m, &[0.0; 32]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "no matrix-vector kernel was built for Q8_0 (built: Q4_0)"
    );
}

/// The smallest two-dimensional tensor of each type in the model, and the token embedding (the
/// largest), which is also run split into 8 MiB bindings.
fn check_model_tensors(model: itinero_engine::models::KnownModel) {
    let gpu = common::gpu();
    let g = common::open(model);
    let kernels = MatVec::new(gpu, &TYPES).unwrap();
    let mut rng = Rng(0x5eed_0003);
    let mut picked: Vec<&str> = Vec::new();
    let mut types: Vec<TensorType> = Vec::new();
    let mut infos: Vec<_> = g
        .tensor_infos()
        .iter()
        .filter(|t| t.dims.len() == 2)
        .collect();
    infos.sort_by_key(|t| t.size);
    for t in &infos {
        if !types.contains(&t.ty) {
            types.push(t.ty);
            picked.push(&t.name);
        }
    }
    if !picked.contains(&"token_embd.weight") {
        picked.push("token_embd.weight");
    }
    for name in picked {
        let t = g.tensor(name).unwrap();
        let (cols, rows) = (t.info.dims[0] as usize, t.info.dims[1] as usize);
        let x = random_x(cols, &mut rng);
        let (want, scale) = reference(t.info.ty, t.data, rows, &x);
        let limits = if name == "token_embd.weight" {
            vec![gpu.max_binding_bytes(), 8 << 20]
        } else {
            vec![gpu.max_binding_bytes()]
        };
        for limit in limits {
            let m = GpuMatrix::from_tensor_with_limit(gpu, &t, limit).unwrap();
            let got = kernels.run(gpu, &m, &x).unwrap();
            let what = format!(
                "{} {name} ({}, {rows}×{cols}, {} bindings)",
                model.id,
                t.info.ty,
                m.chunk_count()
            );
            let worst = check(&what, &got, &want, &scale);
            eprintln!("{what}: worst error {worst:.1e} of Σ|w·x|");
        }
    }
}

#[test]
fn smollm2_tensors_match_the_cpu_reference() {
    check_model_tensors(SMOLLM2_135M);
}

#[test]
fn gemma3_tensors_match_the_cpu_reference() {
    check_model_tensors(GEMMA3_270M);
}
