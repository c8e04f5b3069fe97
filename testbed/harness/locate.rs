//! Finding what `cargo build` produced: the workspace, the extension, the host binary.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `dist/extension`, assembled by the root package's build script.
pub fn dist_dir() -> Result<PathBuf> {
    let dist = workspace_root().join("dist/extension");
    if !dist.join("manifest.json").exists() {
        bail!(
            "{} is missing; it is built by `cargo build -p itinero` (the root package's build script)",
            dist.display()
        );
    }
    Ok(dist)
}

/// The `itinero-host` binary of the same cargo profile as the running executable.
///
/// Test, bench and example executables live one or two levels below the
/// profile directory (`target/debug/deps/x`, `target/debug/examples/x`).
/// `ITINERO_HOST_BIN` overrides the search.
pub fn host_binary() -> Result<PathBuf> {
    if let Some(path) = std::env::var_os("ITINERO_HOST_BIN") {
        return Ok(PathBuf::from(path));
    }
    let exe = std::env::current_exe()?;
    let name = format!("itinero-host{}", std::env::consts::EXE_SUFFIX);
    let mut dir: Option<&Path> = exe.parent();
    for _ in 0..3 {
        let Some(d) = dir else { break };
        let candidate = d.join(&name);
        if candidate.is_file() {
            return Ok(candidate);
        }
        dir = d.parent();
    }
    let release = exe.components().any(|c| c.as_os_str() == "release");
    bail!(
        "the itinero-host binary was not found near {}; build it first: cargo build -p itinero-host --features scripted{}",
        exe.display(),
        if release { " --release" } else { "" }
    )
}
