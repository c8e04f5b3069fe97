// F32 rows: a part is 32 floats, 32 words.
fn part_dot(o: u32, p: u32) -> f32 {
    let w = (o >> 2u) + p * 32u;
    let x = p * X_PART;
    var s = 0.0;
    for (var i = 0u; i < 8u; i++) {
        let k = w + 4u * i;
        let v = bitcast<vec4<f32>>(vec4<u32>(W[k], W[k + 1u], W[k + 2u], W[k + 3u]));
        s += dot(v, X[x + i]);
    }
    return s;
}

// The part's 32 values, for the matrix-matrix kernel.
fn part_load(o: u32, p: u32) -> array<vec4<f32>, 8> {
    let w = (o >> 2u) + p * 32u;
    var r: array<vec4<f32>, 8>;
    for (var i = 0u; i < 8u; i++) {
        let k = w + 4u * i;
        r[i] = bitcast<vec4<f32>>(vec4<u32>(W[k], W[k + 1u], W[k + 2u], W[k + 3u]));
    }
    return r;
}
