//! The 32-element formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0) times [`Q8`] activation blocks.
//!
//! A weight block becomes one register of 32 bytes, multiplied with the activations' 32 by
//! `vpmaddubsw` or `vpdpbusd`, whose first operand is unsigned. Formats with a minimum (Q4_1,
//! Q5_1) have unsigned quants, and the minimum times the activations' scaled sum `s` is added.
//! The others have signed quants, two ways:
//!
//! - decode ([`dot`]) uses ggml's sign trick: their magnitudes times the activations carrying
//!   the quants' signs (`vpsignb`), the same products;
//! - prefill ([`dot_tokens`]) takes them unsigned, offset by 8, 16 or 128 as they are stored
//!   (Q8_0's flipped top bit), and subtracts the offset times the activations' sum, as if it
//!   were a minimum: one instruction less for each token than the sign trick, and a weight
//!   block's minimum times a group of tokens' sums is one instruction for the group. (Not
//!   Q8_0 without VNNI: `vpmaddubsw`'s pairs of products up to 255 × 127 would saturate.)

use std::arch::x86_64::*;

use super::{halves_at, hsum, load32, nibbles, Simd};
use crate::cpu::acts::{ScalesAt, Q8};

/// One 32-element weight format's block, as a register of bytes.
pub trait Block {
    const BYTES: usize;
    /// Whether the quants are signed (no minimum), else unsigned with a minimum.
    const SIGNED: bool;
    /// What [`Self::unsigned`] adds to a signed format's quants.
    const OFFSET: f32;

    /// The block at `b`: its scale in lane 0, its minimum in lane 1 if it has one (the other
    /// lanes are whatever follows in the block), and its 32 quants.
    ///
    /// # Safety
    /// The CPU has AVX2, F16C and `S`'s features; `b` points at [`Self::BYTES`] readable bytes.
    unsafe fn unpack<S: Simd>(b: *const u8) -> (__m128, __m256i);

    /// The block's quants as unsigned bytes: a signed format's plus [`Self::OFFSET`].
    ///
    /// # Safety
    /// As [`Self::unpack`]'s.
    unsafe fn unsigned<S: Simd>(b: *const u8) -> __m256i;
}

pub struct Q4_0;
impl Block for Q4_0 {
    const BYTES: usize = 18;
    const SIGNED: bool = true;
    const OFFSET: f32 = 8.0;
    #[inline(always)]
    unsafe fn unpack<S: Simd>(b: *const u8) -> (__m128, __m256i) {
        let q = _mm256_sub_epi8(nibbles(b.add(2)), _mm256_set1_epi8(8));
        (halves_at(b), q)
    }
    #[inline(always)]
    unsafe fn unsigned<S: Simd>(b: *const u8) -> __m256i {
        nibbles(b.add(2))
    }
}

pub struct Q4_1;
impl Block for Q4_1 {
    const BYTES: usize = 20;
    const SIGNED: bool = false;
    const OFFSET: f32 = 0.0;
    #[inline(always)]
    unsafe fn unpack<S: Simd>(b: *const u8) -> (__m128, __m256i) {
        (halves_at(b), Self::unsigned::<S>(b))
    }
    #[inline(always)]
    unsafe fn unsigned<S: Simd>(b: *const u8) -> __m256i {
        nibbles(b.add(4))
    }
}

/// The fifth bits of Q5_0/Q5_1 (bit j of the 32-bit word for element j).
#[inline(always)]
unsafe fn fifth_bits<S: Simd>(qh: *const u8) -> __m256i {
    S::bit_bytes(qh.cast::<u32>().read_unaligned())
}

pub struct Q5_0;
impl Block for Q5_0 {
    const BYTES: usize = 22;
    const SIGNED: bool = true;
    const OFFSET: f32 = 16.0;
    #[inline(always)]
    unsafe fn unpack<S: Simd>(b: *const u8) -> (__m128, __m256i) {
        // The quant is nibble + 16 × bit - 16: nibble | 0xf0 (as a signed byte, nibble - 16)
        // where the bit is clear, the nibble where it is set.
        let high = _mm256_andnot_si256(fifth_bits::<S>(b.add(2)), _mm256_set1_epi8(0xf0u8 as i8));
        (halves_at(b), _mm256_or_si256(nibbles(b.add(6)), high))
    }
    #[inline(always)]
    unsafe fn unsigned<S: Simd>(b: *const u8) -> __m256i {
        let high = _mm256_and_si256(fifth_bits::<S>(b.add(2)), _mm256_set1_epi8(0x10));
        _mm256_or_si256(nibbles(b.add(6)), high)
    }
}

