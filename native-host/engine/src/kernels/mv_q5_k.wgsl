// Q5_K, 176-byte super-blocks: d, dmin (f16), 12 scale bytes, qh[32] (bit s of qh[l] is the fifth
// bit of element l of sub-block s), 128 bytes of nibbles laid out as in Q4_K.
fn part_dot(o: u32, p: u32) -> f32 {
    let w = (o >> 2u) + (p / 8u) * 44u;
    let s = p % 8u;
    let dm = unpack2x16float(W[w]);
    let sm = scale_min_k4(w, s);
    let qs = w + 12u + 8u * (s / 2u);
    let shift = 4u * (s & 1u);
    let x = p * X_PART;
    var sq = 0.0;
    var sx = 0.0;
    for (var i = 0u; i < 8u; i++) {
        let xv = X[x + i];
        let q = nibbles(W[qs + i] >> shift) + 16.0 * byte_bits(W[w + 4u + i], s);
        sq += dot(q, xv);
        sx += hsum(xv);
    }
    return dm.x * sm.x * sq - dm.y * sm.y * sx;
}

// The part's 32 values, for the matrix-matrix kernel.
fn part_load(o: u32, p: u32) -> array<vec4<f32>, 8> {
    let w = (o >> 2u) + (p / 8u) * 44u;
    let s = p % 8u;
    let dm = unpack2x16float(W[w]);
    let sm = scale_min_k4(w, s);
    let qs = w + 12u + 8u * (s / 2u);
    let shift = 4u * (s & 1u);
    let a = dm.x * sm.x;
    let m = dm.y * sm.y;
    var r: array<vec4<f32>, 8>;
    for (var i = 0u; i < 8u; i++) {
        r[i] = a * (nibbles(W[qs + i] >> shift) + 16.0 * byte_bits(W[w + 4u + i], s)) - m;
    }
    return r;
}
