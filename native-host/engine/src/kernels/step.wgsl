// The forward pass's per-step values (`StepUniform` on the Rust side), written once per step: the
// first new token's position and how many new tokens there are (one in decode). Joined to the
// kernels that read it by `shader::with_step`.
struct Step {
    pos: u32,
    tokens: u32,
    _pad0: u32,
    _pad1: u32,
}
