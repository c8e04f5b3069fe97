// Causal attention with one invocation per (query head, new token), for CPU drivers: the
// workgroup form (attention.wgsl) meets at barriers several times per 64 keys, and on lavapipe a
// barrier switches every SIMD batch of the workgroup out and back in, which cost more than the
// arithmetic. Here each invocation runs its own online softmax over its keys with no barrier and
// no workgroup memory. Consecutive invocations are consecutive tokens of one head, so the lanes
// of a SIMD batch read the same keys and values. Scalar arrays, not vec4: lavapipe's vec4 loads
// and stores of a runtime-sized storage array cost more than four scalar ones (15× here).
// Same bindings and semantics as attention.wgsl: token r sits at pos + r and attends to the
// positions up to its own (the last `window` of them when the layer has a sliding window).

struct Params {
    head_dim: u32,
    heads: u32,
    kv_heads: u32,
    window: u32,      // 0: none
    capacity: u32,    // positions the cache holds
    scale: f32,
    max_tokens: u32,  // the dispatch's tokens per head
    _pad: u32,
}

struct Step {
    pos: u32,
    n_kv: u32,
    tokens: u32,
    _pad: u32,
}

@group(0) @binding(0) var<storage, read> Q: array<f32>;
@group(0) @binding(1) var<storage, read> K: array<f32>;
@group(0) @binding(2) var<storage, read> V: array<f32>;
@group(0) @binding(3) var<storage, read_write> O: array<f32>;
@group(0) @binding(4) var<uniform> STEP: Step;
@group(0) @binding(5) var<uniform> P: Params;

const WG: u32 = 64u;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    let h = i / P.max_tokens;
    let r = i % P.max_tokens;
    if (h >= P.heads || r >= STEP.tokens) {
        return;
    }
    let end = min(STEP.pos + r + 1u, P.capacity);
    var start = 0u;
    if (P.window > 0u && end > P.window) {
        start = end - P.window;
    }
    let hd = P.head_dim;
    let q0 = (r * P.heads + h) * hd;
    let kv_stride = P.kv_heads * hd;
    let k0 = (h / (P.heads / P.kv_heads)) * hd;
    // The running sum lives in O itself: a private array indexed by a loop variable becomes a
    // chain of selects on lavapipe, far slower than memory.
    for (var d = 0u; d < hd; d++) {
        O[q0 + d] = 0.0;
    }
    var m = -3.4028235e38;
    var l = 0.0;
    for (var t = start; t < end; t++) {
        let k = t * kv_stride + k0;
        var s = 0.0;
        for (var d = 0u; d < hd; d++) {
            s += Q[q0 + d] * K[k + d];
        }
        s *= P.scale;
        let m_new = max(m, s);
        let c = exp(m - m_new);
        let p = exp(s - m_new);
        l = l * c + p;
        for (var d = 0u; d < hd; d++) {
            O[q0 + d] = O[q0 + d] * c + p * V[k + d];
        }
        m = m_new;
    }
    for (var d = 0u; d < hd; d++) {
        O[q0 + d] = O[q0 + d] / l;
    }
}
