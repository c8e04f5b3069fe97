//! Builds the browser extension and assembles it in `dist/extension/`.
//!
//! The extension crate must be compiled for `wasm32-unknown-unknown`, which the
//! host's toolchain may not have, so this script runs a nested cargo with
//! whichever wasm toolchain exists (rustup's target, or Debian's `rustc-web`
//! with `-Zbuild-std`), then runs wasm-bindgen (as a library, so its version
//! always matches the crate's) and binaryen's wasm2js for pages whose CSP
//! forbids WebAssembly. The crate is compiled once per [`Module`]: every frame
//! fetches and instantiates the content script's module, so it holds nothing the
//! service worker or the side panel alone need. It reruns only when the extension, the shared protocol
//! or the manifest change: host-only edits never rebuild the wasm.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

/// The crate's cdylib as cargo names it, whichever module it was built as.
const CRATE: &str = "itinero_extension";
const TARGET: &str = "wasm32-unknown-unknown";
const DEBIAN_INSTALL: &str = "sudo apt-get install -y rustc-web cargo-web rust-web-src lld-19";
const RUSTUP_INSTALL: &str = "rustup target add wasm32-unknown-unknown";

fn main() {
    if let Err(e) = run() {
        // One clear message, not a backtrace: cargo prints this under "build script failed".
        eprintln!("\nerror: could not build the itinero browser extension:\n  {e:#}\n");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    for path in [
        "extension/src",
        "extension/static",
        "extension/Cargo.toml",
        "shared/src",
        "shared/Cargo.toml",
        "manifest.json",
    ] {
        println!("cargo:rerun-if-changed={path}");
    }
    for var in [
        "ITINERO_WASM_TOOLCHAIN",
        "ITINERO_BINARYEN_BIN",
        "ITINERO_DENY_WARNINGS",
        "ITINERO_WASM_NAMES",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    // Each build stages in its own OUT_DIR: builds of two profiles may run this script at once.
    let staging = out_dir.join("extension");
    let raw = out_dir.join("raw-wasm");
    for dir in [&staging, &raw, &raw.join("mvp")] {
        if dir.exists() {
            std::fs::remove_dir_all(dir)
                .with_context(|| format!("cannot clear {}", dir.display()))?;
        }
        std::fs::create_dir_all(dir)?;
    }
    let binaryen = Binaryen::find(&root)?;
    // Function names in the shipped modules, for CPU profiles (e.g. the extraction bench's).
    let names = std::env::var_os("ITINERO_WASM_NAMES").is_some();
    // The two feature sets build in their own target directories, so they build side by side:
    // from a fresh clone each compiles its dependencies and std, minutes apiece on two cores, and
    // the nested cargos take their jobs from the outer cargo's jobserver, so together they use
    // no more cores than it allows.
    let (modern, mvp) = std::thread::scope(|s| {
        let modern = s.spawn(|| -> Result<()> {
            for module in [Module::Content, Module::Ui] {
                let wasm = compile_extension(&root, module, Features::Modern, &raw)?;
                let pkg = staging.join("pkg").join(module.feature());
                bindgen(&wasm, &pkg, Flavor::Web, names)?;
                let shipped = pkg.join(format!("{}_bg.wasm", module.name()));
                // Speed, not size: the observation walk runs in the content module on every step.
                let mut opt: Vec<&std::ffi::OsStr> = vec![shipped.as_os_str(), "-O3".as_ref()];
                if names {
                    opt.push("-g".as_ref());
                }
                opt.extend(["-o".as_ref(), shipped.as_os_str()]);
                run_tool(&binaryen.wasm_opt, &opt)?;
            }
            Ok(())
        });
        // Only content scripts run in pages, whose CSP may forbid WebAssembly.
        let mvp = s.spawn(|| -> Result<()> {
            let wasm_mvp =
                compile_extension(&root, Module::Content, Features::Mvp, &raw.join("mvp"))?;
            wasm2js_fallback(&wasm_mvp, &staging.join("pkg-js"), &binaryen)
        });
        (
            modern.join().expect("the modern modules' build panicked"),
            mvp.join().expect("the MVP module's build panicked"),
        )
    });
    modern?;
    mvp?;
    copy_static(&root, &staging)?;
    install(&staging, &root.join("dist/extension"))
}

/// One wasm module, built from the extension crate with one cargo feature.
#[derive(Clone, Copy)]
enum Module {
    /// The content script, fetched and instantiated in every frame of every page.
    Content,
    /// The background service worker and the side panel, each loaded once.
    Ui,
}

impl Module {
    /// The cargo feature of the extension crate that builds this module, and its folder
    /// under `pkg/` (only the content module's is web-accessible).
    fn feature(self) -> &'static str {
        match self {
            Module::Content => "content",
            Module::Ui => "ui",
        }
    }

    /// The module's file name stem; wasm-bindgen names its output after its input.
    fn name(self) -> &'static str {
        match self {
            Module::Content => "itinero_content",
            Module::Ui => "itinero_ui",
        }
    }
}

