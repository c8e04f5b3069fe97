// F16 rows: a part is 32 halves, 16 words, element 2k in the low half of word k.
fn part_dot(o: u32, p: u32) -> f32 {
    let w = (o >> 2u) + p * 16u;
    let x = p * X_PART;
    var s = 0.0;
    for (var i = 0u; i < 8u; i++) {
        let a = unpack2x16float(W[w + 2u * i]);
        let b = unpack2x16float(W[w + 2u * i + 1u]);
        s += dot(vec4<f32>(a, b), X[x + i]);
    }
    return s;
}

// The part's 32 values, for the matrix-matrix kernel.
fn part_load(o: u32, p: u32) -> array<vec4<f32>, 8> {
    let w = (o >> 2u) + p * 16u;
    var r: array<vec4<f32>, 8>;
    for (var i = 0u; i < 8u; i++) {
        r[i] = vec4<f32>(unpack2x16float(W[w + 2u * i]), unpack2x16float(W[w + 2u * i + 1u]));
    }
    return r;
}
