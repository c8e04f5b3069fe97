//! `doctor`: find out why the browser cannot reach the host, and say how to fix it.
//!
//! When registration is wrong the browser gives the extension only a vague
//! "native host has exited" or "not found", and nothing reaches our log because
//! the host never starts. So the doctor re-checks, from the outside, every link
//! the browser follows — manifest location, its fields, the binary it names, the
//! ids allowed on both sides — and prints the exact command that repairs each.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::Result;
use itinero_shared::HOST_NAME;
use serde_json::Value;

use super::install::{
    self, chromium_origin, shell_quote, Browser, ExtensionIds, Layout, Os, Target,
};
use crate::{origin, paths};

/// Arguments of `itinero-host doctor`.
#[derive(clap::Args, Debug)]
pub struct DoctorArgs {
    /// check only the manifest in this browser user-data-dir (as written by `install --profile-dir`)
    #[arg(long)]
    pub profile_dir: Option<PathBuf>,
    /// extension id(s) that must be allowed (default: itinero's own build)
    #[arg(long = "extension-id")]
    pub extension_id: Vec<String>,
    /// print the checks as JSON: {"ok": …, "checks": [{"status", "what", "fix"}]}
    #[arg(long)]
    pub json: bool,
}

/// Outcome of one check. Only `Fail` makes the doctor (and its exit status) unhappy:
/// a `Warn` still works, a `Skip` was not applicable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Warn,
    Skip,
    Fail,
}

impl Status {
    fn tag(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Skip => "skip",
            Status::Fail => "FAIL",
        }
    }
}

/// One line of the report, with the repair for anything not ok.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Check {
    pub status: Status,
    pub what: String,
    pub fix: Option<String>,
}

impl Check {
    fn ok(what: impl Into<String>) -> Check {
        Check {
            status: Status::Ok,
            what: what.into(),
            fix: None,
        }
    }

    fn skip(what: impl Into<String>) -> Check {
        Check {
            status: Status::Skip,
            what: what.into(),
            fix: None,
        }
    }

    fn warn(what: impl Into<String>, fix: impl Into<String>) -> Check {
        Check {
            status: Status::Warn,
            what: what.into(),
            fix: Some(fix.into()),
        }
    }

    fn fail(what: impl Into<String>, fix: impl Into<String>) -> Check {
        Check {
            status: Status::Fail,
            what: what.into(),
            fix: Some(fix.into()),
        }
    }
}

/// The report as printed: `ok   <what>` / `FAIL <what>` and an indented `fix:` line.
pub fn render(checks: &[Check]) -> String {
    let mut text = String::new();
    for check in checks {
        text.push_str(&format!("{:<4} {}\n", check.status.tag(), check.what));
        if let Some(fix) = &check.fix {
            text.push_str(&format!("     fix: {fix}\n"));
        }
    }
    text
}

/// True when nothing failed.
pub fn all_ok(checks: &[Check]) -> bool {
    checks.iter().all(|c| c.status != Status::Fail)
}

/// `itinero-host doctor`.
pub fn run_doctor(args: &DoctorArgs) -> Result<bool> {
    let layout = Layout::detect()?;
    let current_exe = std::env::current_exe().ok();
    let mut checks = diagnose(
        &layout,
        args.profile_dir.as_deref(),
        &args.extension_id,
        current_exe.as_deref(),
    )?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    checks.push(runtime.block_on(ollama_check(&crate::llm::ollama::default_url())));
    let ok = all_ok(&checks);
    let failed = checks.iter().filter(|c| c.status == Status::Fail).count();
    let mut out = io::stdout().lock();
    if args.json {
        let report = serde_json::json!({"ok": ok, "checks": checks});
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
        return Ok(ok);
    }
    out.write_all(render(&checks).as_bytes())?;
    if ok {
        writeln!(out, "all checks passed")?;
    } else {
        writeln!(out, "{failed} check(s) failed")?;
    }
    tracing::debug!(failed, "doctor finished");
    Ok(ok)
}