/// Replaces `dist` with `staging` by renames, so a browser or a concurrent build never sees half a directory.
fn install(staging: &Path, dist: &Path) -> Result<()> {
    let parent = dist.parent().expect("dist/extension has a parent");
    std::fs::create_dir_all(parent)?;
    let unique = format!(
        ".extension-old-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    );
    let old = parent.join(unique);
    for _ in 0..5 {
        if dist.exists() {
            // Another build may have moved it already; that is fine.
            let _ = std::fs::rename(dist, &old);
        }
        if std::fs::rename(staging, dist).is_ok() {
            let _ = std::fs::remove_dir_all(&old);
            return Ok(());
        }
    }
    bail!("cannot move the extension into {}", dist.display())
}

/// Which compiler builds the wasm.
enum Toolchain {
    /// rustup with the wasm32 target installed: the normal developer machine.
    Rustup { cargo: PathBuf },
    /// Debian's rustc-web: builds std from source with `-Zbuild-std`.
    Debian,
}

fn rustup_has_target() -> Option<PathBuf> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()?;
    let sysroot = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    sysroot
        .join("lib/rustlib")
        .join(TARGET)
        .join("lib")
        .is_dir()
        .then(|| PathBuf::from(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())))
}

fn debian_wasm_linker() -> Option<&'static str> {
    ["/usr/bin/wasm-ld-19", "/usr/bin/wasm-ld"]
        .into_iter()
        .find(|p| Path::new(p).exists())
}

fn has_debian_toolchain() -> bool {
    Path::new("/usr/bin/rustc").exists()
        && Path::new("/usr/bin/cargo").exists()
        && Path::new("/usr/lib/rustlib/src/rust/library").is_dir()
        && debian_wasm_linker().is_some()
}

fn pick_toolchain() -> Result<Toolchain> {
    let forced = std::env::var("ITINERO_WASM_TOOLCHAIN").ok();
    match forced.as_deref() {
        Some("debian") => return Ok(Toolchain::Debian),
        Some("rustup") => {
            return Ok(Toolchain::Rustup {
                cargo: PathBuf::from(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())),
            })
        }
        _ => {}
    }
    if let Some(cargo) = rustup_has_target() {
        return Ok(Toolchain::Rustup { cargo });
    }
    if has_debian_toolchain() {
        return Ok(Toolchain::Debian);
    }
    bail!(
        "no Rust toolchain for {TARGET} was found. Install one:\n    {RUSTUP_INSTALL}\n  or, on Debian/Ubuntu where rustup cannot download it:\n    {DEBIAN_INSTALL}"
    )
}

/// Which WebAssembly features a build may use.
#[derive(Clone, Copy)]
enum Features {
    /// What every Chromium with MV3 runs: reference types (JS values cross as `externref`, with
    /// no handle table to manage on each DOM call), bulk memory, non-trapping float-to-int
    /// conversions and sign extension. The shipped `.wasm` is built this way.
    Modern,
    /// The MVP feature set that wasm2js can translate (no reference types, no multivalue),
    /// for the no-WebAssembly fallback only.
    Mvp,
}

