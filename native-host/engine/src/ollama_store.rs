//! Models the user already pulled with Ollama, run without the Ollama server: its store keeps a
//! manifest per `model:tag` whose model layer is a GGUF blob, so a name resolves to a file the
//! engine can map.
//!
//! Layout: `manifests/<registry>/<namespace>/<model>/<tag>` (JSON, OCI-style: `layers` with a
//! `mediaType` and a `digest`), and `blobs/sha256-<hex>`. A name is
//! `[registry/][namespace/]model[:tag]`, defaulting to `registry.ollama.ai`, `library` and
//! `latest`, as `ollama pull` names them.
//!
//! Where the store is depends on who runs Ollama: `$OLLAMA_MODELS` when set, `~/.ollama/models`
//! for a server the user starts, and on Linux `/usr/share/ollama/.ollama/models` for the
//! system service Ollama's installer sets up (it runs as the `ollama` user, whose home that
//! is). The host cannot know which server pulled a model, so it searches them all, in that
//! order; the first store where a name resolves answers for it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The environment variable Ollama itself reads for its store.
pub const OLLAMA_MODELS_ENV: &str = "OLLAMA_MODELS";
/// The store of the Linux system service that Ollama's install script sets up.
pub const LINUX_SERVICE_STORE: &str = "/usr/share/ollama/.ollama/models";
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
    #[error("{name} is not in Ollama's store at {}{}", roots_list(.roots), pulled_list(.pulled))]
    NotPulled {
        name: String,
        roots: Vec<PathBuf>,
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

fn roots_list(roots: &[PathBuf]) -> String {
    let shown: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
    shown.join(" or ")
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

/// Ollama's model store, searched wherever Ollama may keep it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OllamaStore {
    /// Searched in order; the first where a name resolves answers for it.
    roots: Vec<PathBuf>,
}

impl OllamaStore {
    /// The stores Ollama may use here, in the order searched: `$OLLAMA_MODELS`,
    /// `~/.ollama/models`, and on Linux the system service's [`LINUX_SERVICE_STORE`].
    pub fn default_location() -> Self {
        let service = cfg!(target_os = "linux").then(|| Path::new(LINUX_SERVICE_STORE));
        Self::searching(default_roots(
            std::env::var_os(OLLAMA_MODELS_ENV),
            directories::BaseDirs::new().map(|d| d.home_dir().to_owned()),
            service,
        ))
    }

    /// The store at `root` alone.
    pub fn at(root: impl Into<PathBuf>) -> Self {
        Self::searching(vec![root.into()])
    }

    /// Stores searched in the order given.
    pub fn searching(roots: Vec<PathBuf>) -> Self {
        Self { roots }
    }

    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Every model pulled into the stores that the engine could be given, by name, sorted; a
    /// name in several stores is the first one's where it resolves, as [`Self::resolve`]
    /// answers. Models whose manifest cannot be used are left out (`resolve` says why), and a
    /// store that cannot be read is left out with a warning rather than hiding the others.
    pub fn list(&self) -> Vec<OllamaModel> {
        let mut out: Vec<OllamaModel> = Vec::new();
        for root in &self.roots {
            let names = match names_in(root) {
                Ok(names) => names,
                Err(e) => {
                    tracing::warn!("{e}; the models pulled there are left out");
                    continue;
                }
            };
            for raw in names {
                // Read back as a user would write it: a directory no name can reach is no model.
                let Ok(parts) = parse_name(&display_name(&raw)) else {
                    continue;
                };
                let name = display_name(&parts);
                if out.iter().any(|m| m.name == name) {
                    continue;
                }
                if let Ok(Some(m)) = resolve_in(root, &parts, &name) {
                    out.push(m);
                }
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// The weights of `name` from the first store where they can be had, or why they cannot:
    /// the first store's reason where some store holds the name, else that none does.
    pub fn resolve(&self, name: &str) -> Result<OllamaModel, OllamaStoreError> {
        let parts = parse_name(name)?;
        let shown = display_name(&parts);
        let mut first_failure = None;
        for root in &self.roots {
            match resolve_in(root, &parts, &shown) {
                Ok(Some(m)) => return Ok(m),
                Ok(None) => {}
                Err(e) => {
                    first_failure.get_or_insert(e);
                }
            }
        }
        if let Some(e) = first_failure {
            return Err(e);
        }
        Err(OllamaStoreError::NotPulled {
            name: shown,
            roots: self.roots.clone(),
            pulled: self.list().into_iter().map(|m| m.name).collect(),
        })
    }
}

/// The stores to search, in order, given `$OLLAMA_MODELS`, the home directory and the system
/// service's store where there is one; a store named twice is searched once.
fn default_roots(
    ollama_models: Option<OsString>,
    home: Option<PathBuf>,
    service: Option<&Path>,
) -> Vec<PathBuf> {
    let candidates = [
        ollama_models.filter(|d| !d.is_empty()).map(PathBuf::from),
        home.map(|h| h.join(".ollama").join("models")),
        service.map(Path::to_owned),
    ];
    let mut roots: Vec<PathBuf> = Vec::new();
    for root in candidates.into_iter().flatten() {
        if !roots.contains(&root) {
            roots.push(root);
        }
    }
    roots
}

/// The names whose manifest is in the store at `root`, as parts; none when it has no
/// manifests.
fn names_in(root: &Path) -> Result<Vec<[String; 4]>, OllamaStoreError> {
    let manifests = root.join("manifests");
    match std::fs::metadata(&manifests) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        _ => {}
    }
    // Only directories are descended into: a stray file (a Finder's `.DS_Store`) is no level
    // of a name.
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
    let dirs = |dir: &Path| -> Result<Vec<(String, PathBuf)>, OllamaStoreError> {
        Ok(read(dir)?.into_iter().filter(|(_, p)| p.is_dir()).collect())
    };
    let mut names = Vec::new();
    for (registry, r) in dirs(&manifests)? {
        for (namespace, n) in dirs(&r)? {
            for (model, m) in dirs(&n)? {
                for (tag, t) in read(&m)? {
                    if t.is_file() {
                        names.push([registry.clone(), namespace.clone(), model.clone(), tag]);
                    }
                }
            }
        }
    }
    Ok(names)
}

/// The weights of the model named by `parts` (shown as `shown`) in the store at `root`, `None`
/// when that store does not hold it.
fn resolve_in(
    root: &Path,
    parts: &[String; 4],
    shown: &str,
) -> Result<Option<OllamaModel>, OllamaStoreError> {
    let path = parts
        .iter()
        .fold(root.join("manifests"), |p, part| p.join(part));
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(OllamaStoreError::Io { path, source }),
    };
    let manifest: Manifest =
        serde_json::from_str(&text).map_err(|e| OllamaStoreError::BadManifest {
            name: shown.to_owned(),
            path: path.clone(),
            why: e.to_string(),
        })?;
    if manifest
        .layers
        .iter()
        .any(|l| l.media_type == ADAPTER_LAYER)
    {
        return Err(OllamaStoreError::Adapter {
            name: shown.to_owned(),
        });
    }
    let layer = manifest
        .layers
        .iter()
        .find(|l| l.media_type == MODEL_LAYER)
        .ok_or_else(|| OllamaStoreError::NoModelLayer {
            name: shown.to_owned(),
        })?;
    let blob = blob_path(root, shown, &layer.digest, &path)?;
    if !blob.is_file() {
        return Err(OllamaStoreError::MissingBlob {
            name: shown.to_owned(),
            digest: layer.digest.clone(),
            path: blob,
        });
    }
    Ok(Some(OllamaModel {
        name: shown.to_owned(),
        gguf: blob,
        size: layer.size,
        has_projector: manifest
            .layers
            .iter()
            .any(|l| l.media_type == PROJECTOR_LAYER),
    }))
}

/// `blobs/sha256-<hex>` under `root` for a `sha256:<hex>` digest; anything else is a damaged
/// manifest (a digest must never name a path outside the store).
fn blob_path(
    root: &Path,
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
    Ok(root.join("blobs").join(format!("sha256-{hex}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIGEST: &str = "sha256:6a0746a1ec1aef3e7ec53868f220ff6e389f6f8ef87a01d77c96807de94ca2aa";

    /// Writes the manifest of `parts` (registry, namespace, model, tag) into the store at `root`.
    fn manifest(root: &Path, parts: &[&str], layers: serde_json::Value) {
        let path = parts.iter().fold(root.join("manifests"), |p, s| p.join(s));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let m = serde_json::json!({"schemaVersion": 2, "layers": layers});
        std::fs::write(path, m.to_string()).unwrap();
    }

    fn model(digest: &str, size: u64) -> serde_json::Value {
        serde_json::json!({"mediaType": MODEL_LAYER, "digest": digest, "size": size})
    }

    /// Writes the blob of `digest` into the store at `root`.
    fn blob(root: &Path, digest: &str) {
        std::fs::create_dir_all(root.join("blobs")).unwrap();
        std::fs::write(root.join("blobs").join(digest.replace(':', "-")), b"GGUF").unwrap();
    }

    /// A store with `qwen2.5:3b` (weights present), `hf.co/bartowski/llama:Q4_K_M` (weights
    /// missing) and `user/styled:latest` (with an adapter).
    fn store() -> (tempfile::TempDir, OllamaStore) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let manifest = |parts: &[&str], layers| manifest(root, parts, layers);
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
        blob(root, DIGEST);
        // As macOS's Finder leaves them at any level.
        std::fs::write(root.join("manifests/.DS_Store"), b"").unwrap();
        std::fs::write(root.join("manifests/registry.ollama.ai/.DS_Store"), b"").unwrap();
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
        let listed: Vec<String> = store.list().into_iter().map(|m| m.name).collect();
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
        assert_eq!(empty.list(), []);
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

    #[test]
    fn the_stores_are_searched_in_ollamas_order() {
        let home = Path::new("/home/u");
        let service = Path::new(LINUX_SERVICE_STORE);
        assert_eq!(
            default_roots(Some("/srv/models".into()), Some(home.into()), Some(service)),
            [
                PathBuf::from("/srv/models"),
                home.join(".ollama/models"),
                service.to_owned()
            ]
        );
        assert_eq!(
            default_roots(Some("".into()), Some(home.into()), None),
            [home.join(".ollama/models")],
            "an empty OLLAMA_MODELS is unset, and only Linux has the service's store"
        );
        assert_eq!(
            default_roots(
                Some(LINUX_SERVICE_STORE.into()),
                Some("/usr/share/ollama".into()),
                Some(service)
            ),
            [service.to_owned()],
            "the service's own user names its store three times; it is searched once"
        );
        assert_eq!(default_roots(None, None, None), Vec::<PathBuf>::new());
    }

    /// Stores laid out as Ollama lays them out, searched as on Linux: `$OLLAMA_MODELS` (not
    /// there), the user's `~/.ollama/models`, then the service's. `qwen2.5:3b` is in both,
    /// `gemma3:270m` in the service's alone, and `mine` in both but without its weights in the
    /// user's.
    #[test]
    fn a_model_in_any_store_resolves_the_first_store_answering() {
        let user = tempfile::tempdir().unwrap();
        let service = tempfile::tempdir().unwrap();
        let theirs = DIGEST.replace("6a07", "8a07");
        let library = |root: &Path, name: &str, tag: &str, digest: &str| {
            manifest(
                root,
                &["registry.ollama.ai", "library", name, tag],
                serde_json::json!([model(digest, 1)]),
            )
        };
        library(user.path(), "qwen2.5", "3b", DIGEST);
        library(
            user.path(),
            "mine",
            "latest",
            &DIGEST.replace("6a07", "9a07"),
        );
        blob(user.path(), DIGEST);
        library(service.path(), "qwen2.5", "3b", &theirs);
        library(service.path(), "mine", "latest", &theirs);
        library(service.path(), "gemma3", "270m", &theirs);
        blob(service.path(), &theirs);
        let unset = user.path().join("nowhere");
        let store = OllamaStore::searching(vec![
            unset.clone(),
            user.path().to_owned(),
            service.path().to_owned(),
        ]);
        let user_blob = user.path().join("blobs").join(DIGEST.replace(':', "-"));
        let service_blob = service.path().join("blobs").join(theirs.replace(':', "-"));
        assert_eq!(
            store.resolve("gemma3:270m").unwrap().gguf,
            service_blob,
            "a model only the service pulled: its weights, with no second download"
        );
        assert_eq!(
            store.resolve("qwen2.5:3b").unwrap().gguf,
            user_blob,
            "the first store that holds it"
        );
        assert_eq!(
            store.resolve("mine").unwrap().gguf,
            service_blob,
            "a name broken in one store is still found in the next"
        );
        let listed: Vec<(String, PathBuf)> =
            store.list().into_iter().map(|m| (m.name, m.gguf)).collect();
        assert_eq!(
            listed,
            [
                ("gemma3:270m".to_owned(), service_blob.clone()),
                ("mine:latest".to_owned(), service_blob.clone()),
                ("qwen2.5:3b".to_owned(), user_blob.clone()),
            ],
            "what resolve answers, once per name"
        );
        let absent = store.resolve("llama3.2").unwrap_err().to_string();
        assert!(
            absent.contains(&format!(
                "at {} or {} or {}",
                unset.display(),
                user.path().display(),
                service.path().display()
            )) && absent.contains("pulled there: gemma3:270m, mine:latest, qwen2.5:3b"),
            "{absent}"
        );
    }

    /// A store the user cannot read (the service's, where they are not in its group) hides
    /// none of the others, and a name found nowhere says it could not be read.
    #[test]
    fn a_store_that_cannot_be_read_hides_no_other() {
        let (dir, readable) = store();
        let unreadable = tempfile::tempdir().unwrap();
        // A file where the manifests' directory should be fails to read as a directory whose
        // permissions refuse would, and unlike those it fails for root too.
        std::fs::write(unreadable.path().join("manifests"), b"").unwrap();
        let store = OllamaStore::searching(vec![
            unreadable.path().to_owned(),
            readable.roots()[0].clone(),
        ]);
        let listed: Vec<String> = store.list().into_iter().map(|m| m.name).collect();
        assert_eq!(listed, ["qwen2.5:3b"]);
        assert!(store
            .resolve("qwen2.5:3b")
            .unwrap()
            .gguf
            .starts_with(dir.path()));
        let err = store.resolve("llama3.2").unwrap_err();
        assert!(
            matches!(&err, OllamaStoreError::Io { path, .. } if path.starts_with(unreadable.path())),
            "{err}"
        );
    }
}
