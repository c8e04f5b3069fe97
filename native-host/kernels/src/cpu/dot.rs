//! Dot products of quantised weight rows with quantised activations, block by block, for every
//! tensor type, as ggml's `vec_dot` functions compute them: integer multiply-adds within a block,
//! then one float multiply-add per block with the two scales.
//!
//! Each product takes one weight row and up to [`TOKENS`] activation rows at once, so that the
//! weights' blocks are unpacked once for several tokens (prefill) — decode passes one. The code
//! is plain Rust written for the compiler to vectorise (fixed 32- and 256-element loops over
//! unpacked bytes): it is what NEON and portable builds run, and the float formats everywhere;
//! on x86-64 with AVX2 the quantised formats have hand-written kernels instead (`super::x86`),
//! which these are the reference for.

use half::{bf16, f16};

use super::acts::{Q8, Q8K};

/// The most tokens one call takes.
pub const TOKENS: usize = 4;

#[inline(always)]
fn f16_at(b: &[u8], at: usize) -> f32 {
    f16::from_bits(u16::from_le_bytes([b[at], b[at + 1]])).to_f32()
}

#[inline(always)]
fn dot32(a: &[i8; 32], b: &[i8; 32]) -> i32 {
    let mut s = 0i32;
    for i in 0..32 {
        s += i32::from(a[i]) * i32::from(b[i]);
    }
    s
}

#[inline(always)]
fn dot16(a: &[i8], b: &[i8]) -> i32 {
    let (a, b) = (&a[..16], &b[..16]);
    let mut s = 0i32;
    for i in 0..16 {
        s += i32::from(a[i]) * i32::from(b[i]);
    }
    s
}

/// A 32-element weight format: its block's scale, minimum (0 where it has none) and quants.
pub trait Legacy {
    const BYTES: usize;
    /// Whether blocks have a minimum (Q4_1, Q5_1), which multiplies the activations' sum.
    const MIN: bool;
    fn unpack(b: &[u8]) -> (f32, f32, [i8; 32]);
}

/// Low nibbles are elements 0..16, high nibbles 16..32.
#[inline(always)]
fn nibbles(qs: &[u8], offset: i8) -> [i8; 32] {
    let qs = &qs[..16];
    let mut x = [0i8; 32];
    for j in 0..16 {
        x[j] = (qs[j] & 0x0f) as i8 - offset;
        x[j + 16] = (qs[j] >> 4) as i8 - offset;
    }
    x
}

/// Adds the fifth bits (bit j of `qh` for element j), at bit 4.
#[inline(always)]
fn fifth_bits(x: &mut [i8; 32], qh: u32) {
    for (j, x) in x.iter_mut().enumerate() {
        *x += (((qh >> j) & 1) << 4) as i8;
    }
}

pub struct Q4_0;
impl Legacy for Q4_0 {
    const BYTES: usize = 18;
    const MIN: bool = false;
    #[inline(always)]
    fn unpack(b: &[u8]) -> (f32, f32, [i8; 32]) {
        (f16_at(b, 0), 0.0, nibbles(&b[2..18], 8))
    }
}

pub struct Q4_1;
impl Legacy for Q4_1 {
    const BYTES: usize = 20;
    const MIN: bool = true;
    #[inline(always)]
    fn unpack(b: &[u8]) -> (f32, f32, [i8; 32]) {
        (f16_at(b, 0), f16_at(b, 2), nibbles(&b[4..20], 0))
    }
}

pub struct Q5_0;
impl Legacy for Q5_0 {
    const BYTES: usize = 22;
    const MIN: bool = false;
    #[inline(always)]
    fn unpack(b: &[u8]) -> (f32, f32, [i8; 32]) {
        let qh = u32::from_le_bytes([b[2], b[3], b[4], b[5]]);
        let mut x = nibbles(&b[6..22], 0);
        fifth_bits(&mut x, qh);
        x.iter_mut().for_each(|x| *x -= 16);
        (f16_at(b, 0), 0.0, x)
    }
}

pub struct Q5_1;
impl Legacy for Q5_1 {
    const BYTES: usize = 24;
    const MIN: bool = true;
    #[inline(always)]
    fn unpack(b: &[u8]) -> (f32, f32, [i8; 32]) {
        let qh = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
        let mut x = nibbles(&b[8..24], 0);
        fifth_bits(&mut x, qh);
        (f16_at(b, 0), f16_at(b, 2), x)
    }
}

