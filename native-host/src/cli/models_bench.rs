//! `itinero-host models bench`: the built-in engine's speed on a model — prefill and decode tokens
//! per second, time to the first token of an agent-sized prompt, memory — beside llama.cpp's
//! `llama-bench` on the same model and machine, run by the same command, as the reference.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use clap::Args;
use itinero_engine::bench::{self, BenchOptions, BenchReport, GpuWork};
use itinero_engine::device::Device;
use itinero_engine::gguf::{Gguf, TensorType};
use itinero_engine::gpu::matvec_config::TIMED_THREADS_PER_ROW;
use itinero_engine::gpu::{tile_tuning, KernelTime};
use itinero_engine::model::{
    valid_prefill_batch, AttentionTuning, DecodeShape, Fusion, PrefillBatch, PrefillTile,
    SliceMerge, MAX_PREFILL_BATCH, PREFILL_BATCH,
};
use itinero_engine::models;
use itinero_engine::ollama_store::OllamaStore;
use itinero_engine::synthetic::{self, Shape};
use serde::Serialize;

use crate::llm::builtin::DEFAULT_MODEL;

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// A GGUF path, a cache model's id, or an Ollama name (default: the small default model).
    #[arg(conflicts_with = "synthetic")]
    pub model: Option<String>,
    /// Measures a model of a real shape with random weights instead, written once into the model
    /// cache's `synthetic` folder (llama.cpp runs the same file): `1b`, `3b` or `8b` (Llama 3.2
    /// 1B and 3B, Llama 3.1 8B), or WIDTH,LAYERS,HEADS,KV_HEADS,FFN. Its tokenizer is the
    /// default model's.
    #[arg(long, value_name = "SHAPE", value_parser = parse_shape)]
    pub synthetic: Option<Shape>,
    /// The tensor type of a synthetic model's matrices.
    #[arg(long, value_name = "TYPE", default_value = "Q4_1", value_parser = parse_type, requires = "synthetic")]
    pub weights: TensorType,
    /// Tokens of the prefill prompt.
    #[arg(long, default_value_t = 512)]
    pub prompt: u32,
    /// Decode steps timed.
    #[arg(long, default_value_t = 64)]
    pub decode: u32,
    /// Where the model runs: `auto` (a real GPU where there is one, else the CPU), `cpu` or
    /// `gpu` (wgpu, a software adapter such as lavapipe included). Default: $ITINERO_DEVICE,
    /// else auto.
    #[arg(long)]
    pub device: Option<Device>,
    /// Runs of the prefill; the median is reported.
    #[arg(long, default_value_t = 3)]
    pub runs: u32,
    /// llama.cpp's `llama-bench` to compare with: a path, or `llama-bench` (the default) for
    /// $ITINERO_LLAMA_BENCH, then the one `scripts/llama-cpp` builds, then `llama-bench` on
    /// PATH. `none` skips the reference.
    #[arg(long)]
    pub reference: Option<String>,
    /// Also time each kernel of a decode step and of a prefill batch with GPU timestamps (on
    /// adapters that offer timestamps inside passes).
    #[arg(long)]
    pub profile: bool,
    /// Whether operations are fused into fewer dispatches: `auto` (the fastest known for the
    /// device), `fused` (what GPUs get: norms folded into decode's products, q/k/v and
    /// gate/up/activation in one dispatch each, RoPE in decode's attention on GPUs) or
    /// `separate` (one kernel per operation), to compare them on one device.
    #[arg(long, value_enum, default_value_t = FusionArg::Auto)]
    pub fusion: FusionArg,
    /// How prefill's products share out the work: `auto` (on a GPU, the fastest of tiles of 8,
    /// 4 and 2 tokens an invocation and, where the GPU has them, cooperative matrices (tensor
    /// cores), timed with the model's products as it loads; 8 on CPU drivers), 2, 4 or 8, or
    /// `coop`, to compare them on one device.
    #[arg(long, default_value = "auto", value_parser = parse_tile)]
    pub prefill_tile: PrefillTile,
    /// How a prefill batch's attention runs: `auto` (on a GPU, the fastest of a workgroup per
    /// query head and token and each block of query rows sharing tiles of keys the GPU holds,
    /// on its f32 units and, where it has them, on cooperative matrices, timed as the model
    /// loads; the per-token form on CPU drivers), `token`, `blocks` or `coop`, to compare them
    /// on one device.
    #[arg(long, value_enum, default_value_t = AttentionArg::Auto)]
    pub prefill_attention: AttentionArg,
    /// The same for decode's token (its blocks hold a KV head's query heads; it has no `coop`).
    #[arg(long, value_enum, default_value_t = AttentionArg::Auto)]
    pub decode_attention: AttentionArg,
    /// Where decode's attention, its keys cut into slices on a GPU, has them merged: `auto`
    /// (where decode is fused, the faster of the two, timed as the model loads), `product` (by
    /// the output product as it reads them: a dispatch fewer a layer) or `dispatch` (in a
    /// dispatch of their own), to compare them on one device.
    #[arg(long, value_enum, default_value_t = SliceMergeArg::Auto)]
    pub slice_merge: SliceMergeArg,
    /// How many invocations share each weight row of decode's products: `auto` (on a GPU, the
    /// fastest of 32, 16 and 8, timed with the model's products as it loads; a row an invocation
    /// on CPU drivers), `timed` (the GPU's three timed on any device), or 32, 16 or 8, to
    /// compare them on one device.
    #[arg(long, default_value = "auto", value_parser = parse_decode_shape)]
    pub decode_shape: DecodeShape,
    /// How many tokens a prefill batch holds: `auto` (512 on a GPU, or 256 or 128 where a
    /// model's activations for 512 exceed a storage binding; 128 on CPU drivers) or a multiple
    /// of 128 up to 4096, to compare batches on one device.
    #[arg(long, default_value = "auto", value_parser = parse_prefill_batch)]
    pub prefill_batch: PrefillBatch,
    #[arg(long)]
    pub json: bool,
}

