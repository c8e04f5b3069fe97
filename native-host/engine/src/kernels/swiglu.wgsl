// The llama family's gated FFN activation: y = silu(gate) * up, silu(x) = x / (1 + e^-x).
// For large negative x, e^-x is +inf and the quotient a signed zero, as it should be.

struct Params {
    n: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<storage, read> GATE: array<f32>;
@group(0) @binding(1) var<storage, read> UP: array<f32>;
@group(0) @binding(2) var<storage, read_write> Y: array<f32>;
@group(0) @binding(3) var<uniform> P: Params;

const WG: u32 = 64u;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    if (i >= P.n) {
        return;
    }
    let g = GATE[i];
    Y[i] = g / (1.0 + exp(-g)) * UP[i];
}
