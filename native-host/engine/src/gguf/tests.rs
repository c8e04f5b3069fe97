//! Hand-made GGUF files: every value type, alignment, and each way a file can be refused.

use super::*;

/// Writes GGUF bytes the way the format describes them, independently of the reader.
pub(crate) struct Builder {
    kv: Vec<u8>,
    kv_count: u64,
    tensors: Vec<(String, Vec<u64>, u32, Vec<u8>)>,
    alignment: u64,
}

impl Builder {
    pub(crate) fn new() -> Self {
        Self {
            kv: Vec::new(),
            kv_count: 0,
            tensors: Vec::new(),
            alignment: 32,
        }
    }

    fn string(out: &mut Vec<u8>, s: &str) {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    }

    /// A key with a raw, already-encoded value of type `ty`.
    pub(crate) fn raw(mut self, key: &str, ty: u32, value: &[u8]) -> Self {
        Self::string(&mut self.kv, key);
        self.kv.extend_from_slice(&ty.to_le_bytes());
        self.kv.extend_from_slice(value);
        self.kv_count += 1;
        self
    }

    pub(crate) fn str(self, key: &str, value: &str) -> Self {
        let mut v = Vec::new();
        Self::string(&mut v, value);
        self.raw(key, 8, &v)
    }

    pub(crate) fn u32(self, key: &str, value: u32) -> Self {
        self.raw(key, 4, &value.to_le_bytes())
    }

    pub(crate) fn bool(self, key: &str, value: bool) -> Self {
        self.raw(key, 7, &[u8::from(value)])
    }

    pub(crate) fn str_array(self, key: &str, values: &[&str]) -> Self {
        let mut v = 8u32.to_le_bytes().to_vec();
        v.extend_from_slice(&(values.len() as u64).to_le_bytes());
        for s in values {
            Self::string(&mut v, s);
        }
        self.raw(key, 9, &v)
    }

    pub(crate) fn f32_array(self, key: &str, values: &[f32]) -> Self {
        let mut v = 6u32.to_le_bytes().to_vec();
        v.extend_from_slice(&(values.len() as u64).to_le_bytes());
        v.extend(values.iter().flat_map(|x| x.to_le_bytes()));
        self.raw(key, 9, &v)
    }

    pub(crate) fn i32_array(self, key: &str, values: &[i32]) -> Self {
        let mut v = 5u32.to_le_bytes().to_vec();
        v.extend_from_slice(&(values.len() as u64).to_le_bytes());
        v.extend(values.iter().flat_map(|x| x.to_le_bytes()));
        self.raw(key, 9, &v)
    }

    pub(crate) fn alignment(mut self, a: u64) -> Self {
        self.alignment = a;
        self.u32("general.alignment", a as u32)
    }

    pub(crate) fn tensor(mut self, name: &str, dims: &[u64], ty: u32, data: Vec<u8>) -> Self {
        self.tensors.push((name.into(), dims.to_vec(), ty, data));
        self
    }

    /// The file; tensor offsets are laid out in order, each aligned.
    pub(crate) fn build(self) -> Vec<u8> {
        self.build_with_offsets(None)
    }

    pub(crate) fn build_with_offsets(self, offsets: Option<Vec<u64>>) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(b"GGUF");
        out.extend_from_slice(&3u32.to_le_bytes());
        out.extend_from_slice(&(self.tensors.len() as u64).to_le_bytes());
        out.extend_from_slice(&self.kv_count.to_le_bytes());
        out.extend_from_slice(&self.kv);
        let mut next = 0u64;
        let mut placed = Vec::new();
        for (i, (name, dims, ty, data)) in self.tensors.iter().enumerate() {
            Self::string(&mut out, name);
            out.extend_from_slice(&(dims.len() as u32).to_le_bytes());
            for d in dims {
                out.extend_from_slice(&d.to_le_bytes());
            }
            out.extend_from_slice(&ty.to_le_bytes());
            let offset = offsets.as_ref().map_or(next, |o| o[i]);
            out.extend_from_slice(&offset.to_le_bytes());
            placed.push(offset);
            next = (offset + data.len() as u64).next_multiple_of(self.alignment);
        }
        let data_start = (out.len() as u64).next_multiple_of(self.alignment);
        out.resize(data_start as usize, 0);
        for ((_, _, _, data), offset) in self.tensors.iter().zip(placed) {
            let at = (data_start + offset) as usize;
            if out.len() < at + data.len() {
                out.resize(at + data.len(), 0);
            }
            out[at..at + data.len()].copy_from_slice(data);
        }
        out
    }
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn sample() -> Vec<u8> {
    let mut q8 = Vec::new();
    q8.extend_from_slice(&half::f16::from_f32(0.5).to_bits().to_le_bytes());
    q8.extend((0..32).map(|i| (i as i8 - 16) as u8));
    Builder::new()
        .str("general.architecture", "llama")
        .alignment(64)
        .raw("k.u8", 0, &[7])
        .raw("k.i8", 1, &[0xff])
        .raw("k.u16", 2, &513u16.to_le_bytes())
        .raw("k.i16", 3, &(-2i16).to_le_bytes())
        .u32("k.u32", 70000)
        .raw("k.i32", 5, &(-5i32).to_le_bytes())
        .raw("k.f32", 6, &1.5f32.to_le_bytes())
        .raw("k.bool", 7, &[1])
        .raw("k.u64", 10, &(1u64 << 40).to_le_bytes())
        .raw("k.i64", 11, &(-1i64).to_le_bytes())
        .raw("k.f64", 12, &2.25f64.to_le_bytes())
        .raw("k.arr_i32", 9, &{
            let mut v = 5u32.to_le_bytes().to_vec();
            v.extend_from_slice(&2u64.to_le_bytes());
            v.extend_from_slice(&1i32.to_le_bytes());
            v.extend_from_slice(&(-1i32).to_le_bytes());
            v
        })
        .raw("k.arr_str", 9, &{
            let mut v = 8u32.to_le_bytes().to_vec();
            v.extend_from_slice(&2u64.to_le_bytes());
            Builder::string(&mut v, "a");
            Builder::string(&mut v, "ü");
            v
        })
        .raw("k.arr_nested", 9, &{
            // [[true], []] : array of arrays of bool
            let mut v = 9u32.to_le_bytes().to_vec();
            v.extend_from_slice(&2u64.to_le_bytes());
            v.extend_from_slice(&7u32.to_le_bytes());
            v.extend_from_slice(&1u64.to_le_bytes());
            v.push(1);
            v.extend_from_slice(&7u32.to_le_bytes());
            v.extend_from_slice(&0u64.to_le_bytes());
            v
        })
        .tensor("norm", &[4], 0, f32_bytes(&[1.0, -2.0, 3.5, 0.25]))
        .tensor("w", &[32, 1], 8, q8)
        .build()
}

