//! The tensor element types the engine supports, and the block layout of each.
//!
//! ggml stores quantised tensors as runs of fixed-size blocks along the innermost dimension; a
//! type is fully described by how many elements a block holds and how many bytes it takes. Types
//! outside this list are refused when a file is opened, by name, so a user who points itinero at
//! an IQ2 or Q3_K model learns why it will not load instead of getting garbage.
//!
//! The list is what the usual 4- to 8-bit files hold. A "Q4_K_M" file mixes types: Gemma 3's
//! also uses Q5_0 and Q6_K, so those are here though no file is named after them.

use std::fmt;

/// A supported tensor type. The discriminants are ggml's type ids as written in GGUF files.
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TensorType {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    BF16 = 30,
}

impl TensorType {
    /// Every supported type, for messages and tests.
    pub const ALL: [TensorType; 11] = [
        TensorType::F32,
        TensorType::F16,
        TensorType::BF16,
        TensorType::Q8_0,
        TensorType::Q4_0,
        TensorType::Q4_1,
        TensorType::Q5_0,
        TensorType::Q5_1,
        TensorType::Q4_K,
        TensorType::Q5_K,
        TensorType::Q6_K,
    ];

    /// The supported type with ggml id `id`; `Err` carries ggml's name for it when it has one.
    pub fn from_ggml_id(id: u32) -> Result<Self, UnsupportedType> {
        Self::ALL
            .into_iter()
            .find(|t| *t as u32 == id)
            .ok_or(UnsupportedType { id })
    }

    pub fn ggml_id(self) -> u32 {
        self as u32
    }

    pub fn name(self) -> &'static str {
        ggml_type_name(self as u32).unwrap_or("?")
    }

    /// Elements per block (1 for the float types).
    pub fn block_elements(self) -> usize {
        match self {
            TensorType::F32 | TensorType::F16 | TensorType::BF16 => 1,
            TensorType::Q4_0
            | TensorType::Q4_1
            | TensorType::Q5_0
            | TensorType::Q5_1
            | TensorType::Q8_0 => 32,
            TensorType::Q4_K | TensorType::Q5_K | TensorType::Q6_K => 256,
        }
    }

    /// Bytes per block, as laid out in ggml-common.h.
    pub fn block_bytes(self) -> usize {
        match self {
            TensorType::F32 => 4,
            TensorType::F16 | TensorType::BF16 => 2,
            TensorType::Q4_0 => 2 + 16,
            TensorType::Q4_1 => 2 + 2 + 16,
            TensorType::Q5_0 => 2 + 4 + 16,
            TensorType::Q5_1 => 2 + 2 + 4 + 16,
            TensorType::Q8_0 => 2 + 32,
            TensorType::Q4_K => 2 + 2 + 12 + 128,
            TensorType::Q5_K => 2 + 2 + 12 + 32 + 128,
            TensorType::Q6_K => 128 + 64 + 16 + 2,
        }
    }

    /// Bytes taken by `elements` elements, or `None` if they are not a whole number of blocks or
    /// the size does not fit in a u64.
    pub fn bytes_for(self, elements: u64) -> Option<u64> {
        let per = self.block_elements() as u64;
        if !elements.is_multiple_of(per) {
            return None;
        }
        (elements / per).checked_mul(self.block_bytes() as u64)
    }
}

impl fmt::Display for TensorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A ggml type id the engine cannot run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnsupportedType {
    pub id: u32,
}

impl fmt::Display for UnsupportedType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match ggml_type_name(self.id) {
            Some(name) => write!(f, "{name} (ggml type {})", self.id),
            None => write!(f, "unknown ggml type {}", self.id),
        }
    }
}

/// The names of all ggml tensor types (ggml.h), supported or not, for error messages.
pub fn ggml_type_name(id: u32) -> Option<&'static str> {
    Some(match id {
        0 => "F32",
        1 => "F16",
        2 => "Q4_0",
        3 => "Q4_1",
        6 => "Q5_0",
        7 => "Q5_1",
        8 => "Q8_0",
        9 => "Q8_1",
        10 => "Q2_K",
        11 => "Q3_K",
        12 => "Q4_K",
        13 => "Q5_K",
        14 => "Q6_K",
        15 => "Q8_K",
        16 => "IQ2_XXS",
        17 => "IQ2_XS",
        18 => "IQ3_XXS",
        19 => "IQ1_S",
        20 => "IQ4_NL",
        21 => "IQ3_S",
        22 => "IQ2_S",
        23 => "IQ4_XS",
        24 => "I8",
        25 => "I16",
        26 => "I32",
        27 => "I64",
        28 => "F64",
        29 => "IQ1_M",
        30 => "BF16",
        34 => "TQ1_0",
        35 => "TQ2_0",
        39 => "MXFP4",
        40 => "NVFP4",
        41 => "Q1_0",
        42 => "Q2_0",
        _ => return None,
    })
}

/// The supported type names joined for messages: "F32, F16, …".
pub fn supported_list() -> String {
    TensorType::ALL
        .iter()
        .map(|t| t.name())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_layouts_match_ggml() {
        for t in TensorType::ALL {
            assert_eq!(TensorType::from_ggml_id(t.ggml_id()), Ok(t));
        }
        // sizeof(block_q4_K) = 144, block_q5_K = 176, block_q6_K = 210 in ggml-common.h.
        assert_eq!(TensorType::Q4_K.block_bytes(), 144);
        assert_eq!(TensorType::Q5_K.block_bytes(), 176);
        assert_eq!(TensorType::Q6_K.block_bytes(), 210);
        assert_eq!(TensorType::Q8_0.bytes_for(64), Some(68));
        assert_eq!(TensorType::Q4_K.bytes_for(100), None);
    }

    #[test]
    fn unsupported_types_are_named() {
        let err = TensorType::from_ggml_id(11).unwrap_err();
        assert_eq!(err.to_string(), "Q3_K (ggml type 11)");
        assert_eq!(
            TensorType::from_ggml_id(99).unwrap_err().to_string(),
            "unknown ggml type 99"
        );
    }
}
