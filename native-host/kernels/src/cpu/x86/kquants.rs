//! The k-quants (Q4_K, Q5_K, Q6_K) times [`Q8K`] activation blocks of 256.
//!
//! A super-block's quants are unpacked 32 at a time into unsigned bytes, multiplied with the
//! activations by `vpmaddubsw` into 16-bit pair sums (which cannot overflow: at most
//! 2 × 63 × 127), and those multiplied by their sub-block's scale into 32 bits (`vpmaddwd`, or
//! `vpdpwssd` with VNNI). What is subtracted — Q4_K/Q5_K's minimums, Q6_K's offset of 32 — only
//! needs each 16 activations' sum, which [`Q8K`] carries: one multiply-add a super-block instead
//! of one a sub-block.

use std::arch::x86_64::*;

use super::{halves_at, hsum, hsum128, load16, load32, Simd};
use crate::cpu::acts::Q8K;

/// The 12 bytes at `p` of Q4_K/Q5_K's eight 6-bit scales and eight 6-bit minimums, as sixteen
/// 16-bit lanes: scales 0..8, then minimums 0..8. (ggml's `utmp` shuffle: the low six bits of
/// bytes 0..8 are scales 0..4 and minimums 0..4; bytes 8..12 hold the others' low four bits,
/// and the top two bits of bytes 0..8 their high two.)
#[inline(always)]
unsafe fn scales_mins(p: *const u8) -> __m256i {
    const LOW6: u32 = 0x3f3f_3f3f;
    const LOW4: u32 = 0x0f0f_0f0f;
    const LOW2: u32 = 0x0303_0303;
    let word = |i: usize| p.add(4 * i).cast::<u32>().read_unaligned();
    let (a, b, c) = (word(0), word(1), word(2));
    let scales_lo = a & LOW6;
    let scales_hi = (c & LOW4) | (((a >> 6) & LOW2) << 4);
    let mins_lo = b & LOW6;
    let mins_hi = ((c >> 4) & LOW4) | (((b >> 6) & LOW2) << 4);
    _mm256_cvtepu8_epi16(_mm_set_epi32(
        mins_hi as i32,
        mins_lo as i32,
        scales_hi as i32,
        scales_lo as i32,
    ))
}

/// The 16-bit lane `j` of both halves of `v` in every lane.
#[inline(always)]
unsafe fn broadcast_lane16(v: __m256i, j: usize) -> __m256i {
    let byte = (2 * j) as i16;
    _mm256_shuffle_epi8(v, _mm256_set1_epi16(byte | ((byte + 1) << 8)))
}

/// Q4_K's and Q5_K's quants of a super-block, 64 at a time: sub-blocks `2j` and `2j + 1`.
trait KQuants {
    const BYTES: usize;
    /// Sub-blocks `2j` and `2j + 1` of the super-block at `b`, as unsigned bytes; `high` is
    /// what the format keeps beside them (Q5_K's fifth bits), from [`Self::high`].
    unsafe fn pair(b: *const u8, high: &mut __m256i, j: usize) -> (__m256i, __m256i);
    unsafe fn high(b: *const u8) -> __m256i;
}

struct Q4K;
impl KQuants for Q4K {
    const BYTES: usize = 144;
    #[inline(always)]
    unsafe fn high(_: *const u8) -> __m256i {
        _mm256_setzero_si256()
    }
    #[inline(always)]
    unsafe fn pair(b: *const u8, _: &mut __m256i, j: usize) -> (__m256i, __m256i) {
        let q = load32(b.add(16 + 32 * j));
        let low = _mm256_set1_epi8(0x0f);
        (
            _mm256_and_si256(q, low),
            _mm256_and_si256(_mm256_srli_epi16::<4>(q), low),
        )
    }
}

struct Q5K;
impl KQuants for Q5K {
    const BYTES: usize = 176;
    #[inline(always)]
    unsafe fn high(b: *const u8) -> __m256i {
        load32(b.add(16))
    }
    /// Sub-block `2j`'s fifth bits are bit `2j` of the 32 bytes at 16, `2j + 1`'s the next:
    /// `high` is shifted down two bits a pair, so they are always bits 0 and 1 (a 16-bit shift
    /// moves the next byte's bits in only above them).
    #[inline(always)]
    unsafe fn pair(b: *const u8, high: &mut __m256i, j: usize) -> (__m256i, __m256i) {
        let q = load32(b.add(48 + 32 * j));
        let (low, bit4) = (_mm256_set1_epi8(0x0f), _mm256_set1_epi8(0x10));
        let h = *high;
        *high = _mm256_srli_epi16::<2>(h);
        let lo = _mm256_or_si256(
            _mm256_and_si256(q, low),
            _mm256_and_si256(_mm256_slli_epi16::<4>(h), bit4),
        );
        let hi = _mm256_or_si256(
            _mm256_and_si256(_mm256_srli_epi16::<4>(q), low),
            _mm256_and_si256(_mm256_slli_epi16::<3>(h), bit4),
        );
        (lo, hi)
    }
}