/// All checks, for the given layout. `extension_id_args` are the raw
/// `--extension-id` values, repeated in fix commands; `current_exe` is the binary
/// manifests are expected to name.
pub fn diagnose(
    layout: &Layout,
    profile_dir: Option<&Path>,
    extension_id_args: &[String],
    current_exe: Option<&Path>,
) -> Result<Vec<Check>> {
    let ids = ExtensionIds::parse(extension_id_args)?;
    let mut checks = Vec::new();
    // A profile directory was named on purpose, so its manifest is expected; a
    // browser's only when the browser appears installed.
    let targets: Vec<(Target, bool)> = match profile_dir {
        Some(dir) => vec![(Target::profile(layout.os, dir)?, true)],
        None => {
            let mut targets: Vec<(Target, bool)> = Browser::EACH
                .into_iter()
                // Chromium's deb profile here; the snap's is its own target below.
                .filter_map(|b| layout.target(b).map(|t| (t, layout.profile_in_use(b))))
                .collect();
            if let Some(snap) = layout.snap_target() {
                if layout.has_snap_chromium() || snap.manifest_path.exists() {
                    targets.push((snap, layout.snap_appears_installed()));
                }
            }
            targets
        }
    };
    let before = checks.len();
    for (target, expected) in &targets {
        check_target(
            layout.os,
            target,
            *expected,
            &ids,
            extension_id_args,
            current_exe,
            &mut checks,
        );
        if target.snap && (*expected || target.manifest_path.exists()) {
            checks.push(Check::warn(
                format!("{}: {}", target.label(), install::SNAP_CONFINEMENT_NOTE),
                install::SNAP_CONFINEMENT_FIX,
            ));
        }
    }
    // With no browser installed and no manifest anywhere, every browser line is a
    // skip: the host still cannot be reached, and that deserves a failure.
    if profile_dir.is_none() && checks[before..].iter().all(|c| c.status == Status::Skip) {
        checks.push(Check::fail(
            "the host is registered with no browser",
            format!(
                "{} --browser chrome (or chromium, edge, brave, firefox)",
                install_command_for_ids(extension_id_args)
            ),
        ));
    }
    checks.push(check_writable_dir("data directory", &layout.data_dir));
    checks.push(check_writable_dir("log directory", &layout.log_dir));
    checks.push(check_store(&layout.data_dir.join(paths::STORE_FILE_NAME)));
    let mut wanted: Vec<&String> = ids.chromium.iter().collect();
    if profile_dir.is_none() {
        wanted.extend(&ids.firefox);
    }
    let fix = match profile_dir {
        Some(dir) => Target::profile(layout.os, dir)?.install_command(extension_id_args),
        None => install_command_for_ids(extension_id_args),
    };
    check_host_accepts(&layout.allowed_extensions_file, &wanted, &fix, &mut checks);
    Ok(checks)
}

/// Whether Ollama answers at `url`, and with which models. A warning, not a failure: the host
/// itself works without it.
pub async fn ollama_check(url: &str) -> Check {
    use crate::llm::{ollama::Ollama, Backend, Timeouts};
    let ollama = match Ollama::new(url, Timeouts::default()) {
        Ok(o) => o,
        Err(e) => {
            return Check::warn(
                format!("model backend: {e}"),
                "set OLLAMA_HOST to Ollama's address",
            )
        }
    };
    match ollama.models().await {
        Ok(models) if models.is_empty() => Check::warn(
            format!("model backend: Ollama at {url} has no models"),
            "ollama pull qwen2.5:3b (or any instruction-tuned model)",
        ),
        Ok(models) => {
            let names: Vec<&str> = models.iter().map(|m| m.name.as_str()).collect();
            Check::ok(format!(
                "model backend: Ollama at {url} has {} model(s): {}",
                names.len(),
                names.join(", ")
            ))
        }
        Err(e) => Check::warn(
            format!("model backend: Ollama is not reachable at {url}"),
            format!("{e}"),
        ),
    }
}

fn install_command_for_ids(extension_id_args: &[String]) -> String {
    let mut cmd = String::from("itinero-host install");
    for id in extension_id_args {
        cmd.push_str(" --extension-id ");
        cmd.push_str(&shell_quote(id));
    }
    cmd
}