pub struct Q8_0;
impl Legacy for Q8_0 {
    const BYTES: usize = 34;
    const MIN: bool = false;
    #[inline(always)]
    fn unpack(b: &[u8]) -> (f32, f32, [i8; 32]) {
        let mut x = [0i8; 32];
        for (x, &q) in x.iter_mut().zip(&b[2..34]) {
            *x = q as i8;
        }
        (f16_at(b, 0), 0.0, x)
    }
}

/// Row `w` (blocks of `L`) times each of `acts` (the same number of blocks each), into `out`.
#[inline(always)]
pub fn legacy<L: Legacy, const T: usize>(w: &[u8], acts: [&[Q8]; T], out: &mut [f32; T]) {
    let mut sum = [0.0f32; T];
    for (i, b) in w.chunks_exact(L::BYTES).enumerate() {
        let (d, m, x) = L::unpack(b);
        for t in 0..T {
            let a = &acts[t][i];
            sum[t] += d * a.d * dot32(&x, &a.q) as f32;
            if L::MIN {
                sum[t] += m * a.s;
            }
        }
    }
    *out = sum;
}

/// Q4_K/Q5_K's eight 6-bit scales and minimums from their 12 bytes.
#[inline(always)]
fn scales_mins(q: &[u8]) -> ([u8; 8], [u8; 8]) {
    let (mut sc, mut m) = ([0u8; 8], [0u8; 8]);
    for j in 0..8 {
        if j < 4 {
            sc[j] = q[j] & 63;
            m[j] = q[j + 4] & 63;
        } else {
            sc[j] = (q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4);
            m[j] = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
        }
    }
    (sc, m)
}

/// A Q4_K or Q5_K super-block unpacked: quants 0..31 in element order, with a scale and a
/// minimum per 32.
struct KBlock {
    d: f32,
    dmin: f32,
    sc: [u8; 8],
    m: [u8; 8],
    q: [i8; 256],
}

#[inline(always)]
fn unpack_q4_k(b: &[u8]) -> KBlock {
    let (sc, m) = scales_mins(&b[4..16]);
    let qs = &b[16..144];
    let mut q = [0i8; 256];
    for c in 0..4 {
        for l in 0..32 {
            let byte = qs[32 * c + l];
            q[64 * c + l] = (byte & 0x0f) as i8;
            q[64 * c + 32 + l] = (byte >> 4) as i8;
        }
    }
    KBlock {
        d: f16_at(b, 0),
        dmin: f16_at(b, 2),
        sc,
        m,
        q,
    }
}

#[inline(always)]
fn unpack_q5_k(b: &[u8]) -> KBlock {
    let (sc, m) = scales_mins(&b[4..16]);
    let qh = &b[16..48];
    let qs = &b[48..176];
    let mut q = [0i8; 256];
    for c in 0..4 {
        for l in 0..32 {
            let byte = qs[32 * c + l];
            let lo = ((qh[l] >> (2 * c)) & 1) << 4;
            let hi = ((qh[l] >> (2 * c + 1)) & 1) << 4;
            q[64 * c + l] = ((byte & 0x0f) | lo) as i8;
            q[64 * c + 32 + l] = ((byte >> 4) | hi) as i8;
        }
    }
    KBlock {
        d: f16_at(b, 0),
        dmin: f16_at(b, 2),
        sc,
        m,
        q,
    }
}

#[inline(always)]
fn k_block_dot(k: &KBlock, a: &Q8K) -> f32 {
    let mut isum = 0i32;
    let mut msum = 0i32;
    for j in 0..8 {
        let x: &[i8; 32] = k.q[32 * j..32 * j + 32].try_into().expect("32");
        let y: &[i8; 32] = a.q[32 * j..32 * j + 32].try_into().expect("32");
        isum += i32::from(k.sc[j]) * dot32(x, y);
        msum += i32::from(k.m[j]) * (i32::from(a.bsums[2 * j]) + i32::from(a.bsums[2 * j + 1]));
    }
    a.d * (k.d * isum as f32 - k.dmin * msum as f32)
}

/// Q4_K rows (super-blocks of 144 bytes) times Q8_K activations.
#[inline(always)]
pub fn q4_k<const T: usize>(w: &[u8], acts: [&[Q8K]; T], out: &mut [f32; T]) {
    let mut sum = [0.0f32; T];
    for (i, b) in w.as_chunks::<144>().0.iter().enumerate() {
        let k = unpack_q4_k(b);
        for t in 0..T {
            sum[t] += k_block_dot(&k, &acts[t][i]);
        }
    }
    *out = sum;
}

