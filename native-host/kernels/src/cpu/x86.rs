//! Hand-vectorised dot products for x86-64, written with `std::arch` intrinsics after ggml's
//! (llama.cpp's) AVX2 kernels: the weights' blocks are unpacked to bytes in registers and
//! multiplied with the activations' bytes by `vpmaddubsw` (unsigned × signed bytes, summed in
//! pairs), or by AVX-VNNI / AVX-512-VNNI `vpdpbusd` (summed in fours straight into 32 bits) where
//! the CPU has it. Everything is 256 bits wide: a block of 32 quants is one register. What
//! AVX-512 adds is its 32 registers (prefill groups 8 tokens instead of 4), masks (`vpmovm2b`
//! for Q5's fifth bits) and EVEX forms (a broadcast load folded into a multiply-add), not the
//! width: the blocks' scales would need as many shuffles as 512 bits save.
//!
//! - [`legacy`]: the 32-element formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0) times [`Q8`] blocks.
//! - [`kquants`]: Q4_K, Q5_K and Q6_K times [`Q8K`] blocks.
//! - [`quantize`]: the activations' quantisation, the same numbers as [`super::acts`]'s.
//! - [`halves`]: f32 rows against the KV cache's halves, for decode's attention.
//!
//! Like [`super::dot`]'s, each product takes one weight row and up to `T` activation rows, so
//! that prefill unpacks a weight block once for several tokens.
//!
//! The code is generic over [`Simd`], the instructions the CPU has beyond AVX2; each function is
//! `#[inline(always)]` into one of `product`'s runs compiled with `#[target_feature]` for exactly
//! those instructions, so the intrinsics are inlined there. They are `unsafe fn`s for that
//! reason: calling them is sound only where the CPU has AVX2, FMA, F16C and `S`'s features.
//!
//! [`Q8`]: super::acts::Q8
//! [`Q8K`]: super::acts::Q8K

use std::arch::x86_64::*;

pub mod halves;
pub mod kquants;
pub mod legacy;
pub mod quantize;

/// The instructions that multiply weight bytes with activation bytes, which differ between
/// CPUs that have AVX2 only, AVX-VNNI, AVX-512 and AVX-512-VNNI. Every implementation computes
/// the same integers where no `vpmaddubsw` pair can saturate: activations are within ±127, so
/// unsigned operands up to 128 are safe (2 × 128 × 127 = 32512); larger ones (Q8_0's quants
/// offset by 128) only where [`Simd::PAIRS_IN_16_BITS`] is false.
pub trait Simd {
    /// Whether [`Self::dot_add`] sums pairs of products in 16 bits first (`vpmaddubsw`, which
    /// saturates): unsigned operands above 128 can overflow those.
    const PAIRS_IN_16_BITS: bool;

    /// Each 32-bit lane of `acc` plus the sum of its four products `u[i] × s[i]`, `u`'s bytes
    /// unsigned and `s`'s signed.
    ///
    /// # Safety
    /// The CPU has AVX2 and the implementation's features.
    unsafe fn dot_add(acc: __m256i, u: __m256i, s: __m256i) -> __m256i;

    /// Each 32-bit lane of `acc` plus the sum of its two products of signed 16-bit `a` and `b`
    /// (`vpmaddwd`, then an add or, with VNNI, `vpdpwssd`).
    ///
    /// # Safety
    /// The CPU has AVX2 and the implementation's features.
    unsafe fn madd_add(acc: __m256i, a: __m256i, b: __m256i) -> __m256i;

    /// Byte `j` is 0xff where bit `j` of `bits` is set, else 0.
    ///
    /// # Safety
    /// The CPU has AVX2 and the implementation's features.
    unsafe fn bit_bytes(bits: u32) -> __m256i;