fn check_target(
    os: Os,
    target: &Target,
    expected: bool,
    ids: &ExtensionIds,
    extension_id_args: &[String],
    current_exe: Option<&Path>,
    checks: &mut Vec<Check>,
) {
    let label = target.label();
    let fix = target.install_command(extension_id_args);
    let path = &target.manifest_path;
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            checks.push(if expected {
                Check::fail(
                    format!("{label}: no host manifest at {}", path.display()),
                    fix,
                )
            } else {
                Check::skip(format!(
                    "{label}: not installed (no browser profile, no host manifest)"
                ))
            });
            return;
        }
        Err(e) => {
            checks.push(Check::fail(
                format!("{label}: cannot read host manifest {}: {e}", path.display()),
                fix,
            ));
            return;
        }
    };
    checks.push(Check::ok(format!(
        "{label}: host manifest at {}",
        path.display()
    )));

    if let Some(key) = &target.registry_key {
        checks.push(check_registry(&label, key, path, &fix));
    }

    let manifest: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            checks.push(Check::fail(
                format!("{label}: host manifest is not valid JSON ({e})"),
                fix,
            ));
            return;
        }
    };

    let name = manifest.get("name").and_then(Value::as_str);
    let kind = manifest.get("type").and_then(Value::as_str);
    checks.push(if name == Some(HOST_NAME) && kind == Some("stdio") {
        Check::ok(format!(
            "{label}: manifest declares {HOST_NAME} (type stdio)"
        ))
    } else {
        Check::fail(
            format!(
                "{label}: manifest declares name {} and type {}, expected {HOST_NAME} and stdio",
                shown(name),
                shown(kind)
            ),
            fix.clone(),
        )
    });

    match manifest.get("path").and_then(Value::as_str) {
        Some(host) => check_host_binary(os, &label, Path::new(host), current_exe, &fix, checks),
        None => checks.push(Check::fail(
            format!("{label}: manifest names no host \"path\""),
            fix.clone(),
        )),
    }

    checks.push(check_manifest_ids(
        &label,
        target.browser,
        &manifest,
        ids,
        &fix,
    ));
}

fn shown(field: Option<&str>) -> String {
    field.map_or_else(|| "(missing)".to_owned(), |s| format!("{s:?}"))
}

