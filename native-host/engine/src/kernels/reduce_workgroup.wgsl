// The portable reduction: the TPR partial sums of a row meet in workgroup memory and are added in
// a tree. Needs no optional feature. TPR is a power of two.
var<workgroup> partial: array<f32, WG>;

fn row_sum(acc: f32, li: u32, t: u32) -> f32 {
    partial[li] = acc;
    workgroupBarrier();
    for (var s = TPR / 2u; s > 0u; s >>= 1u) {
        if (t < s) {
            partial[li] += partial[li + s];
        }
        workgroupBarrier();
    }
    return partial[li];
}