    /// [`Self::dot_add`] to zero.
    ///
    /// # Safety
    /// The CPU has AVX2 and the implementation's features.
    #[inline(always)]
    unsafe fn dot(u: __m256i, s: __m256i) -> __m256i {
        Self::dot_add(_mm256_setzero_si256(), u, s)
    }
}

/// AVX2 (with FMA and F16C) and nothing more: `vpmaddubsw` into 16 bits, `vpmaddwd` by ones
/// into 32.
pub struct Avx2;

/// AVX2 with AVX-VNNI (the VEX-encoded `vpdpbusd` of Alder Lake and later cores without
/// AVX-512).
pub struct Avx2Vnni;

/// AVX-512 (F, BW, VL) without VNNI: as [`Avx2`], and `vpmovm2b` expands bits to bytes.
pub struct Avx512;

/// AVX-512 with VNNI: `vpdpbusd` and `vpdpwssd` on 256-bit registers (VL).
pub struct Avx512Vnni;

/// `vpmaddubsw` then `vpmaddwd` by ones: four products summed into each 32-bit lane.
#[inline(always)]
unsafe fn maddubs_dot_add(acc: __m256i, u: __m256i, s: __m256i) -> __m256i {
    let pairs = _mm256_maddubs_epi16(u, s);
    _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)))
}

/// ggml's `bytes_from_bits_32`: the 32-bit word in every lane, each byte picking the byte of
/// the word its bit is in, then the other bits set so that only a set bit gives 0xff.
#[inline(always)]
unsafe fn shuffle_bit_bytes(bits: u32) -> __m256i {
    let word = _mm256_set1_epi32(bits as i32);
    let which = _mm256_set_epi64x(
        0x0303_0303_0303_0303,
        0x0202_0202_0202_0202,
        0x0101_0101_0101_0101,
        0,
    );
    let bytes = _mm256_shuffle_epi8(word, which);
    let others = _mm256_set1_epi64x(0x7fbf_dfef_f7fb_fdfe);
    _mm256_cmpeq_epi8(_mm256_or_si256(bytes, others), _mm256_set1_epi64x(-1))
}

impl Simd for Avx2 {
    const PAIRS_IN_16_BITS: bool = true;
    #[inline(always)]
    unsafe fn dot_add(acc: __m256i, u: __m256i, s: __m256i) -> __m256i {
        maddubs_dot_add(acc, u, s)
    }
    #[inline(always)]
    unsafe fn madd_add(acc: __m256i, a: __m256i, b: __m256i) -> __m256i {
        _mm256_add_epi32(acc, _mm256_madd_epi16(a, b))
    }
    #[inline(always)]
    unsafe fn bit_bytes(bits: u32) -> __m256i {
        shuffle_bit_bytes(bits)
    }
}

impl Simd for Avx2Vnni {
    const PAIRS_IN_16_BITS: bool = false;
    #[inline(always)]
    unsafe fn dot_add(acc: __m256i, u: __m256i, s: __m256i) -> __m256i {
        _mm256_dpbusd_avx_epi32(acc, u, s)
    }
    #[inline(always)]
    unsafe fn madd_add(acc: __m256i, a: __m256i, b: __m256i) -> __m256i {
        _mm256_dpwssd_avx_epi32(acc, a, b)
    }
    #[inline(always)]
    unsafe fn bit_bytes(bits: u32) -> __m256i {
        shuffle_bit_bytes(bits)
    }
}

impl Simd for Avx512 {
    const PAIRS_IN_16_BITS: bool = true;
    #[inline(always)]
    unsafe fn dot_add(acc: __m256i, u: __m256i, s: __m256i) -> __m256i {
        maddubs_dot_add(acc, u, s)
    }
    #[inline(always)]
    unsafe fn madd_add(acc: __m256i, a: __m256i, b: __m256i) -> __m256i {
        _mm256_add_epi32(acc, _mm256_madd_epi16(a, b))
    }
    #[inline(always)]
    unsafe fn bit_bytes(bits: u32) -> __m256i {
        _mm256_movm_epi8(bits)
    }
}

