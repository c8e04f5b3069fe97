// Gemma's q/k head norms, RoPE of the queries and keys, and the keys' store into the cache, in
// one dispatch (where rope_qk.wgsl follows two RMSNorm dispatches). One workgroup per head of
// every token: it takes the head's mean square as rmsnorm.wgsl does (the same strided sums and
// the same reduction, so the values are the same to the bit), scales each value by it and the
// norm's weight, and rotates. Queries go from Q_RAW to Q, keys from K_RAW to K_CACHE at the
// tokens' positions; dims from n_dims on are normed and stored unrotated.

@group(0) @binding(0) var<storage, read> Q_RAW: array<f32>;
@group(0) @binding(1) var<storage, read> K_RAW: array<f32>;
@group(0) @binding(2) var<storage, read_write> Q: array<f32>;
@group(0) @binding(3) var<storage, read_write> K_CACHE: array<f32>;
@group(0) @binding(4) var<storage, read> Q_NORM: array<f32>;
@group(0) @binding(5) var<storage, read> K_NORM: array<f32>;
@group(0) @binding(6) var<storage, read> FREQ_FACTORS: array<f32>;
@group(0) @binding(7) var<uniform> STEP: Step;
@group(0) @binding(8) var<uniform> P: Params;

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

fn store(is_q: bool, dst: u32, e: u32, v: f32) {
    if (is_q) {
        Q[dst + e] = v;
    } else {
        K_CACHE[dst + e] = v;
    }
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
    var dst: u32;
    if (is_q) {
        src = (token * P.heads + head) * P.head_dim;
        dst = src;
    } else {
        let kh = head - P.heads;
        src = (token * P.kv_heads + kh) * P.head_dim;
        dst = ((STEP.pos + token) * P.kv_heads + kh) * P.head_dim;
    }
    var s = 0.0;
    for (var i = li; i < P.head_dim; i += WG) {
        let v = raw(is_q, src, i);
        s += v * v;
    }
    let scale = 1.0 / sqrt(reduce(li, s, false) / f32(P.head_dim) + P.eps);
    let cs_pos = STEP.pos + token;
    for (var i = li; i < P.head_dim / 2u; i += WG) {
        if (i < P.n_dims / 2u) {
            let cs = rotation(i, cs_pos);
            let ab = pair(i);
            let x0 = normed(is_q, src, ab.x, scale);
            let x1 = normed(is_q, src, ab.y, scale);
            store(is_q, dst, ab.x, x0 * cs.x - x1 * cs.y);
            store(is_q, dst, ab.y, x0 * cs.y + x1 * cs.x);
        } else {
            let e = P.n_dims + 2u * (i - P.n_dims / 2u);
            store(is_q, dst, e, normed(is_q, src, e, scale));
            store(is_q, dst, e + 1u, normed(is_q, src, e + 1u, scale));
        }
    }
}
