//! Hand-made blocks: each is packed from known per-element quants the way ggml's quantisers pack
//! them (the writer side, not the reader side), then the dequantiser must give back
//! `scale * quant (+/- min)` for every element.

use super::*;
use half::f16;

/// A small deterministic generator, so the blocks are varied but the test is repeatable.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u8 {
        (self.next() % n) as u8
    }
}

fn h(x: f32) -> [u8; 2] {
    f16::from_f32(x).to_bits().to_le_bytes()
}

fn hf(x: f32) -> f32 {
    f16::from_f32(x).to_f32()
}

#[test]
fn floats() {
    let mut out = [0.0; 3];
    dequantize(
        TensorType::F16,
        &[0x00, 0x3c, 0x00, 0xc0, 0x01, 0x00],
        &mut out,
    )
    .unwrap();
    assert_eq!(
        out,
        [1.0, -2.0, 2f32.powi(-24)],
        "f16 subnormals widen exactly"
    );
    dequantize(
        TensorType::BF16,
        &[0x80, 0x3f, 0x40, 0xc0, 0xc9, 0x40],
        &mut out,
    )
    .unwrap();
    assert_eq!(out, [1.0, -3.0, f32::from_bits(0x40c9_0000)]);
    let mut one = [0.0; 1];
    dequantize(TensorType::F32, &1.25f32.to_le_bytes(), &mut one).unwrap();
    assert_eq!(one, [1.25]);
}

#[test]
fn q4_0_and_q4_1() {
    let mut rng = Rng(1);
    let quants: Vec<u8> = (0..32).map(|_| rng.below(16)).collect();
    let mut qs = [0u8; 16];
    for j in 0..16 {
        qs[j] = quants[j] | (quants[j + 16] << 4);
    }
    let mut b = h(0.75).to_vec();
    b.extend_from_slice(&qs);
    let y = dequantize_to_vec(TensorType::Q4_0, &b).unwrap();
    for (e, &q) in quants.iter().enumerate() {
        assert_eq!(y[e], (i32::from(q) - 8) as f32 * 0.75, "element {e}");
    }

    let mut b = h(0.3).to_vec();
    b.extend_from_slice(&h(-1.5));
    b.extend_from_slice(&qs);
    let y = dequantize_to_vec(TensorType::Q4_1, &b).unwrap();
    for (e, &q) in quants.iter().enumerate() {
        assert_eq!(y[e], f32::from(q) * hf(0.3) - 1.5, "element {e}");
    }
}

/// Packs 32 five-bit quants as quantize_row_q5_0_ref does.
fn pack_q5(quants: &[u8]) -> ([u8; 4], [u8; 16]) {
    let mut qh = 0u32;
    let mut qs = [0u8; 16];
    for j in 0..16 {
        let (x0, x1) = (quants[j], quants[j + 16]);
        qs[j] = (x0 & 0x0f) | ((x1 & 0x0f) << 4);
        qh |= u32::from((x0 & 0x10) >> 4) << j;
        qh |= u32::from((x1 & 0x10) >> 4) << (j + 16);
    }
    (qh.to_le_bytes(), qs)
}

#[test]
fn q5_0_and_q5_1() {
    let mut rng = Rng(2);
    let quants: Vec<u8> = (0..32).map(|_| rng.below(32)).collect();
    let (qh, qs) = pack_q5(&quants);
    let mut b = h(-0.125).to_vec();
    b.extend_from_slice(&qh);
    b.extend_from_slice(&qs);
    let y = dequantize_to_vec(TensorType::Q5_0, &b).unwrap();
    for (e, &q) in quants.iter().enumerate() {
        assert_eq!(y[e], (i32::from(q) - 16) as f32 * -0.125, "element {e}");
    }

    let mut b = h(0.2).to_vec();
    b.extend_from_slice(&h(0.5));
    b.extend_from_slice(&qh);
    b.extend_from_slice(&qs);
    let y = dequantize_to_vec(TensorType::Q5_1, &b).unwrap();
    for (e, &q) in quants.iter().enumerate() {
        assert_eq!(y[e], f32::from(q) * hf(0.2) + 0.5, "element {e}");
    }
}

#[test]
fn q8_0() {
    let mut b = h(0.5).to_vec();
    b.extend((0..32).map(|i| (i as i8 * 4 - 64) as u8));
    let y = dequantize_to_vec(TensorType::Q8_0, &b).unwrap();
    for (e, v) in y.iter().enumerate() {
        assert_eq!(*v, (e as f32 * 4.0 - 64.0) * 0.5);
    }
}

/// Packs eight 6-bit scales and mins as quantize_row_q4_K_ref does.
fn pack_scales_k4(sc: &[u8; 8], mn: &[u8; 8]) -> [u8; 12] {
    let mut s = [0u8; 12];
    for j in 0..8 {
        if j < 4 {
            s[j] = sc[j];
            s[j + 4] = mn[j];
        } else {
            s[j + 4] = (sc[j] & 0x0f) | ((mn[j] & 0x0f) << 4);
            s[j - 4] |= (sc[j] >> 4) << 6;
            s[j] |= (mn[j] >> 4) << 6;
        }
    }
    s
}

