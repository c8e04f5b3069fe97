// matmul_joined.wgsl's products on cooperative matrices: a workgroup computes a block of BM
// tokens × BN rows (coop_block.wgsl) and puts it split over the outputs with the bias, or,
// gated, computes the gate's block and then the up matrix's and puts act(gate) * up.

struct Params {
    rows: u32,        // rows computed (gated: of each matrix)
    cols: u32,
    _row_offset: u32,
    row_bytes: u32,
}

struct Joined {
    split1: u32,
    split2: u32,
    bias: u32,
    total: u32,       // W's rows: the split's third stride is total - split2
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
    _pad3: u32,
}

@group(0) @binding(0) var<storage, read> W: array<u32>;
@group(0) @binding(1) var<storage, read> X: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> BIAS: array<f32>;
@group(0) @binding(3) var<storage, read_write> Y0: array<f32>;
@group(0) @binding(4) var<storage, read_write> Y1: array<f32>;
@group(0) @binding(5) var<storage, read_write> Y2: array<f32>;
@group(0) @binding(6) var<uniform> P: Params;
@group(0) @binding(7) var<uniform> STEP: Step;
@group(0) @binding(8) var<uniform> J: Joined;

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
    var v = sum;
    if (J.bias != 0u) {
        v += BIAS[row];
    }
    if (row < J.split1) {
        Y0[token * J.split1 + row] = v;
    } else if (row < J.split2) {
        Y1[token * (J.split2 - J.split1) + row - J.split1] = v;
    } else {
        Y2[token * (J.total - J.split2) + row - J.split2] = v;
    }
}
