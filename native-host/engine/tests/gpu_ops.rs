//! RMSNorm, RoPE, softmax and the gated activations on the GPU against f64 CPU references written
//! from ggml's definitions (ggml-cpu/ops.cpp), on seeded random inputs.
//!
//! Attention (grouped-query, over an f16 cache longer than the positions read) within 2e-6 of the
//! largest value's magnitude, against the reference on the keys and values rounded to f16; on
//! cooperative matrices, with the scaled queries rounded to f16 in the reference too, within 2⁻¹⁰
//! of the largest Σ p·|v| / Σ p (the probabilities' rounding to f16, 2⁻¹¹ of each, twice over
//! for their sum).
//!
//! Tolerances, per element: RMSNorm and softmax within 2e-6 of the value's magnitude (+1e-7
//! absolute), SwiGLU and GeGLU within 5e-6 (the driver's exp; lavapipe's worst is 2.1e-6); RoPE
//! within 2e-5 of the largest input magnitude times two: its angles reach ~1000 rad at position
//! 1000, where one f32 ulp of the angle is 6e-5 rad; the same for the queries and keys rotated in
//! one dispatch, the keys into the f16 cache, with one f16 ulp more (the values stored beside
//! them within one ulp).

mod common;

use itinero_engine::gate::Gate;
use itinero_engine::gguf::Architecture;
use itinero_engine::gpu::attention_tuning::{self, AttentionKernel};
use itinero_engine::gpu::coop_check;
use itinero_engine::gpu::kernel::Kernel;
use itinero_engine::gpu::{
    record_pass, Attention, AttentionBlock, AttentionBuffers, AttentionForm, AttentionShape, Bound,
    CoopAttentionBlock, GatedActivation, Gpu, HeadNorms, KvStore, NewKeys, Output, RmsNorm, Rope,
    RopeOrder, RopeParams, Softmax, StepUniform,
};
use itinero_engine::models::{GEMMA3_270M, SMOLLM2_135M};

use common::Rng;

fn random(n: usize, lo: f32, hi: f32, rng: &mut Rng) -> Vec<f32> {
    (0..n).map(|_| rng.uniform(lo, hi)).collect()
}

fn encoder(gpu: &Gpu) -> wgpu::CommandEncoder {
    gpu.device()
        .create_command_encoder(&wgpu::CommandEncoderDescriptor::default())
}

fn assert_close(what: &str, got: &[f32], want: &[f64], rel: f64, abs: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let mut worst = 0.0f64;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let err = (f64::from(g) - w).abs();
        let allowed = rel * w.abs() + abs;
        assert!(
            err <= allowed,
            "{what}: element {i} is {g}, the reference {w} (error {err:.2e}, allowed {allowed:.2e})"
        );
        worst = worst.max(err / (w.abs() + abs));
    }
    eprintln!("{what}: worst relative error {worst:.1e}");
}

#[test]
fn rmsnorm_matches_ggml() {
    let gpu = common::gpu();
    let mut rng = Rng(11);
    let (rows, n, eps) = (3usize, 576usize, 1e-5f32);
    let x = random(rows * n, -3.0, 3.0, &mut rng);
    let g = random(n, 0.5, 1.5, &mut rng);
    let norm = RmsNorm::new(gpu).unwrap();
    let (xb, gb, yb) = (
        gpu.upload_f32("x", &x),
        gpu.upload_f32("g", &g),
        gpu.storage_f32("y", rows * n),
    );
    let mut enc = encoder(gpu);
    norm.encode(gpu, &mut enc, &xb, &gb, &yb, rows as u32, n as u32, eps)
        .unwrap();
    gpu.queue().submit([enc.finish()]);
    let got = gpu.read_f32(&yb, rows * n).unwrap();
    let want: Vec<f64> = x
        .chunks_exact(n)
        .flat_map(|row| {
            let mean = row.iter().map(|&v| f64::from(v).powi(2)).sum::<f64>() / n as f64;
            let scale = 1.0 / (mean + f64::from(eps)).sqrt();
            row.iter()
                .zip(&g)
                .map(move |(&v, &g)| f64::from(v) * scale * f64::from(g))
        })
        .collect();
    assert_close("rmsnorm", &got, &want, 2e-6, 1e-7);
    // Added to what y held (a post-norm into the residual stream), in one dispatch.
    let held = random(rows * n, -3.0, 3.0, &mut rng);
    let yb = gpu.upload_f32("y", &held);
    let shape = (rows as u32, n as u32, eps);
    let bound = norm
        .bind_output(gpu, &xb, &gb, &yb, shape, Output::Add)
        .unwrap();
    let mut enc = encoder(gpu);
    record_pass(&mut enc, "rmsnorm added", &[bound]);
    gpu.queue().submit([enc.finish()]);
    let got = gpu.read_f32(&yb, rows * n).unwrap();
    let want: Vec<f64> = want
        .iter()
        .zip(&held)
        .map(|(w, &h)| w + f64::from(h))
        .collect();
    assert_close("rmsnorm added", &got, &want, 2e-6, 1e-6);
}