fn scales_and_mins(rng: &mut Rng) -> ([u8; 8], [u8; 8]) {
    let mut sc = [0u8; 8];
    let mut mn = [0u8; 8];
    for j in 0..8 {
        sc[j] = rng.below(64);
        mn[j] = rng.below(64);
    }
    // the extremes of the 6-bit range, where the packing's top bits matter
    sc[7] = 63;
    mn[4] = 63;
    (sc, mn)
}

#[test]
fn q4_k() {
    let mut rng = Rng(3);
    let (sc, mn) = scales_and_mins(&mut rng);
    let quants: Vec<u8> = (0..256).map(|_| rng.below(16)).collect();
    let mut qs = [0u8; 128];
    for c in 0..4 {
        for l in 0..32 {
            qs[32 * c + l] = quants[64 * c + l] | (quants[64 * c + 32 + l] << 4);
        }
    }
    let (d, dmin) = (0.01f32, 0.002f32);
    let mut b = h(d).to_vec();
    b.extend_from_slice(&h(dmin));
    b.extend_from_slice(&pack_scales_k4(&sc, &mn));
    b.extend_from_slice(&qs);
    let y = dequantize_to_vec(TensorType::Q4_K, &b).unwrap();
    for (e, &q) in quants.iter().enumerate() {
        let s = e / 32;
        let want = hf(d) * f32::from(sc[s]) * f32::from(q) - hf(dmin) * f32::from(mn[s]);
        assert!(
            (y[e] - want).abs() <= 1e-6,
            "element {e}: {} vs {want}",
            y[e]
        );
    }
}

#[test]
fn q5_k() {
    let mut rng = Rng(4);
    let (sc, mn) = scales_and_mins(&mut rng);
    let quants: Vec<u8> = (0..256).map(|_| rng.below(32)).collect();
    // quantize_row_q5_K_ref's packing
    let mut qh = [0u8; 32];
    let mut ql = [0u8; 128];
    let (mut m1, mut m2) = (1u8, 2u8);
    for n in 0..4 {
        for j in 0..32 {
            let mut l1 = quants[64 * n + j];
            if l1 > 15 {
                l1 -= 16;
                qh[j] |= m1;
            }
            let mut l2 = quants[64 * n + j + 32];
            if l2 > 15 {
                l2 -= 16;
                qh[j] |= m2;
            }
            ql[32 * n + j] = l1 | (l2 << 4);
        }
        m1 <<= 2;
        m2 <<= 2;
    }
    let (d, dmin) = (0.02f32, 0.003f32);
    let mut b = h(d).to_vec();
    b.extend_from_slice(&h(dmin));
    b.extend_from_slice(&pack_scales_k4(&sc, &mn));
    b.extend_from_slice(&qh);
    b.extend_from_slice(&ql);
    let y = dequantize_to_vec(TensorType::Q5_K, &b).unwrap();
    for (e, &q) in quants.iter().enumerate() {
        let s = e / 32;
        let want = hf(d) * f32::from(sc[s]) * f32::from(q) - hf(dmin) * f32::from(mn[s]);
        assert!(
            (y[e] - want).abs() <= 1e-6,
            "element {e}: {} vs {want}",
            y[e]
        );
    }
}

#[test]
fn q6_k() {
    let mut rng = Rng(5);
    let quants: Vec<u8> = (0..256).map(|_| rng.below(64)).collect();
    let scales: Vec<i8> = (0..16).map(|_| rng.below(256) as i8).collect();
    // quantize_row_q6_K_ref's packing
    let mut ql = [0u8; 128];
    let mut qh = [0u8; 64];
    for half in 0..2 {
        let (j, ql, qh) = (
            128 * half,
            &mut ql[64 * half..64 * half + 64],
            &mut qh[32 * half..32 * half + 32],
        );
        for l in 0..32 {
            let q = |k: usize| quants[j + l + 32 * k];
            ql[l] = (q(0) & 0x0f) | ((q(2) & 0x0f) << 4);
            ql[l + 32] = (q(1) & 0x0f) | ((q(3) & 0x0f) << 4);
            qh[l] = (q(0) >> 4) | ((q(1) >> 4) << 2) | ((q(2) >> 4) << 4) | ((q(3) >> 4) << 6);
        }
    }
    let d = 0.004f32;
    let mut b = ql.to_vec();
    b.extend_from_slice(&qh);
    b.extend(scales.iter().map(|&s| s as u8));
    b.extend_from_slice(&h(d));
    assert_eq!(b.len(), 210);
    let y = dequantize_to_vec(TensorType::Q6_K, &b).unwrap();
    for (e, &q) in quants.iter().enumerate() {
        let want = hf(d) * f32::from(scales[e / 16]) * (i32::from(q) - 32) as f32;
        assert_eq!(y[e], want, "element {e}");
    }
}

#[test]
fn refuses_partial_blocks_and_wrong_output_sizes() {
    let err = dequantize(TensorType::Q8_0, &[0; 35], &mut [0.0; 32]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "35 bytes are not a whole number of Q8_0 blocks of 34 bytes"
    );
    let err = dequantize(TensorType::Q4_K, &[0; 144], &mut [0.0; 255]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "1 Q4_K blocks hold 256 values, but the output has room for 255"
    );
}
