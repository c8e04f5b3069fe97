//! ggml's original 32-element block formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0).
//!
//! Each block has an f16 scale `d` (and an f16 minimum `m` for the `_1` variants) followed by the
//! quants. 4- and 5-bit quants are packed two per byte: the low nibbles are elements 0..16, the
//! high nibbles elements 16..32. Q5's fifth bits live in a 32-bit little-endian word `qh`, bit j
//! for element j.

use super::f16_at;

const HALF: usize = 16;

pub(super) fn q4_0(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    let qs = &b[2..18];
    for j in 0..HALF {
        let x0 = i32::from(qs[j] & 0x0f) - 8;
        let x1 = i32::from(qs[j] >> 4) - 8;
        y[j] = x0 as f32 * d;
        y[j + HALF] = x1 as f32 * d;
    }
}

pub(super) fn q4_1(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    let m = f16_at(b, 2);
    let qs = &b[4..20];
    for j in 0..HALF {
        let x0 = i32::from(qs[j] & 0x0f);
        let x1 = i32::from(qs[j] >> 4);
        y[j] = x0 as f32 * d + m;
        y[j + HALF] = x1 as f32 * d + m;
    }
}

/// The fifth bits of elements j and j + 16, already shifted to bit 4.
fn high_bits(qh: u32, j: usize) -> (u8, u8) {
    let h0 = (((qh >> j) << 4) & 0x10) as u8;
    let h1 = ((qh >> (j + 12)) & 0x10) as u8;
    (h0, h1)
}

pub(super) fn q5_0(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    let qh = u32::from_le_bytes([b[2], b[3], b[4], b[5]]);
    let qs = &b[6..22];
    for j in 0..HALF {
        let (h0, h1) = high_bits(qh, j);
        let x0 = i32::from((qs[j] & 0x0f) | h0) - 16;
        let x1 = i32::from((qs[j] >> 4) | h1) - 16;
        y[j] = x0 as f32 * d;
        y[j + HALF] = x1 as f32 * d;
    }
}

pub(super) fn q5_1(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    let m = f16_at(b, 2);
    let qh = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
    let qs = &b[8..24];
    for j in 0..HALF {
        let (h0, h1) = high_bits(qh, j);
        let x0 = i32::from((qs[j] & 0x0f) | h0);
        let x1 = i32::from((qs[j] >> 4) | h1);
        y[j] = x0 as f32 * d + m;
        y[j + HALF] = x1 as f32 * d + m;
    }
}

pub(super) fn q8_0(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    for (j, &q) in b[2..34].iter().enumerate() {
        y[j] = f32::from(q as i8) * d;
    }
}
