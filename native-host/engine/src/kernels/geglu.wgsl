// Gemma's gated FFN activation: y = gelu(gate) * up with the tanh form of GELU
// (gelu_pytorch_tanh, ggml_gelu): 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x³).
// Computed as the identical x / (1 + e^(-2u)): 1 + tanh(u) cancels catastrophically for negative
// x (f32 loses 1e-5 relative at x = -3.5), and some drivers' tanh is NaN for large arguments.
// For large negative u, e^(-2u) is +inf and the quotient a signed zero.

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
const SQRT_2_OVER_PI: f32 = 0.7978845608028654;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    if (i >= P.n) {
        return;
    }
    let x = GATE[i];
    let u = SQRT_2_OVER_PI * x * (1.0 + 0.044715 * x * x);
    Y[i] = x / (1.0 + exp(-2.0 * u)) * UP[i];
}
