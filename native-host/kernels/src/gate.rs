//! The gated activations of a model's feed-forward block, which both passes (GPU and CPU) apply:
//! a choice of the model's variant, not of either pass.

/// Which gate function multiplies `up`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// silu(gate) · up
    SwiGlu,
    /// gelu_tanh(gate) · up
    GeGlu,
}
