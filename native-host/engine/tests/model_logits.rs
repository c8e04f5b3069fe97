//! The forward pass on the GPU against llama.cpp (tests/reference, from
//! scripts/reference-vectors), for SmolLM2 (llama) and Gemma 3: the top-10 logits of the first
//! positions of the agent prompt (decode, one token per step), and greedy generation for three
//! prompts (each prompt fed as a prefill batch, then decode).
//!
//! Tolerance against llama.cpp: each of its top-10 logits within 0.75 of ours for SmolLM2 (the
//! largest difference seen is 0.69, at position 4) and within 6.5 for Gemma 3 (6.30 seen, at
//! position 7). llama.cpp's CPU matrix products quantise the activations to 8 bits (Q8_0/Q8_K) and
//! its KV cache is f16; ours are f32 throughout. That this, not a slip in our pass, is the
//! difference is what the f64 CPU pass shows: written from the architectures' definitions
//! independently of the GPU code, it agrees with ours within 2e-4 at every position checked,
//! while llama.cpp is 0.3–6.3 from it on Gemma (whose activations have large outliers, which 8-bit
//! quantisation rounds hardest) and 0.1–0.7 on SmolLM2. Greedy tokens must be identical until the
//! first step where llama.cpp's two best logits are closer than what its rounding can move them —
//! 0.5 for SmolLM2, 3.5 for Gemma 3 — a near-tie the difference can flip, which the test reports.

mod common;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

use common::gguf_writer::GgufWriter;
use common::llama_cpp::{argmax, greedy_tokens_match, top_logits_match};
use itinero_engine::device::{Device, LoadedModel};
use itinero_engine::generate::Decoder;
use itinero_engine::generate::GpuModel;
use itinero_engine::gguf::{Architecture, Gguf, TensorType};
use itinero_engine::gpu::attention_tuning::AttentionKernel;
use itinero_engine::gpu::merge_tuning::MergeSite;
use itinero_engine::gpu::{
    tile_tuning, Blocking, CoopAttentionBlock, CoopShape, Gpu, RopeOrder, RopeParams, BATCH_TILE,
};
use itinero_engine::model::{
    AttentionTuning, DecodeShape, Fusion, GpuTuning, HParams, PrefillBatch, PrefillTile,
    SliceMerge, Transformer, PREFILL_BATCH,
};
use itinero_engine::models::{KnownModel, GEMMA3_270M, SMOLLM2_135M};
use itinero_engine::quant::dequantize_to_vec;

/// Prefill's kernels fixed rather than timed, for tests that compare two loads: where a GPU
/// times them, two loads may keep different ones, and a batch on f16 cooperative matrices moves
/// the logits by more than the comparison allows.
fn fixed_prefill() -> GpuTuning {
    GpuTuning {
        tile: PrefillTile::Fixed(BATCH_TILE),
        prefill_attention: AttentionTuning::PerToken,
        ..GpuTuning::default()
    }
}

fn load(model: KnownModel) -> Transformer {
    let gguf = common::open(model);
    Transformer::load(common::gpu(), gguf, 256).unwrap()
}

fn rms_norm(x: &[f64], w: &[f32], eps: f32) -> Vec<f64> {
    let mean = x.iter().map(|v| v * v).sum::<f64>() / x.len() as f64;
    let scale = 1.0 / (mean + f64::from(eps)).sqrt();
    x.iter()
        .zip(w)
        .map(|(v, &w)| v * scale * f64::from(w))
        .collect()
}

fn gelu_tanh(x: f64) -> f64 {
    0.5 * x * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x.powi(3))).tanh())
}

/// The forward pass in f64 on the CPU, written from the architectures' definitions (llama.cpp's
/// graphs) independently of the GPU code: the logits of `ids` (only, since Gemma's output matrix
/// is 262 144 rows) at every position of `prompt`.
fn cpu_pass(g: &Gguf, prompt: &[u32], ids: &[Vec<u32>]) -> Vec<Vec<f64>> {
    let hidden = hidden_states(g, prompt);
    let hp = HParams::from_gguf(g).unwrap();
    let embd = g.tensor("token_embd.weight").unwrap();
    let bytes = embd.info.ty.bytes_for(u64::from(hp.dim)).unwrap() as usize;
    let row = |t: u32| {
        let data = &embd.data[t as usize * bytes..(t as usize + 1) * bytes];
        dequantize_to_vec(embd.info.ty, data).unwrap()
    };
    hidden
        .iter()
        .zip(ids)
        .map(|(h, ids)| {
            ids.iter()
                .map(|&t| row(t).iter().zip(h).map(|(&a, b)| f64::from(a) * b).sum())
                .collect()
        })
        .collect()
}

/// The f64 pass's final hidden states (after the output norm), computed once per model file and
/// prompt however many tests ask: a dozen of them check the same first positions of the same
/// model, and each pass dequantises every weight and runs every product in f64 (a second or
/// more of the two cores, which the tests running beside it on lavapipe need). Two tests asking
/// at once wait for one pass rather than both running it.
fn hidden_states(g: &Gguf, prompt: &[u32]) -> Arc<Vec<Vec<f64>>> {
    type Passes = HashMap<(PathBuf, Vec<u32>), Arc<OnceLock<Arc<Vec<Vec<f64>>>>>>;
    static PASSES: LazyLock<Mutex<Passes>> = LazyLock::new(Mutex::default);
    let path = g.path().expect("the tests' models are files").to_path_buf();
    let pass = Arc::clone(
        PASSES
            .lock()
            .unwrap()
            .entry((path, prompt.to_vec()))
            .or_default(),
    );
    Arc::clone(pass.get_or_init(|| Arc::new(f64_pass(g, prompt))))
}

