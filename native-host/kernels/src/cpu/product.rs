//! Weight matrices times activations on the CPU: the rows split across the pool's threads (each
//! takes a run of rows for every token, so a row's bytes are read from memory once a run), the
//! tokens in blocks that stay in the first-level cache while a run of rows passes over them.
//!
//! Each run is compiled once per instruction set and picked at run time (`Path`): on x86-64
//! with AVX2 or AVX-512 the quantised formats use [`x86`]'s hand-written kernels (with VNNI where
//! the CPU has it), everything else [`dot`]'s plain code, which the compiler vectorises for the
//! features enabled there: on arm64 NEON (the baseline), and where the CPU has it the
//! dot-product extension (`sdot`), a second compilation of the same code picked at run time;
//! on other targets their baseline. `scripts/arm64-kernels` tests the arm64 paths under qemu.
//!
//! Prefill passes each run's rows over the tokens a group at a time (4, or 8 with AVX-512's 32
//! vector registers), so a weight block is unpacked once for the group; decode streams each
//! row once, prefetching ahead of it.

use rayon::prelude::*;

use super::acts::{quantize_q8, quantize_q8k, Q8Scales, ScalesAt, Q8, Q8K};
use super::dot::{self, Legacy, TOKENS};
use super::isa::Isa;
#[cfg(target_arch = "x86_64")]
use super::x86;
use crate::tensor_type::TensorType;

/// The form of activations a weight type multiplies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActKind {
    /// Blocks of 32 (Q8_0 with Q8_1's sum): the 32-element formats.
    Q8,
    /// Blocks of 256 (Q8_K): the k-quants.
    Q8K,
    /// As they are: the float formats.
    F32,
}

impl ActKind {
    pub fn for_type(ty: TensorType) -> Self {
        match ty {
            TensorType::Q4_0
            | TensorType::Q4_1
            | TensorType::Q5_0
            | TensorType::Q5_1
            | TensorType::Q8_0 => ActKind::Q8,
            TensorType::Q4_K | TensorType::Q5_K | TensorType::Q6_K => ActKind::Q8K,
            TensorType::F32 | TensorType::F16 | TensorType::BF16 => ActKind::F32,
        }
    }
}

/// A weight matrix in its GGUF encoding, `rows` rows of `cols` values, in place in the mapped
/// file.
#[derive(Debug, Clone, Copy)]
pub struct Matrix<'a> {
    pub ty: TensorType,
    pub data: &'a [u8],
    pub rows: usize,
    pub cols: usize,
}

impl<'a> Matrix<'a> {
    #[inline(always)]
    fn row_bytes(&self) -> usize {
        self.cols / self.ty.block_elements() * self.ty.block_bytes()
    }

    #[inline(always)]
    fn row(&self, r: usize) -> &'a [u8] {
        let n = self.row_bytes();
        &self.data[r * n..(r + 1) * n]
    }
}

/// `n` rows of activations of `cols` values, in the forms the products need.
#[derive(Debug, Default)]
pub struct Acts {
    n: usize,
    cols: usize,
    q8: Vec<Q8>,
    /// `q8`'s scales block by block, for prefill's kernels (empty for one token).
    q8_scales: Q8Scales,
    q8k: Vec<Q8K>,
    f32: Vec<f32>,
}

impl Acts {
    /// `x` (`n` rows of `cols`) in each form of `kinds`.
    pub fn prepare(&mut self, x: &[f32], n: usize, cols: usize, kinds: &[ActKind]) {
        debug_assert_eq!(x.len(), n * cols);
        self.n = n;
        self.cols = cols;
        if kinds.contains(&ActKind::Q8) {
            quantize_q8(x, &mut self.q8);
            // Only x86's kernels read them.
            let several = n > 1 && cfg!(target_arch = "x86_64");
            self.q8_scales.fill(if several { &self.q8 } else { &[] }, n);
        }
        if kinds.contains(&ActKind::Q8K) {
            quantize_q8k(x, &mut self.q8k);
        }
        if kinds.contains(&ActKind::F32) {
            self.f32.clear();
            self.f32.extend_from_slice(x);
        }
    }

    pub fn tokens(&self) -> usize {
        self.n
    }
}

/// Where a run of rows writes: `out[t × rows + r]` for its own rows `r` only, so runs on
/// different threads never write the same element.
#[derive(Clone, Copy)]
struct Out {
    ptr: *mut f32,
    len: usize,
}