impl Simd for Avx512Vnni {
    const PAIRS_IN_16_BITS: bool = false;
    #[inline(always)]
    unsafe fn dot_add(acc: __m256i, u: __m256i, s: __m256i) -> __m256i {
        _mm256_dpbusd_epi32(acc, u, s)
    }
    #[inline(always)]
    unsafe fn madd_add(acc: __m256i, a: __m256i, b: __m256i) -> __m256i {
        _mm256_dpwssd_epi32(acc, a, b)
    }
    #[inline(always)]
    unsafe fn bit_bytes(bits: u32) -> __m256i {
        _mm256_movm_epi8(bits)
    }
}

/// Whether the CPU has AVX-VNNI (VEX-encoded, 256-bit).
pub fn has_avx_vnni() -> bool {
    is_x86_feature_detected!("avxvnni")
}

/// Whether the CPU has AVX-512-VNNI (with VL, for 256-bit registers).
pub fn has_avx512_vnni() -> bool {
    is_x86_feature_detected!("avx512vnni") && is_x86_feature_detected!("avx512vl")
}

/// The four IEEE halves at `p` as f32s (F16C), for a block's scales: lane 0 is the half at
/// `p`, lane 1 the next.
///
/// This is `vcvtph2ps` straight from memory, written as assembly because LLVM, seeing only lane
/// 0 used, narrows the load to a `vpinsrw` that merges the half into whatever register it
/// likes — typically a loop's accumulator, whose latency then chains every block to the one
/// before (a Q4_1 block took 8.7 cycles instead of 4.6 in decode, prefill's token groups ran
/// at a third of their speed).
///
/// # Safety
/// The CPU has F16C; `p` points at eight readable bytes.
#[inline(always)]
pub(crate) unsafe fn halves_at(p: *const u8) -> __m128 {
    let halves: __m128;
    std::arch::asm!(
        "vcvtph2ps {h}, qword ptr [{p}]",
        p = in(reg) p,
        h = out(xmm_reg) halves,
        options(pure, readonly, nostack, preserves_flags),
    );
    halves
}

/// 32 bytes from `p`, unaligned.
///
/// # Safety
/// The CPU has AVX; `p` points at 32 readable bytes.
#[inline(always)]
pub(crate) unsafe fn load32(p: *const u8) -> __m256i {
    _mm256_loadu_si256(p.cast())
}

/// 16 bytes from `p`, unaligned.
///
/// # Safety
/// `p` points at 16 readable bytes.
#[inline(always)]
pub(crate) unsafe fn load16(p: *const u8) -> __m128i {
    _mm_loadu_si128(p.cast())
}

/// ggml's `bytes_from_nibbles_32`: 16 bytes' low nibbles as bytes 0..16, their high nibbles as
/// bytes 16..32.
///
/// # Safety
/// The CPU has AVX2; `p` points at 16 readable bytes.
#[inline(always)]
pub(crate) unsafe fn nibbles(p: *const u8) -> __m256i {
    let lo = load16(p);
    let both = _mm256_set_m128i(_mm_srli_epi16::<4>(lo), lo);
    _mm256_and_si256(both, _mm256_set1_epi8(0x0f))
}

/// The sum of the eight lanes.
///
/// # Safety
/// The CPU has AVX.
#[inline(always)]
pub(crate) unsafe fn hsum(v: __m256) -> f32 {
    let x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
    let x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    let x = _mm_add_ss(x, _mm_movehdup_ps(x));
    _mm_cvtss_f32(x)
}

/// The sum of the four lanes.
///
/// # Safety
/// The CPU has SSE3.
#[inline(always)]
pub(crate) unsafe fn hsum128(x: __m128) -> f32 {
    let x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    let x = _mm_add_ss(x, _mm_movehdup_ps(x));
    _mm_cvtss_f32(x)
}
