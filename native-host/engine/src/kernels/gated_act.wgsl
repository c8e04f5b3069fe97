// The FFN's gate function for the kernels that apply it themselves (matvec_normed.wgsl,
// matmul_joined.wgsl), computed as activation.rs's kernels compute it (swiglu.wgsl,
// geglu.wgsl). The Rust side prepends `ACT`: 0 SiLU, 1 GELU (tanh form).

const SQRT_2_OVER_PI: f32 = 0.7978845608028654;

fn act(x: f32) -> f32 {
    if (ACT == 0u) {
        return x / (1.0 + exp(-x));
    }
    let u = SQRT_2_OVER_PI * x * (1.0 + 0.044715 * x * x);
    return x / (1.0 + exp(-2.0 * u));
}
