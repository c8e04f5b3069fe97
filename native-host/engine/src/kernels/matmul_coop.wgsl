// matmul.wgsl's product Y = X·Wᵀ (or Y += X·Wᵀ) on cooperative matrices: a workgroup computes
// a block of BM tokens × BN rows (coop_block.wgsl) and puts the tokens and rows that exist.
// The dispatch is sized for the largest batch, whole blocks of BM tokens; blocks past
// `STEP.tokens` return at once.
// The bindings are matmul_bindings.wgsl's.

@compute @workgroup_size(WG)
fn main(
    @builtin(local_invocation_index) li: u32,
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(subgroup_id) sg: u32,
) {
    let t0 = wg.y * BM;
    if (t0 >= STEP.tokens) {
        return;
    }
    block(0u, (wg.x + wg.z * nwg.x) * BN, P.rows, t0, sg, li, 0u);
}

fn put(round: u32, e: u32, token: u32, row: u32, sum: f32) {
    if (token < STEP.tokens && row < P.rows) {
        let y = token * S.y_stride + P.row_offset + row;
        if (S.add != 0u) {
            Y[y] += sum;
        } else {
            Y[y] = sum;
        }
    }
}
