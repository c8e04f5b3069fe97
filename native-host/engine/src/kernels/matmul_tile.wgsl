// The products of one weight row (its GGUF bytes at `base` in W, `cols` elements) with the TT
// (1, 2, 4 or 8) tokens of the tile starting at token t0: each 32-element part is dequantised once
// (`part_load`) and multiplied into every token of the tile (`part_sum`). Shared by the
// matrix-matrix kernels (matmul.wgsl, matmul_joined.wgsl).
fn tile_sums(base: u32, cols: u32, t0: u32, lane: u32) -> array<f32, 8> {
    let r = cols / 4u;
    // Tokens t0..t0+4 in `lo`, t0+4..t0+8 in `hi` (tiles of TT = 1, 2 or 4 use the first TT of `lo`).
    var lo = vec4<f32>(0.0);
    var hi = vec4<f32>(0.0);
    for (var p = 0u; p < cols / 32u; p++) {
        let w = part_load(base, p);
        let x = t0 * r + p * 8u;
        if (TT == 1u) {
            lo.x += part_sum(w, x, lane);
        } else if (TT == 2u) {
            lo += vec4<f32>(part_sum(w, x, lane), part_sum(w, x + r, lane), 0.0, 0.0);
        } else {
            lo += vec4<f32>(part_sum(w, x, lane), part_sum(w, x + r, lane), part_sum(w, x + 2u * r, lane), part_sum(w, x + 3u * r, lane));
            if (TT == 8u) {
                hi += vec4<f32>(part_sum(w, x + 4u * r, lane), part_sum(w, x + 5u * r, lane), part_sum(w, x + 6u * r, lane), part_sum(w, x + 7u * r, lane));
            }
        }
    }
    return array<f32, 8>(lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w);
}