// SAFETY: each run writes only its own rows' elements (see `Out`), and `product` holds the
// `&mut` slice behind the pointer until every run has finished.
unsafe impl Send for Out {}
unsafe impl Sync for Out {}

impl Out {
    #[inline(always)]
    fn set(&self, i: usize, v: f32) {
        assert!(i < self.len);
        // SAFETY: in bounds (checked), and no other run writes element i (see `Out`).
        unsafe { self.ptr.add(i).write(v) }
    }
}

/// What runs the products: the instruction set, refined on x86-64 by whether the CPU also has
/// VNNI (`vpdpbusd`), which the hand-written kernels use where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Path {
    /// [`dot`]'s plain code, compiled for the target's baseline (SSE2 on x86-64, NEON on arm64).
    Plain,
    /// [`x86`]'s kernels with AVX2 (and FMA, F16C) only.
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// … with AVX-VNNI too.
    #[cfg(target_arch = "x86_64")]
    Avx2Vnni,
    /// … with AVX-512 (F, BW, VL): 32 vector registers, and twice the tokens in a group.
    #[cfg(target_arch = "x86_64")]
    Avx512,
    /// … with AVX-512-VNNI too.
    #[cfg(target_arch = "x86_64")]
    Avx512Vnni,
    /// [`dot`]'s plain code compiled for arm64 with the dot-product extension (`sdot`, four
    /// byte products summed into 32 bits), which most arm64 CPUs since 2018 have and the
    /// baseline does not include: the compiler turns the blocks' byte sums into it.
    #[cfg(target_arch = "aarch64")]
    NeonDot,
}

impl Path {
    /// The fastest path within `isa` on this CPU: never one whose instructions it lacks (which
    /// is what makes `run`'s calls sound).
    fn of(isa: Isa) -> Path {
        if !isa.available() {
            return Path::Plain;
        }
        match isa {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 if x86::has_avx512_vnni() => Path::Avx512Vnni,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => Path::Avx512,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 if x86::has_avx_vnni() => Path::Avx2Vnni,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => Path::Avx2,
            #[cfg(target_arch = "aarch64")]
            Isa::Neon if std::arch::is_aarch64_feature_detected!("dotprod") => Path::NeonDot,
            _ => Path::Plain,
        }
    }
}

/// `out` (`acts.tokens()` rows of `m.rows`) = the activations times `m`'s rows, on the current
/// rayon pool.
pub fn product(isa: Isa, m: &Matrix<'_>, acts: &Acts, out: &mut [f32]) {
    products(isa, &mut [(*m, out)], acts)
}