/// The pass [`hidden_states`] keeps.
fn f64_pass(g: &Gguf, prompt: &[u32]) -> Vec<Vec<f64>> {
    let hp = HParams::from_gguf(g).unwrap();
    let gemma = hp.arch == Architecture::Gemma3;
    let rope = RopeParams::from_gguf(g).unwrap();
    let window = gemma.then(|| g.metadata().u32("gemma3.attention.sliding_window").unwrap());
    let weights: HashMap<String, Vec<f32>> = g
        .tensor_infos()
        .iter()
        .filter(|t| t.name != "token_embd.weight")
        .map(|t| (t.name.clone(), g.tensor(&t.name).unwrap().to_f32().unwrap()))
        .collect();
    let w = |name: &str| &weights[name];
    let matvec = |name: &str, x: &[f64]| -> Vec<f64> {
        w(name)
            .chunks_exact(x.len())
            .map(|row| row.iter().zip(x).map(|(&w, x)| f64::from(w) * x).sum())
            .collect()
    };
    let embd = g.tensor("token_embd.weight").unwrap();
    let (d, hd) = (hp.dim as usize, hp.head_dim as usize);
    let row = |t: u32| -> Vec<f64> {
        let bytes = embd.info.ty.bytes_for(hp.dim as u64).unwrap() as usize;
        let data = &embd.data[t as usize * bytes..(t as usize + 1) * bytes];
        dequantize_to_vec(embd.info.ty, data)
            .unwrap()
            .into_iter()
            .map(f64::from)
            .collect()
    };
    let rotate = |v: &mut [f64], pos: usize, base: f64| {
        let n = rope.n_dims as usize;
        for head in v.chunks_exact_mut(hd) {
            for i in 0..n / 2 {
                let theta = pos as f64 * base.powf(-2.0 * i as f64 / n as f64);
                let (a, b) = match rope.order {
                    RopeOrder::Neox => (i, i + n / 2),
                    RopeOrder::Normal => (2 * i, 2 * i + 1),
                };
                let (x0, x1) = (head[a], head[b]);
                head[a] = x0 * theta.cos() - x1 * theta.sin();
                head[b] = x0 * theta.sin() + x1 * theta.cos();
            }
        }
    };
    let scale = if gemma && hp.layers == 62 {
        1.0 / f64::from(hp.dim / hp.heads).sqrt()
    } else {
        1.0 / (hd as f64).sqrt()
    };
    let group = (hp.heads / hp.kv_heads) as usize;
    let mut keys: Vec<Vec<Vec<f64>>> = vec![Vec::new(); hp.layers as usize];
    let mut values: Vec<Vec<Vec<f64>>> = vec![Vec::new(); hp.layers as usize];
    let mut out = Vec::new();
    for (pos, &token) in prompt.iter().enumerate() {
        let mut x = row(token);
        if gemma {
            x.iter_mut().for_each(|v| *v *= (d as f64).sqrt());
        }
        for l in 0..hp.layers as usize {
            let t = |s: &str| format!("blk.{l}.{s}");
            let local = gemma && l % 6 < 5;
            let h = rms_norm(&x, w(&t("attn_norm.weight")), hp.rms_eps);
            let project = |name: &str| {
                let mut y = matvec(&t(&format!("{name}.weight")), &h);
                // Qwen 2's biases; other architectures have none.
                if let Some(b) = weights.get(&t(&format!("{name}.bias"))) {
                    y.iter_mut().zip(b).for_each(|(y, &b)| *y += f64::from(b));
                }
                y
            };
            let mut q = project("attn_q");
            let mut k = project("attn_k");
            let v = project("attn_v");
            if gemma {
                let norm_heads = |v: &mut Vec<f64>, name: &str| {
                    *v = v
                        .chunks_exact(hd)
                        .flat_map(|head| rms_norm(head, w(name), hp.rms_eps))
                        .collect();
                };
                norm_heads(&mut q, &t("attn_q_norm.weight"));
                norm_heads(&mut k, &t("attn_k_norm.weight"));
            }
            let base = if local {
                10_000.0
            } else {
                f64::from(rope.freq_base)
            };
            rotate(&mut q, pos, base);
            rotate(&mut k, pos, base);
            // Kept as the engine's cache (and llama.cpp's) keeps them: in f16.
            let f16 = |x: Vec<f64>| -> Vec<f64> {
                x.into_iter()
                    .map(|x| half::f16::from_f64(x).to_f64())
                    .collect()
            };
            keys[l].push(f16(k));
            values[l].push(f16(v));
            let start = match (local, window) {
                (true, Some(w)) => (pos + 1).saturating_sub(w as usize),
                _ => 0,
            };
            let mut att = vec![0.0; hp.heads as usize * hd];
            for head in 0..hp.heads as usize {
                let kv = (head / group) * hd;
                let qh = &q[head * hd..(head + 1) * hd];
                let scores: Vec<f64> = (start..=pos)
                    .map(|p| {
                        qh.iter()
                            .zip(&keys[l][p][kv..kv + hd])
                            .map(|(a, b)| a * b)
                            .sum::<f64>()
                            * scale
                    })
                    .collect();
                let m = scores.iter().cloned().fold(f64::MIN, f64::max);
                let sum: f64 = scores.iter().map(|s| (s - m).exp()).sum();
                for (p, s) in (start..=pos).zip(&scores) {
                    let a = (s - m).exp() / sum;
                    for i in 0..hd {
                        att[head * hd + i] += a * values[l][p][kv + i];
                    }
                }
            }
            let mut o = matvec(&t("attn_output.weight"), &att);
            if gemma {
                o = rms_norm(&o, w(&t("post_attention_norm.weight")), hp.rms_eps);
            }
            x.iter_mut().zip(&o).for_each(|(x, o)| *x += o);
            let h = rms_norm(&x, w(&t("ffn_norm.weight")), hp.rms_eps);
            let gate = matvec(&t("ffn_gate.weight"), &h);
            let up = matvec(&t("ffn_up.weight"), &h);
            let act = |g: f64| {
                if gemma {
                    gelu_tanh(g)
                } else {
                    g / (1.0 + (-g).exp())
                }
            };
            let m: Vec<f64> = gate.iter().zip(&up).map(|(&g, u)| act(g) * u).collect();
            let mut down = matvec(&t("ffn_down.weight"), &m);
            if gemma {
                down = rms_norm(&down, w(&t("post_ffw_norm.weight")), hp.rms_eps);
            }
            x.iter_mut().zip(&down).for_each(|(x, d)| *x += d);
        }
        out.push(rms_norm(&x, w("output_norm.weight"), hp.rms_eps));
    }
    out
}

