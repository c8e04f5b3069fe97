// x of matvec.wgsl as the merge of decode's attention slices: the product after attention (its
// output matrix) merges them as it stages x, where attention_combine.wgsl would be a dispatch of
// its own. The arithmetic is attention_combine.wgsl's, in the same order, so x is the same to the
// bit: per head, the used slices' running maxima and sums rescaled to the largest maximum, then
// each element the slices' outputs weighted alike over that sum.
//
// Every workgroup of the product merges all of x for itself: the slices are read from the cache
// once per workgroup, and the weights of each (head, slice) are worked out once per workgroup
// into workgroup memory rather than once per element. The Rust side prepends `HEADS` and
// `MAX_SPLITS` (the most query heads and slices this kernel holds) with `X_VEC4S`, and joins
// step.wgsl and key_slices.wgsl.

struct Combine {
    head_dim: u32,
    heads: u32,
    splits: u32,
    window: u32,      // 0: none
    capacity: u32,
    block: u32,
    _pad0: u32,
    _pad1: u32,
}

// Per (head, slice): the running maximum, the sum, then head_dim unnormalised outputs.
@group(0) @binding(1) var<storage, read> PART: array<f32>;
@group(0) @binding(5) var<uniform> STEP: Step;
@group(0) @binding(6) var<uniform> C: Combine;

var<workgroup> X: array<vec4<f32>, X_VEC4S>;
// exp(m_s - m) of each head's used slices, and each head's sum over them.
var<workgroup> SLICE_WEIGHT: array<f32, HEADS * MAX_SPLITS>;
var<workgroup> HEAD_SUM: array<f32, HEADS>;

fn stage_x(li: u32) {
    let used = slices_used(keys_of(STEP.pos, 0u, C.capacity, C.window), C.splits, C.block);
    let stride = C.head_dim + 2u;
    for (var h = li; h < C.heads; h += WG) {
        let base = h * C.splits * stride;
        var m = -3.4028235e38;
        for (var s = 0u; s < used; s++) {
            m = max(m, PART[base + s * stride]);
        }
        var l = 0.0;
        for (var s = 0u; s < used; s++) {
            let e = exp(PART[base + s * stride] - m);
            SLICE_WEIGHT[h * MAX_SPLITS + s] = e;
            l += PART[base + s * stride + 1u] * e;
        }
        HEAD_SUM[h] = l;
    }
    workgroupBarrier();
    for (var i = li; i < C.heads * C.head_dim / 4u; i += WG) {
        let h = i * 4u / C.head_dim;
        let first = h * C.splits * stride + 2u + i * 4u % C.head_dim;
        var a = vec4<f32>(0.0);
        for (var s = 0u; s < used; s++) {
            let o = first + s * stride;
            let part = vec4<f32>(PART[o], PART[o + 1u], PART[o + 2u], PART[o + 3u]);
            a += part * SLICE_WEIGHT[h * MAX_SPLITS + s];
        }
        X[i / 8u * X_PART + i % 8u] = a / HEAD_SUM[h];
    }
    workgroupBarrier();
}