#[test]
fn softmax_matches_and_survives_large_values() {
    let gpu = common::gpu();
    let mut rng = Rng(12);
    let (rows, n, scale) = (4usize, 1000usize, 0.125f32);
    let mut x = random(rows * n, -8.0, 8.0, &mut rng);
    // A row whose exponentials would overflow without subtracting the maximum.
    for v in &mut x[n..2 * n] {
        *v = *v * 100.0 + 800.0;
    }
    let softmax = Softmax::new(gpu).unwrap();
    let xb = gpu.upload_f32("x", &x);
    let mut enc = encoder(gpu);
    softmax
        .encode(gpu, &mut enc, &xb, rows as u32, n as u32, scale)
        .unwrap();
    gpu.queue().submit([enc.finish()]);
    let got = gpu.read_f32(&xb, rows * n).unwrap();
    let want: Vec<f64> = x
        .chunks_exact(n)
        .flat_map(|row| {
            let s: Vec<f64> = row
                .iter()
                .map(|&v| f64::from(scale) * f64::from(v))
                .collect();
            let m = s.iter().cloned().fold(f64::MIN, f64::max);
            let sum: f64 = s.iter().map(|v| (v - m).exp()).sum();
            s.into_iter().map(move |v| (v - m).exp() / sum)
        })
        .collect();
    assert_close("softmax", &got, &want, 2e-6, 1e-9);
}

fn silu(x: f64) -> f64 {
    x / (1.0 + (-x).exp())
}

fn gelu_tanh(x: f64) -> f64 {
    0.5 * x * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x.powi(3))).tanh())
}

#[test]
fn gated_activations_match_their_definitions() {
    let gpu = common::gpu();
    let mut rng = Rng(13);
    let n = 5000usize;
    let mut gate = random(n, -12.0, 12.0, &mut rng);
    gate[..4].copy_from_slice(&[-100.0, 100.0, -0.0, 1e-30]);
    let up = random(n, -2.0, 2.0, &mut rng);
    for (kind, f) in [
        (Gate::SwiGlu, silu as fn(f64) -> f64),
        (Gate::GeGlu, gelu_tanh),
    ] {
        let act = GatedActivation::new(gpu, kind).unwrap();
        let (gb, ub, yb) = (
            gpu.upload_f32("gate", &gate),
            gpu.upload_f32("up", &up),
            gpu.storage_f32("y", n),
        );
        let mut enc = encoder(gpu);
        act.encode(gpu, &mut enc, &gb, &ub, &yb, n as u32);
        gpu.queue().submit([enc.finish()]);
        let got = gpu.read_f32(&yb, n).unwrap();
        assert!(got.iter().all(|v| v.is_finite()), "{kind:?}: not finite");
        let want: Vec<f64> = gate
            .iter()
            .zip(&up)
            .map(|(&g, &u)| f(f64::from(g)) * f64::from(u))
            .collect();
        assert_close(&format!("{kind:?}"), &got, &want, 5e-6, 1e-7);
    }
}

/// ggml_rope_ext on the CPU: the angle accumulated in f32 exactly as ggml_rope_cache_init does,
/// the rotation in f64.
fn rope_reference(
    p: &RopeParams,
    x: &[f32],
    tokens: usize,
    heads: usize,
    head_dim: usize,
    pos0: usize,
) -> Vec<f64> {
    let mut out: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
    let half = p.n_dims as usize / 2;
    let theta_scale = p.freq_base.powf(-2.0 / p.n_dims as f32);
    for t in 0..tokens {
        let mut theta = (pos0 + t) as f32;
        for i in 0..half {
            let ff = p.freq_factors.as_ref().map_or(1.0, |f| f[i]);
            let extrap = theta / ff;
            let mut angle = f64::from(p.freq_scale * extrap);
            let mut mscale = f64::from(p.attn_factor);
            if p.ext_factor != 0.0 {
                let [lo, hi] = p.corr_dims;
                let y = (i as f32 - lo) / (hi - lo).max(0.001);
                let mix = f64::from((1.0 - y.clamp(0.0, 1.0)) * p.ext_factor);
                angle = angle * (1.0 - mix) + f64::from(extrap) * mix;
                mscale *= 1.0 + 0.1 * (1.0 / f64::from(p.freq_scale)).ln();
            }
            let (s, c) = angle.sin_cos();
            for h in 0..heads {
                let base = (t * heads + h) * head_dim;
                let (a, b) = match p.order {
                    RopeOrder::Normal => (base + 2 * i, base + 2 * i + 1),
                    RopeOrder::Neox => (base + i, base + i + half),
                };
                let (x0, x1) = (f64::from(x[a]), f64::from(x[b]));
                out[a] = (x0 * c - x1 * s) * mscale;
                out[b] = (x0 * s + x1 * c) * mscale;
            }
            theta *= theta_scale;
        }
    }
    out
}

