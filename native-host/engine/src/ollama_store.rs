//! Models the user already pulled with Ollama, run without the Ollama server: its store keeps a
//! manifest per `model:tag` whose model layer is a GGUF blob, so a name resolves to a file the
//! engine can map.
//!
//! Layout (the store's root is `$OLLAMA_MODELS`, else `~/.ollama/models`):
//! `manifests/<registry>/<namespace>/<model>/<tag>` (JSON, OCI-style: `layers` with a `mediaType`
//! and a `digest`), and `blobs/sha256-<hex>`. A name is `[registry/][namespace/]model[:tag]`,
//! defaulting to `registry.ollama.ai`, `library` and `latest`, as `ollama pull` names them.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The environment variable Ollama itself reads for its store.
pub const OLLAMA_MODELS_ENV: &str = "OLLAMA_MODELS";
const DEFAULT_REGISTRY: &str = "registry.ollama.ai";
const DEFAULT_NAMESPACE: &str = "library";
const DEFAULT_TAG: &str = "latest";
const MODEL_LAYER: &str = "application/vnd.ollama.image.model";
const ADAPTER_LAYER: &str = "application/vnd.ollama.image.adapter";
const PROJECTOR_LAYER: &str = "application/vnd.ollama.image.projector";

#[derive(Debug, thiserror::Error)]
pub enum OllamaStoreError {
    #[error("{name:?} is not a model name (e.g. qwen2.5:3b or hf.co/user/repo:Q4_K_M)")]
    BadName { name: String },
    #[error("{name} is not in Ollama's store at {root}{}", pulled_list(.pulled))]
    NotPulled {
        name: String,
        root: PathBuf,
        pulled: Vec<String>,
    },
    #[error("cannot read Ollama's store at {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the manifest of {name} ({path}) is unreadable: {why}")]
    BadManifest {
        name: String,
        path: PathBuf,
        why: String,
    },
    #[error("the manifest of {name} has no model layer (a GGUF)")]
    NoModelLayer { name: String },
    #[error("{name} adds a LoRA adapter to its weights, which the built-in engine cannot apply; use the Ollama backend for it")]
    Adapter { name: String },
    #[error("the weights of {name} ({digest}) are missing from {path}: pull it again with `ollama pull {name}`")]
    MissingBlob {
        name: String,
        digest: String,
        path: PathBuf,
    },
}

fn pulled_list(pulled: &[String]) -> String {
    if pulled.is_empty() {
        "; nothing is pulled there yet (`ollama pull <model>`)".to_owned()
    } else {
        format!("; pulled there: {}", pulled.join(", "))
    }
}

/// A model of the store, resolved to its weights.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OllamaModel {
    /// The name as `ollama list` shows it (`qwen2.5:3b`, `user/model:tag`, `hf.co/u/r:tag`).
    pub name: String,
    /// The GGUF blob.
    pub gguf: PathBuf,
    /// The GGUF's size in bytes, as the manifest records it.
    pub size: u64,
    /// A vision projector comes with it (the engine runs the text model alone).
    pub has_projector: bool,
}

#[derive(Deserialize)]
struct Manifest {
    #[serde(default)]
    layers: Vec<Layer>,
}

#[derive(Deserialize)]
struct Layer {
    #[serde(rename = "mediaType")]
    media_type: String,
    digest: String,
    #[serde(default)]
    size: u64,
}

/// A name's parts: registry, namespace, model, tag.
fn parse_name(name: &str) -> Result<[String; 4], OllamaStoreError> {
    let bad = || OllamaStoreError::BadName {
        name: name.to_owned(),
    };
    let trimmed = name.trim();
    // The tag follows the last ':' after the last '/' (a registry may have a port).
    let last_slash = trimmed.rfind('/').map_or(0, |i| i + 1);
    let (path, tag) = match trimmed[last_slash..].rfind(':') {
        Some(i) => (&trimmed[..last_slash + i], &trimmed[last_slash + i + 1..]),
        None => (trimmed, DEFAULT_TAG),
    };
    let parts: Vec<&str> = path.split('/').collect();
    let ok = |s: &str| {
        !s.is_empty()
            && s != "."
            && s != ".."
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-:".contains(c))
    };
    if !ok(tag) || parts.iter().any(|p| !ok(p)) {
        return Err(bad());
    }
    let (registry, namespace, model) = match parts.as_slice() {
        [model] => (DEFAULT_REGISTRY, DEFAULT_NAMESPACE, *model),
        [namespace, model] => (DEFAULT_REGISTRY, *namespace, *model),
        [registry, namespace, model] => (*registry, *namespace, *model),
        _ => return Err(bad()),
    };
    Ok([registry, namespace, model, tag].map(str::to_owned))
}

