//! The parts of a layer around its products, on the CPU: RMSNorm, the gated activations, and
//! attention over the f16 KV cache — each as ggml computes it, split over the pool's threads
//! where it is big enough to matter (attention, over a long prompt).

use half::f16;
use half::slice::HalfFloatSliceExt;
use rayon::prelude::*;

use super::isa::Isa;
use crate::gpu::Gate;

/// `x` (rows of `w.len()` values) normalised by its root mean square, times `w`, in place; the
/// sum of squares in f64 as ggml sums it.
pub fn rms_norm(x: &mut [f32], w: &[f32], eps: f32) {
    for row in x.chunks_exact_mut(w.len()) {
        let sum: f64 = row.iter().map(|&v| f64::from(v * v)).sum();
        let mean = (sum / row.len() as f64) as f32;
        let scale = 1.0 / (mean + eps).sqrt();
        for (v, &w) in row.iter_mut().zip(w) {
            *v = *v * scale * w;
        }
    }
}

/// `gate` becomes act(gate) × `up`, element by element.
pub fn gated(gate: Gate, g: &mut [f32], up: &[f32]) {
    match gate {
        Gate::SwiGlu => {
            for (g, &u) in g.iter_mut().zip(up) {
                *g = *g / (1.0 + (-*g).exp()) * u;
            }
        }
        Gate::GeGlu => {
            const SQRT_2_OVER_PI: f32 = 0.797_884_6;
            for (g, &u) in g.iter_mut().zip(up) {
                let x = *g;
                let inner = SQRT_2_OVER_PI * x * (1.0 + 0.044_715 * x * x);
                *g = 0.5 * x * (1.0 + inner.tanh()) * u;
            }
        }
    }
}

/// One layer's keys and values of every position, as IEEE halves: half the memory of f32, as
/// llama.cpp keeps them.
#[derive(Debug)]
pub struct KvCache {
    pub k: Vec<f16>,
    pub v: Vec<f16>,
    /// Values per position (KV heads × head size).
    pub width: usize,
}

impl KvCache {
    pub fn new(capacity: usize, width: usize) -> Self {
        Self {
            k: vec![f16::ZERO; capacity * width],
            v: vec![f16::ZERO; capacity * width],
            width,
        }
    }

    /// Stores `n` positions' keys and values from `pos` on.
    pub fn store(&mut self, pos: usize, k: &[f32], v: &[f32]) {
        let (at, len) = (pos * self.width, k.len());
        self.k[at..at + len].convert_from_f32_slice(k);
        self.v[at..at + len].convert_from_f32_slice(v);
    }

    pub fn bytes(&self) -> u64 {
        ((self.k.len() + self.v.len()) * 2) as u64
    }
}

/// The shape of one layer's attention.
#[derive(Debug, Clone, Copy)]
pub struct AttentionShape {
    pub heads: usize,
    pub kv_heads: usize,
    pub head_dim: usize,
    pub scale: f32,
    /// Positions a local layer attends over (`None`: all before and at the token).
    pub window: Option<usize>,
}

/// Scratch kept between calls: the cached keys and values a batch reads, widened to f32 once
/// for all its tokens and heads.
#[derive(Debug, Default)]
pub struct AttentionScratch {
    k: Vec<f32>,
    v: Vec<f32>,
}

/// Attention of `q` (`n` tokens × heads × head size, the tokens at `pos..pos + n`, whose keys
/// and values are already in `cache`) into `out` (the same shape).
pub fn attention(
    s: AttentionShape,
    q: &[f32],
    cache: &KvCache,
    pos: usize,
    n: usize,
    scratch: &mut AttentionScratch,
    out: &mut [f32],
) {
    let width = cache.width;
    let first = |p: usize| s.window.map_or(0, |w| (p + 1).saturating_sub(w));
    let (from, to) = (first(pos), pos + n);
    let rows = to - from;
    scratch.k.resize(rows * width, 0.0);
    scratch.v.resize(rows * width, 0.0);
    let widen = |dst: &mut [f32], src: &[f16]| {
        dst.par_chunks_mut(64 * width)
            .zip(src.par_chunks(64 * width))
            .for_each(|(d, s)| s.convert_to_f32_slice(d));
    };
    widen(&mut scratch.k, &cache.k[from * width..to * width]);
    widen(&mut scratch.v, &cache.v[from * width..to * width]);
    let (keys, values) = (&scratch.k[..], &scratch.v[..]);
    let row = s.heads * s.head_dim;
    let isa = Isa::chosen();
    out.par_chunks_mut(row)
        .zip(q.par_chunks(row))
        .enumerate()
        .for_each_init(Vec::new, |scores, (t, (out, q))| {
            let p = pos + t;
            let span = Span {
                from,
                start: first(p),
                end: p,
                width,
            };
            match isa {
                // SAFETY: `Isa::chosen` picks AVX2 and AVX-512 only where the CPU has AVX2
                // and FMA.
                #[cfg(target_arch = "x86_64")]
                Isa::Avx2 | Isa::Avx512 => unsafe {
                    attend_avx2(s, span, q, keys, values, scores, out)
                },
                _ => attend(s, span, q, keys, values, scores, out),
            }
        });
}

/// The cached positions one token attends over: `start..=end`, rows of `width` values in the
/// widened keys and values counted from position `from`.
#[derive(Clone, Copy)]
struct Span {
    from: usize,
    start: usize,
    end: usize,
    width: usize,
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn attend_avx2(
    s: AttentionShape,
    span: Span,
    q: &[f32],
    keys: &[f32],
    values: &[f32],
    scores: &mut Vec<f32>,
    out: &mut [f32],
) {
    attend(s, span, q, keys, values, scores, out)
}

/// Every head of one token: scores against the span's keys, softmax, the weighted sum of its
/// values.
#[inline(always)]
fn attend(
    s: AttentionShape,
    span: Span,
    q: &[f32],
    keys: &[f32],
    values: &[f32],
    scores: &mut Vec<f32>,
    out: &mut [f32],
) {
    let hd = s.head_dim;
    let group = s.heads / s.kv_heads;
    for h in 0..s.heads {
        let kv = (h / group) * hd;
        let qh = &q[h * hd..(h + 1) * hd];
        scores.clear();
        let mut max = f32::NEG_INFINITY;
        for at in span.start..=span.end {
            let k = &keys[(at - span.from) * span.width + kv..][..hd];
            let score = dot(qh, k) * s.scale;
            max = max.max(score);
            scores.push(score);
        }
        let mut sum = 0.0f32;
        for sc in scores.iter_mut() {
            *sc = (*sc - max).exp();
            sum += *sc;
        }
        let o = &mut out[h * hd..(h + 1) * hd];
        o.fill(0.0);
        let inv = 1.0 / sum;
        for (at, &w) in (span.start..=span.end).zip(scores.iter()) {
            let v = &values[(at - span.from) * span.width + kv..][..hd];
            let w = w * inv;
            for (o, &v) in o.iter_mut().zip(v) {
                *o += w * v;
            }
        }
    }
}

#[inline(always)]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let (ac, bc) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ac
        .remainder()
        .iter()
        .zip(bc.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ac.zip(bc) {
        for k in 0..8 {
            acc[k] += x[k] * y[k];
        }
    }
    acc.iter().sum::<f32>() + tail
}
