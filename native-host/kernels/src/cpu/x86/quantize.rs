//! The activations' quantisation with AVX2: the same numbers as [`crate::cpu::acts`]' scalar
//! code (the same float operations, rounded half to even by `vroundps`, as `round_ties_even`
//! does), eight values an instruction.

use std::arch::x86_64::*;

use crate::cpu::acts::{Q8, Q8K};

/// `vroundps`' immediate for rounding half to even, without raising the inexact exception.
const NEAREST: i32 = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

/// Eight floats from `x[at..at + 8]`.
#[inline(always)]
unsafe fn load8(x: &[f32], at: usize) -> __m256 {
    assert!(at + 8 <= x.len());
    _mm256_loadu_ps(x.as_ptr().add(at))
}

#[inline(always)]
unsafe fn abs(v: __m256) -> __m256 {
    _mm256_andnot_ps(_mm256_set1_ps(-0.0), v)
}

/// The largest of the eight lanes.
#[inline(always)]
unsafe fn hmax(v: __m256) -> f32 {
    let x = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
    let x = _mm_max_ps(x, _mm_movehl_ps(x, x));
    let x = _mm_max_ss(x, _mm_movehdup_ps(x));
    _mm_cvtss_f32(x)
}

/// The sum of the eight lanes.
#[inline(always)]
unsafe fn hsum_i32(v: __m256i) -> i32 {
    let x = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v));
    let x = _mm_add_epi32(x, _mm_shuffle_epi32::<0b01_00_11_10>(x));
    let x = _mm_add_epi32(x, _mm_shuffle_epi32::<0b10_11_00_01>(x));
    _mm_cvtsi128_si32(x)
}

/// `x` rounded through an IEEE half (F16C's conversion rounds half to even, as `half`'s does).
#[inline(always)]
unsafe fn as_half(x: f32) -> f32 {
    let h = _mm_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(_mm_set_ss(x));
    _mm_cvtss_f32(_mm_cvtph_ps(h))
}

/// 32 whole numbers in four registers of eight as bytes in order (they are within ±127, so
/// the saturating packs change nothing), as ggml packs them.
#[inline(always)]
unsafe fn pack_bytes(i: [__m256i; 4]) -> __m256i {
    // Packing works within 128-bit halves: the result's 32-bit groups come out in the order
    // 0, 2, 4, 6, 1, 3, 5, 7 of the four groups per register…
    let a = _mm256_packs_epi32(i[0], i[1]);
    let b = _mm256_packs_epi32(i[2], i[3]);
    let bytes = _mm256_packs_epi16(a, b);
    // …which this puts back.
    _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7))
}

/// `acts::quantize_q8`'s block of 32.
///
/// # Safety
/// The CPU has AVX2 and F16C.
#[inline(always)]
pub unsafe fn q8_block(x: &[f32]) -> Q8 {
    // (Plain loops here, not closures: a closure is a function of its own, without the
    // caller's target features, and its intrinsics would be calls.)
    let mut v = [_mm256_setzero_ps(); 4];
    for (k, v) in v.iter_mut().enumerate() {
        *v = load8(x, 8 * k);
    }
    let m = _mm256_max_ps(
        _mm256_max_ps(abs(v[0]), abs(v[1])),
        _mm256_max_ps(abs(v[2]), abs(v[3])),
    );
    let amax = hmax(m);
    let d = amax / 127.0;
    let id = _mm256_set1_ps(if d != 0.0 { 1.0 / d } else { 0.0 });
    let mut i = [_mm256_setzero_si256(); 4];
    for (i, v) in i.iter_mut().zip(v) {
        *i = _mm256_cvtps_epi32(_mm256_round_ps::<NEAREST>(_mm256_mul_ps(v, id)));
    }
    let sum = hsum_i32(_mm256_add_epi32(
        _mm256_add_epi32(i[0], i[1]),
        _mm256_add_epi32(i[2], i[3]),
    ));
    let mut block = Q8 {
        d: as_half(d),
        s: as_half(d * sum as f32),
        q: [0; 32],
    };
    _mm256_storeu_si256(block.q.as_mut_ptr().cast(), pack_bytes(i));
    block
}

/// `acts::quantize_q8k`'s block of 256.
///
/// # Safety
/// The CPU has AVX2.
#[inline(always)]
pub unsafe fn q8k_block(x: &[f32]) -> Q8K {
    assert!(x.len() >= 256);
    let mut m = _mm256_setzero_ps();
    for k in 0..32 {
        m = _mm256_max_ps(m, abs(load8(x, 8 * k)));
    }
    let amax = hmax(m);
    let mut block = Q8K {
        d: 0.0,
        q: [0; 256],
        bsums: [0; 16],
    };
    if amax == 0.0 {
        return block;
    }
    // The first value of the largest magnitude: its sign is kept, so it maps to exactly ∓127.
    let amax_v = _mm256_set1_ps(amax);
    let mut max = 0.0;
    for k in 0..32 {
        let hit = _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_EQ_OQ>(abs(load8(x, 8 * k)), amax_v));
        if hit != 0 {
            max = x[8 * k + hit.trailing_zeros() as usize];
            break;
        }
    }
    let iscale = -127.0 / max;
    let is = _mm256_set1_ps(iscale);
    let top = _mm256_set1_epi32(127);
    let mut sums = [_mm256_setzero_si256(); 4];
    for c in 0..8 {
        let mut i = [_mm256_setzero_si256(); 4];
        for (k, i) in i.iter_mut().enumerate() {
            let v = _mm256_mul_ps(is, load8(x, 32 * c + 8 * k));
            *i = _mm256_min_epi32(_mm256_cvtps_epi32(_mm256_round_ps::<NEAREST>(v)), top);
        }
        _mm256_storeu_si256(block.q.as_mut_ptr().add(32 * c).cast(), pack_bytes(i));
        // This 32's two sums of 16, kept eight lanes wide until four are reduced together.
        sums[2 * (c % 2)] = _mm256_add_epi32(i[0], i[1]);
        sums[2 * (c % 2) + 1] = _mm256_add_epi32(i[2], i[3]);
        if c % 2 == 1 {
            // Sums 4c'..4c'+4 of this pair of 32s: `vphaddd` twice puts each sum's halves in
            // the two 128-bit halves, in order; adding those halves finishes them.
            let h = _mm256_hadd_epi32(
                _mm256_hadd_epi32(sums[0], sums[1]),
                _mm256_hadd_epi32(sums[2], sums[3]),
            );
            let s = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256::<1>(h));
            let s = _mm_packs_epi32(s, s);
            let at = block.bsums.as_mut_ptr().add(4 * (c / 2));
            _mm_storel_epi64(at.cast(), s);
        }
    }
    block.d = 1.0 / iscale;
    block
}