/// The first positions of the agent prompt against the f64 CPU pass, on the tokens llama.cpp
/// ranks top-10 and our own best: the GPU must match exact arithmetic far more closely than it
/// matches llama.cpp (lavapipe: within 1e-3), which shows where llama.cpp's own rounding (8-bit
/// activations) is the difference. Both keep the cache in f16, and so does the CPU pass.
fn first_positions_match_an_f64_cpu_pass(
    known: KnownModel,
    reference: &str,
    positions: usize,
    tuning: GpuTuning,
) {
    let (kernels, tile) = (tuning.fusion, tuning.tile);
    let gpu = common::gpu();
    let reference = common::reference(reference);
    let g = common::open(known);
    let prompt = &common::ids(&reference["logits"]["ids"])[..positions];
    // Decode cuts its keys into slices of 64 where the cache holds more: a cache that long where
    // the slices' merge is what is checked.
    let capacity = match tuning.slice_merge {
        SliceMerge::Product => 200,
        _ => 16,
    };
    let model = Transformer::load_tuned(gpu, common::open(known), capacity, tuning).unwrap();
    let merged = model.decode_merge().chosen == MergeSite::Product;
    let shape = model.decode_x();
    eprintln!("{}: decode's products take {shape}", known.id);
    match tuning.decode_shape {
        DecodeShape::Timed => {
            for tpr in [32, 16, 8] {
                assert!(shape.contains(&format!("{tpr} a row: ")), "{shape}");
            }
        }
        DecodeShape::Threads(n) => {
            assert!(
                shape.starts_with(&format!("{n} invocations a row")) || gpu.chooses_cpu_kernels(),
                "{shape}"
            )
        }
        DecodeShape::Auto => {}
    }
    match tuning.slice_merge {
        // Decode's attention slices its keys on a GPU or in blocks, not in CPU drivers' lanes.
        SliceMerge::Product
            if gpu.chooses_cpu_kernels() && tuning.decode_attention != AttentionTuning::Blocks =>
        {
            assert_eq!(model.decode_merge().chosen, MergeSite::Unsliced)
        }
        SliceMerge::Product => assert!(merged, "{}", model.decode_merge().describe()),
        _ => assert!(
            !merged || !gpu.chooses_cpu_kernels(),
            "{}",
            model.decode_merge().describe()
        ),
    }
    let chosen = model.prefill_tile();
    match tile {
        PrefillTile::Fixed(t) => assert_eq!(chosen.chosen, Blocking::Rows(t)),
        PrefillTile::Cooperative => assert_eq!(
            Some(chosen.chosen),
            CoopShape::first(gpu).ok().map(Blocking::Cooperative)
        ),
        // A CPU driver is not timed: the tile of most reuse is known to be best there.
        PrefillTile::Auto if gpu.chooses_cpu_kernels() => {
            assert_eq!(chosen.chosen, Blocking::Rows(BATCH_TILE));
            assert!(chosen.timings.is_empty());
        }
        PrefillTile::Auto => assert_eq!(
            chosen.timings.len(),
            tile_tuning::candidates(gpu).len(),
            "{}",
            chosen.describe()
        ),
    }
    for (asked, chosen) in [
        (tuning.prefill_attention, model.prefill_attention()),
        (tuning.decode_attention, model.decode_attention()),
    ] {
        match asked {
            AttentionTuning::Blocks => {
                assert!(matches!(chosen.chosen, AttentionKernel::Blocks(_)))
            }
            AttentionTuning::Cooperative => {
                assert!(matches!(chosen.chosen, AttentionKernel::Cooperative(_)))
            }
            AttentionTuning::PerToken => assert_eq!(chosen.chosen, AttentionKernel::PerToken),
            // A CPU driver is not timed: its lane forms are known to be best there.
            AttentionTuning::Auto if gpu.chooses_cpu_kernels() => {
                assert_eq!(chosen.chosen, AttentionKernel::PerToken);
                assert!(chosen.timings.is_empty());
            }
            AttentionTuning::Auto => assert!(!chosen.timings.is_empty(), "{}", chosen.describe()),
        }
    }
    let dispatches = model.decode_dispatches();
    let batch = model.prefill_dispatches();
    eprintln!(
        "{} ({kernels:?}): {dispatches} dispatches a decode step, {batch} a prefill batch",
        known.id
    );
    if kernels == Fusion::Fused {
        // Per layer at most: q, k, v apart (mixed types); RoPE (with Gemma's head norms);
        // attention's two; the output product; Gemma's post-norm (adding into x); gate and up
        // apart with the activation; down; post-norm. Joined, the llama block is 7, and 6 where
        // decode's attention does RoPE itself; one fewer where the output product merges
        // attention's slices.
        let layers = HParams::from_gguf(&g).unwrap().layers as usize;
        let most = match g.architecture().unwrap() {
            Architecture::Gemma3 => 13,
            _ if model.decode_rotates() => 6,
            _ => 7,
        } - usize::from(merged);
        // Fused, decode's attention on a GPU (or in blocks) does RoPE itself, unless the model
        // has head norms; the lane forms of CPU drivers leave it to RoPE's dispatch.
        let lanes = gpu.chooses_cpu_kernels() && tuning.decode_attention != AttentionTuning::Blocks;
        let head_norms = g.architecture().unwrap() == Architecture::Gemma3;
        assert_eq!(
            model.decode_rotates(),
            !lanes && !head_norms,
            "{}",
            known.id
        );
        assert!(
            dispatches <= layers * most + 1,
            "{}: the fused decode records {dispatches} dispatches",
            known.id
        );
        // A prefill batch of the llama block with q/k/v and gate/up joined: norm, q/k/v, RoPE
        // (the keys and values into the cache), attention's one or two, output, norm,
        // gate/up, down.
        if g.architecture().unwrap() == Architecture::Llama {
            assert!(
                batch <= layers * 9,
                "{}: a prefill batch records {batch} dispatches",
                known.id
            );
        }
    }
    let ours: Vec<Vec<f32>> = prompt
        .iter()
        .enumerate()
        .map(|(pos, &t)| model.step(gpu, t, pos as u32).unwrap())
        .collect();
    let ids: Vec<Vec<u32>> = reference["logits"]["positions"]
        .as_array()
        .unwrap()
        .iter()
        .zip(&ours)
        .map(|(p, ours)| {
            let mut ids: Vec<u32> = p["top10"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["id"].as_u64().unwrap() as u32)
                .collect();
            ids.push(argmax(ours));
            ids
        })
        .take(positions)
        .collect();
    let exact = cpu_pass(&g, prompt, &ids);
    let mut llama_cpp_differs = Vec::new();
    for (pos, ((ids, exact), ours)) in ids.iter().zip(&exact).zip(&ours).enumerate() {
        let worst = ids
            .iter()
            .zip(exact)
            .map(|(&id, e)| (f64::from(ours[id as usize]) - e).abs())
            .fold(0.0, f64::max);
        let top10 = &reference["logits"]["positions"][pos]["top10"];
        let llama_cpp = (0..10)
            .map(|i| (top10[i]["logit"].as_f64().unwrap() - exact[i]).abs())
            .fold(0.0, f64::max);
        llama_cpp_differs.push(llama_cpp);
        eprintln!(
            "{} ({kernels:?}) position {pos}: largest logit difference from the f64 CPU pass: ours {worst:.2e}, llama.cpp's {llama_cpp:.2}",
            known.id
        );
        assert!(
            worst < 1e-3 * exact.iter().fold(1.0f64, |a, e| a.max(e.abs())),
            "{} position {pos} differs from the f64 CPU pass by {worst}",
            known.id
        );
    }
    // The same prompt again, all but its last token as one prefill batch over the cache the
    // steps left (the batch kernels, joined where `kernels` fuses), then the last as a step.
    let last = positions - 1;
    model.feed(gpu, &prompt[..last], 0).unwrap();
    let batched = model.step(gpu, prompt[last], last as u32).unwrap();
    let worst = ids[last]
        .iter()
        .zip(&exact[last])
        .map(|(&id, e)| (f64::from(batched[id as usize]) - e).abs())
        .fold(0.0, f64::max);
    // On cooperative matrices the batch's products, or its attention, take their inputs in f16
    // (2⁻¹¹ of each rounded away, where f32 loses 2⁻²⁴): ten times the bound of f32, and still
    // closer to exact than llama.cpp, whose products take 8-bit activations.
    let largest = exact[last].iter().fold(1.0f64, |a, e| a.max(e.abs()));
    let attention = model.prefill_attention().chosen;
    let allowed = match (chosen.chosen, attention) {
        (Blocking::Cooperative(_), _) | (_, AttentionKernel::Cooperative(_)) => {
            (1e-2 * largest).min(llama_cpp_differs[last])
        }
        _ => 1e-3 * largest,
    };
    eprintln!(
        "{} ({kernels:?}, {}, attention {attention}) after a prefill batch: largest logit \
         difference from the f64 CPU pass {worst:.2e} (allowed {allowed:.2e})",
        known.id, chosen.chosen
    );
    assert!(
        worst < allowed,
        "{} ({kernels:?}, {}) after a prefill batch differs from the f64 CPU pass by {worst}",
        known.id,
        chosen.chosen
    );
}

