//! The unquantised types: one element per "block".

pub(super) fn f32_block(b: &[u8], y: &mut [f32]) {
    y[0] = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
}

pub(super) fn f16_block(b: &[u8], y: &mut [f32]) {
    y[0] = super::f16_at(b, 0);
}

/// bfloat16 is the top half of an f32, so widening is a shift.
pub(super) fn bf16_block(b: &[u8], y: &mut [f32]) {
    y[0] = f32::from_bits(u32::from(u16::from_le_bytes([b[0], b[1]])) << 16);
}
