//! The parts of a layer around its products, on the CPU: RMSNorm, the gated activations, and
//! attention over the f16 KV cache — each as ggml computes it, split over the pool's threads
//! where it is big enough to matter (attention, over a long prompt).

use half::f16;
use half::slice::HalfFloatSliceExt;
use rayon::prelude::*;

use super::isa::Isa;
use crate::gate::Gate;

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
    if n == 1 {
        return attention_one(s, q, cache, pos, out);
    }
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

/// Attention of one token (decode): its heads split over the threads, each reading its keys
/// and values as halves straight from the cache. A batch widens the cache once for all its
/// tokens instead; one token would read the widened copy only once.
fn attention_one(s: AttentionShape, q: &[f32], cache: &KvCache, pos: usize, out: &mut [f32]) {
    let hd = s.head_dim;
    let group = s.heads / s.kv_heads;
    let span = Span {
        from: 0,
        start: s.window.map_or(0, |w| (pos + 1).saturating_sub(w)),
        end: pos,
        width: cache.width,
    };
    let isa = Isa::chosen();
    out[..s.heads * hd]
        .par_chunks_mut(hd)
        .enumerate()
        .for_each_init(Vec::new, |scores, (h, o)| {
            let head = Head {
                q: &q[h * hd..(h + 1) * hd],
                kv: (h / group) * hd,
                scale: s.scale,
            };
            match isa {
                // SAFETY: `Isa::chosen` picks AVX2 and AVX-512 only where the CPU has AVX2, FMA
                // and F16C; `halves` needs rows of a multiple of 8.
                #[cfg(target_arch = "x86_64")]
                Isa::Avx2 | Isa::Avx512 if hd.is_multiple_of(8) => unsafe {
                    head_f16c(head, span, cache, scores, o)
                },
                _ => attend_head(
                    head,
                    span,
                    cache,
                    scores,
                    o,
                    |q, k| q.iter().zip(k).map(|(q, k)| q * k.to_f32()).sum(),
                    |o, w, v| o.iter_mut().zip(v).for_each(|(o, v)| *o += w * v.to_f32()),
                ),
            }
        });
}

/// One head of one token: its query and where its KV head's values start in a cache row.
#[derive(Clone, Copy)]
struct Head<'a> {
    q: &'a [f32],
    kv: usize,
    scale: f32,
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn head_f16c(head: Head, span: Span, cache: &KvCache, scores: &mut Vec<f32>, o: &mut [f32]) {
    use super::x86::halves;
    attend_head(
        head,
        span,
        cache,
        scores,
        o,
        |q, k| unsafe { halves::dot(q, k) },
        |o, w, v| unsafe { halves::add_scaled(o, w, v) },
    )
}

/// Scores of `head` against the span's cached keys, softmax, and the weighted sum of the
/// cached values into `o`, with `dot` and `add_scaled` reading the halves.
#[inline(always)]
fn attend_head(
    head: Head,
    span: Span,
    cache: &KvCache,
    scores: &mut Vec<f32>,
    o: &mut [f32],
    dot: impl Fn(&[f32], &[f16]) -> f32,
    add_scaled: impl Fn(&mut [f32], f32, &[f16]),
) {
    let hd = head.q.len();
    let start = |at: usize| (at - span.from) * span.width + head.kv;
    scores.clear();
    let mut max = f32::NEG_INFINITY;
    for at in span.start..=span.end {
        let score = dot(head.q, &cache.k[start(at)..start(at) + hd]) * head.scale;
        max = max.max(score);
        scores.push(score);
    }
    let mut sum = 0.0f32;
    for sc in scores.iter_mut() {
        *sc = (*sc - max).exp();
        sum += *sc;
    }
    o.fill(0.0);
    let inv = 1.0 / sum;
    for (at, &w) in (span.start..=span.end).zip(scores.iter()) {
        add_scaled(o, w * inv, &cache.v[start(at)..start(at) + hd]);
    }
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
    let ((ac, a_rest), (bc, b_rest)) = (a.as_chunks::<8>(), b.as_chunks::<8>());
    let tail: f32 = a_rest.iter().zip(b_rest).map(|(x, y)| x * y).sum();
    for (x, y) in ac.iter().zip(bc) {
        for k in 0..8 {
            acc[k] += x[k] * y[k];
        }
    }
    acc.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Small pseudo-random values in -1..1, the same on every run.
    fn values(n: usize, seed: u64) -> Vec<f32> {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 2001) as f32 / 1000.0 - 1.0
            })
            .collect()
    }

    /// Attention of the token at `pos` in f64, from the cache's halves.
    fn reference(s: AttentionShape, q: &[f32], cache: &KvCache, pos: usize) -> Vec<f32> {
        let (hd, group) = (s.head_dim, s.heads / s.kv_heads);
        let start = s.window.map_or(0, |w| (pos + 1).saturating_sub(w));
        let mut out = vec![0.0f32; s.heads * hd];
        for h in 0..s.heads {
            let kv = (h / group) * hd;
            let at =
                |c: &[f16], p: usize, i: usize| f64::from(c[p * cache.width + kv + i].to_f32());
            let scores: Vec<f64> = (start..=pos)
                .map(|p| {
                    (0..hd)
                        .map(|i| f64::from(q[h * hd + i]) * at(&cache.k, p, i))
                        .sum::<f64>()
                        * f64::from(s.scale)
                })
                .collect();
            let max = scores.iter().cloned().fold(f64::MIN, f64::max);
            let weights: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
            let sum: f64 = weights.iter().sum();
            for i in 0..hd {
                let v: f64 = (start..=pos)
                    .zip(&weights)
                    .map(|(p, w)| w * at(&cache.v, p, i))
                    .sum();
                out[h * hd + i] = (v / sum) as f32;
            }
        }
        out
    }

    /// Decode's attention (one token, its heads read straight from the halves: F16C where the
    /// CPU has it, else the portable path for rows that are not a multiple of 8) and a batch's
    /// (the cache widened once) agree with the f64 reference, with and without a window.
    #[test]
    fn one_token_and_a_batch_attend_as_the_reference_does() {
        for (head_dim, window) in [(64, None), (64, Some(7)), (12, None), (12, Some(5))] {
            let s = AttentionShape {
                heads: 6,
                kv_heads: 2,
                head_dim,
                scale: 1.0 / (head_dim as f32).sqrt(),
                window,
            };
            let (positions, width) = (40, s.kv_heads * head_dim);
            let mut cache = KvCache::new(positions, width);
            let kv = values(positions * width * 2, head_dim as u64);
            cache.store(0, &kv[..positions * width], &kv[positions * width..]);
            let row = s.heads * head_dim;
            let q = values(2 * row, 7);
            let mut scratch = AttentionScratch::default();
            let close = |got: &[f32], want: &[f32], what: &str| {
                for (i, (g, w)) in got.iter().zip(want).enumerate() {
                    assert!(
                        (g - w).abs() < 1e-4,
                        "{what} {head_dim} {window:?} [{i}]: {g} against {w}"
                    );
                }
            };
            let mut one = vec![0.0; row];
            attention(s, &q[..row], &cache, 30, 1, &mut scratch, &mut one);
            close(&one, &reference(s, &q[..row], &cache, 30), "one token");
            let mut two = vec![0.0; 2 * row];
            attention(s, &q, &cache, 30, 2, &mut scratch, &mut two);
            close(&two[row..], &reference(s, &q[row..], &cache, 31), "a batch");
        }
    }
}