#[test]
fn smollm2_first_positions_match_an_f64_cpu_pass() {
    first_positions_match_an_f64_cpu_pass(
        SMOLLM2_135M,
        "smollm2-135m-instruct-q4_1.json",
        4,
        GpuTuning {
            fusion: Fusion::Auto,
            tile: PrefillTile::Auto,
            ..GpuTuning::default()
        },
    );
}

#[test]
fn gemma3_first_positions_match_an_f64_cpu_pass() {
    first_positions_match_an_f64_cpu_pass(
        GEMMA3_270M,
        "gemma3-270m-q4_k_m.json",
        8,
        GpuTuning {
            fusion: Fusion::Auto,
            tile: PrefillTile::Auto,
            ..GpuTuning::default()
        },
    );
}

/// The kernels GPUs get (decode: norms folded into the products, joined products, the cache
/// written by the kernels; prefill: joined products), forced on this machine's CPU driver, which
/// would otherwise bind one kernel per operation.
#[test]
fn smollm2_fused_kernels_match_an_f64_cpu_pass() {
    first_positions_match_an_f64_cpu_pass(
        SMOLLM2_135M,
        "smollm2-135m-instruct-q4_1.json",
        4,
        GpuTuning {
            fusion: Fusion::Fused,
            tile: PrefillTile::Auto,
            ..GpuTuning::default()
        },
    );
}