/// Runs the nested cargo and returns the raw wasm it produced, copied into `raw` as the
/// module's name (the next build of the crate overwrites cargo's own output).
fn compile_extension(
    root: &Path,
    module: Module,
    features: Features,
    raw: &Path,
) -> Result<PathBuf> {
    let toolchain = pick_toolchain()?;
    // One target directory per feature set: switching flags in one would rebuild everything each time.
    let (target_dir, rustflags) = match features {
        Features::Modern => (
            root.join("target/wasm"),
            "-Ctarget-feature=+reference-types,+bulk-memory,+nontrapping-fptoint,+sign-ext,+mutable-globals",
        ),
        Features::Mvp => (
            root.join("target/wasm-mvp"),
            "-Ctarget-cpu=mvp -Ctarget-feature=+mutable-globals",
        ),
    };
    let mut cmd = match &toolchain {
        Toolchain::Rustup { cargo } => Command::new(cargo),
        Toolchain::Debian => Command::new("/usr/bin/cargo"),
    };
    // The outer cargo's settings (target dir, rustc, flags for the host) must not leak in.
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        let keep = key == "CARGO_HOME" || key == "CARGO_MAKEFLAGS" || key == "CARGO_NET_OFFLINE";
        if (key.starts_with("CARGO_") && !keep)
            || key.starts_with("RUSTC")
            || key == "RUSTFLAGS"
            || key == "RUSTDOCFLAGS"
        {
            cmd.env_remove(&key);
        }
    }
    cmd.current_dir(root)
        .args([
            "build",
            "--release",
            "--target",
            TARGET,
            "-p",
            "itinero-extension",
            "--no-default-features",
            "--features",
            module.feature(),
        ])
        .arg("--target-dir")
        .arg(&target_dir)
        .args(["--config", "profile.release.panic=\"abort\""])
        .args(["--config", "profile.release.lto=true"])
        .args(["--config", "profile.release.codegen-units=1"])
        .env("RUSTFLAGS", rustflags);
    if let Toolchain::Debian = toolchain {
        cmd.env("RUSTC", "/usr/bin/rustc")
            .env("RUSTC_BOOTSTRAP", "1")
            .env(
                "CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER",
                debian_wasm_linker().expect("checked by has_debian_toolchain"),
            )
            .args(["-Zbuild-std=std,panic_abort"]);
    }
    // Capture diagnostics: cargo hides a build script's output, so warnings are re-raised as
    // `cargo:warning` (and are errors under ITINERO_DENY_WARNINGS, as in the test script).
    let out = cmd.output().context("cannot run cargo for the extension")?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        bail!(
            "compiling the extension's {} module for {TARGET} failed:\n{stderr}",
            module.feature()
        );
    }
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("warning"))
        .collect();
    for w in &warnings {
        println!("cargo:warning=wasm build: {w}");
    }
    if !warnings.is_empty() && std::env::var_os("ITINERO_DENY_WARNINGS").is_some() {
        bail!("the wasm build has warnings (ITINERO_DENY_WARNINGS is set):\n{stderr}");
    }
    let built = target_dir
        .join(TARGET)
        .join("release")
        .join(format!("{CRATE}.wasm"));
    let copy = raw.join(format!("{}.wasm", module.name()));
    std::fs::copy(&built, &copy)
        .with_context(|| format!("cannot copy {} to {}", built.display(), copy.display()))?;
    Ok(copy)
}

enum Flavor {
    /// ES module glue that fetches the `.wasm` itself: background, side panel, content script.
    Web,
    /// Glue that imports the module's exports; used with wasm2js, whose output is such a module.
    Bundler,
}

fn bindgen(wasm: &Path, out: &Path, flavor: Flavor, names: bool) -> Result<()> {
    let mut b = wasm_bindgen_cli_support::Bindgen::new();
    b.input_path(wasm).typescript(false);
    b.remove_name_section(!names).remove_producers_section(true);
    match flavor {
        Flavor::Web => b.web(true)?,
        Flavor::Bundler => b.bundler(true)?,
    };
    b.generate(out)
        .with_context(|| format!("wasm-bindgen failed on {}", wasm.display()))
}

/// binaryen's tools from npm (Debian's binaryen is too old: its -Oz output is broken).
struct Binaryen {
    wasm_opt: PathBuf,
    wasm2js: PathBuf,
}

impl Binaryen {
    fn find(root: &Path) -> Result<Self> {
        let dir = std::env::var_os("ITINERO_BINARYEN_BIN")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("tools/node_modules/.bin"));
        let tools = Self {
            wasm_opt: dir.join("wasm-opt"),
            wasm2js: dir.join("wasm2js"),
        };
        if !tools.wasm2js.exists() || !tools.wasm_opt.exists() {
            bail!(
                "binaryen's wasm2js and wasm-opt were not found in {}. Install them with:\n    npm ci --prefix {}",
                dir.display(),
                root.join("tools").display()
            );
        }
        Ok(tools)
    }
}

