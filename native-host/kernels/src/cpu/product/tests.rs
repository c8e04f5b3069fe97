//! Every tensor type's product against an f64 sum over the dequantised weights and activations,
//! on random blocks, for each instruction set this CPU runs: odd numbers of rows and tokens (a
//! run's remainders, token blocks cut short), rows longer than one block.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::quant::dequantize_to_vec;

/// Random blocks of `ty` whose scales are ordinary numbers (random bits would make NaNs).
fn random_matrix(ty: TensorType, rows: usize, cols: usize, rng: &mut ChaCha8Rng) -> Vec<u8> {
    let elements = rows * cols;
    let bytes = ty.bytes_for(elements as u64).unwrap() as usize;
    let mut data: Vec<u8> = (0..bytes).map(|_| rng.random()).collect();
    let half = |rng: &mut ChaCha8Rng, scale: f32| {
        half::f16::from_f32(rng.random_range(-1.0f32..1.0) * scale).to_le_bytes()
    };
    let bb = ty.block_bytes();
    match ty {
        TensorType::F32 => {
            for v in data.as_chunks_mut::<4>().0 {
                v.copy_from_slice(&rng.random_range(-2.0f32..2.0).to_le_bytes());
            }
        }
        TensorType::F16 => {
            for v in data.as_chunks_mut::<2>().0 {
                v.copy_from_slice(&half(rng, 2.0));
            }
        }
        TensorType::BF16 => {
            for v in data.as_chunks_mut::<2>().0 {
                let x = half::bf16::from_f32(rng.random_range(-2.0f32..2.0));
                v.copy_from_slice(&x.to_le_bytes());
            }
        }
        _ => {
            // Where each block's f16 scales are.
            let at: &[usize] = match ty {
                TensorType::Q6_K => &[208],
                TensorType::Q4_1 | TensorType::Q5_1 | TensorType::Q4_K | TensorType::Q5_K => {
                    &[0, 2]
                }
                _ => &[0],
            };
            for b in data.chunks_exact_mut(bb) {
                for &o in at {
                    b[o..o + 2].copy_from_slice(&half(rng, 0.05));
                }
            }
        }
    }
    data
}

/// Every path this CPU runs: the plain code, on x86-64 each of the hand-written kernels'
/// instruction sets it has (not only the one `Path::of` would pick), and on arm64 the plain
/// code with the dot-product extension where it has that.
fn paths() -> Vec<Path> {
    let mut paths = vec![Path::Plain];
    #[cfg(target_arch = "x86_64")]
    {
        let (avx2, avx512) = (Isa::Avx2.available(), Isa::Avx512.available());
        let candidates = [
            (Path::Avx2, avx2),
            (Path::Avx2Vnni, avx2 && x86::has_avx_vnni()),
            (Path::Avx512, avx512),
            (Path::Avx512Vnni, avx512 && x86::has_avx512_vnni()),
        ];
        paths.extend(candidates.into_iter().filter(|c| c.1).map(|c| c.0));
    }
    #[cfg(target_arch = "aarch64")]
    if std::arch::is_aarch64_feature_detected!("dotprod") {
        paths.push(Path::NeonDot);
    }
    paths
}

/// The activations the product used, as values: what quantisation made of `x`.
fn seen(acts: &Acts, kind: ActKind) -> Vec<f64> {
    match kind {
        ActKind::Q8 => acts
            .q8
            .iter()
            .flat_map(|b| b.q.map(|q| f64::from(b.d) * f64::from(q)))
            .collect(),
        ActKind::Q8K => acts
            .q8k
            .iter()
            .flat_map(|b| b.q.map(|q| f64::from(b.d) * f64::from(q)))
            .collect(),
        ActKind::F32 => acts.f32.iter().map(|&v| f64::from(v)).collect(),
    }
}