/// The fused prefill with the smaller tiles a GPU may choose (`gpu::tile_tuning`): the
/// batch's products in tiles of 2 and 4 tokens give the same logits.
#[test]
fn smollm2_fused_prefill_in_smaller_tiles_matches_an_f64_cpu_pass() {
    for tile in [2, 4] {
        first_positions_match_an_f64_cpu_pass(
            SMOLLM2_135M,
            "smollm2-135m-instruct-q4_1.json",
            4,
            GpuTuning {
                fusion: Fusion::Fused,
                tile: PrefillTile::Fixed(tile),
                ..GpuTuning::default()
            },
        );
    }
}

/// Attention in blocks of query rows sharing tiles of keys, for prefill and decode, as a GPU may
/// choose (`gpu::attention_tuning`): fused and not, the logits against the f64 CPU pass.
fn attention_in_blocks_matches_an_f64_cpu_pass(
    known: KnownModel,
    reference: &str,
    positions: usize,
) {
    for fusion in [Fusion::Fused, Fusion::Separate] {
        first_positions_match_an_f64_cpu_pass(
            known,
            reference,
            positions,
            GpuTuning {
                fusion,
                prefill_attention: AttentionTuning::Blocks,
                decode_attention: AttentionTuning::Blocks,
                ..GpuTuning::default()
            },
        );
    }
}

#[test]
fn smollm2_attention_in_blocks_matches_an_f64_cpu_pass() {
    attention_in_blocks_matches_an_f64_cpu_pass(SMOLLM2_135M, "smollm2-135m-instruct-q4_1.json", 4);
}

/// Gemma's heads of 256 and its sliding-window layers.
#[test]
fn gemma3_attention_in_blocks_matches_an_f64_cpu_pass() {
    attention_in_blocks_matches_an_f64_cpu_pass(GEMMA3_270M, "gemma3-270m-q4_k_m.json", 8);
}

/// Decode's products in each shape a GPU times (32, 16 and 8 invocations a row), timed here as a
/// GPU times them as the model loads, and the fastest used: fused, the logits against the f64 CPU
/// pass.
#[test]
fn smollm2_decode_shapes_timed_match_an_f64_cpu_pass() {
    let tuning = GpuTuning {
        fusion: Fusion::Fused,
        decode_shape: DecodeShape::Timed,
        ..GpuTuning::default()
    };
    first_positions_match_an_f64_cpu_pass(
        SMOLLM2_135M,
        "smollm2-135m-instruct-q4_1.json",
        4,
        tuning,
    );
}

/// Gemma's products in the narrowest shape a GPU times, untimed: its mixed types and products
/// apart (a v matrix kept out of the joined upload).
#[test]
fn gemma3_decode_in_8_invocations_a_row_matches_an_f64_cpu_pass() {
    let tuning = GpuTuning {
        fusion: Fusion::Fused,
        decode_shape: DecodeShape::Threads(8),
        ..GpuTuning::default()
    };
    first_positions_match_an_f64_cpu_pass(GEMMA3_270M, "gemma3-270m-q4_k_m.json", 8, tuning);
}

/// Decode's attention slices merged by the output product as it reads them (a dispatch fewer a
/// layer), as a GPU may choose: fused, decode's attention in blocks (which slice their keys on
/// this machine's CPU driver too), in a cache long enough to be sliced.
fn slices_merged_by_the_product_match_an_f64_cpu_pass(
    known: KnownModel,
    reference: &str,
    positions: usize,
) {
    first_positions_match_an_f64_cpu_pass(
        known,
        reference,
        positions,
        GpuTuning {
            fusion: Fusion::Fused,
            decode_attention: AttentionTuning::Blocks,
            slice_merge: SliceMerge::Product,
            ..GpuTuning::default()
        },
    );
}

#[test]
fn smollm2_slices_merged_by_the_product_match_an_f64_cpu_pass() {
    slices_merged_by_the_product_match_an_f64_cpu_pass(
        SMOLLM2_135M,
        "smollm2-135m-instruct-q4_1.json",
        4,
    );
}

/// Gemma's head norms (no rotating attention), post-norms (the product writes, the norm adds)
/// and sliding-window layers (sliced over their window).
#[test]
fn gemma3_slices_merged_by_the_product_match_an_f64_cpu_pass() {
    slices_merged_by_the_product_match_an_f64_cpu_pass(GEMMA3_270M, "gemma3-270m-q4_k_m.json", 8);
}

/// Prefill on cooperative matrices (tensor cores), where the adapter has them, fused and not:
/// the batch's logits against the f64 CPU pass.
fn prefill_on_cooperative_matrices_matches_an_f64_cpu_pass(
    known: KnownModel,
    reference: &str,
    positions: usize,
) {
    let gpu = common::gpu();
    if CoopShape::first(gpu).is_err() {
        eprintln!(
            "{} has no cooperative matrices: nothing to check here",
            gpu.describe()
        );
        return;
    }
    for kernels in [Fusion::Fused, Fusion::Separate] {
        first_positions_match_an_f64_cpu_pass(
            known,
            reference,
            positions,
            GpuTuning {
                fusion: kernels,
                tile: PrefillTile::Cooperative,
                ..GpuTuning::default()
            },
        );
    }
}

#[test]
fn smollm2_prefill_on_cooperative_matrices_matches_an_f64_cpu_pass() {
    prefill_on_cooperative_matrices_matches_an_f64_cpu_pass(
        SMOLLM2_135M,
        "smollm2-135m-instruct-q4_1.json",
        4,
    );
}