#[test]
fn rope_matches_ggml_in_both_orders_with_scaling_and_frequency_factors() {
    let gpu = common::gpu();
    let mut rng = Rng(14);
    let (tokens, heads, head_dim) = (5usize, 3usize, 64usize);
    let plain = RopeParams {
        n_dims: 64,
        order: RopeOrder::Normal,
        freq_base: 100_000.0,
        freq_scale: 1.0,
        ext_factor: 0.0,
        attn_factor: 1.0,
        corr_dims: [0.0, 0.0],
        freq_factors: None,
    };
    let cases = [
        ("normal", plain.clone()),
        (
            "neox, partial",
            RopeParams {
                order: RopeOrder::Neox,
                n_dims: 32,
                ..plain.clone()
            },
        ),
        (
            "linear ×4 with frequency factors",
            RopeParams {
                freq_scale: 0.25,
                freq_factors: Some((0..32).map(|i| 1.0 + i as f32 / 8.0).collect()),
                ..plain.clone()
            },
        ),
        (
            "yarn",
            RopeParams {
                order: RopeOrder::Neox,
                freq_scale: 0.25,
                ext_factor: 1.0,
                corr_dims: [9.0, 23.0],
                ..plain.clone()
            },
        ),
    ];
    for (what, params) in cases {
        for pos0 in [0usize, 1000] {
            let x = random(tokens * heads * head_dim, -2.0, 2.0, &mut rng);
            let want = rope_reference(&params, &x, tokens, heads, head_dim, pos0);
            let rope = Rope::new(gpu, params.clone()).unwrap();
            let xb = gpu.upload_f32("x", &x);
            let mut enc = encoder(gpu);
            rope.encode(
                gpu,
                &mut enc,
                &xb,
                tokens as u32,
                heads as u32,
                head_dim as u32,
                pos0 as u32,
            );
            gpu.queue().submit([enc.finish()]);
            let got = gpu.read_f32(&xb, x.len()).unwrap();
            // The tolerance is relative to the pair's size, not the element's (a rotation can
            // take one element near zero).
            let scale: f64 = x.iter().map(|v| f64::from(v.abs())).fold(0.0, f64::max) * 2.0;
            assert_close(
                &format!("rope {what} at {pos0}"),
                &got,
                &want,
                0.0,
                2e-5 * scale,
            );
            // Queries and keys in one dispatch, the keys and values stored into the cache at
            // their positions: the same rotation, the unrotated tail of a key copied as it is.
            // The buffers hold three tokens more than the step has (a short prefill batch):
            // those must be left alone, in the scratch and in the cache.
            let (kv_heads, spare) = (2usize, 3usize);
            let k = random((tokens + spare) * kv_heads * head_dim, -2.0, 2.0, &mut rng);
            let v = random((tokens + spare) * kv_heads * head_dim, -2.0, 2.0, &mut rng);
            let vb = gpu.upload_f32("v", &v);
            let row = kv_heads * head_dim;
            let want_k = rope_reference(
                &params,
                &k[..tokens * row],
                tokens,
                kv_heads,
                head_dim,
                pos0,
            );
            let mut q = x.clone();
            q.extend(random(spare * heads * head_dim, -2.0, 2.0, &mut rng));
            let qb = gpu.upload_f32("q", &q);
            let kb = gpu.upload_f32("k", &k);
            let rows = pos0 + tokens + spare + 1;
            let caches = Caches::new(gpu, rows * row);
            let step = StepUniform::new(pos0 as u32, tokens as u32).buffer(gpu);
            let bound = rope.bind_qk(
                gpu,
                &qb,
                &kb,
                caches.store(&vb),
                (tokens + spare) as u32,
                (heads as u32, kv_heads as u32),
                head_dim as u32,
                &step,
            );
            let (got_q, cached) = run_rope_qk(gpu, "rope q, k", bound, (&qb, q.len()), &caches);
            let at = pos0 * row;
            check_rope_qk(
                &format!("rope {what} at {pos0}"),
                (&got_q, &want, &q[x.len()..]),
                (&cached, &want_k, &v[..tokens * row], at),
                scale,
            );
            // The same with each head RMS-normed first from the raw projections (Gemma's
            // q/k norms folded in): the queries into a buffer of their own.
            let eps = 1e-6f32;
            let (q_norm, k_norm) = (
                random(head_dim, 0.5, 1.5, &mut rng),
                random(head_dim, 0.5, 1.5, &mut rng),
            );
            let normed_q = head_normed(&x, &q_norm, eps);
            let normed_k = head_normed(&k[..tokens * row], &k_norm, eps);
            let want_q = rope_reference(&params, &normed_q, tokens, heads, head_dim, pos0);
            let want_k = rope_reference(&params, &normed_k, tokens, kv_heads, head_dim, pos0);
            let scale = normed_q
                .iter()
                .chain(&normed_k)
                .map(|v| f64::from(v.abs()))
                .fold(0.0, f64::max)
                * 2.0;
            let untouched = 7.0f32;
            let qo = gpu.upload_f32("q", &vec![untouched; q.len()]);
            let (qnb, knb) = (
                gpu.upload_f32("q norm", &q_norm),
                gpu.upload_f32("k norm", &k_norm),
            );
            let caches = Caches::new(gpu, rows * row);
            let norms = HeadNorms {
                q_raw: &gpu.upload_f32("q raw", &q),
                k_raw: &kb,
                q_norm: &qnb,
                k_norm: &knb,
                eps,
            };
            let bound = rope.bind_qk_normed(
                gpu,
                norms,
                &qo,
                caches.store(&vb),
                (tokens + spare) as u32,
                (heads as u32, kv_heads as u32),
                head_dim as u32,
                &step,
            );
            let (got_q, cached) =
                run_rope_qk(gpu, "normed rope q, k", bound, (&qo, q.len()), &caches);
            check_rope_qk(
                &format!("normed rope {what} at {pos0}"),
                (&got_q, &want_q, &vec![untouched; q.len() - x.len()]),
                (&cached, &want_k, &v[..tokens * row], at),
                scale,
            );
        }
    }
}

/// A layer's key and value caches of `len` values each (f16, two to a word), zeroed.
struct Caches {
    k: wgpu::Buffer,
    v: wgpu::Buffer,
    len: usize,
}

impl Caches {
    fn new(gpu: &Gpu, len: usize) -> Self {
        Self {
            k: gpu.storage_f32("k cache", len / 2),
            v: gpu.storage_f32("v cache", len / 2),
            len,
        }
    }

    fn store<'a>(&'a self, v: &'a wgpu::Buffer) -> KvStore<'a> {
        KvStore {
            v,
            k_cache: &self.k,
            v_cache: &self.v,
        }
    }