#[test]
fn every_type_matches_an_f64_sum_on_every_instruction_set() {
    // Which were checked, for whoever reads the test's output (`--nocapture`).
    eprintln!("paths: {:?}", paths());
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    for ty in TensorType::ALL {
        let kind = ActKind::for_type(ty);
        let unit = ty.block_elements().max(32);
        let per_k = if kind == ActKind::Q8K { 256 } else { 32 };
        // One block (and one row); an odd number of blocks (decode's kernels take them in
        // pairs); every number of tokens up to a token block and one more (whole groups of
        // `TOKENS` and the rest); runs of rows cut short.
        let shapes = [
            (1, unit, 1),
            (7, 3 * per_k, 5),
            (37, 4 * per_k.max(unit), 17),
        ]
        .into_iter()
        .chain((1..=TOKEN_BLOCK + 1).map(|tokens| (3, unit, tokens)))
        .chain([(2, 5 * unit, 1), (9, 5 * unit, 9), (19, 2 * unit, 2)]);
        for (rows, cols, tokens) in shapes {
            let cols = cols.next_multiple_of(per_k);
            let data = random_matrix(ty, rows, cols, &mut rng);
            let w = dequantize_to_vec(ty, &data).unwrap();
            let x: Vec<f32> = (0..tokens * cols)
                .map(|_| rng.random_range(-3.0f32..3.0))
                .collect();
            let mut acts = Acts::default();
            acts.prepare(&x, tokens, cols, &[kind]);
            // Q8_1's sum is kept as an f16, as ggml keeps it; the sum here checks the
            // products' arithmetic, so it is made exact (the rounding is `acts`' to test).
            for b in &mut acts.q8 {
                b.s = b.d * b.q.iter().map(|&q| f32::from(q)).sum::<f32>();
            }
            if tokens > 1 {
                acts.q8_scales.fill(&acts.q8, tokens);
            }
            let a = seen(&acts, kind);
            let m = Matrix {
                ty,
                data: &data,
                rows,
                cols,
            };
            for path in paths() {
                let mut out = vec![f32::NAN; tokens * rows];
                pool.install(|| product_on(path, &m, &acts, &mut out));
                for t in 0..tokens {
                    for r in 0..rows {
                        let pairs = w[r * cols..(r + 1) * cols]
                            .iter()
                            .zip(&a[t * cols..(t + 1) * cols]);
                        let (mut exact, mut size) = (0.0f64, 0.0f64);
                        for (&w, &a) in pairs {
                            exact += f64::from(w) * a;
                            size += (f64::from(w) * a).abs();
                        }
                        let got = f64::from(out[t * rows + r]);
                        assert!(
                            (got - exact).abs() <= 1e-5 * size + 1e-6,
                            "{ty} on {path:?} ({rows}×{cols}, {tokens} tokens): row {r}, token {t}: {got} where the f64 sum is {exact}"
                        );
                    }
                }
            }
        }
    }
}

/// Wall-clock time, or with one thread the thread's own CPU time (which other processes on a
/// shared machine do not add to).
struct Clock(Option<f64>, std::time::Instant);

impl Clock {
    fn now(thread: bool) -> Clock {
        Clock(
            thread.then(thread_time).flatten(),
            std::time::Instant::now(),
        )
    }

    fn elapsed(&self) -> f64 {
        match self.0 {
            Some(t) => thread_time().unwrap() - t,
            None => self.1.elapsed().as_secs_f64(),
        }
    }
}

#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
fn thread_time() -> Option<f64> {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, t: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut t = Timespec { sec: 0, nsec: 0 };
    // SAFETY: libc's clock_gettime, writing the struct it is given (laid out as on 64-bit Linux).
    let ok = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut t) } == 0;
    ok.then_some(t.sec as f64 + t.nsec as f64 * 1e-9)
}

#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
fn thread_time() -> Option<f64> {
    None
}

/// Times each path's products on the shapes of SmolLM2-135M and Gemma 3 270M's matrices:
/// `cargo test --release -p itinero-kernels --lib cpu::product::tests::speed -- --ignored
/// --nocapture`. `SPEED_TYPES` (`Q4_1,Q8_0`…) and `SPEED_TOKENS` (1 or 64) pick cases,
/// `SPEED_THREADS` the pool's size (2), `SPEED_COPIES` how many copies of each matrix are
/// cycled through (more than the caches hold, to time memory; one, to time the arithmetic).
#[test]
#[ignore = "a benchmark, for release builds"]
fn speed() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let env = |name: &str, default: usize| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let threads = env("SPEED_THREADS", 2);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let only = std::env::var("SPEED_TYPES").ok();
    let only_tokens = std::env::var("SPEED_TOKENS").ok();
    let shapes = [
        (TensorType::Q4_1, 576, 576, 30),
        (TensorType::Q4_1, 1536, 576, 30),
        (TensorType::Q4_1, 576, 1536, 30),
        (TensorType::Q8_0, 49152, 576, 1),
        (TensorType::Q5_0, 1024, 640, 18),
        (TensorType::Q4_K, 2048, 640, 18),
        (TensorType::Q6_K, 640, 2048, 18),
        (TensorType::Q8_0, 262144, 640, 1),
    ];
    for (ty, rows, cols, copies) in shapes {
        if only
            .as_deref()
            .is_some_and(|o| !o.split(',').any(|o| o == ty.to_string()))
        {
            continue;
        }
        let kind = ActKind::for_type(ty);
        let bytes = ty.bytes_for((rows * cols) as u64).unwrap() as usize;
        let copies = env("SPEED_COPIES", copies).min((400 << 20) / bytes).max(1);
        let data: Vec<Vec<u8>> = (0..copies)
            .map(|_| random_matrix(ty, rows, cols, &mut rng))
            .collect();
        for tokens in [1, 64] {
            if tokens > 1 && rows > 10_000
                || only_tokens
                    .as_deref()
                    .is_some_and(|o| o != tokens.to_string())
            {
                continue;
            }
            let x: Vec<f32> = (0..tokens * cols)
                .map(|_| rng.random_range(-3.0f32..3.0))
                .collect();
            let mut acts = Acts::default();
            acts.prepare(&x, tokens, cols, &[kind]);
            let mut out = vec![0.0; tokens * rows];
            for path in paths() {
                // As the model runs them: from one of the pool's threads.
                let time = |reps: usize, out: &mut Vec<f32>| {
                    pool.install(|| {
                        let start = Clock::now(threads == 1);
                        for _ in 0..reps {
                            for d in &data {
                                let m = Matrix {
                                    ty,
                                    data: d,
                                    rows,
                                    cols,
                                };
                                product_on(path, &m, &acts, out);
                            }
                        }
                        start.elapsed() / (reps * copies) as f64
                    })
                };
                time(2, &mut out);
                let reps = (0.3 / time(1, &mut out) / copies as f64).clamp(1.0, 1000.0) as usize;
                let s = (0..3)
                    .map(|_| time(reps, &mut out))
                    .fold(f64::MAX, f64::min);
                let bytes = data[0].len() as f64;
                println!(
                    "{ty} {rows}×{cols} {tokens:>2} tokens {path:>10?}: {:8.1} µs, {:6.2} GB/s, {:7.1} GMAC/s",
                    s * 1e6,
                    bytes / s / 1e9,
                    (rows * cols * tokens) as f64 / s / 1e9
                );
            }
        }
    }
}

