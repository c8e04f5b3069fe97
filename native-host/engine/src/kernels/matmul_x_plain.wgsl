// A token's part of X · the dequantised weights, each invocation loading the part itself.
const lane: u32 = 0u;

fn part_sum(w: array<vec4<f32>, 8>, x: u32, lane: u32) -> f32 {
    return dot(w[0], X[x]) + dot(w[1], X[x + 1u]) + dot(w[2], X[x + 2u]) + dot(w[3], X[x + 3u])
        + dot(w[4], X[x + 4u]) + dot(w[5], X[x + 5u]) + dot(w[6], X[x + 6u]) + dot(w[7], X[x + 7u]);
}
