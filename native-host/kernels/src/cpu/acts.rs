//! Activations quantised per block, as llama.cpp quantises them before its integer dot products:
//! 32 values to 8 bits with one scale (ggml's Q8_0, with Q8_1's scaled sum beside it) for the
//! 32-element weight formats, and 256 values with one scale and the sums of each 16 (ggml's Q8_K)
//! for the k-quants. A product of a quantised weight row with such a row is then integer
//! multiply-adds and one float multiply per block, which is what makes the CPU path fast; the
//! rounding is the same as llama.cpp's, so its logits and ours differ by no more than its own do
//! from an exact pass.

use half::f16;

#[cfg(target_arch = "x86_64")]
use super::{isa::Isa, x86};

/// 32 activations: `d × q[i]` approximates value i; `s` is `d × Σq` (what a weight format with a
/// minimum needs: its minimum times the block's sum). `x86::legacy` loads `d` and `s` together,
/// so they stay first and in this order.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct Q8 {
    pub d: f32,
    pub s: f32,
    pub q: [i8; 32],
}

/// The scales of several token rows of [`Q8`] blocks again, block by block: `d[i × tokens + t]`
/// and `s[i × tokens + t]` are token t's block i's, and `sum` its `d × Σq` before `s`'s
/// rounding to a half. Prefill's kernels multiply a weight block's scale by a group of
/// consecutive tokens' scales at once, one load and one multiply instead of one each per token.
#[derive(Debug, Default)]
pub struct Q8Scales {
    d: Vec<f32>,
    s: Vec<f32>,
    sum: Vec<f32>,
    tokens: usize,
}

/// Tokens `t0..`'s part of [`Q8Scales`]: block i's scales at `d[i × stride..]` (and so on).
#[derive(Debug, Clone, Copy)]
pub struct ScalesAt<'a> {
    pub d: &'a [f32],
    pub s: &'a [f32],
    pub sum: &'a [f32],
    pub stride: usize,
}

impl Q8Scales {
    /// The scales of `q8`, `tokens` rows of blocks.
    pub fn fill(&mut self, q8: &[Q8], tokens: usize) {
        let per_token = q8.len() / tokens.max(1);
        self.tokens = tokens;
        self.d.clear();
        self.s.clear();
        self.sum.clear();
        for i in 0..per_token {
            for t in 0..tokens {
                let b = &q8[t * per_token + i];
                self.d.push(b.d);
                self.s.push(b.s);
                let sum: i32 = b.q.iter().map(|&q| i32::from(q)).sum();
                self.sum.push(b.d * sum as f32);
            }
        }
    }

    pub fn at(&self, t0: usize) -> ScalesAt<'_> {
        fn from(v: &[f32], t0: usize) -> &[f32] {
            &v[t0.min(v.len())..]
        }
        ScalesAt {
            d: from(&self.d, t0),
            s: from(&self.s, t0),
            sum: from(&self.sum, t0),
            stride: self.tokens,
        }
    }
}

/// 256 activations with one scale, and the sums of each 16 quants (what the k-quants' minimums
/// and Q6_K's offset of 32 multiply).
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct Q8K {
    pub d: f32,
    pub q: [i8; 256],
    pub bsums: [i16; 16],
}

/// The whole number nearest `x`, half to even, as ggml's `nearest_int` rounds: adding 1.5 × 2²³
/// leaves no bits below the units, so the float unit's rounding (half to even) does it, and
/// taking it off again is exact. Right for |x| < 2²², which a quantised value (within ±127.5)
/// always is; `round_ties_even` would be a call to `rintf` where SSE4.1 is not enabled.
#[inline(always)]
fn nearest(x: f32) -> i32 {
    const MAGIC: f32 = 12_582_912.0;
    ((x + MAGIC) - MAGIC) as i32
}

/// Rounded through an IEEE half, as ggml stores Q8_0/Q8_1 scales.
#[inline(always)]
fn as_half(x: f32) -> f32 {
    f16::from_f32(x).to_f32()
}

