// Softmax of each row, in place, of `scale * x`: the max is subtracted first so exp never
// overflows. One workgroup per row.

struct Params {
    n: u32,
    scale: f32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<storage, read_write> X: array<f32>;
@group(0) @binding(1) var<uniform> P: Params;

const WG: u32 = 64u;
var<workgroup> partial: array<f32, WG>;

// The combination of the workgroup's values; `is_max` picks max over sum. Ends with a barrier
// so that `partial` can be written again.
fn reduce(li: u32, v: f32, is_max: bool) -> f32 {
    partial[li] = v;
    workgroupBarrier();
    for (var k = WG / 2u; k > 0u; k >>= 1u) {
        if (li < k) {
            if (is_max) {
                partial[li] = max(partial[li], partial[li + k]);
            } else {
                partial[li] += partial[li + k];
            }
        }
        workgroupBarrier();
    }
    let r = partial[0];
    workgroupBarrier();
    return r;
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wg: vec3<u32>) {
    let base = wg.x * P.n;
    var m = -3.4028235e38;
    for (var i = li; i < P.n; i += WG) {
        m = max(m, P.scale * X[base + i]);
    }
    m = reduce(li, m, true);
    var s = 0.0;
    for (var i = li; i < P.n; i += WG) {
        let e = exp(P.scale * X[base + i] - m);
        X[base + i] = e;
        s += e;
    }
    s = reduce(li, s, false);
    for (var i = li; i < P.n; i += WG) {
        X[base + i] = X[base + i] / s;
    }
}