/// Each token's 32-bit sums, in two chains where there is one token (the multiply-adds a
/// super-block are dependent, and their latency would otherwise show in decode).
#[inline(always)]
fn chain<const T: usize>(c: usize) -> usize {
    if T == 1 {
        c
    } else {
        0
    }
}

/// Q4_K or Q5_K rows times Q8_K activations.
#[inline(always)]
unsafe fn k_dot<S: Simd, K: KQuants, const T: usize>(
    w: &[u8],
    acts: [&[Q8K]; T],
    out: &mut [f32; T],
) {
    let blocks = w.len() / K::BYTES;
    for a in &acts {
        assert!(
            a.len() >= blocks,
            "fewer activation blocks than the row has"
        );
    }
    let acts = acts.map(|a| a.as_ptr());
    let mut acc = [_mm256_setzero_ps(); T];
    let mut acc_min = [_mm_setzero_ps(); T];
    for i in 0..blocks {
        let b = w.as_ptr().add(i * K::BYTES);
        let dd = halves_at(b);
        let (d, dmin) = (
            _mm256_broadcastss_ps(dd),
            _mm_permute_ps::<0b01_01_01_01>(dd),
        );
        let sm = scales_mins(b.add(4));
        let scales = _mm256_permute2x128_si256::<0x00>(sm, sm);
        let mins = _mm256_extracti128_si256::<1>(sm);
        let mut high = K::high(b);
        let mut sum = [[_mm256_setzero_si256(); T]; 2];
        for j in 0..4 {
            let (lo, hi) = K::pair(b, &mut high, j);
            let (sc_lo, sc_hi) = (
                broadcast_lane16(scales, 2 * j),
                broadcast_lane16(scales, 2 * j + 1),
            );
            for t in 0..T {
                let y = (*acts[t].add(i)).q.as_ptr().add(64 * j).cast::<u8>();
                let (p_lo, p_hi) = (
                    _mm256_maddubs_epi16(lo, load32(y)),
                    _mm256_maddubs_epi16(hi, load32(y.add(32))),
                );
                let s = &mut sum[chain::<T>(0)][t];
                *s = S::madd_add(*s, sc_lo, p_lo);
                let s = &mut sum[chain::<T>(1)][t];
                *s = S::madd_add(*s, sc_hi, p_hi);
            }
        }
        for t in 0..T {
            let a = &*acts[t].add(i);
            // Each 32's minimum times its activations' sum (two sums of 16).
            let bsums = load32(a.bsums.as_ptr().cast());
            let pairs = _mm_hadd_epi16(
                _mm256_castsi256_si128(bsums),
                _mm256_extracti128_si256::<1>(bsums),
            );
            let m = _mm_cvtepi32_ps(_mm_madd_epi16(mins, pairs));
            acc_min[t] = _mm_fmadd_ps(m, _mm_mul_ps(dmin, _mm_broadcast_ss(&a.d)), acc_min[t]);
            let s = _mm256_cvtepi32_ps(_mm256_add_epi32(sum[0][t], sum[1][t]));
            acc[t] = _mm256_fmadd_ps(s, _mm256_mul_ps(d, _mm256_broadcast_ss(&a.d)), acc[t]);
        }
    }
    for t in 0..T {
        out[t] = hsum(acc[t]) - hsum128(acc_min[t]);
    }
}

/// Q4_K rows (super-blocks of 144 bytes) times Q8_K activations.
///
/// # Safety
/// The CPU has AVX2, FMA, F16C and `S`'s features.
#[inline(always)]
pub unsafe fn q4_k<S: Simd, const T: usize>(w: &[u8], acts: [&[Q8K]; T], out: &mut [f32; T]) {
    k_dot::<S, Q4K, T>(w, acts, out)
}

/// Q5_K rows (176 bytes a super-block) times Q8_K activations.
///
/// # Safety
/// The CPU has AVX2, FMA, F16C and `S`'s features.
#[inline(always)]
pub unsafe fn q5_k<S: Simd, const T: usize>(w: &[u8], acts: [&[Q8K]; T], out: &mut [f32; T]) {
    k_dot::<S, Q5K, T>(w, acts, out)
}