/// The name `ollama list` shows for these parts.
fn display_name([registry, namespace, model, tag]: &[String; 4]) -> String {
    match (registry.as_str(), namespace.as_str()) {
        (DEFAULT_REGISTRY, DEFAULT_NAMESPACE) => format!("{model}:{tag}"),
        (DEFAULT_REGISTRY, ns) => format!("{ns}/{model}:{tag}"),
        (r, ns) => format!("{r}/{ns}/{model}:{tag}"),
    }
}

/// Ollama's model store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OllamaStore {
    root: PathBuf,
}

impl OllamaStore {
    /// The store Ollama uses here: `$OLLAMA_MODELS`, else `~/.ollama/models`.
    pub fn default_location() -> Self {
        if let Some(dir) = std::env::var_os(OLLAMA_MODELS_ENV).filter(|d| !d.is_empty()) {
            return Self::at(PathBuf::from(dir));
        }
        let home = std::env::var_os("HOME")
            .or_else(|| std::env::var_os("USERPROFILE"))
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("."));
        Self::at(home.join(".ollama").join("models"))
    }

    pub fn at(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn manifest_path(&self, parts: &[String; 4]) -> PathBuf {
        parts
            .iter()
            .fold(self.root.join("manifests"), |p, part| p.join(part))
    }

    /// Every model pulled into the store, by name (those whose manifest cannot be used are
    /// left out; `resolve` says why).
    pub fn list(&self) -> Result<Vec<OllamaModel>, OllamaStoreError> {
        let manifests = self.root.join("manifests");
        if !manifests.is_dir() {
            return Ok(Vec::new());
        }
        let mut names = Vec::new();
        let read = |dir: &Path| -> Result<Vec<(String, PathBuf)>, OllamaStoreError> {
            let entries = std::fs::read_dir(dir).map_err(|source| OllamaStoreError::Io {
                path: dir.to_owned(),
                source,
            })?;
            Ok(entries
                .flatten()
                .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
                .collect())
        };
        for (registry, r) in read(&manifests)? {
            for (namespace, n) in read(&r)? {
                for (model, m) in read(&n)? {
                    for (tag, t) in read(&m)? {
                        if t.is_file() {
                            names.push(display_name(&[
                                registry.clone(),
                                namespace.clone(),
                                model.clone(),
                                tag,
                            ]));
                        }
                    }
                }
            }
        }
        names.sort();
        Ok(names
            .into_iter()
            .filter_map(|name| self.resolve(&name).ok())
            .collect())
    }

    /// The weights of `name`, or why they cannot be had.
    pub fn resolve(&self, name: &str) -> Result<OllamaModel, OllamaStoreError> {
        let parts = parse_name(name)?;
        let shown = display_name(&parts);
        let path = self.manifest_path(&parts);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(OllamaStoreError::NotPulled {
                    name: shown,
                    root: self.root.clone(),
                    pulled: self.pulled_names(),
                })
            }
            Err(source) => return Err(OllamaStoreError::Io { path, source }),
        };
        let manifest: Manifest =
            serde_json::from_str(&text).map_err(|e| OllamaStoreError::BadManifest {
                name: shown.clone(),
                path: path.clone(),
                why: e.to_string(),
            })?;
        if manifest
            .layers
            .iter()
            .any(|l| l.media_type == ADAPTER_LAYER)
        {
            return Err(OllamaStoreError::Adapter { name: shown });
        }
        let layer = manifest
            .layers
            .iter()
            .find(|l| l.media_type == MODEL_LAYER)
            .ok_or_else(|| OllamaStoreError::NoModelLayer {
                name: shown.clone(),
            })?;
        let blob = self.blob_path(&shown, &layer.digest, &path)?;
        if !blob.is_file() {
            return Err(OllamaStoreError::MissingBlob {
                name: shown,
                digest: layer.digest.clone(),
                path: blob,
            });
        }
        Ok(OllamaModel {
            name: shown,
            gguf: blob,
            size: layer.size,
            has_projector: manifest
                .layers
                .iter()
                .any(|l| l.media_type == PROJECTOR_LAYER),
        })
    }

    /// `blobs/sha256-<hex>` for a `sha256:<hex>` digest; anything else is a damaged manifest
    /// (a digest must never name a path outside the store).
    fn blob_path(
        &self,
        name: &str,
        digest: &str,
        manifest: &Path,
    ) -> Result<PathBuf, OllamaStoreError> {
        let hex = digest
            .strip_prefix("sha256:")
            .filter(|h| h.len() == 64 && h.chars().all(|c| c.is_ascii_hexdigit()))
            .ok_or_else(|| OllamaStoreError::BadManifest {
                name: name.to_owned(),
                path: manifest.to_owned(),
                why: format!("{digest:?} is not a sha256 digest"),
            })?;
        Ok(self.root.join("blobs").join(format!("sha256-{hex}")))
    }

    /// The names in the store, for "not pulled" messages (empty when it cannot be read).
    fn pulled_names(&self) -> Vec<String> {
        self.list()
            .map(|m| m.into_iter().map(|m| m.name).collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIGEST: &str = "sha256:6a0746a1ec1aef3e7ec53868f220ff6e389f6f8ef87a01d77c96807de94ca2aa";

    /// A store with `qwen2.5:3b` (weights present), `hf.co/bartowski/llama:Q4_K_M` (weights
    /// missing) and `user/styled:latest` (with an adapter).
    fn store() -> (tempfile::TempDir, OllamaStore) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let manifest = |parts: &[&str], layers: serde_json::Value| {
            let path = parts.iter().fold(root.join("manifests"), |p, s| p.join(s));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            let m = serde_json::json!({"schemaVersion": 2, "layers": layers});
            std::fs::write(path, m.to_string()).unwrap();
        };
        let model = |digest: &str, size: u64| serde_json::json!({"mediaType": MODEL_LAYER, "digest": digest, "size": size});
        manifest(
            &["registry.ollama.ai", "library", "qwen2.5", "3b"],
            serde_json::json!([model(DIGEST, 1_929_912_096), {"mediaType": "application/vnd.ollama.image.template", "digest": DIGEST, "size": 1}]),
        );
        manifest(
            &["hf.co", "bartowski", "llama", "Q4_K_M"],
            serde_json::json!([model(&DIGEST.replace("6a07", "7a07"), 10)]),
        );
        manifest(
            &["registry.ollama.ai", "user", "styled", "latest"],
            serde_json::json!([model(DIGEST, 5), {"mediaType": ADAPTER_LAYER, "digest": DIGEST, "size": 1}]),
        );
        std::fs::create_dir_all(root.join("blobs")).unwrap();
        std::fs::write(root.join("blobs").join(DIGEST.replace(':', "-")), b"GGUF").unwrap();
        let store = OllamaStore::at(root);
        (dir, store)
    }

    #[test]
    fn names_resolve_to_their_gguf_blob() {
        let (_dir, store) = store();
        let m = store.resolve("qwen2.5:3b").unwrap();
        assert_eq!(m.name, "qwen2.5:3b");
        assert_eq!(m.size, 1_929_912_096);
        assert!(m
            .gguf
            .ends_with(format!("blobs/{}", DIGEST.replace(':', "-"))));
        assert_eq!(
            store
                .resolve("registry.ollama.ai/library/qwen2.5:3b")
                .unwrap(),
            m
        );
        let listed: Vec<String> = store.list().unwrap().into_iter().map(|m| m.name).collect();
        assert_eq!(
            listed,
            ["qwen2.5:3b"],
            "only models that can run are listed"
        );
    }

    #[test]
    fn what_cannot_be_run_says_why() {
        let (_dir, store) = store();
        let missing = store.resolve("hf.co/bartowski/llama:Q4_K_M").unwrap_err();
        assert!(
            matches!(missing, OllamaStoreError::MissingBlob { .. }),
            "{missing}"
        );
        let adapter = store.resolve("user/styled").unwrap_err().to_string();
        assert!(adapter.contains("LoRA adapter"), "{adapter}");
        let absent = store.resolve("llama3.2").unwrap_err().to_string();
        assert!(
            absent.contains("llama3.2:latest is not in Ollama's store")
                && absent.contains("pulled there: qwen2.5:3b"),
            "{absent}"
        );
        for bad in ["", "../../etc:passwd", "a/b/c/d", "qwen:", "x y"] {
            assert!(
                matches!(store.resolve(bad), Err(OllamaStoreError::BadName { .. })),
                "{bad:?}"
            );
        }
        let empty = OllamaStore::at(_dir.path().join("nowhere"));
        assert_eq!(empty.list().unwrap(), []);
        assert!(empty
            .resolve("qwen2.5:3b")
            .unwrap_err()
            .to_string()
            .contains("nothing is pulled there yet"));
    }

    #[test]
    fn a_digest_cannot_name_a_path_outside_the_store() {
        let (dir, store) = store();
        let path = dir
            .path()
            .join("manifests/registry.ollama.ai/library/evil/latest");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            &path,
            serde_json::json!({"layers": [{"mediaType": MODEL_LAYER, "digest": "sha256:../../x"}]})
                .to_string(),
        )
        .unwrap();
        let err = store.resolve("evil").unwrap_err().to_string();
        assert!(err.contains("is not a sha256 digest"), "{err}");
    }
}
