//! GGUF files with a real model's shape and random weights: the speed of a 1B, 3B or 8B model
//! can be measured (by itinero and by llama.cpp, on the same file) without downloading one.
//!
//! The weights are random blocks of the chosen type, their scales set so every weight lies within
//! ±1/√n of zero (n the row's length) and activations stay finite through the layers; the
//! tokenizer and chat template are copied from a real model (the small default one), so prompts
//! tokenise as they would. What such a model writes means nothing; how fast it writes it is what
//! a trained model of that shape and type would show, since no kernel looks at the values.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use half::{bf16, f16};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::gguf::{Array, Gguf, GgufError, Metadata, TensorEntry, TensorType, Value, Writer};

/// A llama-architecture model's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub width: u32,
    pub layers: u32,
    pub heads: u32,
    pub kv_heads: u32,
    pub ffn: u32,
}

/// The shapes of Llama 3.2 1B and 3B and Llama 3.1 8B, by the names `--synthetic` takes.
pub const PRESETS: [(&str, Shape); 3] = [
    (
        "1b",
        Shape {
            width: 2048,
            layers: 16,
            heads: 32,
            kv_heads: 8,
            ffn: 8192,
        },
    ),
    (
        "3b",
        Shape {
            width: 3072,
            layers: 28,
            heads: 24,
            kv_heads: 8,
            ffn: 8192,
        },
    ),
    (
        "8b",
        Shape {
            width: 4096,
            layers: 32,
            heads: 32,
            kv_heads: 8,
            ffn: 14336,
        },
    ),
];

/// Positions the file declares: the agent's largest prompt budget.
const CONTEXT: u32 = 8192;
/// Llama 3's rotary base.
const ROPE_BASE: f32 = 500_000.0;
/// The tensors' random streams start here, so a file written twice is the same file.
const SEED: u64 = 0x5EED_1B3B_8B00;

#[derive(Debug, thiserror::Error)]
pub enum SyntheticError {
    #[error("{0}")]
    Shape(String),
    #[error("the tokenizer's model has no tokenizer.ggml.tokens list to copy")]
    NoTokenizer,
    #[error("writing {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("reading back {path}: {source}")]
    ReadBack {
        path: PathBuf,
        #[source]
        source: GgufError,
    },
}

impl Shape {
    /// `1b`, `3b` or `8b`, or the numbers `WIDTH,LAYERS,HEADS,KV_HEADS,FFN`.
    pub fn parse(s: &str) -> Result<Self, SyntheticError> {
        let s = s.trim().to_ascii_lowercase();
        if let Some((_, shape)) = PRESETS.iter().find(|(name, _)| *name == s) {
            return Ok(*shape);
        }
        let numbers: Vec<u32> = s
            .split(',')
            .map(|n| n.trim().parse::<u32>())
            .collect::<Result<_, _>>()
            .map_err(|_| Self::bad(&s))?;
        let [width, layers, heads, kv_heads, ffn] = numbers[..] else {
            return Err(Self::bad(&s));
        };
        let shape = Self {
            width,
            layers,
            heads,
            kv_heads,
            ffn,
        };
        shape.check()?;
        Ok(shape)
    }

    fn bad(s: &str) -> SyntheticError {
        let names: Vec<&str> = PRESETS.iter().map(|(n, _)| *n).collect();
        SyntheticError::Shape(format!(
            "`{s}` is not a shape: give one of {} or five numbers WIDTH,LAYERS,HEADS,KV_HEADS,FFN (Llama 3.2 1B is 2048,16,32,8,8192)",
            names.join(", ")
        ))
    }

    fn check(&self) -> Result<(), SyntheticError> {
        let fail = |why: String| Err(SyntheticError::Shape(why));
        if [self.width, self.layers, self.heads, self.kv_heads, self.ffn].contains(&0) {
            return fail("every number of a shape must be above zero".into());
        }
        if !self.width.is_multiple_of(self.heads) {
            return fail(format!(
                "a width of {} does not split into {} heads",
                self.width, self.heads
            ));
        }
        if !self.heads.is_multiple_of(self.kv_heads) {
            return fail(format!(
                "{} query heads cannot share {} KV heads evenly",
                self.heads, self.kv_heads
            ));
        }
        if !self.head_dim().is_multiple_of(2) {
            return fail(format!(
                "heads of {} are odd; rotary embedding turns pairs",
                self.head_dim()
            ));
        }
        Ok(())
    }

