// Q4_1, 20-byte blocks: d, m (f16), 16 bytes of nibbles; value = d * q + m, so a part's sum is
// d * Σ q·x + m * Σ x.
fn part_dot(o: u32, p: u32) -> f32 {
    let w = (o >> 2u) + p * 5u;
    let dm = unpack2x16float(W[w]);
    let x = p * X_PART;
    var sq = 0.0;
    var sx = 0.0;
    for (var i = 0u; i < 4u; i++) {
        let q = W[w + 1u + i];
        let x0 = X[x + i];
        let x1 = X[x + 4u + i];
        sq += dot(nibbles(q), x0) + dot(nibbles(q >> 4u), x1);
        sx += hsum(x0 + x1);
    }
    return dm.x * sq + dm.y * sx;
}

// The part's 32 values, for the matrix-matrix kernel.
fn part_load(o: u32, p: u32) -> array<vec4<f32>, 8> {
    let w = (o >> 2u) + p * 5u;
    let dm = unpack2x16float(W[w]);
    var r: array<vec4<f32>, 8>;
    for (var i = 0u; i < 4u; i++) {
        let q = W[w + 1u + i];
        r[i] = dm.x * nibbles(q) + dm.y;
        r[4u + i] = dm.x * nibbles(q >> 4u) + dm.y;
    }
    return r;
}