#[test]
fn parses_every_value_type_and_the_tensor_table() {
    let g = Gguf::from_bytes(sample()).unwrap();
    let m = g.metadata();
    assert_eq!(g.version(), 3);
    assert_eq!(g.alignment(), 64);
    assert_eq!(g.data_start() % 64, 0);
    assert_eq!(g.architecture().unwrap(), Architecture::Llama);
    assert_eq!(m.get("k.u8"), Some(&Value::U8(7)));
    assert_eq!(m.get("k.i8"), Some(&Value::I8(-1)));
    assert_eq!(m.get("k.u16"), Some(&Value::U16(513)));
    assert_eq!(m.get("k.i16"), Some(&Value::I16(-2)));
    assert_eq!(m.u32("k.u32").unwrap(), 70000);
    assert_eq!(m.get("k.i32"), Some(&Value::I32(-5)));
    assert_eq!(m.f32("k.f32").unwrap(), 1.5);
    assert_eq!(m.opt_bool("k.bool").unwrap(), Some(true));
    assert_eq!(m.get("k.u64"), Some(&Value::U64(1 << 40)));
    assert_eq!(m.get("k.i64"), Some(&Value::I64(-1)));
    assert_eq!(m.get("k.f64"), Some(&Value::F64(2.25)));
    assert_eq!(m.array("k.arr_i32").unwrap(), &Array::I32(vec![1, -1]));
    assert_eq!(
        m.array("k.arr_str").unwrap(),
        &Array::String(vec!["a".into(), "ü".into()])
    );
    assert_eq!(
        m.array("k.arr_nested").unwrap(),
        &Array::Array(vec![Array::Bool(vec![true]), Array::Bool(vec![])])
    );
    // file order is kept
    let keys: Vec<_> = m.iter().map(|(k, _)| k).take(3).collect();
    assert_eq!(keys, ["general.architecture", "general.alignment", "k.u8"]);

    let norm = g.tensor("norm").unwrap();
    assert_eq!(norm.info.dims, [4]);
    assert_eq!(norm.to_f32().unwrap(), [1.0, -2.0, 3.5, 0.25]);
    let w = g.tensor("w").unwrap();
    assert_eq!(w.info.ty, TensorType::Q8_0);
    assert_eq!(
        w.info.offset, 64,
        "the second tensor starts at the next aligned offset"
    );
    assert_eq!(w.data.len(), 34);
    let values = w.to_f32().unwrap();
    assert_eq!(values[0], -8.0);
    assert_eq!(values[31], 7.5);
    assert!(matches!(g.tensor("nope"), Err(GgufError::NoSuchTensor(_))));
}

#[test]
fn typed_getters_accept_any_integer_width_and_name_the_key_otherwise() {
    let g = Gguf::from_bytes(sample()).unwrap();
    let m = g.metadata();
    assert_eq!(m.u32("k.u8").unwrap(), 7);
    let err = m.u32("k.i8").unwrap_err().to_string();
    assert!(err.contains("\"k.i8\"") && err.contains("i8"), "{err}");
    let err = m.str("k.u32").unwrap_err().to_string();
    assert!(err.contains("should be string, but is u32"), "{err}");
    let err = m.str("nope").unwrap_err().to_string();
    assert_eq!(err, "metadata key \"nope\" is missing");
}