    /// Both caches read back as f32.
    fn read(&self, gpu: &Gpu) -> [Vec<f32>; 2] {
        [&self.k, &self.v].map(|b| {
            gpu.read::<half::f16>(b, self.len)
                .unwrap()
                .into_iter()
                .map(f32::from)
                .collect()
        })
    }
}

/// Runs a RoPE-into-the-cache dispatch and reads back the queries and both caches.
fn run_rope_qk(
    gpu: &Gpu,
    label: &str,
    bound: Bound,
    (q, q_len): (&wgpu::Buffer, usize),
    caches: &Caches,
) -> (Vec<f32>, [Vec<f32>; 2]) {
    let mut enc = encoder(gpu);
    record_pass(&mut enc, label, &[bound]);
    gpu.queue().submit([enc.finish()]);
    (gpu.read_f32(q, q_len).unwrap(), caches.read(gpu))
}

/// One f16 ulp relative to the value: what storing into the cache may round away.
const F16_ULP: f64 = 1.0 / 1024.0;

/// A step's rotated queries and keys against the reference: `got_q` starts with `want_q` and
/// holds `q_past` after it (rows past the step's tokens left alone); the key cache holds
/// `want_k` from `at`, and the value cache the values `v` there, both in f16, and nothing
/// anywhere else. Errors are allowed relative to `scale`.
fn check_rope_qk(
    what: &str,
    (got_q, want_q, q_past): (&[f32], &[f64], &[f32]),
    ([k_cache, v_cache], want_k, v, at): (&[Vec<f32>; 2], &[f64], &[f32], usize),
    scale: f64,
) {
    let n = want_q.len();
    assert_close(
        &format!("{what}: q"),
        &got_q[..n],
        want_q,
        0.0,
        2e-5 * scale,
    );
    assert_eq!(
        got_q[n..],
        *q_past,
        "{what}: queries past the step's tokens were written"
    );
    let end = at + want_k.len();
    assert_close(
        &format!("{what}: k into the cache"),
        &k_cache[at..end],
        want_k,
        F16_ULP,
        2e-5 * scale,
    );
    let want_v: Vec<f64> = v.iter().map(|&x| f64::from(x)).collect();
    // The smallest normal f16 is 6.1e-5; below it the steps are 2^-24.
    assert_close(
        &format!("{what}: v into the cache"),
        &v_cache[at..end],
        &want_v,
        F16_ULP,
        6e-8,
    );
    for (name, cache) in [("k", k_cache), ("v", v_cache)] {
        assert!(
            cache[..at].iter().chain(&cache[end..]).all(|&x| x == 0.0),
            "{what}: {name} written outside the new tokens' cache rows"
        );
    }
}

/// Each head of `x` (rows of `g.len()` values) RMS-normed in f64 and scaled by `g`.
fn head_normed(x: &[f32], g: &[f32], eps: f32) -> Vec<f32> {
    x.chunks_exact(g.len())
        .flat_map(|head| {
            let mean = head.iter().map(|&v| f64::from(v).powi(2)).sum::<f64>() / g.len() as f64;
            let scale = 1.0 / (mean + f64::from(eps)).sqrt();
            head.iter()
                .zip(g)
                .map(move |(&v, &g)| (f64::from(v) * scale * f64::from(g)) as f32)
        })
        .collect()
}

#[test]
fn rope_settings_come_from_the_gguf() {
    let g = common::open(SMOLLM2_135M);
    let p = RopeParams::from_gguf(&g).unwrap();
    assert_eq!(
        RopeOrder::for_architecture(Architecture::Llama),
        RopeOrder::Normal
    );
    assert_eq!(
        (
            p.n_dims,
            p.order,
            p.freq_base,
            p.freq_scale,
            p.ext_factor,
            p.freq_factors.is_none()
        ),
        (64, RopeOrder::Normal, 100_000.0, 1.0, 0.0, true)
    );
    let g = common::open(GEMMA3_270M);
    let p = RopeParams::from_gguf(&g).unwrap();
    assert_eq!(
        (p.n_dims, p.order, p.freq_base),
        (256, RopeOrder::Neox, 1_000_000.0)
    );
    let local = p.gemma3_sliding_window();
    assert_eq!(
        (local.n_dims, local.freq_base, local.freq_scale),
        (256, 10_000.0, 1.0)
    );
}

/// A kernel the device will not build is an error naming it, and the device goes on building
/// others: the error scopes that caught it are closed.
#[test]
fn a_kernel_that_does_not_compile_is_an_error_and_the_device_goes_on() {
    let gpu = common::gpu();
    let err = Kernel::new(
        gpu,
        "broken",
        "@compute @workgroup_size(1) fn main() { let x: u32 = 1.5; }",
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("broken"), "{err}");
    Kernel::new(gpu, "fine", "@compute @workgroup_size(1) fn main() {}").unwrap();
}

/// Decode (one token), a prefill batch (each token seeing only the positions up to its own) and a
/// sliding window, against an f64 softmax of the scaled dot products.
#[test]
fn attention_matches_softmax_of_scaled_dot_products_with_grouped_heads() {
    let gpu = common::gpu();
    // (form, each head's tokens padded to whole subgroups): unpadded, 37 tokens put a subgroup
    // across two KV heads, which then loads its own keys.
    let mut forms = vec![
        (AttentionForm::Workgroup, true),
        (AttentionForm::Lane, true),
    ];
    if AttentionForm::can_share(gpu) {
        forms.extend([
            (AttentionForm::SharedLane, true),
            (AttentionForm::SharedLane, false),
        ]);
    }
    let variants = forms.into_iter().map(|(form, padded)| {
        let attention = Attention::with_form(gpu, form).unwrap();
        let label = format!("{form:?}{}", if padded { "" } else { " (unpadded)" });
        (
            label,
            if padded {
                attention
            } else {
                attention.unpadded()
            },
        )
    });
    check_attention(gpu, (6, 2, 64), variants.collect(), Inputs::F32);
}

