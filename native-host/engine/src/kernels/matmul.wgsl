// Dequantising matrix-matrix product Y = X·Wᵀ (or Y += X·Wᵀ, a residual connection folded into the
// product) for a batch of tokens (prompt prefill): row t of X is token t's activations, row t of Y
// its outputs.
//
// Each invocation owns one weight row and a tile of TT tokens (8, 4 or 2 in prefill, as the
// device measured fastest; 1 for decode on CPU drivers): it dequantises a 32-element part of its row once (`part_load`, from the type's
// mv_<type>.wgsl) and multiplies it into all TT tokens, so the weights are decoded once per tile
// instead of once per token. How a
// token's part of X is read is `part_sum`'s choice (matmul_x_*.wgsl): on CPU drivers every load
// of X is a gather across the SIMD lanes, which is what bounds the kernel, so with subgroups
// each lane loads one eighth of the part and the others take it by broadcast.
// The Rust side prepends `const WG: u32`, `const TT: u32` and the bindings (matmul_bindings.wgsl),
// and appends `tile_sums`
// (matmul_tile.wgsl), the X loads, the weight words and the type's `part_load`.
//
// The dispatch is sized for the largest batch; `STEP.tokens` says how many rows of X hold tokens
// this time, and tiles past it return at once. Rows of X between `tokens` and the end of the last
// tile are read (the buffer holds whole tiles) and their sums dropped.

@compute @workgroup_size(WG)
fn main(
    @builtin(local_invocation_index) li: u32,
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    // LANE
) {
    // Row groups run along x, folded into z when wider than the per-dimension limit.
    let row = (wg.x + wg.z * nwg.x) * WG + li;
    let t0 = wg.y * TT;
    if (t0 >= STEP.tokens) {
        return;
    }
    // Rows past the end compute on the last row and store nothing: every lane stays active for
    // the subgroup broadcasts.
    let sums = tile_sums(min(row, P.rows - 1u) * P.row_bytes, P.cols, t0, lane);
    if (row >= P.rows) {
        return;
    }
    for (var t = 0u; t < TT; t++) {
        if (t0 + t < STEP.tokens) {
            let i = (t0 + t) * S.y_stride + P.row_offset + row;
            if (S.add != 0u) {
                Y[i] += sums[t];
            } else {
                Y[i] = sums[t];
            }
        }
    }
}
