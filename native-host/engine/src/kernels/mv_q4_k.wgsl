// Q4_K, 144-byte super-blocks of 256: d, dmin (f16), 12 scale bytes, 128 bytes of nibbles (each
// 32 bytes hold two sub-blocks: low nibbles, then high). Part s of a block is sub-block s:
// value = d * sc * q - dmin * m.
fn part_dot(o: u32, p: u32) -> f32 {
    let w = (o >> 2u) + (p / 8u) * 36u;
    let s = p % 8u;
    let dm = unpack2x16float(W[w]);
    let sm = scale_min_k4(w, s);
    let qs = w + 4u + 8u * (s / 2u);
    let shift = 4u * (s & 1u);
    let x = p * X_PART;
    var sq = 0.0;
    var sx = 0.0;
    for (var i = 0u; i < 8u; i++) {
        let xv = X[x + i];
        sq += dot(nibbles(W[qs + i] >> shift), xv);
        sx += hsum(xv);
    }
    return dm.x * sm.x * sq - dm.y * sm.y * sx;
}

// The part's 32 values, for the matrix-matrix kernel.
fn part_load(o: u32, p: u32) -> array<vec4<f32>, 8> {
    let w = (o >> 2u) + (p / 8u) * 36u;
    let s = p % 8u;
    let dm = unpack2x16float(W[w]);
    let sm = scale_min_k4(w, s);
    let qs = w + 4u + 8u * (s / 2u);
    let shift = 4u * (s & 1u);
    let a = dm.x * sm.x;
    let m = dm.y * sm.y;
    var r: array<vec4<f32>, 8>;
    for (var i = 0u; i < 8u; i++) {
        r[i] = a * nibbles(W[qs + i] >> shift) - m;
    }
    return r;
}