#[test]
fn gemma3_prefill_on_cooperative_matrices_matches_an_f64_cpu_pass() {
    prefill_on_cooperative_matrices_matches_an_f64_cpu_pass(
        GEMMA3_270M,
        "gemma3-270m-q4_k_m.json",
        8,
    );
}

/// A prefill batch's attention on cooperative matrices, where the adapter has them for the
/// model's heads: the batch's logits against the f64 CPU pass. (Attention is one dispatch
/// whether the plans fuse or not.)
fn prefill_attention_on_cooperative_matrices_matches_an_f64_cpu_pass(
    known: KnownModel,
    reference: &str,
    positions: usize,
    head_dim: u32,
) {
    let gpu = common::gpu();
    if CoopAttentionBlock::all(gpu, head_dim).is_empty() {
        eprintln!(
            "nothing to check here: {}",
            CoopAttentionBlock::why_none(gpu, head_dim)
        );
        return;
    }
    first_positions_match_an_f64_cpu_pass(
        known,
        reference,
        positions,
        GpuTuning {
            prefill_attention: AttentionTuning::Cooperative,
            ..GpuTuning::default()
        },
    );
}

#[test]
fn smollm2_prefill_attention_on_cooperative_matrices_matches_an_f64_cpu_pass() {
    prefill_attention_on_cooperative_matrices_matches_an_f64_cpu_pass(
        SMOLLM2_135M,
        "smollm2-135m-instruct-q4_1.json",
        4,
        64,
    );
}

/// Gemma's heads of 256 and its sliding-window layers.
#[test]
fn gemma3_prefill_attention_on_cooperative_matrices_matches_an_f64_cpu_pass() {
    prefill_attention_on_cooperative_matrices_matches_an_f64_cpu_pass(
        GEMMA3_270M,
        "gemma3-270m-q4_k_m.json",
        8,
        256,
    );
}

/// A prompt of 150 tokens in one batch of 512 (a GPU's batch) and in batches of 128 (CPU
/// drivers'), fused and separate: the same cache, so the same logits at the next position. Each
/// token's products and attention are the same arithmetic in either batch, so they agree to the
/// last bits; a batch that dropped or misplaced tokens past 128 would not. 150 goes past the first
/// batch of 128 and ends inside a tile of 8 rows, so a partial tile is checked in either; more
/// tokens check nothing new, and cost lavapipe, which runs this in CI, time (300 took a minute
/// longer).
/// The prefill kernels are fixed: where a GPU times them, two loads may keep different ones
/// (cooperative matrices round to f16), which is not what is checked here.
#[test]
fn smollm2_prefill_in_batches_of_512_matches_batches_of_128() {
    let gpu = common::gpu();
    let vocab = HParams::from_gguf(&common::open(SMOLLM2_135M))
        .unwrap()
        .vocab;
    let prompt: Vec<u32> = (0..151u32).map(|i| (i * 7919 + 13) % vocab).collect();
    let (head, last) = prompt.split_at(150);
    let auto = Transformer::load(gpu, common::open(SMOLLM2_135M), 16).unwrap();
    assert_eq!(
        auto.prefill_batch(),
        if gpu.chooses_cpu_kernels() {
            PREFILL_BATCH
        } else {
            512
        },
        "the batch a device gets by default"
    );
    // Generation feeds a prompt a batch at a time, as the model the host loads says.
    let tuning = GpuTuning {
        prefill_batch: PrefillBatch::Tokens(256),
        ..GpuTuning::default()
    };
    let loaded =
        LoadedModel::load_tuned(Device::Gpu, common::open(SMOLLM2_135M), 16, tuning).unwrap();
    assert_eq!(loaded.feed_chunk(), 256);
    for fusion in [Fusion::Fused, Fusion::Separate] {
        let logits = [512, PREFILL_BATCH].map(|batch| {
            let tuning = GpuTuning {
                fusion,
                prefill_batch: PrefillBatch::Tokens(batch),
                ..fixed_prefill()
            };
            let model =
                Transformer::load_tuned(gpu, common::open(SMOLLM2_135M), 160, tuning).unwrap();
            assert_eq!(model.prefill_batch(), batch);
            model.feed(gpu, head, 0).unwrap();
            model.step(gpu, last[0], 150).unwrap()
        });
        let largest = logits[1].iter().fold(1.0f32, |a, l| a.max(l.abs()));
        let worst = logits[0]
            .iter()
            .zip(&logits[1])
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        eprintln!("{fusion:?}: 150 tokens in a batch of 512 against batches of 128: {worst:.2e}");
        assert!(
            worst <= 1e-5 * largest,
            "{fusion:?}: a batch of 512 moves the logits by {worst} (largest {largest})"
        );
    }
}

/// A batch out of range, or not of whole tiles and blocks of tokens, is refused with the reason.
#[test]
fn prefill_batches_out_of_range_are_refused() {
    let gpu = common::gpu();
    for batch in [1, 300, 4224] {
        let tuning = GpuTuning {
            prefill_batch: PrefillBatch::Tokens(batch),
            ..GpuTuning::default()
        };
        let err = Transformer::load_tuned(gpu, common::open(SMOLLM2_135M), 16, tuning)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("a prefill batch of {batch} tokens")),
            "{err}"
        );
        assert!(err.contains("a multiple of 128 up to 4096"), "{err}");
    }
}

/// As above for Gemma 3: its q/k norms, post-norms, GELU, sliding-window layers, and its
/// mixed weight types (layers whose v matrix is Q6_K cannot be joined to q and k).
#[test]
fn gemma3_fused_kernels_match_an_f64_cpu_pass() {
    first_positions_match_an_f64_cpu_pass(
        GEMMA3_270M,
        "gemma3-270m-q4_k_m.json",
        8,
        GpuTuning {
            fusion: Fusion::Fused,
            tile: PrefillTile::Auto,
            ..GpuTuning::default()
        },
    );
}