/// Several matrices times the same activations (q, k and v; gate and up), each into its own
/// output, in one parallel region: one fork and join instead of one per matrix, each of which
/// costs a thread's wake-up on few cores — a decode step has hundreds.
pub fn products(isa: Isa, jobs: &mut [(Matrix<'_>, &mut [f32])], acts: &Acts) {
    products_on(Path::of(isa), jobs, acts)
}

#[cfg(test)]
fn product_on(path: Path, m: &Matrix<'_>, acts: &Acts, out: &mut [f32]) {
    products_on(path, &mut [(*m, out)], acts)
}

fn products_on(path: Path, jobs: &mut [(Matrix<'_>, &mut [f32])], acts: &Acts) {
    let n = acts.n;
    let threads = rayon::current_num_threads().max(1);
    let mut outs = Vec::with_capacity(jobs.len());
    let mut runs = Vec::new();
    for (j, (m, out)) in jobs.iter_mut().enumerate() {
        assert_eq!(
            acts.cols, m.cols,
            "activations and matrix disagree on the row length"
        );
        assert_eq!(out.len(), n * m.rows);
        outs.push(Out {
            ptr: out.as_mut_ptr(),
            len: out.len(),
        });
        // Decode spreads a matrix over a few runs per thread (they finish unevenly on shared
        // cores); prefill's runs are short so that every thread's runs share the token blocks
        // in cache.
        let per = if n == 1 {
            m.rows.div_ceil(threads * 4).next_multiple_of(8)
        } else {
            16
        }
        .max(8);
        runs.extend((0..m.rows.div_ceil(per)).map(|i| (j, i * per, ((i + 1) * per).min(m.rows))));
    }
    let matrices: Vec<Matrix<'_>> = jobs.iter().map(|(m, _)| *m).collect();
    runs.into_par_iter().for_each(|(j, r0, r1)| {
        run(path, &matrices[j], acts, r0, r1, outs[j]);
    });
}

fn run(path: Path, m: &Matrix<'_>, acts: &Acts, r0: usize, r1: usize, out: Out) {
    match path {
        Path::Plain => run_plain(m, acts, r0, r1, out),
        // SAFETY (all four): `Path::of` picks these only where the CPU has AVX2 (or AVX-512)
        // with FMA and F16C, and the VNNI they use (the tests pick only what `paths` finds).
        #[cfg(target_arch = "x86_64")]
        Path::Avx2 => unsafe { run_avx2(m, acts, r0, r1, out) },
        #[cfg(target_arch = "x86_64")]
        Path::Avx2Vnni => unsafe { run_avx2_vnni(m, acts, r0, r1, out) },
        #[cfg(target_arch = "x86_64")]
        Path::Avx512 => unsafe { run_avx512(m, acts, r0, r1, out) },
        #[cfg(target_arch = "x86_64")]
        Path::Avx512Vnni => unsafe { run_avx512_vnni(m, acts, r0, r1, out) },
        // SAFETY: `Path::of` picks it only where the CPU has the dot-product extension.
        #[cfg(target_arch = "aarch64")]
        Path::NeonDot => unsafe { run_neon_dotprod(m, acts, r0, r1, out) },
    }
}

#[cfg(target_arch = "aarch64")]
#[target_feature(enable = "neon,dotprod")]
unsafe fn run_neon_dotprod(m: &Matrix<'_>, acts: &Acts, r0: usize, r1: usize, out: Out) {
    run_plain(m, acts, r0, r1, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn run_avx2(m: &Matrix<'_>, acts: &Acts, r0: usize, r1: usize, out: Out) {
    run_x86::<x86::Avx2, 4>(m, acts, r0, r1, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c,avxvnni")]
unsafe fn run_avx2_vnni(m: &Matrix<'_>, acts: &Acts, r0: usize, r1: usize, out: Out) {
    run_x86::<x86::Avx2Vnni, 4>(m, acts, r0, r1, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,fma,f16c")]
unsafe fn run_avx512(m: &Matrix<'_>, acts: &Acts, r0: usize, r1: usize, out: Out) {
    run_x86::<x86::Avx512, 8>(m, acts, r0, r1, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")]
unsafe fn run_avx512_vnni(m: &Matrix<'_>, acts: &Acts, r0: usize, r1: usize, out: Out) {
    run_x86::<x86::Avx512Vnni, 8>(m, acts, r0, r1, out)
}

/// [`x86`]'s kernels for the quantised formats; the float formats' plain code, which the
/// compiler vectorises well enough for the features enabled here.
///
/// # Safety
/// The CPU has AVX2, FMA, F16C and `S`'s features.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn run_x86<S: x86::Simd, const T: usize>(
    m: &Matrix<'_>,
    acts: &Acts,
    r0: usize,
    r1: usize,
    out: Out,
) {
    use x86::legacy;
    match m.ty {
        TensorType::Q4_0 => rows::<X86Legacy<S, legacy::Q4_0>, T>(m, acts, r0, r1, out),
        TensorType::Q4_1 => rows::<X86Legacy<S, legacy::Q4_1>, T>(m, acts, r0, r1, out),
        TensorType::Q5_0 => rows::<X86Legacy<S, legacy::Q5_0>, T>(m, acts, r0, r1, out),
        TensorType::Q5_1 => rows::<X86Legacy<S, legacy::Q5_1>, T>(m, acts, r0, r1, out),
        TensorType::Q8_0 => rows::<X86Legacy<S, legacy::Q8_0>, T>(m, acts, r0, r1, out),
        TensorType::Q4_K => rows::<X86Q4K<S>, T>(m, acts, r0, r1, out),
        TensorType::Q5_K => rows::<X86Q5K<S>, T>(m, acts, r0, r1, out),
        TensorType::Q6_K => rows::<X86Q6K<S>, T>(m, acts, r0, r1, out),
        TensorType::F32 => rows::<F32, T>(m, acts, r0, r1, out),
        TensorType::F16 => rows::<F16, T>(m, acts, r0, r1, out),
        TensorType::BF16 => rows::<BF16, T>(m, acts, r0, r1, out),
    }
}

#[inline(always)]
fn run_plain(m: &Matrix<'_>, acts: &Acts, r0: usize, r1: usize, out: Out) {
    // SAFETY: the plain kernels need nothing of the CPU.
    unsafe {
        match m.ty {
            TensorType::Q4_0 => rows::<LegacyKernel<dot::Q4_0>, TOKENS>(m, acts, r0, r1, out),
            TensorType::Q4_1 => rows::<LegacyKernel<dot::Q4_1>, TOKENS>(m, acts, r0, r1, out),
            TensorType::Q5_0 => rows::<LegacyKernel<dot::Q5_0>, TOKENS>(m, acts, r0, r1, out),
            TensorType::Q5_1 => rows::<LegacyKernel<dot::Q5_1>, TOKENS>(m, acts, r0, r1, out),
            TensorType::Q8_0 => rows::<LegacyKernel<dot::Q8_0>, TOKENS>(m, acts, r0, r1, out),
            TensorType::Q4_K => rows::<Q4K, TOKENS>(m, acts, r0, r1, out),
            TensorType::Q5_K => rows::<Q5K, TOKENS>(m, acts, r0, r1, out),
            TensorType::Q6_K => rows::<Q6K, TOKENS>(m, acts, r0, r1, out),
            TensorType::F32 => rows::<F32, TOKENS>(m, acts, r0, r1, out),
            TensorType::F16 => rows::<F16, TOKENS>(m, acts, r0, r1, out),
            TensorType::BF16 => rows::<BF16, TOKENS>(m, acts, r0, r1, out),
        }
    }
}

/// One weight type's product: its activations' form and its dot product of a row with a group
/// of them.
trait Kernel {
    type A;
    /// Elements per activation block.
    const PER: usize;
    fn acts(a: &Acts) -> &[Self::A];
    /// Row `w` times `acts`, consecutive tokens whose Q8 scales (if `A` is [`Q8`] and there are
    /// several) `scales` also holds.
    ///
    /// # Safety
    /// The CPU has the instructions the kernel is written for (none for [`dot`]'s).
    unsafe fn dot<const T: usize>(
        w: &[u8],
        acts: [&[Self::A]; T],
        scales: ScalesAt<'_>,
        out: &mut [f32; T],
    );
}

struct LegacyKernel<L>(std::marker::PhantomData<L>);

impl<L: Legacy> Kernel for LegacyKernel<L> {
    type A = Q8;
    const PER: usize = 32;
    #[inline(always)]
    fn acts(a: &Acts) -> &[Q8] {
        &a.q8
    }
    #[inline(always)]
    unsafe fn dot<const T: usize>(w: &[u8], acts: [&[Q8]; T], _: ScalesAt<'_>, out: &mut [f32; T]) {
        dot::legacy::<L, T>(w, acts, out)
    }
}

/// [`x86::legacy`]'s product for block format `B` with instructions `S`.
#[cfg(target_arch = "x86_64")]
struct X86Legacy<S, B>(std::marker::PhantomData<(S, B)>);

#[cfg(target_arch = "x86_64")]
impl<S: x86::Simd, B: x86::legacy::Block> Kernel for X86Legacy<S, B> {
    type A = Q8;
    const PER: usize = 32;
    #[inline(always)]
    fn acts(a: &Acts) -> &[Q8] {
        &a.q8
    }
    #[inline(always)]
    unsafe fn dot<const T: usize>(
        w: &[u8],
        acts: [&[Q8]; T],
        scales: ScalesAt<'_>,
        out: &mut [f32; T],
    ) {
        if T == 1 {
            out[0] = x86::legacy::dot::<S, B>(w, acts[0]);
        } else {
            x86::legacy::dot_tokens::<S, B, T>(w, acts, scales, out);
        }
    }
}

macro_rules! kernel {
    ($name:ident, $a:ty, $per:expr, $field:ident, $f:path) => {
        struct $name;
        impl Kernel for $name {
            type A = $a;
            const PER: usize = $per;
            #[inline(always)]
            fn acts(a: &Acts) -> &[$a] {
                &a.$field
            }
            #[inline(always)]
            unsafe fn dot<const T: usize>(
                w: &[u8],
                acts: [&[$a]; T],
                _: ScalesAt<'_>,
                out: &mut [f32; T],
            ) {
                $f(w, acts, out)
            }
        }
    };
}

/// [`x86::kquants`]' products with instructions `S`.
#[cfg(target_arch = "x86_64")]
macro_rules! x86_kernel {
    ($name:ident, $f:ident) => {
        struct $name<S>(std::marker::PhantomData<S>);
        impl<S: x86::Simd> Kernel for $name<S> {
            type A = Q8K;
            const PER: usize = 256;
            #[inline(always)]
            fn acts(a: &Acts) -> &[Q8K] {
                &a.q8k
            }
            #[inline(always)]
            unsafe fn dot<const T: usize>(
                w: &[u8],
                acts: [&[Q8K]; T],
                _: ScalesAt<'_>,
                out: &mut [f32; T],
            ) {
                x86::kquants::$f::<S, T>(w, acts, out)
            }
        }
    };
}

kernel!(Q4K, Q8K, 256, q8k, dot::q4_k);
kernel!(Q5K, Q8K, 256, q8k, dot::q5_k);
kernel!(Q6K, Q8K, 256, q8k, dot::q6_k);
kernel!(F32, f32, 1, f32, dot::f32_rows);
kernel!(F16, f32, 1, f32, dot::f16_rows);
kernel!(BF16, f32, 1, f32, dot::bf16_rows);
#[cfg(target_arch = "x86_64")]
x86_kernel!(X86Q4K, q4_k);
#[cfg(target_arch = "x86_64")]
x86_kernel!(X86Q5K, q5_k);
#[cfg(target_arch = "x86_64")]
x86_kernel!(X86Q6K, q6_k);

/// Tokens whose activations a run keeps in cache while it passes its rows over them.
const TOKEN_BLOCK: usize = 16;

/// How far ahead of the row it multiplies a run asks for the weights (in bytes) the first time
/// it passes over them. The hardware prefetchers start again at every 4 KiB page and a run's
/// rows are short, so without it decode waits on memory instead of streaming it: on a 2-core
/// Sapphire Rapids VM decode is about 1.25× faster with it (SmolLM2-135M 69 → 86 tokens/s,
/// Gemma 3 270M 42 → 54), and 1 KiB or 4 KiB ahead, or into the L2 only, did no better.
const PREFETCH: usize = 2048;

/// Asks for `data[from..to]` in the first-level cache.
#[inline(always)]
fn prefetch(data: &[u8], from: usize, to: usize) {
    for at in (from..to.min(data.len())).step_by(64) {
        // SAFETY: `at` is within `data`.
        prefetch_line(unsafe { data.as_ptr().add(at) });
    }
}

/// A hint to load the cache line at `p` into the first-level cache: it cannot fault, whatever
/// `p` is. Nothing on targets without one.
#[inline(always)]
fn prefetch_line(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; SSE, which has it, is in x86-64's baseline.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p.cast())
    };
    #[cfg(target_arch = "aarch64")]
    // SAFETY: `prfm` is a hint that touches no register but its address and never faults.
    unsafe {
        std::arch::asm!("prfm pldl1keep, [{0}]", in(reg) p, options(nostack, readonly, preserves_flags))
    };
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = p;
}

/// Rows `r0..r1` of `m` times every token of `acts`, into `out`.
///
/// # Safety
/// As [`Kernel::dot`]'s.
#[inline(always)]
unsafe fn rows<K: Kernel, const TOKENS: usize>(
    m: &Matrix<'_>,
    acts: &Acts,
    r0: usize,
    r1: usize,
    out: Out,
) {
    let all = K::acts(acts);
    let per_token = m.cols / K::PER;
    let tok = |t: usize| &all[t * per_token..(t + 1) * per_token];
    let n = acts.n;
    for t0 in (0..n).step_by(TOKEN_BLOCK) {
        let t1 = (t0 + TOKEN_BLOCK).min(n);
        for r in r0..r1 {
            let w = m.row(r);
            if t0 == 0 {
                let rb = w.len();
                prefetch(m.data, r * rb + PREFETCH, (r + 1) * rb + PREFETCH);
            }
            let mut t = t0;
            while t + TOKENS <= t1 {
                let mut o = [0.0; TOKENS];
                let group = std::array::from_fn(|i| tok(t + i));
                K::dot::<TOKENS>(w, group, acts.q8_scales.at(t), &mut o);
                for (i, v) in o.into_iter().enumerate() {
                    out.set((t + i) * m.rows + r, v);
                }
                t += TOKENS;
            }
            while t < t1 {
                let mut o = [0.0; 1];
                K::dot::<1>(w, [tok(t)], acts.q8_scales.at(t), &mut o);
                out.set(t * m.rows + r, o[0]);
                t += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests;
