// Q5_1, 24-byte blocks: d, m (f16), qh (u32), 16 bytes of nibbles; value = d * q + m.
fn part_dot(o: u32, p: u32) -> f32 {
    let w = (o >> 2u) + p * 6u;
    let dm = unpack2x16float(W[w]);
    let qh = W[w + 1u];
    let x = p * X_PART;
    var sq = 0.0;
    var sx = 0.0;
    for (var i = 0u; i < 4u; i++) {
        let q = W[w + 2u + i];
        let h0 = vec4<f32>((vec4<u32>(qh) >> (vec4<u32>(0u, 1u, 2u, 3u) + 4u * i)) & vec4<u32>(1u));
        let h1 = vec4<f32>((vec4<u32>(qh) >> (vec4<u32>(16u, 17u, 18u, 19u) + 4u * i)) & vec4<u32>(1u));
        let x0 = X[x + i];
        let x1 = X[x + 4u + i];
        sq += dot(nibbles(q) + 16.0 * h0, x0) + dot(nibbles(q >> 4u) + 16.0 * h1, x1);
        sx += hsum(x0 + x1);
    }
    return dm.x * sq + dm.y * sx;
}

// The part's 32 values, for the matrix-matrix kernel.
fn part_load(o: u32, p: u32) -> array<vec4<f32>, 8> {
    let w = (o >> 2u) + p * 6u;
    let dm = unpack2x16float(W[w]);
    let qh = W[w + 1u];
    var r: array<vec4<f32>, 8>;
    for (var i = 0u; i < 4u; i++) {
        let q = W[w + 2u + i];
        let h0 = vec4<f32>((vec4<u32>(qh) >> (vec4<u32>(0u, 1u, 2u, 3u) + 4u * i)) & vec4<u32>(1u));
        let h1 = vec4<f32>((vec4<u32>(qh) >> (vec4<u32>(16u, 17u, 18u, 19u) + 4u * i)) & vec4<u32>(1u));
        r[i] = dm.x * (nibbles(q) + 16.0 * h0) + dm.y;
        r[4u + i] = dm.x * (nibbles(q >> 4u) + 16.0 * h1) + dm.y;
    }
    return r;
}