/// As above with Gemma's mixed types in tiles of 2 tokens (its v products into the cache too).
#[test]
fn gemma3_fused_prefill_in_tiles_of_two_matches_an_f64_cpu_pass() {
    first_positions_match_an_f64_cpu_pass(
        GEMMA3_270M,
        "gemma3-270m-q4_k_m.json",
        8,
        GpuTuning {
            fusion: Fusion::Fused,
            tile: PrefillTile::Fixed(2),
            ..GpuTuning::default()
        },
    );
}

/// SmolLM2's weights relabelled as a qwen2 model, with random q/k/v biases of its own when
/// `biases`. No Qwen GGUF can be downloaded from where CI fetches models, so this is how the
/// qwen2 pass (the biases, NeoX RoPE) is checked: against the f64 CPU pass, whose biases and
/// RoPE order are written from the architecture's definition.
fn smollm2_as_qwen2(biases: bool) -> tempfile::NamedTempFile {
    let src = common::open(SMOLLM2_135M);
    let m = src.metadata();
    let mut w = GgufWriter::default();
    w.str("general.architecture", "qwen2");
    for key in [
        "context_length",
        "embedding_length",
        "block_count",
        "feed_forward_length",
        "attention.head_count",
        "attention.head_count_kv",
        "rope.dimension_count",
    ] {
        if let Some(v) = m.opt_u32(&format!("llama.{key}")).unwrap() {
            w.u32(&format!("qwen2.{key}"), v);
        }
    }
    for key in ["attention.layer_norm_rms_epsilon", "rope.freq_base"] {
        if let Some(v) = m.opt_f32(&format!("llama.{key}")).unwrap() {
            w.f32(&format!("qwen2.{key}"), v);
        }
    }
    let mut rng = common::Rng(0x9e37_79b9_7f4a_7c15);
    for t in src.tensor_infos() {
        let data = src.tensor(&t.name).unwrap().data.to_vec();
        w.tensor(&t.name, &t.dims, t.ty.ggml_id(), data);
        let projection = ["attn_q.weight", "attn_k.weight", "attn_v.weight"]
            .iter()
            .any(|p| t.name.ends_with(p));
        if biases && projection {
            let rows = t.dims[1];
            let bias: Vec<u8> = (0..rows)
                .flat_map(|_| rng.uniform(-1.0, 1.0).to_le_bytes())
                .collect();
            let f32_type = TensorType::F32.ggml_id();
            w.tensor(&t.name.replace(".weight", ".bias"), &[rows], f32_type, bias);
        }
    }
    let file = tempfile::NamedTempFile::new().unwrap();
    w.write(file.path()).unwrap();
    file
}

/// The ids of the ten largest logits.
fn top10(logits: &[f32]) -> Vec<u32> {
    let mut ids: Vec<u32> = (0..logits.len() as u32).collect();
    ids.sort_by(|&a, &b| logits[b as usize].total_cmp(&logits[a as usize]));
    ids.truncate(10);
    ids
}

#[test]
fn qwen2_biases_and_neox_rope_match_an_f64_cpu_pass() {
    let gpu = common::gpu();
    let with = smollm2_as_qwen2(true);
    let without = smollm2_as_qwen2(false);
    let g = Gguf::open(with.path()).unwrap();
    assert_eq!(g.architecture().unwrap(), Architecture::Qwen2);
    let model = Transformer::load(gpu, Gguf::open(with.path()).unwrap(), 16).unwrap();
    let normed =
        Transformer::load_with(gpu, Gguf::open(with.path()).unwrap(), 16, Fusion::Fused).unwrap();
    // Fused with decode's attention in blocks, which does NeoX RoPE itself.
    let blocks = GpuTuning {
        fusion: Fusion::Fused,
        decode_attention: AttentionTuning::Blocks,
        ..GpuTuning::default()
    };
    let rotating = Transformer::load_tuned(gpu, Gguf::open(with.path()).unwrap(), 16, blocks);
    let rotating = rotating.unwrap();
    assert!(rotating.decode_rotates());
    let plain = Transformer::load(gpu, Gguf::open(without.path()).unwrap(), 16).unwrap();
    // A few tokens of SmolLM2's vocabulary.
    let prompt = [1u32, 4093, 198, 20366];
    let decode = |m: &Transformer| -> Vec<Vec<f32>> {
        prompt
            .iter()
            .enumerate()
            .map(|(pos, &t)| m.step(gpu, t, pos as u32).unwrap())
            .collect()
    };
    let ours = decode(&model);
    let ours_normed = decode(&normed);
    let ours_rotating = decode(&rotating);
    let unbiased = decode(&plain);
    // The same prompt again, all but its last token as one prefill batch (the matrix-matrix
    // kernels and the batched bias add), over the cache the decode steps left.
    let last = prompt.len() - 1;
    model.feed(gpu, &prompt[..last], 0).unwrap();
    let batched = model.step(gpu, prompt[last], last as u32).unwrap();
    // Fused: a joined prefill batch (the biases added by it), then the normed decode.
    normed.feed(gpu, &prompt[..last], 0).unwrap();
    let batched_normed = normed.step(gpu, prompt[last], last as u32).unwrap();
    let ids: Vec<Vec<u32>> = ours.iter().map(|l| top10(l)).collect();
    let exact = cpu_pass(&g, &prompt, &ids);
    let worst = |logits: &[f32], pos: usize| {
        ids[pos]
            .iter()
            .zip(&exact[pos])
            .map(|(&id, e)| (f64::from(logits[id as usize]) - e).abs())
            .fold(0.0, f64::max)
    };
    for pos in 0..prompt.len() {
        let scale = exact[pos].iter().fold(1.0f64, |a, e| a.max(e.abs()));
        let (ours_off, unbiased_off) = (worst(&ours[pos], pos), worst(&unbiased[pos], pos));
        let normed_off = worst(&ours_normed[pos], pos);
        let rotating_off = worst(&ours_rotating[pos], pos);
        eprintln!(
            "qwen2 position {pos}: largest logit difference from the f64 CPU pass {ours_off:.2e} ({normed_off:.2e} fused, {rotating_off:.2e} with RoPE in attention); the same model without its biases is {unbiased_off:.2} away"
        );
        assert!(
            [ours_off, normed_off, rotating_off].iter().all(|&off| off < 1e-3 * scale),
            "qwen2 position {pos} differs from the f64 CPU pass by {ours_off} ({normed_off} fused, {rotating_off} with RoPE in attention)"
        );
        // The biases matter at this size: a pass that dropped them could not pass the check above.
        assert!(
            unbiased_off > 100.0 * 1e-3 * scale,
            "the biases barely move position {pos}'s logits ({unbiased_off}); the test would not see them dropped"
        );
    }
    let scale = exact[last].iter().fold(1.0f64, |a, e| a.max(e.abs()));
    for (what, logits) in [("", &batched), (" (fused)", &batched_normed)] {
        let off = worst(logits, last);
        assert!(
            off < 1e-3 * scale,
            "qwen2 after a prefill batch differs from the f64 CPU pass by {off}{what}"
        );
    }
}