    pub fn head_dim(&self) -> u32 {
        self.width / self.heads
    }

    /// The preset's name, or the numbers.
    pub fn label(&self) -> String {
        match PRESETS.iter().find(|(_, p)| p == self) {
            Some((name, _)) => name.to_string(),
            None => format!(
                "{}x{}-h{}kv{}-ffn{}",
                self.width, self.layers, self.heads, self.kv_heads, self.ffn
            ),
        }
    }

    /// What the file calls itself (its `general.name`), saying that the weights are random.
    pub fn model_name(&self, ty: TensorType) -> String {
        format!(
            "synthetic llama {} (width {}, {} layers, {} heads, {} KV heads, FFN {}), random {ty} weights",
            self.label(),
            self.width,
            self.layers,
            self.heads,
            self.kv_heads,
            self.ffn
        )
    }
}

/// The file's name in a directory of synthetic models.
pub fn file_name(shape: &Shape, ty: TensorType) -> String {
    format!(
        "synthetic-llama-{}-{}.gguf",
        shape.label(),
        ty.name().to_ascii_lowercase()
    )
}

/// The GGUF to write: llama metadata for `shape`, the tokenizer's keys of `tokenizer`, and the
/// tensors' table (norms in F32, every matrix in `ty`; the output shares the embedding).
pub fn plan(shape: &Shape, ty: TensorType, tokenizer: &Metadata) -> Result<Writer, SyntheticError> {
    shape.check()?;
    let vocab = match tokenizer.get("tokenizer.ggml.tokens") {
        Some(Value::Array(Array::String(tokens))) if !tokens.is_empty() => tokens.len() as u64,
        _ => return Err(SyntheticError::NoTokenizer),
    };
    let mut w = Writer::new();
    let u32v = Value::U32;
    w.value("general.architecture", Value::String("llama".into()))
        .value("general.name", Value::String(shape.model_name(ty)))
        .value("general.file_type", u32v(file_type(ty)))
        .value("llama.context_length", u32v(CONTEXT))
        .value("llama.embedding_length", u32v(shape.width))
        .value("llama.block_count", u32v(shape.layers))
        .value("llama.feed_forward_length", u32v(shape.ffn))
        .value("llama.attention.head_count", u32v(shape.heads))
        .value("llama.attention.head_count_kv", u32v(shape.kv_heads))
        .value("llama.rope.dimension_count", u32v(shape.head_dim()))
        .value("llama.rope.freq_base", Value::F32(ROPE_BASE))
        .value("llama.attention.layer_norm_rms_epsilon", Value::F32(1e-5))
        .value("llama.vocab_size", u32v(vocab as u32));
    for (key, value) in tokenizer
        .iter()
        .filter(|(k, _)| k.starts_with("tokenizer."))
    {
        w.value(key, value.clone());
    }
    let (width, ffn) = (u64::from(shape.width), u64::from(shape.ffn));
    let kv = u64::from(shape.kv_heads * shape.head_dim());
    let entry = |name: String, dims: Vec<u64>, ty: TensorType| TensorEntry { name, dims, ty };
    w.tensor(entry("token_embd.weight".into(), vec![width, vocab], ty));
    for l in 0..shape.layers {
        let t = |s: &str| format!("blk.{l}.{s}");
        for (name, dims, ty) in [
            ("attn_norm.weight", vec![width], TensorType::F32),
            ("attn_q.weight", vec![width, width], ty),
            ("attn_k.weight", vec![width, kv], ty),
            ("attn_v.weight", vec![width, kv], ty),
            ("attn_output.weight", vec![width, width], ty),
            ("ffn_norm.weight", vec![width], TensorType::F32),
            ("ffn_gate.weight", vec![width, ffn], ty),
            ("ffn_up.weight", vec![width, ffn], ty),
            ("ffn_down.weight", vec![ffn, width], ty),
        ] {
            w.tensor(entry(t(name), dims, ty));
        }
    }
    w.tensor(entry(
        "output_norm.weight".into(),
        vec![width],
        TensorType::F32,
    ));
    if let Some(t) = w.tensors().iter().find(|t| t.bytes().is_none()) {
        return Err(SyntheticError::Shape(format!(
            "{} rows of {} are not a whole number of {ty} blocks of {}: choose a width and an FFN that are multiples of {}",
            t.name,
            t.dims[0],
            ty.block_elements(),
            ty.block_elements()
        )));
    }
    Ok(w)
}

