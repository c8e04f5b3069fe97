// Q4_0, 18-byte blocks: d (f16), 16 bytes of nibbles; low nibbles are elements 0..16, high
// nibbles 16..32; value = d * (q - 8). Only 2-byte aligned.
fn part_dot(o: u32, p: u32) -> f32 {
    let b = o + p * 18u;
    let d = f16_lo(ld16(b));
    let x = p * X_PART;
    var s = 0.0;
    for (var i = 0u; i < 4u; i++) {
        let q = ld32(b + 2u + 4u * i);
        s += dot(nibbles(q) - 8.0, X[x + i]) + dot(nibbles(q >> 4u) - 8.0, X[x + 4u + i]);
    }
    return d * s;
}

// The part's 32 values, for the matrix-matrix kernel.
fn part_load(o: u32, p: u32) -> array<vec4<f32>, 8> {
    let b = o + p * 18u;
    let d = f16_lo(ld16(b));
    var r: array<vec4<f32>, 8>;
    for (var i = 0u; i < 4u; i++) {
        let q = ld32(b + 2u + 4u * i);
        r[i] = d * (nibbles(q) - 8.0);
        r[4u + i] = d * (nibbles(q >> 4u) - 8.0);
    }
    return r;
}