/// Prefill batches and decode's token in blocks of query rows, every block shape the device
/// holds, for the heads of SmolLM2 (64), Llama 3 (128) and Gemma 3 (256), a group of 4 query
/// heads to a KV head and none, against the same reference. Decode's keys are cut into slices
/// (merged by the combine kernel) from the second block of 64 keys on.
#[test]
fn attention_in_blocks_of_query_rows_matches_the_reference() {
    let gpu = common::gpu();
    for (heads, kv_heads, head_dim) in [(6, 2, 64), (8, 2, 128), (4, 1, 256), (3, 3, 64)] {
        let blocks = AttentionBlock::all(gpu, head_dim);
        assert!(
            !blocks.is_empty() || gpu.limits().max_compute_workgroup_storage_size < 16_384,
            "no block for heads of {head_dim} on {}",
            gpu.describe()
        );
        let variants = blocks
            .into_iter()
            .map(|block| {
                let attention = Attention::with_form(gpu, AttentionForm::Workgroup)
                    .unwrap()
                    .with_blocks(gpu, block, head_dim)
                    .unwrap()
                    .with_decode_blocks(gpu, block, head_dim)
                    .unwrap();
                (block.to_string(), attention)
            })
            .collect();
        check_attention(
            gpu,
            (heads, kv_heads, head_dim as usize),
            variants,
            Inputs::F32,
        );
    }
}

/// Prefill batches in blocks of query rows on cooperative matrices, every block the device
/// holds, for the same heads and cases (decode's token keeps the workgroup form), where the
/// adapter has them (Mesa's lavapipe from 25.x and GPUs; not this project's CI, whose lavapipe
/// is older).
#[test]
fn attention_on_cooperative_matrices_matches_the_reference() {
    let gpu = common::gpu();
    if gpu.cooperative_fragment().is_none() {
        eprintln!(
            "{} has no cooperative matrices with f16 inputs: nothing to check here",
            gpu.describe()
        );
        return;
    }
    for (heads, kv_heads, head_dim) in [(6, 2, 64), (8, 2, 128), (4, 1, 256), (3, 3, 64)] {
        let blocks = CoopAttentionBlock::all(gpu, head_dim);
        assert!(
            !blocks.is_empty() || gpu.limits().max_compute_workgroup_storage_size < 49_152,
            "no cooperative block for heads of {head_dim} on {}: {}",
            gpu.describe(),
            CoopAttentionBlock::why_none(gpu, head_dim)
        );
        let variants = blocks
            .into_iter()
            .map(|block| {
                let attention = Attention::with_form(gpu, AttentionForm::Workgroup)
                    .unwrap()
                    .with_cooperative_blocks(gpu, block, head_dim)
                    .unwrap();
                (block.to_string(), attention)
            })
            .collect();
        check_attention(
            gpu,
            (heads, kv_heads, head_dim as usize),
            variants,
            Inputs::F16,
        );
    }
}

/// The check a model makes of a batch's attention on cooperative matrices before it uses it:
/// every block the device holds passes it, for the heads of SmolLM2, Llama 3 and Gemma 3.
#[test]
fn attention_on_cooperative_matrices_passes_its_check() {
    let gpu = common::gpu();
    let base = Attention::new(gpu).unwrap();
    for (heads, kv_heads, head_dim) in [(9, 3, 64), (24, 8, 128), (4, 1, 256)] {
        let shape = AttentionShape {
            heads,
            kv_heads,
            head_dim,
            capacity: 64,
            window: None,
            scale: 1.0 / (head_dim as f32).sqrt(),
        };
        for block in CoopAttentionBlock::all(gpu, head_dim) {
            let worst = coop_check::check_attention(gpu, &base, &shape, block).unwrap();
            eprintln!("{block}, heads of {head_dim}: relative difference {worst:.1e}");
            assert!(worst < 1e-2);
        }
    }
}

/// Cooperative blocks a device cannot run are refused by name, and so is decode on them. The
/// first block of 16×16 fragments fits 48 KiB (NVIDIA's workgroup memory under Vulkan) for every
/// head up to Gemma's 256, with four subgroups of 32.
#[test]
fn attention_on_cooperative_matrices_a_device_cannot_run_is_refused() {
    for head_dim in [64, 128, 256] {
        let first = CoopAttentionBlock {
            fragment: 16,
            rows: 32,
            keys: 32,
        };
        let bytes = first.workgroup_bytes(head_dim, 128);
        assert!(bytes <= 49_152, "{first} for heads of {head_dim}: {bytes}");
    }
    let gpu = common::gpu();
    let missing = match gpu.cooperative_fragment() {
        Some(8) => 16,
        _ => 8,
    };
    let block = CoopAttentionBlock {
        fragment: missing,
        rows: 2 * missing,
        keys: 2 * missing,
    };
    let err = Attention::new(gpu)
        .unwrap()
        .with_cooperative_blocks(gpu, block, 64)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&format!("cooperative {missing}×{missing}")),
        "{err}"
    );
    assert!(err.contains(&gpu.describe()), "{err}");
    let Some(f) = gpu.cooperative_fragment() else {
        assert!(CoopAttentionBlock::all(gpu, 64).is_empty());
        let err = CoopAttentionBlock::why_none(gpu, 64).to_string();
        assert!(err.contains("no cooperative matrices"), "{err}");
        return;
    };
    let one_fragment = CoopAttentionBlock {
        fragment: f,
        rows: f,
        keys: 2 * f,
    };
    let err = one_fragment.check(gpu, 64).unwrap_err().to_string();
    assert!(err.contains("at least two"), "{err}");
    let err = CoopAttentionBlock {
        fragment: f,
        rows: 2 * f,
        keys: 2 * f,
    }
    .check(gpu, f + f / 2)
    .unwrap_err()
    .to_string();
    assert!(err.contains("whole fragments"), "{err}");
    let shape = AttentionShape {
        heads: 4,
        kv_heads: 2,
        head_dim: 64,
        capacity: 64,
        window: None,
        scale: 1.0,
    };
    if let Some(&block) = CoopAttentionBlock::all(gpu, 64).first() {
        let base = Attention::new(gpu).unwrap();
        let err = attention_tuning::build(
            gpu,
            &base,
            &shape,
            AttentionKernel::PerToken,
            AttentionKernel::Cooperative(block),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("fills no fragment"), "{err}");
    }
}

