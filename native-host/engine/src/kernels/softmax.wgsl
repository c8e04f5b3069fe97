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
