// Gemma's q/k head norms, RoPE of the queries and keys, and the keys' and values' store into the
// cache, in one dispatch (where rope_qk.wgsl follows two RMSNorm dispatches). One workgroup per
// head of every token: it takes the head's mean square as rmsnorm.wgsl does (the same strided sums
// and the same reduction, so the values are the same to the bit), scales each value by it and the
// norm's weight, and rotates. Queries go from Q_RAW to Q; keys from K_RAW, and values from V, to
// K_CACHE and V_CACHE at the tokens' positions, in f16 (kv_cache.wgsl); dims from n_dims on are
// normed and stored unrotated.

@group(0) @binding(0) var<storage, read> Q_RAW: array<f32>;
@group(0) @binding(1) var<storage, read> K_RAW: array<f32>;
@group(0) @binding(2) var<storage, read> V: array<f32>;
@group(0) @binding(3) var<storage, read_write> Q: array<f32>;
@group(0) @binding(4) var<storage, read_write> K_CACHE: array<u32>;
@group(0) @binding(5) var<storage, read_write> V_CACHE: array<u32>;
@group(0) @binding(6) var<storage, read> Q_NORM: array<f32>;
@group(0) @binding(7) var<storage, read> K_NORM: array<f32>;
@group(0) @binding(8) var<storage, read> FREQ_FACTORS: array<f32>;
@group(0) @binding(9) var<uniform> STEP: Step;
@group(0) @binding(10) var<uniform> P: RopeParams;

const WG: u32 = 64u;

// Element e of the raw head that starts at `src`.
fn raw(is_q: bool, src: u32, e: u32) -> f32 {
    if (is_q) {
        return Q_RAW[src + e];
    }
    return K_RAW[src + e];
}

// The same normed by `scale` and the head norm's weight (as rmsnorm.wgsl: x * scale * g).
fn normed(is_q: bool, src: u32, e: u32, scale: f32) -> f32 {
    var g: f32;
    if (is_q) {
        g = Q_NORM[e];
    } else {
        g = K_NORM[e];
    }
    return raw(is_q, src, e) * scale * g;
}

// Dim e of the key head at `src` normed by `scale` and, below n_dims, rotated for the token at
// `pos`.
fn normed_rotated_key(src: u32, e: u32, scale: f32, pos: u32) -> f32 {
    if (e >= P.n_dims) {
        return normed(false, src, e, scale);
    }
    let i = pair_of(P, e);
    let ab = pair(P, i);
    let x0 = normed(false, src, ab.x, scale);
    let x1 = normed(false, src, ab.y, scale);
    return rotate(x0, x1, rotation(P, i, pos), e == ab.x);
}

@compute @workgroup_size(WG)
fn main(
    @builtin(local_invocation_index) li: u32,
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let heads = P.heads + P.kv_heads;
    let row = wg.x + wg.y * nwg.x;
    let token = row / heads;
    // Whole workgroups return here: a batch shorter than the scratch writes nothing past it.
    if (row >= P.tokens * heads || token >= STEP.tokens) {
        return;
    }
    let head = row % heads;
    let is_q = head < P.heads;
    var src: u32;
    if (is_q) {
        src = (token * P.heads + head) * P.head_dim;
    } else {
        src = (token * P.kv_heads + head - P.heads) * P.head_dim;
    }
    var s = 0.0;
    for (var i = li; i < P.head_dim; i += WG) {
        let v = raw(is_q, src, i);
        s += v * v;
    }
    let scale = 1.0 / sqrt(reduce(li, s, false) / f32(P.head_dim) + P.eps);
    let pos = STEP.pos + token;
    if (is_q) {
        for (var i = li; i < P.head_dim / 2u; i += WG) {
            if (i < P.n_dims / 2u) {
                let cs = rotation(P, i, pos);
                let ab = pair(P, i);
                let x0 = normed(true, src, ab.x, scale);
                let x1 = normed(true, src, ab.y, scale);
                Q[src + ab.x] = rotate(x0, x1, cs, true);
                Q[src + ab.y] = rotate(x0, x1, cs, false);
            } else {
                let e = P.n_dims + 2u * (i - P.n_dims / 2u);
                Q[src + e] = normed(true, src, e, scale);
                Q[src + e + 1u] = normed(true, src, e + 1u, scale);
            }
        }
        return;
    }
    // A key head: word i holds dims 2i and 2i + 1, and the values' word i beside it.
    for (var i = li; i < P.head_dim / 2u; i += WG) {
        let word = cache_word(pos, head - P.heads, i);
        let e = 2u * i;
        let k0 = normed_rotated_key(src, e, scale, pos);
        let k1 = normed_rotated_key(src, e + 1u, scale, pos);
        K_CACHE[word] = pack2x16float(vec2<f32>(k0, k1));
        V_CACHE[word] = pack2x16float(vec2<f32>(V[src + e], V[src + e + 1u]));
    }
}