#[test]
fn every_truncation_is_an_error_not_a_panic() {
    let bytes = sample();
    for len in 0..bytes.len() {
        let err = Gguf::from_bytes(bytes[..len].to_vec());
        assert!(
            err.is_err(),
            "a file cut at {len} of {} bytes parsed",
            bytes.len()
        );
    }
    let err = Gguf::from_bytes(bytes[..bytes.len() - 1].to_vec()).unwrap_err();
    assert!(
        err.to_string().contains("the data of tensor \"w\""),
        "{err}"
    );
}

#[test]
fn refuses_bad_magic_and_other_versions() {
    let mut bytes = sample();
    bytes[0] = b'X';
    let err = Gguf::from_bytes(bytes).unwrap_err();
    assert!(err.to_string().starts_with("not a GGUF file"), "{err}");
    let mut bytes = sample();
    bytes[4..8].copy_from_slice(&2u32.to_le_bytes());
    let err = Gguf::from_bytes(bytes).unwrap_err();
    assert_eq!(
        err.to_string(),
        "GGUF version 2 is not supported (itinero reads version 3)"
    );
}

#[test]
fn refuses_unsupported_tensor_types_by_name() {
    let bytes = Builder::new()
        .tensor("blk.0.ffn_down.weight", &[256], 11, vec![0; 110])
        .build();
    let err = Gguf::from_bytes(bytes).unwrap_err().to_string();
    assert!(
        err.starts_with("tensor \"blk.0.ffn_down.weight\" has type Q3_K (ggml type 11), which itinero does not support (supported: F32, F16, BF16, Q8_0"),
        "{err}"
    );
}

#[test]
fn refuses_unsupported_architectures_by_name() {
    let g = Gguf::from_bytes(Builder::new().str("general.architecture", "mamba").build()).unwrap();
    let err = g.architecture().unwrap_err().to_string();
    assert_eq!(
        err,
        "the model's architecture is \"mamba\", which itinero does not support (supported: llama, qwen2, gemma3)"
    );
}

#[test]
fn refuses_inconsistent_tables() {
    // rows that are not whole blocks
    let err = Gguf::from_bytes(Builder::new().tensor("t", &[16], 8, vec![0; 34]).build())
        .unwrap_err()
        .to_string();
    assert!(err.contains("not whole Q8_0 blocks"), "{err}");
    // misaligned offset
    let err = Gguf::from_bytes(
        Builder::new()
            .tensor("t", &[1], 0, vec![0; 4])
            .build_with_offsets(Some(vec![4])),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("not a multiple of the alignment 32"), "{err}");
    // overlapping data
    let err = Gguf::from_bytes(
        Builder::new()
            .tensor("a", &[16], 0, vec![0; 64])
            .tensor("b", &[1], 0, vec![0; 4])
            .build_with_offsets(Some(vec![0, 32])),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("overlaps tensor \"a\""), "{err}");
    // duplicate names
    let err = Gguf::from_bytes(
        Builder::new()
            .tensor("a", &[1], 0, vec![0; 4])
            .tensor("a", &[1], 0, vec![0; 4])
            .build(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("appears twice"), "{err}");
    // alignment that is not a power of two
    let err = Gguf::from_bytes(Builder::new().u32("general.alignment", 48).build())
        .unwrap_err()
        .to_string();
    assert!(err.contains("power of two"), "{err}");
    // a zero dimension
    let err = Gguf::from_bytes(Builder::new().tensor("z", &[0], 0, vec![]).build())
        .unwrap_err()
        .to_string();
    assert!(err.contains("impossible dimensions"), "{err}");
}

#[test]
fn refuses_counts_the_file_cannot_hold_without_allocating_them() {
    let mut bytes = b"GGUF".to_vec();
    bytes.extend_from_slice(&3u32.to_le_bytes());
    bytes.extend_from_slice(&u64::MAX.to_le_bytes());
    bytes.extend_from_slice(&0u64.to_le_bytes());
    assert!(matches!(
        Gguf::from_bytes(bytes),
        Err(GgufError::Truncated { .. })
    ));
    let bytes = Builder::new()
        .raw("huge", 9, &{
            let mut v = 4u32.to_le_bytes().to_vec();
            v.extend_from_slice(&(u64::MAX / 2).to_le_bytes());
            v
        })
        .build();
    assert!(matches!(
        Gguf::from_bytes(bytes),
        Err(GgufError::Truncated { .. })
    ));
}

#[test]
fn random_corruption_is_an_error_or_a_valid_file_never_a_panic() {
    let original = sample();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut refused = 0;
    for _ in 0..3000 {
        let mut bytes = original.clone();
        for _ in 0..1 + next() % 4 {
            let at = (next() % bytes.len() as u64) as usize;
            bytes[at] = next() as u8;
        }
        match Gguf::from_bytes(bytes) {
            Ok(g) => {
                // whatever parsed must be readable throughout
                for t in g.tensors() {
                    let _ = t.to_f32();
                }
                for (_, v) in g.metadata().iter() {
                    let _ = v.summary();
                }
            }
            Err(_) => refused += 1,
        }
    }
    assert!(
        refused > 100,
        "only {refused} of 3000 corruptions were refused"
    );
}
