// BF16 rows: a bfloat16 is the top half of an f32, so widening is a shift or a mask.
fn part_dot(o: u32, p: u32) -> f32 {
    let w = (o >> 2u) + p * 16u;
    let x = p * X_PART;
    var s = 0.0;
    for (var i = 0u; i < 8u; i++) {
        let a = W[w + 2u * i];
        let b = W[w + 2u * i + 1u];
        let v = bitcast<vec4<f32>>(vec4<u32>(a << 16u, a & 0xffff0000u, b << 16u, b & 0xffff0000u));
        s += dot(v, X[x + i]);
    }
    return s;
}

// The part's 32 values, for the matrix-matrix kernel.
fn part_load(o: u32, p: u32) -> array<vec4<f32>, 8> {
    let w = (o >> 2u) + p * 16u;
    var r: array<vec4<f32>, 8>;
    for (var i = 0u; i < 8u; i++) {
        let a = W[w + 2u * i];
        let b = W[w + 2u * i + 1u];
        r[i] = bitcast<vec4<f32>>(vec4<u32>(a << 16u, a & 0xffff0000u, b << 16u, b & 0xffff0000u));
    }
    return r;
}