/// Times decode's products of a whole model (random weights of SmolLM2-135M's or Gemma 3 270M's
/// shapes and types), layer after layer: `SPEED_MODEL=smollm2|gemma3`, with `speed`'s command
/// line but `decode_pass`.
#[test]
#[ignore = "a benchmark, for release builds"]
fn decode_pass() {
    let model = std::env::var("SPEED_MODEL").unwrap_or_else(|_| "smollm2".into());
    let (layers, layer, output): (usize, Vec<(TensorType, usize, usize)>, _) = match &*model {
        "gemma3" => (
            18,
            vec![
                (TensorType::Q5_0, 1024, 640),
                (TensorType::Q5_0, 256, 640),
                (TensorType::Q8_0, 256, 640),
                (TensorType::Q4_K, 640, 1024),
                (TensorType::Q5_0, 2048, 640),
                (TensorType::Q5_0, 2048, 640),
                (TensorType::Q6_K, 640, 2048),
            ],
            (TensorType::Q8_0, 262144, 640),
        ),
        _ => (
            30,
            vec![
                (TensorType::Q4_1, 576, 576),
                (TensorType::Q4_1, 192, 576),
                (TensorType::Q4_1, 192, 576),
                (TensorType::Q4_1, 576, 576),
                (TensorType::Q4_1, 1536, 576),
                (TensorType::Q4_1, 1536, 576),
                (TensorType::Q4_1, 576, 1536),
            ],
            (TensorType::Q8_0, 49152, 576),
        ),
    };
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let shapes: Vec<_> = (0..layers)
        .flat_map(|_| layer.iter().copied())
        .chain([output])
        .collect();
    let data: Vec<Vec<u8>> = shapes
        .iter()
        .map(|&(ty, rows, cols)| random_matrix(ty, rows, cols, &mut rng))
        .collect();
    let bytes: usize = data.iter().map(Vec::len).sum();
    // One token's activations for each row length.
    let mut acts: Vec<(usize, Acts)> = Vec::new();
    for &(_, _, cols) in &shapes {
        if !acts.iter().any(|a| a.0 == cols) {
            let x: Vec<f32> = (0..cols).map(|_| rng.random_range(-3.0f32..3.0)).collect();
            let mut a = Acts::default();
            a.prepare(&x, 1, cols, &[ActKind::Q8, ActKind::Q8K]);
            acts.push((cols, a));
        }
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let mut out = vec![0.0; 262144];
    for path in paths() {
        let mut pass = || {
            pool.install(|| {
                let start = std::time::Instant::now();
                for (&(ty, rows, cols), d) in shapes.iter().zip(&data) {
                    let m = Matrix {
                        ty,
                        data: d,
                        rows,
                        cols,
                    };
                    let a = &acts.iter().find(|a| a.0 == cols).unwrap().1;
                    product_on(path, &m, a, &mut out[..rows]);
                }
                start.elapsed().as_secs_f64()
            })
        };
        pass();
        let s = (0..5).map(|_| pass()).fold(f64::MAX, f64::min);
        println!(
            "{model} decode products {path:>10?}: {:6.2} ms, {:5.1} GB/s",
            s * 1e3,
            bytes as f64 / s / 1e9
        );
    }
}
