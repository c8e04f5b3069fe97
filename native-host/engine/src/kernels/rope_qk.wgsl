// RoPE of a step's queries and keys in one dispatch, the rotated keys and the values written
// straight into the KV cache at their positions (where separate copies would otherwise put them):
// Q is rotated in place; K and V (`kv_heads` heads per token) are read and stored into K_CACHE and
// V_CACHE as f16 (kv_cache.wgsl), the keys' unrotated tail (dims from n_dims on) as it is.
// One invocation per pair of dims of every head: a query head's rotated pair, a key head's
// packed word (dims 2i and 2i + 1, which NeoX ordering rotates with different partners).

@group(0) @binding(0) var<storage, read_write> Q: array<f32>;
@group(0) @binding(1) var<storage, read> K: array<f32>;
@group(0) @binding(2) var<storage, read> V: array<f32>;
@group(0) @binding(3) var<storage, read_write> K_CACHE: array<u32>;
@group(0) @binding(4) var<storage, read_write> V_CACHE: array<u32>;
@group(0) @binding(5) var<storage, read> FREQ_FACTORS: array<f32>;
@group(0) @binding(6) var<uniform> STEP: Step;
@group(0) @binding(7) var<uniform> P: RopeParams;

const WG: u32 = 64u;

// Dim e of the key head that starts at `src`, rotated for the token at `pos`.
fn rotated_key(src: u32, e: u32, pos: u32) -> f32 {
    if (e >= P.n_dims) {
        return K[src + e];
    }
    let i = pair_of(P, e);
    let ab = pair(P, i);
    return rotate(K[src + ab.x], K[src + ab.y], rotation(P, i, pos), e == ab.x);
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let pairs = P.head_dim / 2u;
    let heads = P.heads + P.kv_heads;
    let idx = gid.x + gid.y * nwg.x * WG;
    if (idx >= P.tokens * heads * pairs) {
        return;
    }
    let i = idx % pairs;
    let row = idx / pairs;
    let token = row / heads;
    // A batch shorter than the scratch: keys past it must not reach the cache.
    if (token >= STEP.tokens) {
        return;
    }
    let head = row % heads;
    let pos = STEP.pos + token;
    if (head < P.heads) {
        if (i >= P.n_dims / 2u) {
            return;
        }
        let cs = rotation(P, i, pos);
        let ab = (token * P.heads + head) * P.head_dim + pair(P, i);
        let x0 = Q[ab.x];
        let x1 = Q[ab.y];
        Q[ab.x] = rotate(x0, x1, cs, true);
        Q[ab.y] = rotate(x0, x1, cs, false);
        return;
    }
    let kh = head - P.heads;
    let src = (token * P.kv_heads + kh) * P.head_dim;
    let word = cache_word(pos, kh, i);
    let e = 2u * i;
    K_CACHE[word] = pack2x16float(vec2<f32>(rotated_key(src, e, pos), rotated_key(src, e + 1u, pos)));
    V_CACHE[word] = pack2x16float(vec2<f32>(V[src + e], V[src + e + 1u]));
}
