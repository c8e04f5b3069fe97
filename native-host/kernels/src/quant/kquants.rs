//! ggml's "k-quant" 256-element super-block formats (Q4_K, Q5_K, Q6_K).
//!
//! A super-block is split into sub-blocks that each have their own scale (and, for Q4_K/Q5_K, a
//! minimum), stored as small integers that multiply the super-block's f16 `d` (and `dmin`).

use super::f16_at;

/// Q4_K/Q5_K pack eight 6-bit scales and eight 6-bit minimums into 12 bytes: the first four of
/// each whole in the low 6 bits of bytes 0..4 (scales) and 4..8 (mins); the last four split into
/// a low nibble in bytes 8..12 and their top two bits in the spare top bits of bytes 0..8.
fn scale_min_k4(j: usize, q: &[u8]) -> (u8, u8) {
    if j < 4 {
        (q[j] & 63, q[j + 4] & 63)
    } else {
        (
            (q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4),
            (q[j + 4] >> 4) | ((q[j] >> 6) << 4),
        )
    }
}

/// Layout: d (f16), dmin (f16), scales[12], qs[128] (4-bit quants, 64 elements per 32 bytes:
/// low nibbles first, then high nibbles).
pub(super) fn q4_k(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    let min = f16_at(b, 2);
    let scales = &b[4..16];
    let qs = &b[16..144];
    for (chunk, (q, y)) in qs
        .as_chunks::<32>()
        .0
        .iter()
        .zip(y.as_chunks_mut::<64>().0.iter_mut())
        .enumerate()
    {
        let (sc1, m1) = scale_min_k4(2 * chunk, scales);
        let (sc2, m2) = scale_min_k4(2 * chunk + 1, scales);
        let (d1, m1) = (d * f32::from(sc1), min * f32::from(m1));
        let (d2, m2) = (d * f32::from(sc2), min * f32::from(m2));
        for l in 0..32 {
            y[l] = d1 * f32::from(q[l] & 0x0f) - m1;
            y[l + 32] = d2 * f32::from(q[l] >> 4) - m2;
        }
    }
}

/// Layout: d, dmin (f16), scales[12], qh[32] (fifth bits: bit 2c of qh[l] for element l of
/// 64-element chunk c's low half, bit 2c+1 for its high half), qs[128].
pub(super) fn q5_k(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    let min = f16_at(b, 2);
    let scales = &b[4..16];
    let qh = &b[16..48];
    let qs = &b[48..176];
    for (chunk, (ql, y)) in qs
        .as_chunks::<32>()
        .0
        .iter()
        .zip(y.as_chunks_mut::<64>().0.iter_mut())
        .enumerate()
    {
        let (sc1, m1) = scale_min_k4(2 * chunk, scales);
        let (sc2, m2) = scale_min_k4(2 * chunk + 1, scales);
        let (d1, m1) = (d * f32::from(sc1), min * f32::from(m1));
        let (d2, m2) = (d * f32::from(sc2), min * f32::from(m2));
        let (u1, u2) = (1u8 << (2 * chunk), 2u8 << (2 * chunk));
        for l in 0..32 {
            let hi1 = if qh[l] & u1 != 0 { 16 } else { 0 };
            let hi2 = if qh[l] & u2 != 0 { 16 } else { 0 };
            y[l] = d1 * f32::from((ql[l] & 0x0f) + hi1) - m1;
            y[l + 32] = d2 * f32::from((ql[l] >> 4) + hi2) - m2;
        }
    }
}

/// Layout: ql[128] (low 4 bits), qh[64] (high 2 bits), scales[16] (i8, one per 16 elements),
/// d (f16) last. Each 128-element half uses 64 bytes of ql, 32 of qh and 8 scales.
pub(super) fn q6_k(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 208);
    for half in 0..2 {
        let ql = &b[64 * half..64 * half + 64];
        let qh = &b[128 + 32 * half..128 + 32 * half + 32];
        let sc = &b[192 + 8 * half..192 + 8 * half + 8];
        let y = &mut y[128 * half..128 * half + 128];
        for l in 0..32 {
            let is = l / 16;
            let q1 = i32::from((ql[l] & 0x0f) | ((qh[l] & 3) << 4)) - 32;
            let q2 = i32::from((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32;
            let q3 = i32::from((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
            let q4 = i32::from((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
            let scale = |k: usize| f32::from(sc[is + k] as i8);
            // ggml evaluates `d * sc * q` left to right: (d * sc) * q.
            y[l] = d * scale(0) * q1 as f32;
            y[l + 32] = d * scale(2) * q2 as f32;
            y[l + 64] = d * scale(4) * q3 as f32;
            y[l + 96] = d * scale(6) * q4 as f32;
        }
    }
}
