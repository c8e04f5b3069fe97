#![cfg(unix)]
//! `itinero-host models` as a person runs it: the real binary, the real model cache, and an
//! Ollama store made for the test whose one model is SmolLM2 (a link to the cache's file, as
//! Ollama keeps its GGUF blobs).

use std::path::Path;
use std::process::{Command, Output};

use itinero_engine::models::SMOLLM2_135M;

const DIGEST: &str = "1f1d2e8ce8d3b6c2a6a0a8a1b5a0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2";

fn models(ollama: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_itinero-host"))
        .arg("models")
        .args(args)
        .env("OLLAMA_MODELS", ollama)
        .output()
        .unwrap()
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// An Ollama store holding `tiny:1b`, whose model layer is SmolLM2.
fn store(root: &Path) {
    let gguf = SMOLLM2_135M.locate().expect("the test model");
    let manifest = root.join("manifests/registry.ollama.ai/library/tiny/1b");
    std::fs::create_dir_all(manifest.parent().unwrap()).unwrap();
    std::fs::write(
        &manifest,
        serde_json::json!({"schemaVersion": 2, "layers": [
            {"mediaType": "application/vnd.ollama.image.model", "digest": format!("sha256:{DIGEST}"), "size": 1}
        ]})
        .to_string(),
    )
    .unwrap();
    std::fs::create_dir_all(root.join("blobs")).unwrap();
    std::os::unix::fs::symlink(gguf, root.join("blobs").join(format!("sha256-{DIGEST}"))).unwrap();
}

#[test]
fn models_lists_the_cache_and_ollamas_store_and_describes_a_model() {
    let dir = tempfile::tempdir().unwrap();
    store(dir.path());
    let out = models(dir.path(), &["list"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("smollm2-135m-instruct-q4_1"), "{stdout}");
    let tiny = stdout
        .lines()
        .find(|l| l.contains("tiny:1b"))
        .unwrap_or_default();
    assert!(
        tiny.contains("llama, runs in the built-in engine"),
        "{stdout}"
    );
    let gemma = stdout
        .lines()
        .find(|l| l.contains("gemma3-270m"))
        .unwrap_or_default();
    assert!(
        gemma.contains("gemma3, runs in the built-in engine"),
        "{stdout}"
    );

    let out = models(dir.path(), &["info", "tiny:1b", "--json"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let info: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(info["architecture"], "llama");
    assert_eq!(info["layers"], 30);
    assert!(info["unsupported"].is_null());

    let out = models(dir.path(), &["info", "tiny:1b"]);
    let (stdout, _) = text(&out);
    assert!(
        stdout.contains("from Ollama's store, as tiny:1b"),
        "{stdout}"
    );
    assert!(stdout.contains("30 layers, 576 wide, 9 heads"), "{stdout}");

    let out = models(dir.path(), &["info", "qwen2.5:3b"]);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(
        stderr.contains("qwen2.5:3b is not in Ollama's store")
            && stderr.contains("pulled there: tiny:1b"),
        "{stderr}"
    );
}