fn parse_shape(s: &str) -> Result<Shape, String> {
    Shape::parse(s).map_err(|e| e.to_string())
}

fn parse_type(s: &str) -> Result<TensorType, String> {
    TensorType::ALL
        .into_iter()
        .find(|t| t.name().eq_ignore_ascii_case(s))
        .ok_or_else(|| {
            let names: Vec<&str> = TensorType::ALL.iter().map(|t| t.name()).collect();
            format!(
                "`{s}` is not a tensor type itinero runs: {}",
                names.join(", ")
            )
        })
}

/// `auto`, `coop` (cooperative matrices), or one of the tiles tuning chooses among.
fn parse_tile(s: &str) -> Result<PrefillTile, String> {
    match s {
        "auto" => return Ok(PrefillTile::Auto),
        "coop" => return Ok(PrefillTile::Cooperative),
        _ => {}
    }
    match s.parse::<u32>() {
        Ok(t) if tile_tuning::CANDIDATES.contains(&t) => Ok(PrefillTile::Fixed(t)),
        _ => Err(format!(
            "`{s}`: the prefill tile is auto, coop or one of {:?}",
            tile_tuning::CANDIDATES
        )),
    }
}

fn parse_prefill_batch(s: &str) -> Result<PrefillBatch, String> {
    if s == "auto" {
        return Ok(PrefillBatch::Auto);
    }
    match s.parse::<u32>() {
        Ok(n) if valid_prefill_batch(n) => Ok(PrefillBatch::Tokens(n)),
        _ => Err(format!(
            "`{s}`: a prefill batch is auto or a multiple of {PREFILL_BATCH} tokens up to \
             {MAX_PREFILL_BATCH}"
        )),
    }
}

