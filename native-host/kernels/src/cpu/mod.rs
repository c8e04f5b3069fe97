//! The engine's kernels on the CPU: what the model's forward pass runs where there is no GPU, or
//! only a software one (lavapipe, llvmpipe, WARP, SwiftShader), through which the WGSL kernels
//! are many times slower than native code.
//!
//! - [`acts`]: activations quantised per block as llama.cpp quantises them for its integer dot
//!   products.
//! - [`dot`]: each tensor type's block dot products, in plain Rust shaped for the compiler's
//!   vectoriser: what runs where there is no hand-written kernel (arm64's NEON, with `sdot`
//!   where the CPU has the dot-product extension, and portable builds).
//! - [`x86`]: hand-vectorised AVX2 / AVX-512 (VNNI) kernels for the quantised formats, and the
//!   activations' quantisation.
//! - [`product`](mod@product): a matrix times a batch of activations, split over threads, compiled per
//!   instruction set ([`isa`]) and picked at run time.
//! - [`ops`]: the rest of a layer (norms, RoPE, the gated activations, attention over an f16 KV
//!   cache).

pub mod acts;
pub mod dot;
pub mod isa;
pub mod ops;
pub mod product;
#[cfg(target_arch = "x86_64")]
pub mod x86;

pub use isa::Isa;
pub use product::{product, products, ActKind, Acts, Matrix};
