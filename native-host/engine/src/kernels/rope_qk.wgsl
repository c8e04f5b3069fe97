// RoPE of a step's queries and keys in one dispatch, the rotated keys written straight into
// the key cache at their positions (where a separate copy would otherwise put them): Q is
// rotated in place; K (`kv_heads` heads per token) is read and stored into K_CACHE, its
// unrotated tail (dims from n_dims on) copied as it is. One invocation per pair of every head.

@group(0) @binding(0) var<storage, read_write> Q: array<f32>;
@group(0) @binding(1) var<storage, read> K: array<f32>;
@group(0) @binding(2) var<storage, read_write> K_CACHE: array<f32>;
@group(0) @binding(3) var<storage, read> FREQ_FACTORS: array<f32>;
@group(0) @binding(4) var<uniform> STEP: Step;
@group(0) @binding(5) var<uniform> P: Params;

const WG: u32 = 64u;

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
    let rotated = i < P.n_dims / 2u;
    if (head < P.heads) {
        if (!rotated) {
            return;
        }
        let cs = rotation(i, STEP.pos + token);
        let ab = (token * P.heads + head) * P.head_dim + pair(i);
        let x0 = Q[ab.x];
        let x1 = Q[ab.y];
        Q[ab.x] = x0 * cs.x - x1 * cs.y;
        Q[ab.y] = x0 * cs.y + x1 * cs.x;
        return;
    }
    let kh = head - P.heads;
    let src = (token * P.kv_heads + kh) * P.head_dim;
    let dst = ((STEP.pos + token) * P.kv_heads + kh) * P.head_dim;
    if (!rotated) {
        let e = P.n_dims + 2u * (i - P.n_dims / 2u);
        K_CACHE[dst + e] = K[src + e];
        K_CACHE[dst + e + 1u] = K[src + e + 1u];
        return;
    }
    let cs = rotation(i, STEP.pos + token);
    let ab = pair(i);
    let x0 = K[src + ab.x];
    let x1 = K[src + ab.y];
    K_CACHE[dst + ab.x] = x0 * cs.x - x1 * cs.y;
    K_CACHE[dst + ab.y] = x0 * cs.y + x1 * cs.x;
}
