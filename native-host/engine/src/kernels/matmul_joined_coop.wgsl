// matmul_joined.wgsl's products on cooperative matrices: a workgroup computes a block of BM
// tokens × BN rows (coop_block.wgsl) and puts it split over the outputs with the bias, or,
// gated, computes the gate's block and then the up matrix's and puts act(gate) * up.
// The bindings are matmul_joined_bindings.wgsl's.

// Gated: the gate's sums this invocation puts, activated, while the up matrix's are computed.
var<private> gate_acts: array<f32, FM * FN * E>;

@compute @workgroup_size(WG)
fn main(
    @builtin(local_invocation_index) li: u32,
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(subgroup_id) sg: u32,
) {
    let r0 = (wg.x + wg.z * nwg.x) * BN;
    let t0 = wg.y * BM;
    if (t0 >= STEP.tokens) {
        return;
    }
    block(0u, r0, P.rows, t0, sg, li, 0u);
    if (GATED) {
        block(J.split1, r0, P.rows, t0, sg, li, 1u);
    }
}

fn put(round: u32, e: u32, token: u32, row: u32, sum: f32) {
    if (GATED && round == 0u) {
        gate_acts[e] = act(sum);
        return;
    }
    if (token >= STEP.tokens || row >= P.rows) {
        return;
    }
    if (GATED) {
        Y0[token * P.rows + row] = gate_acts[e] * sum;
        return;
    }
    put_split(token, row, sum);
}
