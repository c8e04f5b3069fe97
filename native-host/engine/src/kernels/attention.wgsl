// Causal attention of new tokens over the KV cache, one workgroup per (query head, new token);
// bindings and semantics in attention_common.wgsl. The scores are never stored: keys are taken WG
// at a time with a running maximum and sum (online softmax), so memory does not grow with the
// context and the kernel needs no scratch. Decode can also rotate its query and store its key and
// value itself, where the model's layer allows (attention_rope.wgsl); otherwise the helpers of
// attention_cache_read.wgsl read what rope_qk.wgsl left.

const WG: u32 = 64u;
const MAX_HEAD_DIM: u32 = 256u;
// Each invocation keeps the running output of pairs of dims (one cache word each).
const PAIRS_PER_INVOCATION: u32 = MAX_HEAD_DIM / 2u / WG;

// Decode has one token, and a workgroup per head leaves most of a GPU idle while it walks the
// whole cache. So with P.splits > 1 the keys are cut into that many slices of whole blocks, one
// workgroup each (wg.z), and each writes its running maximum, sum and unnormalised output to PART
// — per (token, head, slice): m, l, then head_dim values — for attention_combine.wgsl to merge.
@group(0) @binding(5) var<storage, read_write> PART: array<f32>;
@group(0) @binding(6) var<uniform> P: Params;

var<workgroup> qs: array<vec2<f32>, MAX_HEAD_DIM / 2u>;
var<workgroup> probs: array<f32, WG>;
// Where the kernel rotates (attention_rope.wgsl): the step's own key and value words, for the
// workgroup whose slice ends with its position.
var<workgroup> fresh_kv: array<vec2<u32>, MAX_HEAD_DIM / 2u>;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wg: vec3<u32>) {
    let h = wg.x;
    let r = wg.y;
    if (r >= STEP.tokens) {
        return;
    }
    let range = key_range(r);
    var start = range.x;
    var end = range.y;
    if (P.splits > 1u) {
        let slice = slice_of(range, wg.z, P.splits, WG);
        start = slice.x;
        end = slice.y;
    }
    let pairs = P.head_dim / 2u;
    let q0 = (r * P.heads + h) * P.head_dim;
    // An empty slice (past the step's position) only writes that it is empty.
    if (end > start) {
        for (var j = li; j < pairs; j += WG) {
            qs[j] = query_word(q0, j) * P.scale;
        }
    }
    let group = P.heads / P.kv_heads;
    let kv_head = h / group;
    // Rotating decode: the step's position is the last key of the slice that reaches it, and the
    // first query head of each KV head stores its key and value from its first slice.
    let fresh = ROTATES && end > start && end - 1u == STEP.pos;
    let stores = ROTATES && h % group == 0u && wg.z == 0u;
    if (fresh || stores) {
        for (var j = li; j < pairs; j += WG) {
            let kv = vec2<u32>(new_key_word(kv_head, j), new_value_word(kv_head, j));
            fresh_kv[j] = kv;
            if (stores) {
                store_new(kv_head, j, kv.x, kv.y);
            }
        }
    }
    workgroupBarrier();
    var m = -3.4028235e38;
    var l = 0.0;
    var acc: array<vec2<f32>, PAIRS_PER_INVOCATION>;
    for (var i = 0u; i < PAIRS_PER_INVOCATION; i++) {
        acc[i] = vec2<f32>(0.0);
    }
    for (var b = start; b < end; b += WG) {
        let t = b + li;
        var s = -3.4028235e38;
        if (t < end) {
            var dot2 = vec2<f32>(0.0);
            if (fresh && t == STEP.pos) {
                for (var j = 0u; j < pairs; j++) {
                    dot2 += qs[j] * unpack2x16float(fresh_kv[j].x);
                }
            } else {
                let k = cache_word(t, kv_head, 0u);
                for (var j = 0u; j < pairs; j++) {
                    dot2 += qs[j] * unpack2x16float(K[k + j]);
                }
            }
            s = dot2.x + dot2.y;
        }
        let m_new = max(m, reduce(li, s, true));
        var p = 0.0;
        if (t < end) {
            p = exp(s - m_new);
        }
        probs[li] = p;
        // `reduce` ends with a barrier, so every `probs` entry is visible after it.
        let block_sum = reduce(li, p, false);
        let c = exp(m - m_new);
        l = l * c + block_sum;
        let n = min(WG, end - b);
        // The block that ends a fresh slice ends with the step's own value.
        let own = select(0u, 1u, fresh && b + n == end);
        let cached = n - own;
        let v0 = cache_word(b, kv_head, 0u);
        let v_stride = P.kv_heads * pairs;
        for (var i = 0u; i < PAIRS_PER_INVOCATION; i++) {
            let j = li + i * WG;
            if (j < pairs) {
                var a = acc[i] * c;
                for (var u = 0u; u < cached; u++) {
                    a += probs[u] * unpack2x16float(V[v0 + u * v_stride + j]);
                }
                if (own == 1u) {
                    a += probs[cached] * unpack2x16float(fresh_kv[j].y);
                }
                acc[i] = a;
            }
        }
        m = m_new;
        // Every invocation is done with `probs` before the next block writes it.
        workgroupBarrier();
    }
    if (P.splits == 1u) {
        for (var i = 0u; i < PAIRS_PER_INVOCATION; i++) {
            let j = li + i * WG;
            if (j < pairs) {
                O[q0 + 2u * j] = acc[i].x / l;
                O[q0 + 2u * j + 1u] = acc[i].y / l;
            }
        }
        return;
    }
    let part = ((r * P.heads + h) * P.splits + wg.z) * (P.head_dim + 2u);
    if (li == 0u) {
        PART[part] = m;
        PART[part + 1u] = l;
    }
    for (var i = 0u; i < PAIRS_PER_INVOCATION; i++) {
        let j = li + i * WG;
        if (j < pairs) {
            PART[part + 2u + 2u * j] = acc[i].x;
            PART[part + 3u + 2u * j] = acc[i].y;
        }
    }
}
