// Q4_K/Q5_K's twelve scale bytes (words w+1..w+4 of the block) hold eight 6-bit scales and eight
// 6-bit minimums: the first four of each whole in the low 6 bits of bytes 0..4 and 4..8, the last
// four as a low nibble in bytes 8..12 plus two high bits in the spare top bits of bytes 0..8.

fn scale_byte(w: u32, k: u32) -> u32 {
    return (W[w + 1u + k / 4u] >> (8u * (k % 4u))) & 0xffu;
}

// (scale, min) of sub-block j of the block at word w.
fn scale_min_k4(w: u32, j: u32) -> vec2<f32> {
    if (j < 4u) {
        return vec2<f32>(f32(scale_byte(w, j) & 63u), f32(scale_byte(w, j + 4u) & 63u));
    }
    let sc = (scale_byte(w, j + 4u) & 15u) | ((scale_byte(w, j - 4u) >> 6u) << 4u);
    let m = (scale_byte(w, j + 4u) >> 4u) | ((scale_byte(w, j) >> 6u) << 4u);
    return vec2<f32>(f32(sc), f32(m));
}
