// A token's part of X · the dequantised weights: lane k of each subgroup loads the part's k-th
// vec4 (mod 8) and the others take it by broadcast, so a part costs one load per lane instead of
// eight. Needs subgroups of at least 8 lanes and every lane active (the kernel keeps them so).
fn part_sum(w: array<vec4<f32>, 8>, x: u32, lane: u32) -> f32 {
    let v = X[x + (lane & 7u)];
    return dot(w[0], subgroupBroadcast(v, 0u)) + dot(w[1], subgroupBroadcast(v, 1u))
        + dot(w[2], subgroupBroadcast(v, 2u)) + dot(w[3], subgroupBroadcast(v, 3u))
        + dot(w[4], subgroupBroadcast(v, 4u)) + dot(w[5], subgroupBroadcast(v, 5u))
        + dot(w[6], subgroupBroadcast(v, 6u)) + dot(w[7], subgroupBroadcast(v, 7u));
}
