// With the SUBGROUP feature and TPR no larger than the smallest subgroup, a row's TPR invocations
// are consecutive lanes of one subgroup and exchange partial sums by butterfly shuffles, without
// workgroup memory or barriers. TPR is a power of two.
fn row_sum(acc: f32, li: u32, t: u32) -> f32 {
    var s = acc;
    for (var m = TPR / 2u; m > 0u; m >>= 1u) {
        s += subgroupShuffleXor(s, m);
    }
    return s;
}
