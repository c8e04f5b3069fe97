//! Rows of halves read straight from the KV cache with F16C (`vcvtph2ps`, eight halves into
//! eight floats in one instruction): decode's attention reads every cached position once per
//! head, and widening the cache to f32 first would write and read again twice its bytes.
//!
//! Like the rest of [`super`], these are `#[inline(always)]` `unsafe fn`s, sound only where the
//! CPU has AVX2, FMA and F16C, and inlined into a caller compiled for them.

use std::arch::x86_64::*;

use half::f16;

/// Eight halves from `at` as eight floats.
#[inline(always)]
unsafe fn load8(at: *const f16) -> __m256 {
    _mm256_cvtph_ps(_mm_loadu_si128(at.cast()))
}

/// The sum of a register's eight floats.
#[inline(always)]
unsafe fn sum8(v: __m256) -> f32 {
    let four = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    let two = _mm_add_ps(four, _mm_movehl_ps(four, four));
    _mm_cvtss_f32(_mm_add_ss(two, _mm_shuffle_ps(two, two, 1)))
}

/// `q · k`, `k` as halves.
///
/// # Safety
/// The CPU has AVX2, FMA and F16C; `q` and `k` are of one length, a multiple of 8.
#[inline(always)]
pub unsafe fn dot(q: &[f32], k: &[f16]) -> f32 {
    debug_assert!(q.len() == k.len() && q.len().is_multiple_of(8));
    let (qp, kp) = (q.as_ptr(), k.as_ptr());
    // Two accumulators, so that one multiply-add need not wait for the one before it.
    let (mut a, mut b) = (_mm256_setzero_ps(), _mm256_setzero_ps());
    let mut i = 0;
    while i + 16 <= q.len() {
        a = _mm256_fmadd_ps(_mm256_loadu_ps(qp.add(i)), load8(kp.add(i)), a);
        b = _mm256_fmadd_ps(_mm256_loadu_ps(qp.add(i + 8)), load8(kp.add(i + 8)), b);
        i += 16;
    }
    if i < q.len() {
        a = _mm256_fmadd_ps(_mm256_loadu_ps(qp.add(i)), load8(kp.add(i)), a);
    }
    sum8(_mm256_add_ps(a, b))
}

/// `o += w × v`, `v` as halves.
///
/// # Safety
/// The CPU has AVX2, FMA and F16C; `o` and `v` are of one length, a multiple of 8.
#[inline(always)]
pub unsafe fn add_scaled(o: &mut [f32], w: f32, v: &[f16]) {
    debug_assert!(o.len() == v.len() && o.len().is_multiple_of(8));
    let (op, vp) = (o.as_mut_ptr(), v.as_ptr());
    let w = _mm256_set1_ps(w);
    for i in (0..o.len()).step_by(8) {
        let sum = _mm256_fmadd_ps(w, load8(vp.add(i)), _mm256_loadu_ps(op.add(i)));
        _mm256_storeu_ps(op.add(i), sum);
    }
}
