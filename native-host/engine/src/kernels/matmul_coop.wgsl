// matmul.wgsl's product Y = X·Wᵀ (or Y += X·Wᵀ) on cooperative matrices: a workgroup computes
// a block of BM tokens × BN rows (coop_block.wgsl) and puts the tokens and rows that exist.
// The dispatch is sized for the largest batch, whole blocks of BM tokens; blocks past
// `STEP.tokens` return at once.

struct Params {
    rows: u32,        // rows in this binding
    cols: u32,        // elements per row (a multiple of 32)
    row_offset: u32,  // index in a row of Y of this binding's first row
    row_bytes: u32,   // bytes per row in W
}

struct Shape {
    y_stride: u32,    // floats per row of Y: the matrix's rows
    add: u32,         // 1: Y += X·Wᵀ; 0: Y = X·Wᵀ
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<storage, read> W: array<u32>;
@group(0) @binding(1) var<storage, read> X: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> Y: array<f32>;
@group(0) @binding(3) var<uniform> P: Params;
@group(0) @binding(4) var<uniform> STEP: Step;
@group(0) @binding(5) var<uniform> S: Shape;

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