/// Q5_K rows (176 bytes a super-block) times Q8_K activations.
#[inline(always)]
pub fn q5_k<const T: usize>(w: &[u8], acts: [&[Q8K]; T], out: &mut [f32; T]) {
    let mut sum = [0.0f32; T];
    for (i, b) in w.as_chunks::<176>().0.iter().enumerate() {
        let k = unpack_q5_k(b);
        for t in 0..T {
            sum[t] += k_block_dot(&k, &acts[t][i]);
        }
    }
    *out = sum;
}

/// Q6_K rows (210 bytes a super-block: ql, qh, sixteen i8 scales, d) times Q8_K activations.
#[inline(always)]
pub fn q6_k<const T: usize>(w: &[u8], acts: [&[Q8K]; T], out: &mut [f32; T]) {
    let mut sum = [0.0f32; T];
    for (i, b) in w.as_chunks::<210>().0.iter().enumerate() {
        let mut q = [0i8; 256];
        for half in 0..2 {
            let ql = &b[64 * half..64 * half + 64];
            let qh = &b[128 + 32 * half..128 + 32 * half + 32];
            let q = &mut q[128 * half..128 * half + 128];
            for l in 0..32 {
                q[l] = ((ql[l] & 0x0f) | ((qh[l] & 3) << 4)) as i8 - 32;
                q[l + 32] = ((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) as i8 - 32;
                q[l + 64] = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) as i8 - 32;
                q[l + 96] = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) as i8 - 32;
            }
        }
        let d = f16_at(b, 208);
        let sc = &b[192..208];
        for t in 0..T {
            let a = &acts[t][i];
            let mut isum = 0i32;
            for g in 0..16 {
                isum += i32::from(sc[g] as i8) * dot16(&q[16 * g..], &a.q[16 * g..]);
            }
            sum[t] += d * a.d * isum as f32;
        }
    }
    *out = sum;
}

/// Float rows, converted `CHUNK` values at a time, times f32 activations.
const CHUNK: usize = 64;

#[inline(always)]
fn float_rows<const T: usize>(
    values: usize,
    fill: impl Fn(usize, &mut [f32]),
    acts: [&[f32]; T],
    out: &mut [f32; T],
) {
    let mut sum = [[0.0f32; 8]; T];
    let mut buf = [0.0f32; CHUNK];
    let mut at = 0;
    while at < values {
        let n = CHUNK.min(values - at);
        fill(at, &mut buf[..n]);
        for t in 0..T {
            let a = &acts[t][at..at + n];
            let (whole, rest) = (n / 8 * 8, n % 8);
            for (w, x) in buf[..whole]
                .as_chunks::<8>()
                .0
                .iter()
                .zip(a.as_chunks::<8>().0.iter())
            {
                for k in 0..8 {
                    sum[t][k] += w[k] * x[k];
                }
            }
            for k in 0..rest {
                sum[t][k] += buf[whole + k] * a[whole + k];
            }
        }
        at += n;
    }
    for t in 0..T {
        out[t] = sum[t].iter().sum();
    }
}

#[inline(always)]
pub fn f32_rows<const T: usize>(w: &[u8], acts: [&[f32]; T], out: &mut [f32; T]) {
    float_rows(
        w.len() / 4,
        |at, buf| {
            for (i, v) in buf.iter_mut().enumerate() {
                let o = 4 * (at + i);
                *v = f32::from_le_bytes([w[o], w[o + 1], w[o + 2], w[o + 3]]);
            }
        },
        acts,
        out,
    );
}

#[inline(always)]
pub fn f16_rows<const T: usize>(w: &[u8], acts: [&[f32]; T], out: &mut [f32; T]) {
    float_rows(
        w.len() / 2,
        |at, buf| {
            for (i, v) in buf.iter_mut().enumerate() {
                *v = f16_at(w, 2 * (at + i));
            }
        },
        acts,
        out,
    );
}

#[inline(always)]
pub fn bf16_rows<const T: usize>(w: &[u8], acts: [&[f32]; T], out: &mut [f32; T]) {
    float_rows(
        w.len() / 2,
        |at, buf| {
            for (i, v) in buf.iter_mut().enumerate() {
                let o = 2 * (at + i);
                *v = bf16::from_bits(u16::from_le_bytes([w[o], w[o + 1]])).to_f32();
            }
        },
        acts,
        out,
    );
}
