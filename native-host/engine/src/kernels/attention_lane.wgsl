// Causal attention with one invocation per (query head, new token), for CPU drivers: the
// workgroup form (attention.wgsl) meets at barriers several times per 64 keys, and on lavapipe a
// barrier switches every SIMD batch of the workgroup out and back in, which cost more than the
// arithmetic. Here each invocation runs its own online softmax over its keys with no barrier and
// no workgroup memory. Consecutive invocations are consecutive tokens of one head, so the lanes
// of a SIMD batch read the same keys and values. Scalar arrays, not vec4: lavapipe's vec4 loads
// and stores of a runtime-sized storage array cost more than four scalar ones (15× here).
// Bindings and semantics in attention_common.wgsl.

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
    let range = key_range(r);
    let start = range.x;
    let end = range.y;
    let hd = P.head_dim;
    let q0 = (r * P.heads + h) * hd;
    let kv_head = h / (P.heads / P.kv_heads);
    // The running sum lives in O itself: a private array indexed by a loop variable becomes a
    // chain of selects on lavapipe, far slower than memory.
    for (var d = 0u; d < hd; d++) {
        O[q0 + d] = 0.0;
    }
    var m = -3.4028235e38;
    var l = 0.0;
    // Keys eight at a time, their scores in registers: each query element is loaded once per
    // eight keys, and the running sum in O is read and written once per eight. Each cache word
    // holds two dims of a key or value.
    for (var b = start; b < end; b += 8u) {
        let n = end - b;
        // Keys past `end` are read from the clamped last position and masked out below.
        let last = end - 1u;
        let k0 = cache_word(min(b, last), kv_head, 0u);
        let k1 = cache_word(min(b + 1u, last), kv_head, 0u);
        let k2 = cache_word(min(b + 2u, last), kv_head, 0u);
        let k3 = cache_word(min(b + 3u, last), kv_head, 0u);
        let k4 = cache_word(min(b + 4u, last), kv_head, 0u);
        let k5 = cache_word(min(b + 5u, last), kv_head, 0u);
        let k6 = cache_word(min(b + 6u, last), kv_head, 0u);
        let k7 = cache_word(min(b + 7u, last), kv_head, 0u);
        var sa = vec4<f32>(0.0);
        var sb = vec4<f32>(0.0);
        for (var w = 0u; w < hd / 2u; w++) {
            let q_even = Q[q0 + 2u * w];
            let q_odd = Q[q0 + 2u * w + 1u];
            let ka = halves(vec4<u32>(K[k0 + w], K[k1 + w], K[k2 + w], K[k3 + w]));
            let kb = halves(vec4<u32>(K[k4 + w], K[k5 + w], K[k6 + w], K[k7 + w]));
            sa += q_even * ka[0] + q_odd * ka[1];
            sb += q_even * kb[0] + q_odd * kb[1];
        }
        let masked = vec4<f32>(-3.4028235e38);
        sa = select(masked, sa * P.scale, vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(n));
        sb = select(masked, sb * P.scale, vec4<u32>(4u, 5u, 6u, 7u) < vec4<u32>(n));
        let m_new = max(m, max(max(max(sa.x, sa.y), max(sa.z, sa.w)), max(max(sb.x, sb.y), max(sb.z, sb.w))));
        let c = exp(m - m_new);
        let pa = select(vec4<f32>(0.0), exp(sa - m_new), vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(n));
        let pb = select(vec4<f32>(0.0), exp(sb - m_new), vec4<u32>(4u, 5u, 6u, 7u) < vec4<u32>(n));
        l = l * c + dot(pa, vec4<f32>(1.0)) + dot(pb, vec4<f32>(1.0));
        for (var w = 0u; w < hd / 2u; w++) {
            let va = halves(vec4<u32>(V[k0 + w], V[k1 + w], V[k2 + w], V[k3 + w]));
            let vb = halves(vec4<u32>(V[k4 + w], V[k5 + w], V[k6 + w], V[k7 + w]));
            let o = q0 + 2u * w;
            O[o] = O[o] * c + dot(pa, va[0]) + dot(pb, vb[0]);
            O[o + 1u] = O[o + 1u] * c + dot(pa, va[1]) + dot(pb, vb[1]);
        }
        m = m_new;
    }
    for (var d = 0u; d < hd; d++) {
        O[q0 + d] = O[q0 + d] / l;
    }
}
