// The combination of a workgroup's values, shared by the kernels that reduce a row in one
// workgroup (RMSNorm, softmax, attention); joined to them by `shader::with_workgroup_reduce`.
// Needs the kernel's `WG`. `is_max` picks max over sum. Ends with a barrier so that `partial`
// can be written again.

var<workgroup> partial: array<f32, WG>;

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
