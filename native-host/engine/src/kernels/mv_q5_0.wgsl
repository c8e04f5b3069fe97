// Q5_0, 22-byte blocks: d (f16), qh (u32: bit j is element j's fifth bit), 16 bytes of nibbles;
// value = d * (q - 16). Only 2-byte aligned.
fn part_dot(o: u32, p: u32) -> f32 {
    let b = o + p * 22u;
    let d = f16_lo(ld16(b));
    let qh = ld32(b + 2u);
    let x = p * X_PART;
    var s = 0.0;
    for (var i = 0u; i < 4u; i++) {
        let q = ld32(b + 6u + 4u * i);
        let h0 = vec4<f32>((vec4<u32>(qh) >> (vec4<u32>(0u, 1u, 2u, 3u) + 4u * i)) & vec4<u32>(1u));
        let h1 = vec4<f32>((vec4<u32>(qh) >> (vec4<u32>(16u, 17u, 18u, 19u) + 4u * i)) & vec4<u32>(1u));
        s += dot(nibbles(q) + 16.0 * h0 - 16.0, X[x + i]);
        s += dot(nibbles(q >> 4u) + 16.0 * h1 - 16.0, X[x + 4u + i]);
    }
    return d * s;
}

// The part's 32 values, for the matrix-matrix kernel.
fn part_load(o: u32, p: u32) -> array<vec4<f32>, 8> {
    let b = o + p * 22u;
    let d = f16_lo(ld16(b));
    let qh = ld32(b + 2u);
    var r: array<vec4<f32>, 8>;
    for (var i = 0u; i < 4u; i++) {
        let q = ld32(b + 6u + 4u * i);
        let h0 = vec4<f32>((vec4<u32>(qh) >> (vec4<u32>(0u, 1u, 2u, 3u) + 4u * i)) & vec4<u32>(1u));
        let h1 = vec4<f32>((vec4<u32>(qh) >> (vec4<u32>(16u, 17u, 18u, 19u) + 4u * i)) & vec4<u32>(1u));
        r[i] = d * (nibbles(q) + 16.0 * h0 - 16.0);
        r[4u + i] = d * (nibbles(q >> 4u) + 16.0 * h1 - 16.0);
    }
    return r;
}
