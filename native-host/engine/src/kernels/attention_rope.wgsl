// Decode's RoPE and cache store folded into its attention, one dispatch fewer a layer: the query
// arrives unrotated, and the step's key and value as the projection wrote them (f32), not yet in
// the cache. A workgroup rotates its query as it stages it. Where its keys reach the step's
// position, it takes that key and value from here (new_key_word, new_value_word: rotated and
// packed to f16 exactly as rope_qk.wgsl stores them) instead of from the cache, and one workgroup
// per KV head stores them into the cache for later steps (store_new). No workgroup reads the
// cache at the step's position, so that store races with no read. Decode only: one token, at
// STEP.pos. The arithmetic is rope_qk.wgsl's, so the output and the cache are what the separate
// dispatch gives.

@group(0) @binding(1) var<storage, read_write> K: array<u32>;
@group(0) @binding(2) var<storage, read_write> V: array<u32>;
// After the form's P (binding 6).
@group(0) @binding(7) var<storage, read> K_NEW: array<f32>;
@group(0) @binding(8) var<storage, read> V_NEW: array<f32>;
@group(0) @binding(9) var<storage, read> FREQ_FACTORS: array<f32>;
@group(0) @binding(10) var<uniform> ROPE: RopeParams;

const ROTATES: bool = true;

// Element e of the query head that starts at q0, rotated for the step's position.
fn query_at(q0: u32, e: u32) -> f32 {
    if (e >= ROPE.n_dims) {
        return Q[q0 + e];
    }
    let i = pair_of(ROPE, e);
    let ab = pair(ROPE, i);
    return rotate(Q[q0 + ab.x], Q[q0 + ab.y], rotation(ROPE, i, STEP.pos), e == ab.x);
}

// Whether dims 2w and 2w + 1 are rotated as one pair (normal ordering), so that one rotation
// serves both.
fn word_is_pair(w: u32) -> bool {
    return ROPE.neox == 0u && 2u * w < ROPE.n_dims;
}

// Dims 2w and 2w + 1 of the query head that starts at q0, rotated.
fn query_word(q0: u32, w: u32) -> vec2<f32> {
    let e = q0 + 2u * w;
    if (word_is_pair(w)) {
        let cs = rotation(ROPE, w, STEP.pos);
        return vec2<f32>(rotate(Q[e], Q[e + 1u], cs, true), rotate(Q[e], Q[e + 1u], cs, false));
    }
    return vec2<f32>(query_at(q0, 2u * w), query_at(q0, 2u * w + 1u));
}

// Element e of the step's key for `kv_head`, rotated (rope_qk.wgsl's rotated_key).
fn new_key_at(kv_head: u32, e: u32) -> f32 {
    let src = kv_head * P.head_dim;
    if (e >= ROPE.n_dims) {
        return K_NEW[src + e];
    }
    let i = pair_of(ROPE, e);
    let ab = pair(ROPE, i);
    return rotate(K_NEW[src + ab.x], K_NEW[src + ab.y], rotation(ROPE, i, STEP.pos), e == ab.x);
}

// Cache word w (dims 2w and 2w + 1) of the step's key for `kv_head`.
fn new_key_word(kv_head: u32, w: u32) -> u32 {
    if (word_is_pair(w)) {
        let e = kv_head * P.head_dim + 2u * w;
        let cs = rotation(ROPE, w, STEP.pos);
        let x0 = K_NEW[e];
        let x1 = K_NEW[e + 1u];
        return pack2x16float(vec2<f32>(rotate(x0, x1, cs, true), rotate(x0, x1, cs, false)));
    }
    return pack2x16float(vec2<f32>(new_key_at(kv_head, 2u * w), new_key_at(kv_head, 2u * w + 1u)));
}

// The same of its value.
fn new_value_word(kv_head: u32, w: u32) -> u32 {
    let src = kv_head * P.head_dim + 2u * w;
    return pack2x16float(vec2<f32>(V_NEW[src], V_NEW[src + 1u]));
}

// Stores word w of the step's key and value for `kv_head` into the cache at its position.
fn store_new(kv_head: u32, w: u32, k: u32, v: u32) {
    let word = cache_word(STEP.pos, kv_head, w);
    K[word] = k;
    V[word] = v;
}