fn check_host_binary(
    os: Os,
    label: &str,
    host: &Path,
    current_exe: Option<&Path>,
    fix: &str,
    checks: &mut Vec<Check>,
) {
    // Windows resolves a relative path against the manifest; the others refuse it.
    if os != Os::Windows && !host.is_absolute() {
        checks.push(Check::fail(
            format!(
                "{label}: host path {} is not absolute, which browsers refuse",
                host.display()
            ),
            fix,
        ));
        return;
    }
    if !host.exists() {
        checks.push(Check::fail(
            format!("{label}: host binary {} does not exist", host.display()),
            fix,
        ));
        return;
    }
    if !install::is_executable(host) {
        checks.push(Check::fail(
            format!("{label}: host binary {} is not executable", host.display()),
            format!("chmod +x {}", shell_quote(&host.to_string_lossy())),
        ));
        return;
    }
    checks.push(Check::ok(format!(
        "{label}: host binary {} is executable",
        host.display()
    )));
    if let Some(current) = current_exe {
        checks.push(if same_file(host, current) {
            Check::ok(format!("{label}: manifest points at this itinero-host"))
        } else {
            Check::warn(
                format!(
                    "{label}: manifest points at an older build? {} is not this binary ({})",
                    host.display(),
                    current.display()
                ),
                fix,
            )
        });
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

fn check_manifest_ids(
    label: &str,
    browser: Browser,
    manifest: &Value,
    ids: &ExtensionIds,
    fix: &str,
) -> Check {
    let (key, wanted): (&str, Vec<String>) = if browser.is_firefox() {
        ("allowed_extensions", ids.firefox.clone())
    } else {
        (
            "allowed_origins",
            ids.chromium.iter().map(|id| chromium_origin(id)).collect(),
        )
    };
    let listed: Vec<&str> = manifest
        .get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let missing: Vec<&str> = wanted
        .iter()
        .map(String::as_str)
        .filter(|w| !listed.contains(w))
        .collect();
    if missing.is_empty() {
        Check::ok(format!("{label}: {key} includes {}", wanted.join(", ")))
    } else {
        Check::fail(
            format!(
                "{label}: {key} lacks {} (it lists: {})",
                missing.join(", "),
                if listed.is_empty() {
                    "nothing".to_owned()
                } else {
                    listed.join(", ")
                }
            ),
            fix,
        )
    }
}

fn check_registry(label: &str, key: &str, manifest: &Path, fix: &str) -> Check {
    let want = manifest.to_string_lossy();
    match install::registry_default(key) {
        // Windows paths are case-insensitive.
        Ok(Some(value)) if value.eq_ignore_ascii_case(&want) => {
            Check::ok(format!("{label}: registry HKCU\\{key} names the manifest"))
        }
        Ok(Some(value)) => Check::fail(
            format!("{label}: registry HKCU\\{key} names {value}, not {want}"),
            fix,
        ),
        Ok(None) => Check::fail(format!("{label}: registry key HKCU\\{key} is missing"), fix),
        Err(e) => Check::fail(format!("{label}: {e:#}"), fix),
    }
}

/// The host must create its database and logs here; proven by writing a file.
fn check_writable_dir(what: &str, dir: &Path) -> Check {
    let quoted = shell_quote(&dir.to_string_lossy());
    let env = paths::DATA_DIR_ENV;
    if let Err(e) = fs::create_dir_all(dir) {
        return Check::fail(
            format!("{what} {} cannot be created: {e}", dir.display()),
            format!("mkdir -p {quoted} (or set {env} to a writable directory)"),
        );
    }
    let probe = dir.join(format!(".doctor-probe-{}", std::process::id()));
    let written = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .and_then(|mut f| f.write_all(b"probe"));
    let removed = fs::remove_file(&probe);
    match written.and(removed) {
        Ok(()) => Check::ok(format!("{what} {} is writable", dir.display())),
        Err(e) => Check::fail(
            format!("{what} {} is not writable: {e}", dir.display()),
            format!("chmod u+w {quoted} (or set {env} to a writable directory)"),
        ),
    }
}

/// Whether the store opens and reads whole; a store not made yet is fine.
fn check_store(path: &Path) -> Check {
    if !path.exists() {
        return Check::ok(format!(
            "no store yet at {} (the host makes it on its first start)",
            path.display()
        ));
    }
    match crate::store::Store::open(path) {
        Ok(_) => Check::ok(format!(
            "the store {} opens and reads whole",
            path.display()
        )),
        Err(e @ crate::store::StoreError::Damaged { .. }) => {
            let quoted = shell_quote(&path.to_string_lossy());
            Check::fail(
                e.to_string(),
                format!("mv {quoted} {quoted}.damaged, then start the browser again"),
            )
        }
        Err(e) => Check::fail(
            format!("the store {} cannot be opened: {e}", path.display()),
            "see the message; `itinero-host doctor` again once it is fixed",
        ),
    }
}

/// The host re-checks its caller against its own list, so an id the manifest
/// allows but the host does not would still be turned away.
fn check_host_accepts(file: &Path, wanted: &[&String], fix: &str, checks: &mut Vec<Check>) {
    let accepted = origin::allowed_ids(Some(file));
    for id in wanted {
        checks.push(if accepted.contains(id) {
            Check::ok(format!("host accepts extension {id}"))
        } else {
            Check::fail(
                format!(
                    "host would refuse extension {id}: not listed in {}",
                    file.display()
                ),
                fix,
            )
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::install::{install_into, select_targets};

    const OTHER_ID: &str = "ponmlkjihgfedcbaponmlkjihgfedcba";

    struct Setup {
        _root: tempfile::TempDir,
        layout: Layout,
        host: PathBuf,
    }

    fn fake_host(dir: &Path, name: &str) -> PathBuf {
        let host = dir
            .join("bin")
            .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
        fs::create_dir_all(host.parent().unwrap()).unwrap();
        fs::write(&host, b"#!/bin/sh\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&host, fs::Permissions::from_mode(0o755)).unwrap();
        }
        host.canonicalize().unwrap()
    }

    /// A home where only Chromium is installed, with the host installed for it.
    fn installed(os: Os, id_args: &[String]) -> Setup {
        let root = tempfile::tempdir().unwrap();
        let layout = Layout::with_home(os, root.path().join("home"), root.path().join("data"));
        let profile = layout.browser_data_dir(Browser::Chromium).unwrap();
        fs::create_dir_all(&profile).unwrap();
        fs::write(profile.join("Local State"), "{}").unwrap();
        let host = fake_host(root.path(), "itinero-host");
        let targets = select_targets(&layout, &[], None).unwrap();
        assert_eq!(targets.len(), 1);
        let ids = ExtensionIds::parse(id_args).unwrap();
        install_into(&layout, &targets, &ids, &host, &mut io::sink()).unwrap();
        Setup {
            _root: root,
            layout,
            host,
        }
    }

    fn line_with<'a>(report: &'a str, needle: &str) -> &'a str {
        report
            .lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle:?} in\n{report}"))
    }

    #[test]
    fn install_then_doctor_reports_ok() {
        for os in [Os::Linux, Os::MacOs] {
            let s = installed(os, &[]);
            let checks = diagnose(&s.layout, None, &[], Some(&s.host)).unwrap();
            let report = render(&checks);
            assert!(all_ok(&checks), "{report}");
            assert!(checks.iter().all(|c| c.status != Status::Warn), "{report}");
            assert!(line_with(&report, "chromium: host manifest at").starts_with("ok   "));
            assert!(line_with(&report, "chromium: allowed_origins includes").starts_with("ok   "));
            assert!(line_with(&report, "points at this itinero-host").starts_with("ok   "));
            assert!(line_with(&report, "chrome: not installed").starts_with("skip "));
            assert!(line_with(&report, "firefox: not installed").starts_with("skip "));
            assert!(line_with(&report, "data directory").starts_with("ok   "));
            assert!(line_with(&report, "log directory").starts_with("ok   "));
        }
    }

    #[test]
    fn doctor_fails_when_no_browser_has_the_host() {
        let root = tempfile::tempdir().unwrap();
        let layout = Layout::with_home(
            Os::Linux,
            root.path().join("home"),
            root.path().join("data"),
        );
        let checks = diagnose(&layout, None, &[], None).unwrap();
        let report = render(&checks);
        assert!(!all_ok(&checks), "{report}");
        assert!(line_with(&report, "registered with no browser").starts_with("FAIL "));
        assert!(
            report.contains("fix: itinero-host install --browser chrome"),
            "{report}"
        );
    }

    #[test]
    fn doctor_flags_a_manifest_whose_binary_is_gone() {
        let s = installed(Os::Linux, &[]);
        let manifest_path = s.layout.target(Browser::Chromium).unwrap().manifest_path;
        let mut m: Value =
            serde_json::from_str(&fs::read_to_string(&manifest_path).unwrap()).unwrap();
        let gone = s.host.with_file_name("gone-host");
        m["path"] = Value::from(gone.to_str().unwrap());
        fs::write(&manifest_path, m.to_string()).unwrap();

        let checks = diagnose(&s.layout, None, &[], Some(&s.host)).unwrap();
        let report = render(&checks);
        assert!(!all_ok(&checks));
        let expected = format!(
            "FAIL chromium: host binary {} does not exist\n     fix: itinero-host install --browser chromium\n",
            gone.display()
        );
        assert!(report.contains(&expected), "{report}");
    }

    #[test]
    fn doctor_warns_about_another_build_without_failing() {
        let s = installed(Os::Linux, &[]);
        let other = fake_host(
            s.host.parent().unwrap().parent().unwrap(),
            "newer-itinero-host",
        );
        let checks = diagnose(&s.layout, None, &[], Some(&other)).unwrap();
        let report = render(&checks);
        assert!(all_ok(&checks), "{report}");
        assert!(line_with(&report, "points at an older build").starts_with("warn "));
    }

    #[test]
    fn doctor_fails_an_installed_browser_without_manifest() {
        let s = installed(Os::Linux, &[]);
        let chrome = s.layout.browser_data_dir(Browser::Chrome).unwrap();
        fs::create_dir_all(&chrome).unwrap();
        fs::write(chrome.join("Local State"), "{}").unwrap();
        let report = render(&diagnose(&s.layout, None, &[], Some(&s.host)).unwrap());
        assert!(
            report.contains("FAIL chrome: no host manifest at ")
                && report.contains("     fix: itinero-host install --browser chrome\n"),
            "{report}"
        );
    }

    #[test]
    fn doctor_checks_the_expected_extension_ids() {
        let s = installed(Os::Linux, &[]);
        let args = vec![OTHER_ID.to_owned()];
        let checks = diagnose(&s.layout, None, &args, Some(&s.host)).unwrap();
        let report = render(&checks);
        assert!(!all_ok(&checks));
        assert!(
            line_with(&report, "allowed_origins lacks").starts_with("FAIL chromium:"),
            "{report}"
        );
        assert!(line_with(&report, "host would refuse extension").starts_with("FAIL "));
        assert!(report.contains(&format!(
            "     fix: itinero-host install --browser chromium --extension-id {OTHER_ID}\n"
        )));

        // Installing with that id fixes both.
        let s = installed(Os::Linux, &args);
        let checks = diagnose(&s.layout, None, &args, Some(&s.host)).unwrap();
        assert!(all_ok(&checks), "{}", render(&checks));
    }

    #[test]
    fn doctor_flags_broken_json_and_a_wrong_name() {
        let s = installed(Os::Linux, &[]);
        let manifest_path = s.layout.target(Browser::Chromium).unwrap().manifest_path;
        fs::write(&manifest_path, "{ not json").unwrap();
        let report = render(&diagnose(&s.layout, None, &[], Some(&s.host)).unwrap());
        assert!(
            line_with(&report, "not valid JSON").starts_with("FAIL "),
            "{report}"
        );

        fs::write(
            &manifest_path,
            serde_json::json!({"name": "other.host", "type": "stdio"}).to_string(),
        )
        .unwrap();
        let report = render(&diagnose(&s.layout, None, &[], Some(&s.host)).unwrap());
        assert!(
            line_with(&report, "expected dev.itinero.host").starts_with("FAIL "),
            "{report}"
        );
        assert!(
            line_with(&report, "names no host \"path\"").starts_with("FAIL "),
            "{report}"
        );
    }

    #[test]
    fn doctor_on_a_profile_dir() {
        let root = tempfile::tempdir().unwrap();
        let layout = Layout::with_home(
            Os::Linux,
            root.path().join("home"),
            root.path().join("data"),
        );
        let profile = root.path().join("profile");
        let report = render(&diagnose(&layout, Some(&profile), &[], None).unwrap());
        assert!(
            report.contains(&format!(
                "     fix: itinero-host install --profile-dir {}\n",
                shell_quote(&profile.to_string_lossy())
            )),
            "{report}"
        );
        assert!(!report.contains("chrome:"), "{report}");

        let host = fake_host(root.path(), "itinero-host");
        let targets = select_targets(&layout, &[], Some(&profile)).unwrap();
        let ids = ExtensionIds::parse(&[]).unwrap();
        install_into(&layout, &targets, &ids, &host, &mut io::sink()).unwrap();
        let checks = diagnose(&layout, Some(&profile), &[], Some(&host)).unwrap();
        assert!(all_ok(&checks), "{}", render(&checks));
    }

    #[test]
    fn doctor_fails_a_damaged_store_and_says_how_to_move_it_aside() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(paths::STORE_FILE_NAME);
        assert_eq!(check_store(&path).status, Status::Ok);
        crate::store::Store::open(&path).unwrap();
        assert_eq!(check_store(&path).status, Status::Ok);
        std::fs::write(
            &path,
            b"not sqlite at all, just text long enough to be read",
        )
        .unwrap();
        let check = check_store(&path);
        assert_eq!(check.status, Status::Fail, "{}", check.what);
        assert!(
            check.fix.as_deref().is_some_and(|f| f.contains(".damaged")),
            "{:?}",
            check.fix
        );
    }

    #[test]
    fn doctor_checks_the_chromium_snap_profile_and_warns_about_its_confinement() {
        let root = tempfile::tempdir().unwrap();
        let layout = Layout::with_home(
            Os::Linux,
            root.path().join("home"),
            root.path().join("data"),
        );
        let snap_profile = layout.snap_chromium_dir().unwrap();
        fs::create_dir_all(snap_profile.join("Default")).unwrap();
        let host = fake_host(root.path(), "itinero-host");

        let checks = diagnose(&layout, None, &[], Some(&host)).unwrap();
        let report = render(&checks);
        assert!(!all_ok(&checks), "{report}");
        assert!(
            report.contains("FAIL chromium (snap): no host manifest at ")
                && report.contains("     fix: itinero-host install --browser chromium\n"),
            "{report}"
        );
        // The deb's profile is not in use: its manifest is not expected.
        assert!(line_with(&report, "chromium: not installed").starts_with("skip "));

        let targets = select_targets(&layout, &[], None).unwrap();
        install_into(
            &layout,
            &targets,
            &ExtensionIds::parse(&[]).unwrap(),
            &host,
            &mut io::sink(),
        )
        .unwrap();
        let checks = diagnose(&layout, None, &[], Some(&host)).unwrap();
        let report = render(&checks);
        assert!(all_ok(&checks), "{report}");
        assert!(line_with(&report, "chromium (snap): host manifest at").starts_with("ok   "));
        assert!(
            line_with(&report, "chromium (snap): allowed_origins includes").starts_with("ok   ")
        );
        let warning = line_with(&report, "chromium (snap): the Chromium snap is confined");
        assert!(warning.starts_with("warn "), "{report}");
        assert!(
            report.contains("fix: use a browser installed from a .deb"),
            "{report}"
        );
    }

    #[test]
    fn report_format() {
        let checks = vec![Check::ok("a"), Check::fail("b", "do c"), Check::skip("d")];
        assert_eq!(render(&checks), "ok   a\nFAIL b\n     fix: do c\nskip d\n");
        assert!(!all_ok(&checks));
    }
}
