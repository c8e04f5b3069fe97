// Reading GGUF blocks from `W` (the tensor's bytes as u32 words), shared by the matrix-vector and
// matrix-matrix kernels, which both bind the weights as `W`.

// The 16 bits at byte offset `o` (2-aligned).
fn ld16(o: u32) -> u32 {
    return (W[o >> 2u] >> ((o & 2u) * 8u)) & 0xffffu;
}

// The 32 bits at byte offset `o` (2-aligned), joined from two words when `o` is not 4-aligned.
fn ld32(o: u32) -> u32 {
    let w = o >> 2u;
    if ((o & 2u) == 0u) {
        return W[w];
    }
    return (W[w] >> 16u) | (W[w + 1u] << 16u);
}

// An f16 in the low half of `w`, widened; core WGSL, so no SHADER_F16 feature is needed.
fn f16_lo(w: u32) -> f32 {
    return unpack2x16float(w).x;
}

// The low nibbles of the four bytes of `w`, byte 0 first (after `w >> 4`: the high nibbles).
fn nibbles(w: u32) -> vec4<f32> {
    return vec4<f32>((vec4<u32>(w) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(15u));
}

// Bit `b` of each of the four bytes of `w`, as 0 or 1.
fn byte_bits(w: u32, b: u32) -> vec4<f32> {
    return vec4<f32>((vec4<u32>(w) >> (vec4<u32>(0u, 8u, 16u, 24u) + b)) & vec4<u32>(1u));
}

// The four bytes of `w` as signed 8-bit integers.
fn signed_bytes(w: u32) -> vec4<f32> {
    let v = bitcast<vec4<i32>>(vec4<u32>(w) << vec4<u32>(24u, 16u, 8u, 0u)) >> vec4<u32>(24u);
    return vec4<f32>(v);
}

fn hsum(v: vec4<f32>) -> f32 {
    return v.x + v.y + v.z + v.w;
}