/// Whether the vectorised quantisation (`x86::quantize`) runs: where the products use AVX2.
#[cfg(target_arch = "x86_64")]
#[inline]
fn vectorised() -> bool {
    matches!(Isa::chosen(), Isa::Avx2 | Isa::Avx512)
}

/// Quantises `x` (a whole number of 32-value blocks) into `out`, replacing its contents.
pub fn quantize_q8(x: &[f32], out: &mut Vec<Q8>) {
    debug_assert!(x.len().is_multiple_of(32));
    out.clear();
    #[cfg(target_arch = "x86_64")]
    if vectorised() {
        // SAFETY: `Isa::chosen` picks AVX2 or AVX-512 only where the CPU has AVX2 and F16C.
        unsafe { quantize_q8_avx2(x, out) };
        return;
    }
    quantize_q8_scalar(x, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn quantize_q8_avx2(x: &[f32], out: &mut Vec<Q8>) {
    out.extend(x.as_chunks::<32>().0.iter().map(|b| {
        // SAFETY: this function's features are the CPU's (its caller's promise).
        unsafe { x86::quantize::q8_block(b) }
    }));
}

/// The plain code, which [`x86::quantize`] matches number for number.
fn quantize_q8_scalar(x: &[f32], out: &mut Vec<Q8>) {
    out.extend(x.as_chunks::<32>().0.iter().map(|b| {
        let amax = b.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        let d = amax / 127.0;
        let id = if d != 0.0 { 1.0 / d } else { 0.0 };
        let mut q = [0i8; 32];
        let mut sum = 0i32;
        for (q, &v) in q.iter_mut().zip(b) {
            let n = nearest(v * id);
            *q = n as i8;
            sum += n;
        }
        Q8 {
            d: as_half(d),
            s: as_half(d * sum as f32),
            q,
        }
    }));
}

/// Quantises `x` (a whole number of 256-value blocks) into `out`, replacing its contents.
pub fn quantize_q8k(x: &[f32], out: &mut Vec<Q8K>) {
    debug_assert!(x.len().is_multiple_of(256));
    out.clear();
    #[cfg(target_arch = "x86_64")]
    if vectorised() {
        // SAFETY: `Isa::chosen` picks AVX2 or AVX-512 only where the CPU has AVX2.
        unsafe { quantize_q8k_avx2(x, out) };
        return;
    }
    quantize_q8k_scalar(x, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn quantize_q8k_avx2(x: &[f32], out: &mut Vec<Q8K>) {
    out.extend(x.as_chunks::<256>().0.iter().map(|b| {
        // SAFETY: this function's features are the CPU's (its caller's promise).
        unsafe { x86::quantize::q8k_block(b) }
    }));
}

/// The plain code, which [`x86::quantize`] matches number for number.
fn quantize_q8k_scalar(x: &[f32], out: &mut Vec<Q8K>) {
    out.extend(x.as_chunks::<256>().0.iter().map(|b| {
        // ggml keeps the sign of the largest magnitude, so it maps to exactly ∓127.
        let (mut amax, mut max) = (0.0f32, 0.0f32);
        for &v in b {
            if v.abs() > amax {
                amax = v.abs();
                max = v;
            }
        }
        let mut block = Q8K {
            d: 0.0,
            q: [0; 256],
            bsums: [0; 16],
        };
        if amax == 0.0 {
            return block;
        }
        let iscale = -127.0 / max;
        for (q, &v) in block.q.iter_mut().zip(b) {
            *q = nearest(iscale * v).min(127) as i8;
        }
        for (sum, q) in block
            .bsums
            .iter_mut()
            .zip(block.q.as_chunks::<16>().0.iter())
        {
            *sum = q.iter().map(|&q| i16::from(q)).sum();
        }
        block.d = 1.0 / iscale;
        block
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_give_back_their_values_within_half_a_step() {
        let x: Vec<f32> = (0..512)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) * 0.173)
            .collect();
        let mut q8 = Vec::new();
        quantize_q8(&x, &mut q8);
        for (b, xs) in q8.iter().zip(x.as_chunks::<32>().0) {
            let sum: i32 = b.q.iter().map(|&q| i32::from(q)).sum();
            assert!((b.s - b.d * sum as f32).abs() <= 1e-3 * b.s.abs().max(1.0));
            for (&q, &v) in b.q.iter().zip(xs) {
                assert!((f32::from(q) * b.d - v).abs() <= 0.51 * b.d + 1e-3 * v.abs());
            }
        }
        let mut k = Vec::new();
        quantize_q8k(&x, &mut k);
        for (b, xs) in k.iter().zip(x.as_chunks::<256>().0) {
            for (&q, &v) in b.q.iter().zip(xs) {
                assert!((f32::from(q) * b.d - v).abs() <= 0.51 * b.d.abs());
            }
            for (i, s) in b.bsums.iter().enumerate() {
                let want: i16 = b.q[16 * i..16 * i + 16].iter().map(|&q| i16::from(q)).sum();
                assert_eq!(*s, want);
            }
        }
        // A block of zeros has a zero scale, not a NaN.
        quantize_q8(&[0.0; 32], &mut q8);
        assert_eq!((q8[0].d, q8[0].q), (0.0, [0; 32]));
        quantize_q8k(&[0.0; 256], &mut k);
        assert_eq!(k[0].d, 0.0);
    }

    #[test]
    fn nearest_rounds_half_to_even() {
        for i in -300_000..=300_000 {
            let x = i as f32 / 1024.0;
            assert_eq!(nearest(x), x.round_ties_even() as i32, "{x}");
        }
        for x in [
            0.5f32, 1.5, 2.5, -0.5, -1.5, -2.5, 126.5, -127.5, 0.49999997,
        ] {
            assert_eq!(nearest(x), x.round_ties_even() as i32, "{x}");
        }
    }

    /// The vectorised quantisation gives the scalar code's numbers, bit for bit: on random
    /// values of many sizes, on halves (which round to even), with the largest magnitude
    /// negative, positive or both, and on zeros.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn vectorised_quantisation_matches_the_scalar_code() {
        use rand::{Rng, SeedableRng};
        if !Isa::Avx2.available() {
            return;
        }
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let mut blocks: Vec<Vec<f32>> = Vec::new();
        for scale in [1e-6f32, 0.01, 1.0, 3.0, 1e4] {
            blocks.push(
                (0..256)
                    .map(|_| rng.random_range(-1.0f32..1.0) * scale)
                    .collect(),
            );
        }
        // Values whose quants are exact halves: amax 127 makes the scale 1.
        let mut halves: Vec<f32> = (0..256).map(|i| (i % 254) as f32 / 2.0 - 63.0).collect();
        for b in 0..8 {
            halves[32 * b + 3] = 127.0;
            halves[32 * b + 20] = -127.0;
        }
        blocks.push(halves.iter().map(|v| -v).collect());
        blocks.push(halves);
        let mut lone = vec![0.0f32; 256];
        lone[77] = -2.5;
        lone[78] = 2.5;
        blocks.push(lone);
        blocks.push(vec![0.0; 256]);
        for x in &blocks {
            let (mut fast, mut plain) = (Vec::new(), Vec::new());
            // SAFETY: the CPU has AVX2 (checked above) and F16C with it.
            unsafe { quantize_q8_avx2(x, &mut fast) };
            quantize_q8_scalar(x, &mut plain);
            for (a, b) in fast.iter().zip(&plain) {
                assert_eq!(
                    (a.d.to_bits(), a.s.to_bits(), a.q),
                    (b.d.to_bits(), b.s.to_bits(), b.q)
                );
            }
            let (mut fast, mut plain) = (Vec::new(), Vec::new());
            // SAFETY: as above.
            unsafe { quantize_q8k_avx2(x, &mut fast) };
            quantize_q8k_scalar(x, &mut plain);
            let (a, b) = (&fast[0], &plain[0]);
            assert_eq!((a.d.to_bits(), a.q, a.bsums), (b.d.to_bits(), b.q, b.bsums));
        }
    }
}