/// The model on the tests' GPU, as the reference comparisons drive it.
fn on_gpu(model: KnownModel) -> GpuModel<&'static Gpu> {
    GpuModel {
        gpu: common::gpu(),
        model: load(model),
    }
}

#[test]
fn smollm2_top_logits_match_llama_cpp() {
    let file = "smollm2-135m-instruct-q4_1.json";
    top_logits_match(&mut on_gpu(SMOLLM2_135M), "smollm2", file, 0.75);
}

#[test]
fn gemma3_top_logits_match_llama_cpp() {
    top_logits_match(
        &mut on_gpu(GEMMA3_270M),
        "gemma3",
        "gemma3-270m-q4_k_m.json",
        6.5,
    );
}

#[test]
fn smollm2_greedy_tokens_match_llama_cpp() {
    let file = "smollm2-135m-instruct-q4_1.json";
    greedy_tokens_match(&mut on_gpu(SMOLLM2_135M), "smollm2", file, 0.5);
}

#[test]
fn gemma3_greedy_tokens_match_llama_cpp() {
    greedy_tokens_match(
        &mut on_gpu(GEMMA3_270M),
        "gemma3",
        "gemma3-270m-q4_k_m.json",
        3.5,
    );
}

/// A profiled step runs the same work as a plain one: the cache it leaves gives the same next
/// logits, and the profile names the kernels a layer is made of.
#[test]
fn a_profiled_step_times_every_kernel_and_leaves_the_same_cache() {
    let gpu = common::gpu();
    if !gpu
        .features()
        .contains(itinero_engine::gpu::profile::FEATURES)
    {
        eprintln!("skipped: {} has no timestamps in passes", gpu.describe());
        return;
    }
    // Both take the fourth token as a decode step, one plain and one profiled, after the same
    // prefill kernels.
    let tuning = fixed_prefill();
    let [a, b] = [(); 2]
        .map(|()| Transformer::load_tuned(gpu, common::open(SMOLLM2_135M), 256, tuning).unwrap());
    let prompt = [1u32, 9690, 314, 253, 7791];
    a.feed(gpu, &prompt[..3], 0).unwrap();
    b.feed(gpu, &prompt[..3], 0).unwrap();
    a.step(gpu, prompt[3], 3).unwrap();
    let profile = b.profile(gpu, &prompt[3..4], 3).unwrap();
    let plain = a.step(gpu, prompt[4], 4).unwrap();
    let profiled = b.step(gpu, prompt[4], 4).unwrap();
    assert_eq!(argmax(&plain), argmax(&profiled));
    let diff = plain
        .iter()
        .zip(&profiled)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max);
    assert!(diff < 1e-3, "logits differ by {diff}");

    let layers = a.hparams().layers;
    let count = |name: &str| -> u32 {
        profile
            .iter()
            .filter(|r| r.what.contains(name))
            .map(|r| r.count)
            .sum()
    };
    // One attention a layer, in whichever form, beside the pass that combines its key slices
    // where decode splits them (GPUs).
    assert_eq!(
        count("attention") - count("attention combine"),
        layers,
        "{profile:#?}"
    );
    // The new key and value enter the cache through RoPE's kernel, or through attention where
    // it rotates them itself (GPUs' forms).
    assert_eq!(
        count("into the cache") + count("with RoPE"),
        layers,
        "{profile:#?}"
    );
    // The two norms of each layer and the last run as kernels of their own, or, where decode
    // fuses (every GPU; CPU drivers whose subgroups are too small for the shared-x products),
    // folded into the products after them.
    assert!(count("rms") + count("normed") > 2 * layers, "{profile:#?}");
    assert!(profile.iter().all(|r| r.total_us >= 0.0 && r.count > 0));
    assert!(profile.iter().map(|r| r.total_us).sum::<f64>() > 0.0);

    let batch = b.profile(gpu, &prompt[..4], 0).unwrap();
    assert_eq!(
        batch
            .iter()
            .filter(|r| r.what.contains("attention"))
            .map(|r| r.count)
            .sum::<u32>(),
        layers
    );
    assert!(b.profile(gpu, &[], 0).is_err());
}