/// llama.cpp's `llama_ftype` for a file whose matrices are all `ty` (what llama-bench prints).
fn file_type(ty: TensorType) -> u32 {
    match ty {
        TensorType::F32 => 0,
        TensorType::F16 => 1,
        TensorType::Q4_0 => 2,
        TensorType::Q4_1 => 3,
        TensorType::Q8_0 => 7,
        TensorType::Q5_0 => 8,
        TensorType::Q5_1 => 9,
        TensorType::Q4_K => 14,
        TensorType::Q5_K => 16,
        TensorType::Q6_K => 18,
        TensorType::BF16 => 32,
    }
}

/// Fills `out` with the data of `entry`: norms of ones, matrices of random blocks whose weights
/// lie within ±1/√n of zero.
pub fn fill(entry: &TensorEntry, index: usize, out: &mut [u8]) {
    let mut rng = ChaCha8Rng::seed_from_u64(SEED ^ index as u64);
    if entry.dims.len() == 1 {
        out.as_chunks_mut::<4>().0.fill(1.0f32.to_le_bytes());
        return;
    }
    let bound = 1.0 / (entry.dims[0] as f32).sqrt();
    match entry.ty {
        TensorType::F32 => {
            for x in out.as_chunks_mut::<4>().0 {
                *x = rng.random_range(-bound..bound).to_le_bytes();
            }
        }
        TensorType::F16 => {
            for x in out.as_chunks_mut::<2>().0 {
                *x = f16::from_f32(rng.random_range(-bound..bound)).to_le_bytes();
            }
        }
        TensorType::BF16 => {
            for x in out.as_chunks_mut::<2>().0 {
                *x = bf16::from_f32(rng.random_range(-bound..bound)).to_le_bytes();
            }
        }
        ty => {
            rng.fill_bytes(out);
            let scales = block_scales(ty, bound);
            for block in out.chunks_exact_mut(ty.block_bytes()) {
                for &(at, scale) in &scales {
                    block[at..at + 2].copy_from_slice(&f16::from_f32(scale).to_le_bytes());
                }
            }
        }
    }
}

/// Where each quantised block keeps its f16 scale (and minimum), and the value that keeps its
/// weights within about `bound` of zero whatever its random quants are (ggml-common.h layouts).
fn block_scales(ty: TensorType, bound: f32) -> Vec<(usize, f32)> {
    match ty {
        // (q - 8)·d, q in 0..16.
        TensorType::Q4_0 => vec![(0, bound / 8.0)],
        // q·d + m.
        TensorType::Q4_1 => vec![(0, 2.0 * bound / 15.0), (2, -bound)],
        // (q - 16)·d, q in 0..32.
        TensorType::Q5_0 => vec![(0, bound / 16.0)],
        TensorType::Q5_1 => vec![(0, 2.0 * bound / 31.0), (2, -bound)],
        // q·d, q in -128..128.
        TensorType::Q8_0 => vec![(0, bound / 127.0)],
        // d·sc·q - dmin·m, with 6-bit sc and m.
        TensorType::Q4_K => vec![(0, bound / (63.0 * 15.0)), (2, bound / 63.0)],
        TensorType::Q5_K => vec![(0, bound / (63.0 * 31.0)), (2, bound / 63.0)],
        // d·sc·(q - 32), sc an i8; d is the block's last two bytes.
        TensorType::Q6_K => vec![(208, bound / (128.0 * 32.0))],
        TensorType::F32 | TensorType::F16 | TensorType::BF16 => Vec::new(),
    }
}