pub struct Q5_1;
impl Block for Q5_1 {
    const BYTES: usize = 24;
    const SIGNED: bool = false;
    const OFFSET: f32 = 0.0;
    #[inline(always)]
    unsafe fn unpack<S: Simd>(b: *const u8) -> (__m128, __m256i) {
        (halves_at(b), Self::unsigned::<S>(b))
    }
    #[inline(always)]
    unsafe fn unsigned<S: Simd>(b: *const u8) -> __m256i {
        let high = _mm256_and_si256(fifth_bits::<S>(b.add(4)), _mm256_set1_epi8(0x10));
        _mm256_or_si256(nibbles(b.add(8)), high)
    }
}

pub struct Q8_0;
impl Block for Q8_0 {
    const BYTES: usize = 34;
    const SIGNED: bool = true;
    const OFFSET: f32 = 128.0;
    #[inline(always)]
    unsafe fn unpack<S: Simd>(b: *const u8) -> (__m128, __m256i) {
        (halves_at(b), load32(b.add(2)))
    }
    #[inline(always)]
    unsafe fn unsigned<S: Simd>(b: *const u8) -> __m256i {
        _mm256_xor_si256(load32(b.add(2)), _mm256_set1_epi8(0x80u8 as i8))
    }
}

/// What a run of blocks adds up for one token: scaled products in eight lanes, and in lane 1
/// of `min` the minimums times the activations' sums.
#[derive(Clone, Copy)]
struct Sums {
    v: __m256,
    min: __m128,
}

/// Block `i` of the row at `w` times block `i` of the activations at `a`, into `sums`.
#[inline(always)]
unsafe fn block<S: Simd, B: Block>(w: *const u8, a: *const Q8, i: usize, sums: &mut Sums) {
    let (dm, q) = B::unpack::<S>(w.add(i * B::BYTES));
    let a = a.add(i);
    let y = load32((*a).q.as_ptr().cast());
    let p = if B::SIGNED {
        S::dot(_mm256_sign_epi8(q, q), _mm256_sign_epi8(y, q))
    } else {
        S::dot(q, y)
    };
    // [d × a.d, m × a.s]: `Q8` starts with d and s.
    let scales = _mm_mul_ps(dm, _mm_castsi128_ps(_mm_loadl_epi64(a.cast())));
    sums.v = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_broadcastss_ps(scales), sums.v);
    if !B::SIGNED {
        sums.min = _mm_add_ps(sums.min, scales);
    }
}

/// Row `w` (blocks of `B`) times the activations `a` (at least as many blocks): decode's product.
///
/// # Safety
/// The CPU has AVX2, FMA, F16C and `S`'s features.
#[inline(always)]
pub unsafe fn dot<S: Simd, B: Block>(w: &[u8], a: &[Q8]) -> f32 {
    let blocks = w.len() / B::BYTES;
    assert!(
        a.len() >= blocks,
        "fewer activation blocks than the row has"
    );
    let (w, a) = (w.as_ptr(), a.as_ptr());
    // The sum is a chain of dependent multiply-adds, one a block: two chains (even and odd
    // blocks) let the adds' latency overlap.
    let mut even = Sums {
        v: _mm256_setzero_ps(),
        min: _mm_setzero_ps(),
    };
    let mut odd = Sums { ..even };
    let mut i = 0;
    while i + 2 <= blocks {
        block::<S, B>(w, a, i, &mut even);
        block::<S, B>(w, a, i + 1, &mut odd);
        i += 2;
    }
    if i < blocks {
        block::<S, B>(w, a, i, &mut even);
    }
    let min = _mm_add_ps(even.min, odd.min);
    hsum(_mm256_add_ps(even.v, odd.v)) + _mm_cvtss_f32(_mm_movehdup_ps(min))
}

