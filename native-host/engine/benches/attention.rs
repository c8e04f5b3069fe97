//! Attention over the f16 KV cache of one decode token and of one prefill batch, in each form
//! the device can run and in blocks of query rows (`attention_block.rs`), at SmolLM2-135M's shape
//! (9 query heads, 3 KV heads of 64), Llama 3.2 3B's (24 query heads, 8 KV heads of 128) and
//! Gemma 3 270M's (4 query heads, 1 KV head of 256): the part of a step that grows with the
//! context.
//!
//! `cargo bench -p itinero-engine --bench attention` prints, per shape, first position and new
//! tokens (1, and a batch of 128), the median time of one layer's attention in each form, and
//! each form's ratio to the first one measured (the device's own per-token form,
//! `AttentionForm::for_gpu`; on CPU drivers the plain lane form follows as the reference). Then
//! each block shape the device holds (on CPU drivers only the largest: their barriers make
//! them slow there, and CPU drivers never choose them), and for the batch each block on
//! cooperative matrices the device holds (`coop_attention.rs`; on CPU drivers only the first).
//! Each sample is
//! `REPEAT` dispatches recorded in one submission, timed from submit to completion.
//! `WGPU_BACKEND` / `WGPU_ADAPTER_NAME` choose the device.

mod common;

use itinero_engine::gpu::{
    Attention, AttentionBlock, AttentionBuffers, AttentionForm, AttentionShape, CoopAttentionBlock,
    Gpu,
};

const SAMPLES: usize = 7;
const REPEAT: usize = 3;
const TOKENS: u32 = 128;

fn main() {
    let gpu = Gpu::new().unwrap_or_else(|e| panic!("{e}"));
    println!("device: {}", gpu.describe());
    // On a CPU driver the lane form is the reference (the workgroup form is 9-12× slower there,
    // minutes of samples); on a GPU the workgroup form is the only one that fits.
    let mut forms = vec![AttentionForm::for_gpu(&gpu)];
    if gpu.is_cpu() && !forms.contains(&AttentionForm::Lane) {
        forms.push(AttentionForm::Lane);
    }
    println!("{SAMPLES} samples of {REPEAT} dispatches each; median per dispatch");
    for (model, heads, kv_heads, head_dim) in [
        ("SmolLM2", 9u32, 3u32, 64u32),
        ("3B", 24, 8, 128),
        ("Gemma 3", 4, 1, 256),
    ] {
        // (label, kernels, whether they are for a batch only)
        let mut kernels: Vec<(String, Attention, bool)> = forms
            .iter()
            .map(|&f| {
                let attention = Attention::with_form(&gpu, f).unwrap_or_else(|e| panic!("{e}"));
                (format!("{f:?}"), attention, false)
            })
            .collect();
        let mut blocks = AttentionBlock::all(&gpu, head_dim);
        if gpu.is_cpu() {
            blocks.truncate(1);
        }
        for block in blocks {
            let attention = Attention::with_form(&gpu, forms[0])
                .and_then(|a| a.with_blocks(&gpu, block, head_dim))
                .and_then(|a| a.with_decode_blocks(&gpu, block, head_dim))
                .unwrap_or_else(|e| panic!("{e}"));
            kernels.push((format!("{}×{}", block.rows, block.keys), attention, false));
        }
        let mut cooperative = CoopAttentionBlock::all(&gpu, head_dim);
        if gpu.is_cpu() {
            cooperative.truncate(1);
        }
        for block in cooperative {
            let attention = Attention::with_form(&gpu, forms[0])
                .and_then(|a| a.with_cooperative_blocks(&gpu, block, head_dim))
                .unwrap_or_else(|e| panic!("{e}"));
            let label = format!("coop {}×{}", block.rows, block.keys);
            kernels.push((label, attention, true));
        }
        for (pos, tokens) in [0u32, 256, 1024]
            .into_iter()
            .flat_map(|pos| [(pos, 1u32), (pos, TOKENS)])
        {
            let capacity = pos + TOKENS;
            let kv = (capacity * kv_heads * head_dim) as usize;
            let q = gpu.upload_f32("q", &vec![0.1; (TOKENS * heads * head_dim) as usize]);
            let k = gpu.upload_f16("k", &vec![0.2; kv]);
            let v = gpu.upload_f16("v", &vec![0.3; kv]);
            let out = gpu.storage_f32("out", (TOKENS * heads * head_dim) as usize);
            let shape = AttentionShape {
                heads,
                kv_heads,
                head_dim,
                capacity,
                window: None,
                scale: 1.0 / (head_dim as f32).sqrt(),
            };
            let buffers = AttentionBuffers {
                q: &q,
                k_cache: &k,
                v_cache: &v,
                out: &out,
            };
            let mut first = None;
            for (form, attention, batch_only) in &kernels {
                if *batch_only && tokens == 1 {
                    continue;
                }
                let t = common::median_per_dispatch(&gpu, SAMPLES, REPEAT, |encoder| {
                    attention
                        .encode(&gpu, encoder, buffers, shape, pos, tokens)
                        .unwrap();
                });
                let ratio = t.as_secs_f64() / *first.get_or_insert(t.as_secs_f64());
                println!(
                    "{model:8} from position {pos:5}, {tokens:3} new  {form:10} {:9.3} ms  ratio {ratio:5.2}",
                    t.as_secs_f64() * 1e3
                );
            }
        }
    }
}
