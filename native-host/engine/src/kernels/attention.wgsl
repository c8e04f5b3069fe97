// Attention of one new token over the KV cache (decode), one workgroup per query head: scores
// q·k_t * scale for t < n_kv, their softmax, and the weighted sum of v_t. Grouped-query
// attention: query head h reads KV head h / (heads / kv_heads). The cache holds, per position,
// kv_heads × head_dim floats. Scores go through a storage scratch row per head, since the
// context is longer than workgroup memory.

struct Params {
    head_dim: u32,
    heads: u32,
    kv_heads: u32,
    _unused: u32,
    scratch_stride: u32,
    scale: f32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<storage, read> Q: array<f32>;
@group(0) @binding(1) var<storage, read> K: array<f32>;
@group(0) @binding(2) var<storage, read> V: array<f32>;
@group(0) @binding(3) var<storage, read_write> S: array<f32>;
@group(0) @binding(4) var<storage, read_write> O: array<f32>;
// The forward pass's per-token values: attention reads positions 0..n_kv.
struct Step {
    pos: u32,
    n_kv: u32,
    _pad0: u32,
    _pad1: u32,
}
@group(0) @binding(5) var<uniform> STEP: Step;
@group(0) @binding(6) var<uniform> P: Params;

const WG: u32 = 64u;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wg: vec3<u32>) {
    let h = wg.x;
    let kv_stride = P.kv_heads * P.head_dim;
    let q0 = h * P.head_dim;
    let k0 = (h / (P.heads / P.kv_heads)) * P.head_dim;
    let s0 = h * P.scratch_stride;
    var m = -3.4028235e38;
    for (var t = li; t < STEP.n_kv; t += WG) {
        var dot = 0.0;
        for (var d = 0u; d < P.head_dim; d++) {
            dot += Q[q0 + d] * K[t * kv_stride + k0 + d];
        }
        let s = dot * P.scale;
        S[s0 + t] = s;
        m = max(m, s);
    }
    m = reduce(li, m, true);
    var sum = 0.0;
    for (var t = li; t < STEP.n_kv; t += WG) {
        let e = exp(S[s0 + t] - m);
        S[s0 + t] = e;
        sum += e;
    }
    sum = reduce(li, sum, false);
    // Every invocation reads every score below, written by others.
    storageBarrier();
    for (var d = li; d < P.head_dim; d += WG) {
        var acc = 0.0;
        for (var t = 0u; t < STEP.n_kv; t++) {
            acc += S[s0 + t] * V[t * kv_stride + k0 + d];
        }
        O[q0 + d] = acc / sum;
    }
}