/// A block that does not fit, or a head it was not compiled for, is refused by name.
#[test]
fn attention_blocks_a_device_cannot_run_are_refused() {
    let gpu = common::gpu();
    let huge = AttentionBlock {
        rows: 16,
        keys: 1 << 16,
    };
    let err = Attention::with_form(gpu, AttentionForm::Workgroup)
        .unwrap()
        .with_blocks(gpu, huge, 64)
        .unwrap_err()
        .to_string();
    assert!(err.contains("workgroup memory"), "{err}");
    for rows in [0, 5] {
        let odd = AttentionBlock { rows, keys: 16 };
        let err = odd.check(gpu, 64).unwrap_err().to_string();
        assert!(err.contains("rows one of"), "{err}");
    }
    let err = AttentionBlock { rows: 4, keys: 8 }
        .check(gpu, 64)
        .unwrap_err()
        .to_string();
    assert!(err.contains("keys a multiple of 16"), "{err}");
    let err = AttentionBlock { rows: 4, keys: 16 }
        .check(gpu, 72)
        .unwrap_err()
        .to_string();
    assert!(err.contains("for heads of 72"), "{err}");
    // Heads of 36: 18 pairs of dims, which no block's invocations a row divide.
    assert!(AttentionBlock::all(gpu, 36).is_empty());
    let err = AttentionBlock::why_none(gpu, 36).to_string();
    assert!(err.contains("for heads of 36"), "{err}");
    let Some(&block) = AttentionBlock::all(gpu, 64).first() else {
        return;
    };
    let attention = Attention::with_form(gpu, AttentionForm::Workgroup)
        .unwrap()
        .with_blocks(gpu, block, 64)
        .unwrap();
    let (q, kv) = (
        gpu.storage_f32("q", 4 * 128),
        gpu.storage_f32("kv", 8 * 128),
    );
    let buffers = AttentionBuffers {
        q: &q,
        k_cache: &kv,
        v_cache: &kv,
        out: &q,
    };
    let shape = AttentionShape {
        heads: 4,
        kv_heads: 2,
        head_dim: 128,
        capacity: 8,
        window: None,
        scale: 1.0,
    };
    let step = StepUniform::new(0, 4).buffer(gpu);
    let err = attention
        .bind(gpu, buffers, shape, &step, 4)
        .unwrap_err()
        .to_string();
    assert!(err.contains("compiled for heads of 64"), "{err}");
}

/// Tuning times the per-token form and every block the device holds late in the cache, for a
/// batch and for decode, and keeps the fastest.
#[test]
fn attention_tuning_times_every_candidate_and_keeps_the_fastest() {
    let gpu = common::gpu();
    let shape = AttentionShape {
        heads: 6,
        kv_heads: 2,
        head_dim: 64,
        capacity: 96,
        window: None,
        scale: 0.125,
    };
    let base = Attention::new(gpu).unwrap();
    for tokens in [32, 1] {
        let candidates = attention_tuning::candidates(gpu, &shape, tokens);
        let cooperative = match tokens {
            1 => 0,
            _ => CoopAttentionBlock::all(gpu, 64).len(),
        };
        assert_eq!(
            candidates.len(),
            1 + AttentionBlock::all(gpu, 64).len() + cooperative,
            "{candidates:?}"
        );
        let choice = attention_tuning::fastest(gpu, &base, &shape, tokens, &candidates).unwrap();
        let timed: Vec<AttentionKernel> = choice.timings.iter().map(|(c, _)| *c).collect();
        assert_eq!(timed, candidates);
        let fastest = choice.timings.iter().min_by_key(|(_, t)| *t).unwrap().0;
        assert_eq!(choice.chosen, fastest, "{}", choice.describe());
        assert!(choice
            .describe()
            .contains("(timed: per query head and token: "));
    }
}

/// What the attention kernels multiply: the queries as they are, or scaled and rounded to f16
/// (cooperative matrices), and their probabilities rounded too.
#[derive(Clone, Copy, PartialEq)]
enum Inputs {
    F32,
    F16,
}

