#![cfg(unix)]
//! `itinero-host models` as a person runs it: the real binary, the real model cache, and an
//! Ollama store made for the test whose one model is SmolLM2 (a link to the cache's file, as
//! Ollama keeps its GGUF blobs). The binary runs with a home directory of its own, so the
//! user's own Ollama store stays out of what it lists.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use itinero_engine::models::{self, MODELS_ENV, SMOLLM2_135M};

const DIGEST: &str = "1f1d2e8ce8d3b6c2a6a0a8a1b5a0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2";

fn models(ollama: &Path, args: &[&str]) -> Output {
    let home = tempfile::tempdir().unwrap();
    Command::new(env!("CARGO_BIN_EXE_itinero-host"))
        .arg("models")
        .args(args)
        .env("OLLAMA_MODELS", ollama)
        .env("HOME", home.path())
        .env(MODELS_ENV, models::cache_dir().expect("the model cache"))
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
            && stderr.contains(&format!("at {}", dir.path().display()))
            // The Linux service's store is searched too, and may hold models of its own.
            && stderr.contains("pulled there: ")
            && stderr.contains("tiny:1b"),
        "{stderr}"
    );
}

/// `models bench --synthetic` writes a model of the shape asked for with random weights into the
/// cache's `synthetic` folder (its tokenizer the default model's), measures it on the CPU and
/// says the weights are random; a second run reuses the file; a shape it cannot make is refused
/// with why.
#[test]
fn bench_measures_a_synthetic_model_it_writes_once_and_says_its_weights_are_random() {
    let cache = tempfile::tempdir().unwrap();
    let smollm = SMOLLM2_135M.locate().expect("the test model");
    std::os::unix::fs::symlink(&smollm, SMOLLM2_135M.path_in(cache.path())).unwrap();
    let bench = |args: &[&str]| {
        let home = tempfile::tempdir().unwrap();
        Command::new(env!("CARGO_BIN_EXE_itinero-host"))
            .args(["models", "bench"])
            .args(args)
            .env("HOME", home.path())
            .env("OLLAMA_MODELS", home.path().join("ollama"))
            .env(MODELS_ENV, cache.path())
            .output()
            .unwrap()
    };
    let small = [
        "--synthetic",
        "256,2,4,2,512",
        "--weights",
        "q8_0",
        "--device",
        "cpu",
        "--reference",
        "none",
        "--prompt",
        "16",
        "--decode",
        "4",
        "--runs",
        "1",
    ];
    let out = bench(&[&small[..], &["--json"]].concat());
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let file = cache
        .path()
        .join("synthetic/synthetic-llama-256x2-h4kv2-ffn512-q8_0.gguf");
    assert!(
        stderr.contains(&format!("writing {}", file.display())) && stderr.contains("written 100%"),
        "{stderr}"
    );
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["random_weights"], true);
    assert_eq!(report["path"], file.display().to_string());
    assert!(report["model"]
        .as_str()
        .unwrap()
        .contains("random Q8_0 weights"));
    assert!(report["itinero"]["decode_tokens_per_s"].as_f64().unwrap() > 0.0);
    assert!(report["itinero"]["prefill_tokens_per_s"].as_f64().unwrap() > 0.0);

    let out = bench(&small);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("using {}", file.display())),
        "{stderr}"
    );
    assert!(stdout.contains("weights: random"), "{stdout}");
    assert!(
        stdout.contains("layers") && stdout.contains("decode"),
        "{stdout}"
    );

    let out = bench(&["--synthetic", "256,2,3,1,512", "--device", "cpu"]);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("does not split into 3 heads"), "{stderr}");
    let out = bench(&[
        "--synthetic",
        "96,1,2,1,96",
        "--weights",
        "q4_k",
        "--device",
        "cpu",
    ]);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("multiples of 256"), "{stderr}");
    let out = bench(&["--weights", "q4_k"]);
    assert!(
        !out.status.success(),
        "--weights without --synthetic is refused"
    );
}

/// Where `models list` puts the cache, and where `scripts/models` (which fetches into it before
/// anything is built) does, in the same environment: `$ITINERO_MODELS`, else
/// `$XDG_CACHE_HOME/itinero/models` (when it is an absolute path), else
/// `~/.cache/itinero/models`.
#[cfg(target_os = "linux")]
#[test]
fn the_host_and_scripts_models_agree_on_where_the_cache_is() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let xdg = dir.path().join("xdg");
    let named = dir.path().join("named");
    let cases: [(Option<&Path>, Option<&Path>, PathBuf); 4] = [
        (None, None, home.join(".cache/itinero/models")),
        (Some(&xdg), None, xdg.join("itinero/models")),
        (
            Some(Path::new("relative")),
            None,
            home.join(".cache/itinero/models"),
        ),
        (Some(&xdg), Some(&named), named.clone()),
    ];
    for (xdg_cache_home, models_env, expected) in cases {
        let environment = |cmd: &mut Command| {
            cmd.env("HOME", &home)
                .env("OLLAMA_MODELS", dir.path().join("ollama"))
                .env_remove("XDG_CACHE_HOME")
                .env_remove(MODELS_ENV);
            if let Some(x) = xdg_cache_home {
                cmd.env("XDG_CACHE_HOME", x);
            }
            if let Some(m) = models_env {
                cmd.env(MODELS_ENV, m);
            }
        };
        let mut host = Command::new(env!("CARGO_BIN_EXE_itinero-host"));
        environment(host.args(["models", "list", "--json"]));
        let out = host.output().unwrap();
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{stderr}");
        let listed: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        let smollm2 = listed
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == SMOLLM2_135M.id)
            .unwrap_or_else(|| panic!("{stdout}"));
        assert_eq!(
            Path::new(smollm2["path"].as_str().unwrap()),
            SMOLLM2_135M.path_in(&expected),
            "the host, with XDG_CACHE_HOME {xdg_cache_home:?} and ITINERO_MODELS {models_env:?}"
        );

        let mut script = Command::new("bash");
        script.args([
            "-c",
            r#"source "$1" && printf %s "$ITINERO_MODELS""#,
            "bash",
            concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/models"),
        ]);
        environment(&mut script);
        let out = script.output().unwrap();
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{stderr}");
        assert_eq!(
            Path::new(&stdout),
            expected,
            "scripts/models, with XDG_CACHE_HOME {xdg_cache_home:?} and ITINERO_MODELS {models_env:?}"
        );
    }
}