/// `T` (up to 8) consecutive floats from `p`, in the low lanes.
#[inline(always)]
unsafe fn load_tokens<const T: usize>(p: *const f32) -> __m256 {
    match T {
        8 => _mm256_loadu_ps(p),
        4 => _mm256_castps128_ps256(_mm_loadu_ps(p)),
        _ => {
            let mut v = [0.0f32; 8];
            v[..T].copy_from_slice(std::slice::from_raw_parts(p, T));
            _mm256_loadu_ps(v.as_ptr())
        }
    }
}

/// Blocks whose scales [`dot_tokens`] works out before it multiplies their quants.
const CHUNK: usize = 32;

/// Row `w` (blocks of `B`) times each of `acts`, consecutive tokens whose scales `scales` also
/// holds, into `out`: prefill's product, each weight block unpacked once for the `T` (up to 8)
/// tokens.
///
/// The scales come first, a chunk of blocks at a time: each block's scale times the group's
/// (one multiply), kept in memory so that each token's is a broadcast load folded into its
/// multiply-add rather than a shuffle, and the minimum or offset times the group's sums (one
/// multiply-add). What is left for each token and block is the integer dot product, its
/// conversion and one multiply-add.
///
/// # Safety
/// The CPU has AVX2, FMA, F16C and `S`'s features.
#[inline(always)]
pub unsafe fn dot_tokens<S: Simd, B: Block, const T: usize>(
    w: &[u8],
    acts: [&[Q8]; T],
    scales: ScalesAt<'_>,
    out: &mut [f32; T],
) {
    const { assert!(T <= 8) };
    let sign_trick = B::SIGNED && S::PAIRS_IN_16_BITS && B::OFFSET > 64.0;
    let blocks = w.len() / B::BYTES;
    for a in &acts {
        assert!(
            a.len() >= blocks,
            "fewer activation blocks than the row has"
        );
    }
    if blocks > 0 {
        let last = (blocks - 1) * scales.stride + T;
        assert!(scales.d.len() >= last && scales.s.len() >= last && scales.sum.len() >= last);
    }
    let acts = acts.map(|a| a.as_ptr());
    let w = w.as_ptr();
    let mut sums = [_mm256_setzero_ps(); T];
    // Lane t: the minimums (or offsets) times token t's sums.
    let mut mins = _mm256_setzero_ps();
    // Row j: block j of the chunk's scale times each token's.
    let mut scale = [[0.0f32; 8]; CHUNK];
    for c0 in (0..blocks).step_by(CHUNK) {
        let c1 = (c0 + CHUNK).min(blocks);
        for (i, scale) in (c0..c1).zip(&mut scale) {
            let dm = halves_at(w.add(i * B::BYTES));
            let d = _mm256_broadcastss_ps(dm);
            let at = i * scales.stride;
            let s = _mm256_mul_ps(d, load_tokens::<T>(scales.d.as_ptr().add(at)));
            _mm256_storeu_ps(scale.as_mut_ptr(), s);
            if sign_trick {
                continue;
            }
            let (m, sum) = if B::SIGNED {
                (
                    _mm256_mul_ps(d, _mm256_set1_ps(-B::OFFSET)),
                    scales.sum.as_ptr(),
                )
            } else {
                (
                    _mm256_broadcastss_ps(_mm_movehdup_ps(dm)),
                    scales.s.as_ptr(),
                )
            };
            mins = _mm256_fmadd_ps(m, load_tokens::<T>(sum.add(at)), mins);
        }
        for (i, scale) in (c0..c1).zip(&scale) {
            let (u, q) = if sign_trick {
                let q = B::unpack::<S>(w.add(i * B::BYTES)).1;
                (_mm256_sign_epi8(q, q), q)
            } else {
                (
                    B::unsigned::<S>(w.add(i * B::BYTES)),
                    _mm256_setzero_si256(),
                )
            };
            for ((sum, a), &scale) in sums.iter_mut().zip(&acts).zip(scale) {
                let y = load32((*a.add(i)).q.as_ptr().cast());
                let y = if sign_trick {
                    _mm256_sign_epi8(y, q)
                } else {
                    y
                };
                let p = _mm256_cvtepi32_ps(S::dot(u, y));
                *sum = _mm256_fmadd_ps(p, _mm256_set1_ps(scale), *sum);
            }
        }
    }
    let mut min = [0.0f32; 8];
    _mm256_storeu_ps(min.as_mut_ptr(), mins);
    for ((out, sum), min) in out.iter_mut().zip(sums).zip(min) {
        *out = hsum(sum) + min;
    }
}
