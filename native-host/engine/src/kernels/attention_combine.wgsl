// Merges the slices of attention.wgsl's split form into each (head, token)'s output: the slices'
// running maxima and sums are rescaled to the largest maximum, as the online softmax does between
// blocks. Only the slices that hold keys are read: early in the context most are empty
// (key_slices.wgsl cuts them for both kernels). One workgroup per (head, token).

struct Params {
    head_dim: u32,
    heads: u32,
    splits: u32,
    window: u32,      // 0: none
    capacity: u32,
    block: u32,       // attention.wgsl's WG
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<storage, read> PART: array<f32>;
@group(0) @binding(1) var<storage, read_write> O: array<f32>;
@group(0) @binding(2) var<uniform> STEP: Step;
@group(0) @binding(3) var<uniform> P: Params;

const WG: u32 = 64u;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wg: vec3<u32>) {
    let h = wg.x;
    let r = wg.y;
    if (r >= STEP.tokens) {
        return;
    }
    let used = slices_used(keys_of(STEP.pos, r, P.capacity, P.window), P.splits, P.block);
    let stride = P.head_dim + 2u;
    let base = (r * P.heads + h) * P.splits * stride;
    var m = -3.4028235e38;
    for (var s = 0u; s < used; s++) {
        m = max(m, PART[base + s * stride]);
    }
    var l = 0.0;
    for (var s = 0u; s < used; s++) {
        l += PART[base + s * stride + 1u] * exp(PART[base + s * stride] - m);
    }
    let o = (r * P.heads + h) * P.head_dim;
    for (var d = li; d < P.head_dim; d += WG) {
        var a = 0.0;
        for (var s = 0u; s < used; s++) {
            a += PART[base + s * stride + 2u + d] * exp(PART[base + s * stride] - m);
        }
        O[o + d] = a / l;
    }
}