/// Runs each of `variants` (a label and the kernels) over decode and batch cases with
/// `(heads, kv_heads, head_dim)` and checks each output against an f64 reference.
fn check_attention(
    gpu: &Gpu,
    (heads, kv_heads, head_dim): (usize, usize, usize),
    variants: Vec<(String, Attention)>,
    inputs: Inputs,
) {
    let mut rng = Rng(15);
    let capacity = 300usize;
    let kv = kv_heads * head_dim;
    let max_tokens = 40usize;
    // Queries four times larger for f16 inputs: their softmax is then peaked, so that a slip in
    // it moves the output far more than the rounding does.
    let reach = match inputs {
        Inputs::F32 => 1.0,
        Inputs::F16 => 4.0,
    };
    let q = random(max_tokens * heads * head_dim, -reach, reach, &mut rng);
    let k = random(capacity * kv, -1.0, 1.0, &mut rng);
    let v = random(capacity * kv, -1.0, 1.0, &mut rng);
    let (qb, kb, vb) = (
        gpu.upload_f32("q", &q),
        gpu.upload_f16("k", &k),
        gpu.upload_f16("v", &v),
    );
    // What the cache holds: the reference reads the same.
    let [k, v] = [k, v].map(|x| {
        x.into_iter()
            .map(|x| half::f16::from_f32(x).to_f32())
            .collect::<Vec<f32>>()
    });
    let out = gpu.storage_f32("out", max_tokens * heads * head_dim);
    let scale = 1.0 / (head_dim as f32).sqrt();
    // (first position, tokens, window): decode at the start, within the first block and past a
    // few blocks; a batch; a batch under a sliding window, starting inside and past it; a batch
    // whose last block of rows is partial.
    let cases = [
        (0usize, 1usize, None),
        (36, 1, None),
        (256, 1, None),
        (256, 1, Some(70)),
        (299, 1, None),
        (30, 40, None),
        (0, 40, Some(16usize)),
        (100, 40, Some(70)),
        (30, 37, None),
        (0, 3, None),
    ];
    for ((label, attention), (pos, tokens, window)) in variants
        .iter()
        .flat_map(|v| cases.map(move |case| (v, case)))
    {
        let shape = AttentionShape {
            heads: heads as u32,
            kv_heads: kv_heads as u32,
            head_dim: head_dim as u32,
            capacity: capacity as u32,
            window: window.map(|w| w as u32),
            scale,
        };
        let buffers = AttentionBuffers {
            q: &qb,
            k_cache: &kb,
            v_cache: &vb,
            out: &out,
        };
        let mut enc = encoder(gpu);
        attention
            .encode(gpu, &mut enc, buffers, shape, pos as u32, tokens as u32)
            .unwrap();
        gpu.queue().submit([enc.finish()]);
        let got = gpu.read_f32(&out, tokens * heads * head_dim).unwrap();
        let mut want = vec![0.0f64; tokens * heads * head_dim];
        // The largest Σ p·|v| / Σ p: rounding each probability to f16 moves an output by up
        // to 2⁻¹¹ of it, and their sum by as much again.
        let mut weighted = 0.0f64;
        for r in 0..tokens {
            let end = pos + r + 1;
            let start = window.map_or(0, |w| end.saturating_sub(w));
            for h in 0..heads {
                let kvh = h / (heads / kv_heads);
                let q0 = (r * heads + h) * head_dim;
                // The query as the kernel multiplies it, and the scale it still applies.
                let (query, after): (Vec<f64>, f64) = match inputs {
                    Inputs::F32 => (
                        q[q0..q0 + head_dim].iter().map(|&x| f64::from(x)).collect(),
                        f64::from(scale),
                    ),
                    Inputs::F16 => (
                        q[q0..q0 + head_dim]
                            .iter()
                            .map(|&x| f64::from(half::f16::from_f32(x * scale).to_f32()))
                            .collect(),
                        1.0,
                    ),
                };
                let scores: Vec<f64> = (start..end)
                    .map(|t| {
                        (0..head_dim)
                            .map(|d| query[d] * f64::from(k[t * kv + kvh * head_dim + d]))
                            .sum::<f64>()
                            * after
                    })
                    .collect();
                let m = scores.iter().cloned().fold(f64::MIN, f64::max);
                let sum: f64 = scores.iter().map(|s| (s - m).exp()).sum();
                for d in 0..head_dim {
                    let value = |t: usize| f64::from(v[t * kv + kvh * head_dim + d]);
                    let p = |s: &f64| (s - m).exp() / sum;
                    want[q0 + d] = (start..end)
                        .zip(&scores)
                        .map(|(t, s)| p(s) * value(t))
                        .sum();
                    weighted = weighted.max(
                        (start..end)
                            .zip(&scores)
                            .map(|(t, s)| p(s) * value(t).abs())
                            .sum(),
                    );
                }
            }
        }
        let largest = want.iter().fold(0.0f64, |a, b| a.max(b.abs()));
        assert_close(
            &format!(
                "{label} attention, heads {heads}/{kv_heads} of {head_dim}, of {tokens} tokens \
                 from position {pos}, window {window:?}"
            ),
            &got,
            &want,
            0.0,
            match inputs {
                Inputs::F32 => 2e-6 * largest,
                Inputs::F16 => weighted / 1024.0,
            },
        );
    }
}