/// Q6_K rows (210 bytes a super-block: ql, qh, sixteen i8 scales, d) times Q8_K activations.
///
/// The quants (0..64 unsigned, 32 above their value) are four bits of `ql` and two of `qh`;
/// `Σ scale × (q - 32) × y` is `Σ scale × q × y - 32 × Σ scale × (each 16's Σ y)`.
///
/// # Safety
/// The CPU has AVX2, FMA, F16C and `S`'s features.
#[inline(always)]
pub unsafe fn q6_k<S: Simd, const T: usize>(w: &[u8], acts: [&[Q8K]; T], out: &mut [f32; T]) {
    const BYTES: usize = 210;
    let blocks = w.len() / BYTES;
    for a in &acts {
        assert!(
            a.len() >= blocks,
            "fewer activation blocks than the row has"
        );
    }
    let acts = acts.map(|a| a.as_ptr());
    let mut acc = [_mm256_setzero_ps(); T];
    let (low, bits2) = (_mm256_set1_epi8(0x0f), _mm256_set1_epi8(0x03));
    for i in 0..blocks {
        let b = w.as_ptr().add(i * BYTES);
        // d is the last of the four halves at 202 (the block's end).
        let d = _mm256_broadcastss_ps(_mm_permute_ps::<0b11_11_11_11>(halves_at(b.add(202))));
        let sc8 = load16(b.add(192));
        let mut sum = [[_mm256_setzero_si256(); T]; 2];
        for t in 0..T {
            let bsums = load32((*acts[t].add(i)).bsums.as_ptr().cast());
            let offset = _mm256_madd_epi16(_mm256_cvtepi8_epi16(sc8), bsums);
            sum[0][t] = _mm256_sub_epi32(sum[0][t], _mm256_slli_epi32::<5>(offset));
        }
        for half in 0..2 {
            let ql0 = load32(b.add(64 * half));
            let ql1 = load32(b.add(64 * half + 32));
            let qh = load32(b.add(128 + 32 * half));
            // Elements 32k..32k+32 of this half: k = 0, 1 the low nibbles, 2, 3 the high; qh's
            // bit pairs 0..4 in order, moved to bits 4 and 5 (16-bit shifts of masked bytes
            // stay in their byte).
            let q = [
                _mm256_or_si256(
                    _mm256_and_si256(ql0, low),
                    _mm256_slli_epi16::<4>(_mm256_and_si256(qh, bits2)),
                ),
                _mm256_or_si256(
                    _mm256_and_si256(ql1, low),
                    _mm256_slli_epi16::<2>(_mm256_and_si256(qh, _mm256_slli_epi16::<2>(bits2))),
                ),
                _mm256_or_si256(
                    _mm256_and_si256(_mm256_srli_epi16::<4>(ql0), low),
                    _mm256_and_si256(qh, _mm256_slli_epi16::<4>(bits2)),
                ),
                _mm256_or_si256(
                    _mm256_and_si256(_mm256_srli_epi16::<4>(ql1), low),
                    _mm256_srli_epi16::<2>(_mm256_and_si256(qh, _mm256_slli_epi16::<6>(bits2))),
                ),
            ];
            for (k, q) in q.into_iter().enumerate() {
                // Scales 2g and 2g + 1 for the two 16s of this 32 (g its index in the block).
                let g = 4 * half + k;
                let pick = _mm_set_epi64x(
                    i64::from_ne_bytes([2 * g as u8 + 1; 8]),
                    i64::from_ne_bytes([2 * g as u8; 8]),
                );
                let scale = _mm256_cvtepi8_epi16(_mm_shuffle_epi8(sc8, pick));
                for t in 0..T {
                    let y = (*acts[t].add(i)).q.as_ptr().add(32 * g).cast::<u8>();
                    let p = _mm256_maddubs_epi16(q, load32(y));
                    let s = &mut sum[chain::<T>(k & 1)][t];
                    *s = S::madd_add(*s, scale, p);
                }
            }
        }
        for t in 0..T {
            let a = &*acts[t].add(i);
            let s = _mm256_cvtepi32_ps(_mm256_add_epi32(sum[0][t], sum[1][t]));
            acc[t] = _mm256_fmadd_ps(s, _mm256_mul_ps(d, _mm256_broadcast_ss(&a.d)), acc[t]);
        }
    }
    for t in 0..T {
        out[t] = hsum(acc[t]);
    }
}