fn run_tool(program: &Path, args: &[&std::ffi::OsStr]) -> Result<()> {
    let out = Command::new(program)
        .args(args)
        .output()
        .with_context(|| format!("cannot run {}", program.display()))?;
    if !out.status.success() {
        bail!(
            "{} failed: {}",
            program.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

/// Builds `pkg-js/`: the content module as JavaScript, for pages whose CSP forbids WebAssembly.
fn wasm2js_fallback(wasm: &Path, out: &Path, binaryen: &Binaryen) -> Result<()> {
    let name = Module::Content.name();
    // rustup's prebuilt std for wasm32 is compiled with newer features (reference types among
    // them) whatever the crate's own flags say, and the linker records them in the module's
    // `target_features` section, from which wasm-bindgen would pick externref glue that an MVP
    // build of the crate does not have. Without the section wasm-bindgen goes by the crate's
    // own intrinsics; whatever newer instructions std brought are lowered below.
    // Named as the module: wasm-bindgen names its output after its input.
    let mvp_dir = out.with_extension("input");
    std::fs::create_dir_all(&mvp_dir)?;
    let mvp = mvp_dir.join(format!("{name}.wasm"));
    run_tool(
        &binaryen.wasm_opt,
        &[
            wasm.as_os_str(),
            "--strip-target-features".as_ref(),
            "-o".as_ref(),
            mvp.as_os_str(),
        ],
    )?;
    bindgen(&mvp, out, Flavor::Bundler, false)?;
    std::fs::remove_dir_all(&mvp_dir)?;
    let bg_wasm = out.join(format!("{name}_bg.wasm"));
    let lowered = out.join("lowered.wasm");
    run_tool(
        &binaryen.wasm_opt,
        &[
            bg_wasm.as_os_str(),
            "--enable-bulk-memory".as_ref(),
            "--enable-sign-ext".as_ref(),
            "--enable-nontrapping-float-to-int".as_ref(),
            "--enable-mutable-globals".as_ref(),
            "--llvm-memory-copy-fill-lowering".as_ref(),
            "--signext-lowering".as_ref(),
            "--llvm-nontrapping-fptoint-lowering".as_ref(),
            "-Oz".as_ref(),
            "-o".as_ref(),
            lowered.as_os_str(),
        ],
    )?;
    let js = out.join(format!("{name}_bg.wasm.js"));
    run_tool(
        &binaryen.wasm2js,
        &[
            lowered.as_os_str(),
            "-Oz".as_ref(),
            "-o".as_ref(),
            js.as_os_str(),
        ],
    )?;
    std::fs::remove_file(&lowered)?;
    std::fs::remove_file(&bg_wasm)?;
    // The glue imports the .wasm file directly (a bundler would resolve it); point it at the JS module.
    let entry = out.join(format!("{name}.js"));
    let glue = std::fs::read_to_string(&entry)?;
    let wasm_import = format!("\"./{name}_bg.wasm\"");
    if !glue.contains(&wasm_import) {
        bail!("wasm-bindgen's bundler glue no longer imports {wasm_import}; update build.rs");
    }
    std::fs::write(
        &entry,
        glue.replace(&wasm_import, &format!("\"./{name}_bg.wasm.js\"")),
    )?;
    // wasm2js memory is a plain ArrayBuffer that is replaced, not detached, when it grows:
    // the glue's "byteLength === 0" staleness check never fires, so compare buffers instead.
    let bg_js = out.join(format!("{name}_bg.js"));
    let text = std::fs::read_to_string(&bg_js)?;
    // The DataView check trusts `buffer.detached`, which a replaced (not detached) buffer never sets.
    let patched = patch_memory_views(&text).replace(
        ".buffer.detached === true",
        ".buffer !== wasm.memory.buffer",
    );
    if patched.contains("cachedUint8ArrayMemory0.byteLength === 0") {
        bail!(
            "the wasm2js memory-view patch no longer matches wasm-bindgen's glue; update build.rs"
        );
    }
    std::fs::write(&bg_js, patched)?;
    Ok(())
}

/// Rewrites `cachedX.byteLength === 0` into `cachedX.buffer !== wasm.memory.buffer`.
fn patch_memory_views(glue: &str) -> String {
    const STALE: &str = ".byteLength === 0";
    let mut out = String::with_capacity(glue.len());
    let mut rest = glue;
    while let Some(pos) = rest.find(STALE) {
        let head = &rest[..pos];
        // The identifier just before the check, e.g. `cachedUint8ArrayMemory0`.
        let ident_start = head
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
            .last()
            .map(|(i, _)| i)
            .unwrap_or(pos);
        let ident = &head[ident_start..];
        out.push_str(head);
        if ident.starts_with("cached") {
            out.push_str(".buffer !== wasm.memory.buffer");
        } else {
            out.push_str(STALE);
        }
        rest = &rest[pos + STALE.len()..];
    }
    out.push_str(rest);
    out
}

fn copy_static(root: &Path, dist: &Path) -> Result<()> {
    std::fs::copy(root.join("manifest.json"), dist.join("manifest.json"))
        .context("cannot copy manifest.json")?;
    for entry in std::fs::read_dir(root.join("extension/static"))? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            std::fs::copy(entry.path(), dist.join(entry.file_name()))?;
        }
    }
    Ok(())
}
