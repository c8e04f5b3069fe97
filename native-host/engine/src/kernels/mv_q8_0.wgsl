// Q8_0, 34-byte blocks: d (f16), 32 signed bytes. Only 2-byte aligned.
fn part_dot(o: u32, p: u32) -> f32 {
    let b = o + p * 34u;
    let d = f16_lo(ld16(b));
    let x = p * X_PART;
    var s = 0.0;
    for (var i = 0u; i < 8u; i++) {
        s += dot(signed_bytes(ld32(b + 2u + 4u * i)), X[x + i]);
    }
    return d * s;
}

// The part's 32 values, for the matrix-matrix kernel.
fn part_load(o: u32, p: u32) -> array<vec4<f32>, 8> {
    let b = o + p * 34u;
    let d = f16_lo(ld16(b));
    var r: array<vec4<f32>, 8>;
    for (var i = 0u; i < 8u; i++) {
        r[i] = d * signed_bytes(ld32(b + 2u + 4u * i));
    }
    return r;
}
