// Causal attention of new tokens over the KV cache, one workgroup per (query head, new token);
// bindings and semantics in attention_common.wgsl. The scores are never stored: keys are taken WG
// at a time with a running maximum and sum (online softmax), so memory does not grow with the
// context and the kernel needs no scratch.

const WG: u32 = 64u;
const MAX_HEAD_DIM: u32 = 256u;
const DIMS_PER_INVOCATION: u32 = MAX_HEAD_DIM / WG;

// Decode has one token, and a workgroup per head leaves most of a GPU idle while it walks the
// whole cache. So with P.splits > 1 the keys are cut into that many slices of whole blocks, one
// workgroup each (wg.z), and each writes its running maximum, sum and unnormalised output to PART
// — per (token, head, slice): m, l, then head_dim values — for attention_combine.wgsl to merge.
@group(0) @binding(5) var<storage, read_write> PART: array<f32>;
@group(0) @binding(6) var<uniform> P: Params;

var<workgroup> qs: array<f32, MAX_HEAD_DIM>;
var<workgroup> probs: array<f32, WG>;

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
    let q0 = (r * P.heads + h) * P.head_dim;
    for (var d = li; d < P.head_dim; d += WG) {
        qs[d] = Q[q0 + d] * P.scale;
    }
    workgroupBarrier();
    let kv_stride = P.kv_heads * P.head_dim;
    let k0 = (h / (P.heads / P.kv_heads)) * P.head_dim;
    var m = -3.4028235e38;
    var l = 0.0;
    var acc: array<f32, DIMS_PER_INVOCATION>;
    for (var i = 0u; i < DIMS_PER_INVOCATION; i++) {
        acc[i] = 0.0;
    }
    for (var b = start; b < end; b += WG) {
        let t = b + li;
        var s = -3.4028235e38;
        if (t < end) {
            let k = t * kv_stride + k0;
            var dot = 0.0;
            for (var d = 0u; d < P.head_dim; d++) {
                dot += qs[d] * K[k + d];
            }
            s = dot;
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
        for (var i = 0u; i < DIMS_PER_INVOCATION; i++) {
            let d = li + i * WG;
            if (d < P.head_dim) {
                var a = acc[i] * c;
                for (var j = 0u; j < n; j++) {
                    a += probs[j] * V[(b + j) * kv_stride + k0 + d];
                }
                acc[i] = a;
            }
        }
        m = m_new;
        // Every invocation is done with `probs` before the next block writes it.
        workgroupBarrier();
    }
    if (P.splits == 1u) {
        for (var i = 0u; i < DIMS_PER_INVOCATION; i++) {
            let d = li + i * WG;
            if (d < P.head_dim) {
                O[q0 + d] = acc[i] / l;
            }
        }
        return;
    }
    let part = ((r * P.heads + h) * P.splits + wg.z) * (P.head_dim + 2u);
    if (li == 0u) {
        PART[part] = m;
        PART[part + 1u] = l;
    }
    for (var i = 0u; i < DIMS_PER_INVOCATION; i++) {
        let d = li + i * WG;
        if (d < P.head_dim) {
            PART[part + 2u + d] = acc[i];
        }
    }
}