/// The synthetic model of `shape` and `ty` in `dir`, written there first if it is not yet (a
/// file written by the same itinero is the same file, so it is reused). `tokenizer` is the GGUF
/// whose tokenizer it copies; `progress` hears what is happening, the writing in tenths.
pub fn ensure(
    dir: &Path,
    shape: &Shape,
    ty: TensorType,
    tokenizer: &Gguf,
    progress: &mut dyn FnMut(&str),
) -> Result<PathBuf, SyntheticError> {
    let path = dir.join(file_name(shape, ty));
    let io = |source| SyntheticError::Io {
        path: path.clone(),
        source,
    };
    let plan = plan(shape, ty, tokenizer.metadata())?;
    let size = plan.file_bytes().map_err(io)?;
    if let Ok(existing) = Gguf::open(&path) {
        let name = existing.metadata().get("general.name");
        if name == Some(&Value::String(shape.model_name(ty)))
            && existing.file_bytes().len() as u64 == size
        {
            progress(&format!("using {}", path.display()));
            return Ok(path);
        }
    }
    std::fs::create_dir_all(dir).map_err(io)?;
    let size_text = if size >= 1_000_000_000 {
        format!("{:.1} GB", size as f64 / 1e9)
    } else {
        format!("{:.0} MB", (size as f64 / 1e6).ceil())
    };
    progress(&format!(
        "writing {} ({size_text} of random {ty} weights; the speed is real, the text would be noise)",
        path.display()
    ));
    let part = path.with_extension("gguf.part");
    let file = File::create(&part).map_err(|source| SyntheticError::Io {
        path: part.clone(),
        source,
    })?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let data: u64 = plan.tensors().iter().filter_map(TensorEntry::bytes).sum();
    let (mut index, mut done, mut told) = (0usize, 0u64, 0u64);
    let written = plan.write(&mut out, &mut |entry, buf| {
        fill(entry, index, buf);
        index += 1;
        done += buf.len() as u64;
        let tenth = done * 10 / data.max(1);
        if tenth > told {
            told = tenth;
            progress(&format!("written {}%", tenth * 10));
        }
    });
    let finished = written
        .and_then(|()| out.into_inner().map_err(|e| e.into_error()))
        .and_then(|f| f.sync_all());
    if let Err(source) = finished {
        let _ = std::fs::remove_file(&part);
        return Err(SyntheticError::Io { path: part, source });
    }
    std::fs::rename(&part, &path).map_err(io)?;
    Gguf::open(&path).map_err(|source| SyntheticError::ReadBack {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{Device, LoadedModel};
    use crate::generate::Decoder;
    use crate::model::hparams::HParams;

    const SMALL: Shape = Shape {
        width: 256,
        layers: 2,
        heads: 4,
        kv_heads: 2,
        ffn: 512,
    };

    /// A GGUF holding only a tokenizer (and a tensor, as every model has).
    fn tokenizer() -> Gguf {
        let tokens: Vec<String> = (0..300).map(|i| format!("t{i}")).collect();
        let mut w = Writer::new();
        w.value("general.architecture", Value::String("llama".into()))
            .value("tokenizer.ggml.model", Value::String("gpt2".into()))
            .value("tokenizer.ggml.tokens", Value::Array(Array::String(tokens)))
            .value(
                "tokenizer.ggml.merges",
                Value::Array(Array::String(vec!["t 1".into()])),
            )
            .value("tokenizer.ggml.eos_token_id", Value::U32(2))
            .value("general.other", Value::U32(7));
        w.tensor(TensorEntry {
            name: "x".into(),
            dims: vec![32],
            ty: TensorType::F32,
        });
        let mut bytes = Vec::new();
        w.write(&mut bytes, &mut |_, buf| buf.fill(0)).unwrap();
        Gguf::from_bytes(bytes).unwrap()
    }

    fn written(shape: &Shape, ty: TensorType) -> Vec<u8> {
        let plan = plan(shape, ty, tokenizer().metadata()).unwrap();
        let mut bytes = Vec::new();
        let mut index = 0;
        plan.write(&mut bytes, &mut |entry, buf| {
            fill(entry, index, buf);
            index += 1;
        })
        .unwrap();
        assert_eq!(bytes.len() as u64, plan.file_bytes().unwrap());
        bytes
    }

    #[test]
    fn shapes_are_presets_or_five_numbers_and_impossible_ones_are_refused_with_why() {
        assert_eq!(Shape::parse("3B").unwrap(), PRESETS[1].1);
        assert_eq!(Shape::parse("8b").unwrap().ffn, 14336);
        assert_eq!(Shape::parse("256, 2, 4, 2, 512").unwrap(), SMALL);
        assert_eq!(SMALL.label(), "256x2-h4kv2-ffn512");
        assert_eq!(PRESETS[0].1.label(), "1b");
        for (bad, says) in [
            ("2b", "not a shape"),
            ("1,2,3", "not a shape"),
            ("256,2,3,1,512", "does not split into 3 heads"),
            ("256,2,4,3,512", "cannot share 3 KV heads"),
            ("256,0,4,2,512", "above zero"),
        ] {
            let err = Shape::parse(bad).unwrap_err().to_string();
            assert!(err.contains(says), "{bad}: {err}");
        }
        let err = plan(
            &Shape::parse("96,1,2,1,96").unwrap(),
            TensorType::Q4_K,
            tokenizer().metadata(),
        )
        .err()
        .unwrap()
        .to_string();
        assert!(err.contains("multiples of 256"), "{err}");
    }

    #[test]
    fn every_type_gives_a_readable_llama_file_of_small_random_weights_the_same_each_time() {
        for ty in TensorType::ALL {
            let bytes = written(&SMALL, ty);
            assert_eq!(bytes, written(&SMALL, ty), "{ty}: not the same twice");
            let g = Gguf::from_bytes(bytes).unwrap();
            let hp = HParams::from_gguf(&g).unwrap();
            assert_eq!(
                (hp.dim, hp.layers, hp.heads, hp.kv_heads, hp.ffn, hp.vocab),
                (256, 2, 4, 2, 512, 300),
                "{ty}"
            );
            let m = g.metadata();
            assert_eq!(m.str("tokenizer.ggml.model").unwrap(), "gpt2");
            assert!(
                m.get("general.other").is_none(),
                "only the tokenizer is copied"
            );
            assert!(m
                .str("general.name")
                .unwrap()
                .contains(&format!("random {ty} weights")));
            assert_eq!(g.tensor_infos().len(), 2 + 9 * 2);
            assert!(g
                .tensor("blk.1.attn_norm.weight")
                .unwrap()
                .to_f32()
                .unwrap()
                .iter()
                .all(|&x| x == 1.0));
            for name in [
                "token_embd.weight",
                "blk.0.attn_k.weight",
                "blk.1.ffn_down.weight",
            ] {
                let t = g.tensor(name).unwrap();
                assert_eq!(t.info.ty, ty);
                let bound = 1.0 / (t.info.dims[0] as f32).sqrt();
                let values = t.to_f32().unwrap();
                let worst = values.iter().fold(0f32, |m, x| m.max(x.abs()));
                assert!(
                    worst.is_finite() && worst <= bound * 1.05,
                    "{ty} {name}: {worst} > {bound}"
                );
                let mean = values.iter().sum::<f32>() / values.len() as f32;
                let spread = (values.iter().map(|x| (x - mean).powi(2)).sum::<f32>()
                    / values.len() as f32)
                    .sqrt();
                assert!(
                    spread > bound / 10.0,
                    "{ty} {name}: the weights barely vary ({spread})"
                );
            }
        }
    }

    #[test]
    fn the_engine_runs_it_to_finite_logits_and_a_second_ensure_reuses_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut heard = Vec::new();
        let path = ensure(
            dir.path(),
            &SMALL,
            TensorType::Q4_1,
            &tokenizer(),
            &mut |s| heard.push(s.to_owned()),
        )
        .unwrap();
        assert!(
            heard[0].starts_with("writing ") && heard[0].contains("random Q4_1 weights"),
            "{heard:?}"
        );
        assert_eq!(heard.last().unwrap(), "written 100%");
        assert!(!path.with_extension("gguf.part").exists());
        let mut again = Vec::new();
        assert_eq!(
            ensure(
                dir.path(),
                &SMALL,
                TensorType::Q4_1,
                &tokenizer(),
                &mut |s| again.push(s.to_owned())
            )
            .unwrap(),
            path
        );
        assert_eq!(again, [format!("using {}", path.display())]);

        let mut model = LoadedModel::load(Device::Cpu, Gguf::open(&path).unwrap(), 64).unwrap();
        model.feed(&[5, 6, 7], 0).unwrap();
        let logits = model.step(8, 3).unwrap();
        assert_eq!(logits.len(), 300);
        assert!(logits.iter().all(|x| x.is_finite()), "{logits:?}");
        assert!(
            logits.iter().any(|&x| x != logits[0]),
            "the logits are all the same"
        );
    }
}