/// Decode's attention that rotates the step's query and stores its key and value itself (RoPE's
/// dispatch folded into attention's) against RoPE's dispatch then attention: the same output and
/// the same cache, for the workgroup form and every block the device holds, both RoPE orders
/// (NeoX over part of the head), frequency factors, a sliding window, and positions from the
/// cache's first to its last. The cache holds stale values at and past the step's position, so
/// a kernel that read the step's key or value from the cache instead would differ.
#[test]
fn decode_attention_that_rotates_matches_rope_then_attention() {
    let gpu = common::gpu();
    let mut rng = Rng(16);
    let (heads, kv_heads, head_dim) = (6usize, 2usize, 64usize);
    let plain = RopeParams {
        n_dims: 64,
        order: RopeOrder::Normal,
        freq_base: 10_000.0,
        freq_scale: 1.0,
        ext_factor: 0.0,
        attn_factor: 1.0,
        corr_dims: [0.0, 0.0],
        freq_factors: None,
    };
    let ropes = [
        ("normal", plain.clone()),
        (
            "neox over half the head, with frequency factors",
            RopeParams {
                order: RopeOrder::Neox,
                n_dims: 32,
                freq_factors: Some((0..16).map(|i| 1.0 + i as f32 / 4.0).collect()),
                ..plain.clone()
            },
        ),
    ];
    let mut variants = vec![(
        "per token".to_string(),
        Attention::with_form(gpu, AttentionForm::Workgroup).unwrap(),
    )];
    for block in AttentionBlock::all(gpu, head_dim as u32) {
        let attention = Attention::with_form(gpu, AttentionForm::Workgroup)
            .unwrap()
            .with_decode_blocks(gpu, block, head_dim as u32)
            .unwrap();
        variants.push((block.to_string(), attention));
    }
    let capacity = 300usize;
    let kv = kv_heads * head_dim;
    let cache_k = random(capacity * kv, -1.0, 1.0, &mut rng);
    let cache_v = random(capacity * kv, -1.0, 1.0, &mut rng);
    let q = random(heads * head_dim, -1.0, 1.0, &mut rng);
    let k = random(kv, -1.0, 1.0, &mut rng);
    let v = random(kv, -1.0, 1.0, &mut rng);
    let (kb, vb) = (gpu.upload_f32("k", &k), gpu.upload_f32("v", &v));
    let out = gpu.storage_f32("out", heads * head_dim);
    let read_cache = |b: &wgpu::Buffer| gpu.read::<u32>(b, capacity * kv / 2).unwrap();
    for (label, plain_attention) in variants {
        assert!(plain_attention.can_rotate(), "{label}");
        let rotating = plain_attention.clone().with_rotating_decode(gpu).unwrap();
        assert!(rotating.rotates() && !plain_attention.rotates());
        for (order, params) in &ropes {
            let rope = Rope::new(gpu, params.clone()).unwrap();
            for (pos, window) in [
                (0usize, None),
                (36, None),
                (63, None),
                (64, None),
                (256, Some(70u32)),
                (299, None),
            ] {
                let what = format!("{label}, {order}, position {pos}, window {window:?}");
                let shape = AttentionShape {
                    heads: heads as u32,
                    kv_heads: kv_heads as u32,
                    head_dim: head_dim as u32,
                    capacity: capacity as u32,
                    window,
                    scale: 1.0 / (head_dim as f32).sqrt(),
                };
                // RoPE's dispatch, then attention.
                let (qa, ka, va) = (
                    gpu.upload_f32("q", &q),
                    gpu.upload_f16("k cache", &cache_k),
                    gpu.upload_f16("v cache", &cache_v),
                );
                let step = StepUniform::new(pos as u32, 1).buffer(gpu);
                let store = KvStore {
                    v: &vb,
                    k_cache: &ka,
                    v_cache: &va,
                };
                let dims = (heads as u32, kv_heads as u32);
                let bound = rope.bind_qk(gpu, &qa, &kb, store, 1, dims, head_dim as u32, &step);
                let mut enc = encoder(gpu);
                record_pass(&mut enc, "rope", &[bound]);
                let buffers = AttentionBuffers {
                    q: &qa,
                    k_cache: &ka,
                    v_cache: &va,
                    out: &out,
                };
                plain_attention
                    .encode(gpu, &mut enc, buffers, shape, pos as u32, 1)
                    .unwrap();
                gpu.queue().submit([enc.finish()]);
                let want = gpu.read_f32(&out, heads * head_dim).unwrap();
                let want_cache = [read_cache(&ka), read_cache(&va)];
                // Attention that rotates, on the unrotated query.
                let (qb, kc, vc) = (
                    gpu.upload_f32("q", &q),
                    gpu.upload_f16("k cache", &cache_k),
                    gpu.upload_f16("v cache", &cache_v),
                );
                let buffers = AttentionBuffers {
                    q: &qb,
                    k_cache: &kc,
                    v_cache: &vc,
                    out: &out,
                };
                let new = NewKeys {
                    rope: &rope,
                    k: &kb,
                    v: &vb,
                };
                let mut enc = encoder(gpu);
                rotating
                    .encode_rotating(gpu, &mut enc, buffers, shape, pos as u32, new)
                    .unwrap();
                gpu.queue().submit([enc.finish()]);
                let got = gpu.read_f32(&out, heads * head_dim).unwrap();
                let largest = want.iter().fold(0.0f32, |a, b| a.max(b.abs()));
                let want64: Vec<f64> = want.iter().map(|&x| f64::from(x)).collect();
                assert_close(&what, &got, &want64, 0.0, 1e-6 * f64::from(largest));
                assert!(
                    [read_cache(&kc), read_cache(&vc)] == want_cache,
                    "{what}: the cache differs from what RoPE's dispatch stores"
                );
                assert_eq!(
                    gpu.read_f32(&qb, q.len()).unwrap(),
                    q,
                    "{what}: the query buffer was written"
                );
            }
        }
    }
}

/// Only decode's kernels on GPUs rotate: the lane forms, for CPU drivers, are refused by name.
#[test]
fn attention_that_cannot_rotate_says_so() {
    let gpu = common::gpu();
    let lane = Attention::with_form(gpu, AttentionForm::Lane).unwrap();
    assert!(!lane.can_rotate());
    let err = lane.with_rotating_decode(gpu).unwrap_err().to_string();
    assert!(err.contains("rotating") && err.contains("Lane"), "{err}");
}