fn parse_decode_shape(s: &str) -> Result<DecodeShape, String> {
    match s {
        "auto" => return Ok(DecodeShape::Auto),
        "timed" => return Ok(DecodeShape::Timed),
        _ => {}
    }
    match s.parse::<u32>() {
        Ok(t) if TIMED_THREADS_PER_ROW.contains(&t) => Ok(DecodeShape::Threads(t)),
        _ => Err(format!(
            "`{s}`: decode's shape is auto, timed or one of {TIMED_THREADS_PER_ROW:?} invocations a row"
        )),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AttentionArg {
    Auto,
    Token,
    Blocks,
    Coop,
}

impl From<AttentionArg> for AttentionTuning {
    fn from(a: AttentionArg) -> Self {
        match a {
            AttentionArg::Auto => Self::Auto,
            AttentionArg::Token => Self::PerToken,
            AttentionArg::Blocks => Self::Blocks,
            AttentionArg::Coop => Self::Cooperative,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SliceMergeArg {
    Auto,
    Product,
    Dispatch,
}

impl From<SliceMergeArg> for SliceMerge {
    fn from(a: SliceMergeArg) -> Self {
        match a {
            SliceMergeArg::Auto => Self::Auto,
            SliceMergeArg::Product => Self::Product,
            SliceMergeArg::Dispatch => Self::Dispatch,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FusionArg {
    Auto,
    Fused,
    Separate,
}

/// llama.cpp's figures on the same shapes.
#[derive(Debug, Clone, Serialize)]
struct Reference {
    binary: String,
    /// Where llama.cpp ran, as llama-bench reports it: "CPU, 16 threads", "CUDA (NVIDIA H100 …)".
    backend: String,
    prefill_tokens_per_s: f64,
    decode_tokens_per_s: f64,
}

#[derive(Serialize)]
struct Output<'a> {
    model: &'a str,
    path: String,
    /// A synthetic model's: its speed is real, its text would be noise.
    random_weights: bool,
    itinero: &'a BenchReport,
    llama_cpp: Option<&'a Reference>,
    /// Why there is no reference.
    llama_cpp_missing: Option<String>,
}

fn find_reference(arg: Option<&str>) -> Result<Option<PathBuf>, String> {
    if arg == Some("none") {
        return Err("skipped (--reference none)".into());
    }
    // `llama-bench` by name means the usual places, as no argument does.
    let arg = arg.filter(|a| *a != "llama-bench");
    if let Some(p) = arg
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("ITINERO_LLAMA_BENCH").map(PathBuf::from))
    {
        return if p.is_file() {
            Ok(Some(p))
        } else {
            Err(format!("{} does not exist", p.display()))
        };
    }
    let built = std::env::var_os("ITINERO_LLAMA_CPP")
        .map(PathBuf::from)
        .or_else(|| {
            directories::BaseDirs::new().map(|b| b.home_dir().join(".cache/itinero/llama.cpp"))
        })
        .map(|d| d.join("bin/llama-bench"));
    if let Some(p) = built.filter(|p| p.is_file()) {
        return Ok(Some(p));
    }
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("llama-bench"))
            .find(|p| p.is_file())
    });
    Ok(on_path)
}

/// Runs `llama-bench` on the same prompt and decode lengths.
fn run_reference(binary: &Path, model: &Path, args: &BenchArgs) -> Result<Reference> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let out = Command::new(binary)
        .args(["-m", &model.display().to_string()])
        .args([
            "-p",
            &args.prompt.to_string(),
            "-n",
            &args.decode.to_string(),
        ])
        .args(["-r", &args.runs.max(1).to_string()])
        .args(["-t", &threads.to_string(), "-o", "json"])
        .output()
        .with_context(|| format!("cannot run {}", binary.display()))?;
    if !out.status.success() {
        bail!(
            "{} failed ({}): {}",
            binary.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout)
        .with_context(|| format!("{} did not print JSON", binary.display()))?;
    let rate = |prompt: u32, gen: u32| {
        rows.iter()
            .find(|r| r["n_prompt"] == prompt && r["n_gen"] == gen)
            .and_then(|r| r["avg_ts"].as_f64())
            .with_context(|| format!("no pp{prompt}/tg{gen} row in llama-bench's output"))
    };
    let first = rows.first();
    let text = |key: &str| first.and_then(|r| r[key].as_str()).unwrap_or_default();
    let backend = match text("backends") {
        "" | "CPU" => format!("CPU, {threads} threads"),
        gpu => format!("{gpu}, {}", text("gpu_info")),
    };
    Ok(Reference {
        binary: binary.display().to_string(),
        backend,
        prefill_tokens_per_s: rate(args.prompt, 0)?,
        decode_tokens_per_s: rate(0, args.decode)?,
    })
}

fn mb(bytes: u64) -> String {
    format!("{:.0} MB", bytes as f64 / f64::from(1u32 << 20))
}

/// The synthetic model's file, written into the cache first if it is not there: its tokenizer
/// comes from the default model.
fn synthetic_model(shape: &Shape, ty: TensorType, ollama: &OllamaStore) -> Result<PathBuf> {
    let tokenizer = models::locate(DEFAULT_MODEL, ollama)
        .context("a synthetic model takes its tokenizer from the default model")?;
    let tokenizer = Gguf::open(&tokenizer.path)
        .with_context(|| format!("reading {}", tokenizer.path.display()))?;
    let dir = models::cache_dir()?.join("synthetic");
    let path = synthetic::ensure(&dir, shape, ty, &tokenizer, &mut |what| {
        eprintln!("  synthetic model: {what}")
    })?;
    Ok(path)
}

pub fn run_bench(args: &BenchArgs) -> Result<bool> {
    let ollama = OllamaStore::default_location();
    let (spec, path) = match &args.synthetic {
        Some(shape) => (
            shape.model_name(args.weights),
            synthetic_model(shape, args.weights, &ollama)?,
        ),
        None => {
            let spec = args.model.as_deref().unwrap_or(DEFAULT_MODEL);
            (spec.to_owned(), models::locate(spec, &ollama)?.path)
        }
    };
    let spec = spec.as_str();
    let device = match args.device {
        Some(d) => d,
        None => Device::from_env().map_err(anyhow::Error::msg)?,
    };
    let opts = bench_options(args, device);
    eprintln!("benchmarking {spec} (device: {device})");
    let report = bench::run(&path, opts, &mut |what| eprintln!("  itinero: {what}…"))
        .with_context(|| format!("benchmarking {}", path.display()))?;
    let (reference, missing) = match find_reference(args.reference.as_deref()) {
        Ok(Some(binary)) => {
            eprintln!("  llama.cpp: {} …", binary.display());
            match run_reference(&binary, &path, args) {
                Ok(r) => (Some(r), None),
                Err(e) => (None, Some(format!("{e:#}"))),
            }
        }
        Ok(None) => (
            None,
            Some("llama-bench not found (scripts/llama-cpp builds it)".to_owned()),
        ),
        Err(why) => (None, Some(why)),
    };
    if args.json {
        let out = Output {
            model: spec,
            path: path.display().to_string(),
            random_weights: args.synthetic.is_some(),
            itinero: &report,
            llama_cpp: reference.as_ref(),
            llama_cpp_missing: missing,
        };
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(true);
    }
    println!("model:   {spec} ({})", path.display());
    if args.synthetic.is_some() {
        println!("weights: random, so the speeds are a real model's of this shape and type but its text would be noise");
    }
    println!("device:  {}", report.device);
    println!(
        "memory:  weights {}, KV cache {} ({} positions, {}){}; loaded in {:.0} ms",
        mb(report.weights_bytes),
        mb(report.kv_cache_bytes),
        report.kv_positions,
        report.kv_cache_type,
        report
            .peak_rss_bytes
            .map(|b| format!(", peak resident {}", mb(b)))
            .unwrap_or_default(),
        report.load_ms
    );
    if let Some(work) = &report.gpu {
        print_work(work);
    }
    let llama = |f: fn(&Reference) -> f64| reference.as_ref().map(f);
    let rows = [
        (
            format!("prefill, {}-token prompt", opts.prompt),
            report.prefill_tokens_per_s,
            llama(|r| r.prefill_tokens_per_s),
        ),
        (
            "decode".to_owned(),
            report.decode_tokens_per_s,
            llama(|r| r.decode_tokens_per_s),
        ),
    ];
    let header = match &reference {
        Some(r) => format!("llama.cpp ({})", r.backend),
        None => "llama.cpp".to_owned(),
    };
    println!(
        "{:<28} {:>16} {:>28} {:>8}",
        "median", "itinero", header, "ratio"
    );
    for (what, ours, theirs) in rows {
        match theirs {
            Some(t) => println!(
                "{what:<28} {:>12.1} t/s {:>24.1} t/s {:>8.3}",
                ours,
                t,
                ours / t
            ),
            None => println!("{what:<28} {ours:>12.1} t/s {:>28} {:>8}", "-", "-"),
        }
    }
    println!(
        "time to first token, {}-token agent prompt: {:.2} s; with its first {} tokens cached: {:.2} s",
        opts.agent_prompt,
        report.agent_first_token_ms / 1e3,
        opts.agent_cached,
        report.agent_first_token_cached_ms / 1e3
    );
    if let Some(why) = missing {
        println!("llama.cpp reference: {why}");
    }
    for (what, profile) in [
        ("one decode step", &report.decode_profile),
        ("one prefill batch", &report.prefill_profile),
    ] {
        if let Some(rows) = profile {
            print_profile(what, rows);
        }
    }
    Ok(true)
}

/// What the bench measures, as `args` ask, on `device`.
fn bench_options(args: &BenchArgs, device: Device) -> BenchOptions {
    BenchOptions {
        device,
        prompt: args.prompt.max(1),
        decode: args.decode.max(1),
        runs: args.runs.max(1),
        profile: args.profile,
        fusion: match args.fusion {
            FusionArg::Auto => Fusion::Auto,
            FusionArg::Fused => Fusion::Fused,
            FusionArg::Separate => Fusion::Separate,
        },
        tile: args.prefill_tile,
        prefill_attention: args.prefill_attention.into(),
        decode_attention: args.decode_attention.into(),
        slice_merge: args.slice_merge.into(),
        decode_shape: args.decode_shape,
        prefill_batch: args.prefill_batch,
        ..BenchOptions::default()
    }
}

/// What a GPU records and what the load chose (and timed) for each of its choices.
fn print_work(work: &GpuWork) {
    println!(
        "work:    a decode step {} dispatches, a prefill batch {} (of up to {} tokens)",
        work.decode_dispatches, work.prefill_dispatches, work.prefill_batch
    );
    println!("tile:    prefill's products take {}", work.prefill_tile);
    println!("x:       decode's products take {}", work.decode_x);
    println!(
        "attend:  a prefill batch's attention: {}",
        work.prefill_attention
    );
    println!("         decode's attention: {}", work.decode_attention);
    println!(
        "merge:   decode's attention slices are merged {}",
        work.decode_merge
    );
}

/// The kernels of a profile, longest total first, with their share of the device time.
fn print_profile(what: &str, rows: &[KernelTime]) {
    let total: f64 = rows.iter().map(|r| r.total_us).sum();
    println!("\ndevice time of {what}: {:.0} µs", total);
    println!(
        "{:<52} {:>6} {:>10} {:>10} {:>6}",
        "kernel (workgroups)", "count", "total µs", "each µs", "share"
    );
    for r in rows {
        println!(
            "{:<52} {:>6} {:>10.1} {:>10.2} {:>5.1}%",
            r.what,
            r.count,
            r.total_us,
            r.total_us / f64::from(r.count.max(1)),
            100.0 * r.total_us / total.max(f64::MIN_POSITIVE)
        );
    }
}
