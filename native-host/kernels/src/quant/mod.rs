//! CPU dequantisation of every supported tensor type: blocks of bytes → f32.
//!
//! This is the reference the GPU kernels are tested against, not a fast path: each function
//! follows ggml's `dequantize_row_*` (ggml-quants.c) operation for operation — the same products
//! in the same order, in f32, with no fused multiply-add — so its output is bit-identical to
//! ggml's scalar code and to the `gguf` Python package's, which the tests check.

mod float;
mod kquants;
mod legacy;

use crate::tensor_type::TensorType;

/// Why a buffer could not be dequantised.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuantError {
    #[error("{len} bytes are not a whole number of {ty} blocks of {block_bytes} bytes")]
    PartialBlock {
        ty: TensorType,
        len: usize,
        block_bytes: usize,
    },
    #[error("{blocks} {ty} blocks hold {expected} values, but the output has room for {got}")]
    OutputSize {
        ty: TensorType,
        blocks: usize,
        expected: usize,
        got: usize,
    },
}

/// Dequantises `data` (whole blocks of `ty`) into `out`, which must hold exactly their values.
pub fn dequantize(ty: TensorType, data: &[u8], out: &mut [f32]) -> Result<(), QuantError> {
    let block_bytes = ty.block_bytes();
    if !data.len().is_multiple_of(block_bytes) {
        return Err(QuantError::PartialBlock {
            ty,
            len: data.len(),
            block_bytes,
        });
    }
    let blocks = data.len() / block_bytes;
    let per = ty.block_elements();
    if out.len() != blocks * per {
        return Err(QuantError::OutputSize {
            ty,
            blocks,
            expected: blocks * per,
            got: out.len(),
        });
    }
    let block_fn: fn(&[u8], &mut [f32]) = match ty {
        TensorType::F32 => float::f32_block,
        TensorType::F16 => float::f16_block,
        TensorType::BF16 => float::bf16_block,
        TensorType::Q4_0 => legacy::q4_0,
        TensorType::Q4_1 => legacy::q4_1,
        TensorType::Q5_0 => legacy::q5_0,
        TensorType::Q5_1 => legacy::q5_1,
        TensorType::Q8_0 => legacy::q8_0,
        TensorType::Q4_K => kquants::q4_k,
        TensorType::Q5_K => kquants::q5_k,
        TensorType::Q6_K => kquants::q6_k,
    };
    for (block, y) in data
        .chunks_exact(block_bytes)
        .zip(out.chunks_exact_mut(per))
    {
        block_fn(block, y);
    }
    Ok(())
}

/// Dequantises whole blocks into a new vector.
pub fn dequantize_to_vec(ty: TensorType, data: &[u8]) -> Result<Vec<f32>, QuantError> {
    let blocks = data.len() / ty.block_bytes();
    let mut out = vec![0.0; blocks * ty.block_elements()];
    dequantize(ty, data, &mut out)?;
    Ok(out)
}

/// An IEEE half read from two little-endian bytes, widened exactly.
fn f16_at(bytes: &[u8], at: usize) -> f32 {
    half::f16::from_bits(u16::from_le_bytes([bytes[at], bytes[at + 1]])).to_f32()
}

#[cfg(test)]
mod tests;
