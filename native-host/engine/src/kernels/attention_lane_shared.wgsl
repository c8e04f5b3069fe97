// Causal attention of a prefill batch on CPU drivers with subgroups: attention_lane.wgsl's
// invocation per (query head, new token), with the loads of keys and values shared across the
// lanes of a subgroup. On lavapipe every load from a storage buffer is a gather across the SIMD
// lanes, and there each lane of the plain form loads the same eight keys, one gather per key and
// dimension. Here the lanes of a subgroup are consecutive tokens of one head (the Rust side pads
// each head's tokens to whole subgroups), so lane j loads key j of the block and the others take
// it by broadcast: one load per cache word (two dims) for eight keys instead of eight.
//
// Every lane stays in the loops for the broadcasts, so the subgroup walks the union of its
// tokens' key ranges and each lane masks the keys it does not attend to; lanes without a token
// (past the batch, past the last head) compute on clamped indices and write nothing. Should a
// subgroup ever hold tokens of two KV heads (a driver laying lanes out otherwise), it loads each
// key itself as the plain form does. Needs subgroups of at least 8 lanes. Bindings and semantics
// in attention_common.wgsl.

@group(0) @binding(5) var<uniform> P: Params;

const WG: u32 = 64u;
const MASKED: f32 = -3.4028235e38;

// Word w (two dims) of keys b..b+8, as vec4s of their even and odd dims (`halves`): by broadcast
// of what lane j loaded at `mine` (its own key of the block), or, when the subgroup's lanes do not
// share a KV head, loaded by this lane from each key's row `rows[j]`.
fn keys8(buf_is_k: bool, one_head: bool, mine: u32, rows: array<u32, 8>, w: u32) -> array<vec4<f32>, 4> {
    var lo: vec4<u32>;
    var hi: vec4<u32>;
    if (one_head) {
        var x: u32;
        if (buf_is_k) {
            x = K[mine + w];
        } else {
            x = V[mine + w];
        }
        lo = vec4<u32>(subgroupBroadcast(x, 0u), subgroupBroadcast(x, 1u), subgroupBroadcast(x, 2u), subgroupBroadcast(x, 3u));
        hi = vec4<u32>(subgroupBroadcast(x, 4u), subgroupBroadcast(x, 5u), subgroupBroadcast(x, 6u), subgroupBroadcast(x, 7u));
    } else if (buf_is_k) {
        lo = vec4<u32>(K[rows[0] + w], K[rows[1] + w], K[rows[2] + w], K[rows[3] + w]);
        hi = vec4<u32>(K[rows[4] + w], K[rows[5] + w], K[rows[6] + w], K[rows[7] + w]);
    } else {
        lo = vec4<u32>(V[rows[0] + w], V[rows[1] + w], V[rows[2] + w], V[rows[3] + w]);
        hi = vec4<u32>(V[rows[4] + w], V[rows[5] + w], V[rows[6] + w], V[rows[7] + w]);
    }
    let a = halves(lo);
    let b = halves(hi);
    // Keys 0-3 and 4-7 of the even dim, then of the odd one.
    return array<vec4<f32>, 4>(a[0], b[0], a[1], b[1]);
}

@compute @workgroup_size(WG)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(subgroup_invocation_id) lane: u32,
) {
    let i = gid.x + gid.y * nwg.x * WG;
    // P.max_tokens is each head's token count padded to whole subgroups.
    let h_raw = i / P.max_tokens;
    let r = i % P.max_tokens;
    let has_token = h_raw < P.heads && r < STEP.tokens;
    let h = min(h_raw, P.heads - 1u);
    let hd = P.head_dim;
    let kv_head = h / (P.heads / P.kv_heads);
    let q0 = (min(r, STEP.tokens - 1u) * P.heads + h) * hd;
    var range = key_range(min(r, STEP.tokens - 1u));
    if (!has_token) {
        range = vec2<u32>(0xffffffffu, 0u);
    }
    // The subgroup's keys: the union of its tokens' ranges (they overlap: consecutive tokens).
    let first = subgroupMin(range.x);
    let end = subgroupMax(range.y);
    let one_head = subgroupMin(kv_head) == subgroupMax(kv_head);
    if (has_token) {
        for (var d = 0u; d < hd; d++) {
            O[q0 + d] = 0.0;
        }
    }
    var m = MASKED;
    var l = 0.0;
    let own_a = vec4<u32>(0u, 1u, 2u, 3u);
    let own_b = vec4<u32>(4u, 5u, 6u, 7u);
    for (var b = first; b < end; b += 8u) {
        let last = end - 1u;
        let mine = cache_word(min(b + (lane & 7u), last), kv_head, 0u);
        let rows = array<u32, 8>(
            cache_word(min(b, last), kv_head, 0u), cache_word(min(b + 1u, last), kv_head, 0u),
            cache_word(min(b + 2u, last), kv_head, 0u), cache_word(min(b + 3u, last), kv_head, 0u),
            cache_word(min(b + 4u, last), kv_head, 0u), cache_word(min(b + 5u, last), kv_head, 0u),
            cache_word(min(b + 6u, last), kv_head, 0u), cache_word(min(b + 7u, last), kv_head, 0u),
        );
        var sa = vec4<f32>(0.0);
        var sb = vec4<f32>(0.0);
        for (var w = 0u; w < hd / 2u; w++) {
            let q_even = Q[q0 + 2u * w];
            let q_odd = Q[q0 + 2u * w + 1u];
            let k = keys8(true, one_head, mine, rows, w);
            sa += q_even * k[0] + q_odd * k[2];
            sb += q_even * k[1] + q_odd * k[3];
        }
        let ka = vec4<u32>(b) + own_a;
        let kb = vec4<u32>(b) + own_b;
        let in_a = (ka >= vec4<u32>(range.x)) & (ka < vec4<u32>(range.y));
        let in_b = (kb >= vec4<u32>(range.x)) & (kb < vec4<u32>(range.y));
        sa = select(vec4<f32>(MASKED), sa * P.scale, in_a);
        sb = select(vec4<f32>(MASKED), sb * P.scale, in_b);
        let m_new = max(m, max(max(max(sa.x, sa.y), max(sa.z, sa.w)), max(max(sb.x, sb.y), max(sb.z, sb.w))));
        let c = exp(m - m_new);
        let pa = select(vec4<f32>(0.0), exp(sa - m_new), in_a);
        let pb = select(vec4<f32>(0.0), exp(sb - m_new), in_b);
        l = l * c + dot(pa, vec4<f32>(1.0)) + dot(pb, vec4<f32>(1.0));
        for (var w = 0u; w < hd / 2u; w++) {
            let v = keys8(false, one_head, mine, rows, w);
            if (has_token) {
                let o = q0 + 2u * w;
                O[o] = O[o] * c + dot(pa, v[0]) + dot(pb, v[1]);
                O[o + 1u] = O[o + 1u] * c + dot(pa, v[2]) + dot(pb, v[3]);
            }
        }
        m = m_new;
    }
    if (has_token) {
        for (var d = 0u; d < hd; d++) {
            O[q0 + d] = O[q0 + d] / l;
        }
    }
}
