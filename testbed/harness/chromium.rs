//! A real Chromium with the built extension, its own profile, and the host registered in it.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use chromiumoxide::{Browser, Page};
use futures::StreamExt;
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;

use chromiumoxide::cdp::browser_protocol::emulation::SetDeviceMetricsOverrideParams;
use chromiumoxide::cdp::browser_protocol::target::GetTargetsParams;

use super::locate::{dist_dir, host_binary};

/// How long Chromium may take to load the extension on a busy 2-core machine.
const EXTENSION_WAIT: Duration = Duration::from_secs(60);

/// Viewport of every tab the harness opens (a window's size would include the browser's own chrome).
pub const VIEWPORT: (i64, i64) = (1280, 720);

#[derive(Debug, Clone)]
pub struct LaunchOptions {
    /// Headless unless a display is wanted (the demo shows a window when there is one).
    pub headless: bool,
    /// Chromium binary: `ITINERO_CHROMIUM` (which scripts/setup.sh sets to the browser it
    /// chose), else the first of [`FALLBACK_BROWSERS`] present.
    pub chromium: PathBuf,
    /// Keep the profile directory after drop (the demo leaves it for the user to inspect).
    pub keep_profile: bool,
    /// Environment for the native host (Chromium passes its own on), e.g. the model backend.
    pub host_env: Vec<(String, String)>,
}

/// Browsers that load an unpacked extension with `--load-extension`, in scripts/setup.sh's order
/// of preference, for a run without ITINERO_CHROMIUM (`cargo test` by hand). Google-branded Chrome
/// is not among them: since version 137 it ignores the switch.
pub const FALLBACK_BROWSERS: [&str; 6] = [
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/brave-browser",
    "/usr/bin/brave-browser-stable",
    "/usr/bin/microsoft-edge",
    "/usr/bin/microsoft-edge-stable",
];

/// ITINERO_CHROMIUM, else the first usable fallback, else `/usr/bin/chromium` (for the error
/// that names what is missing).
pub fn default_browser() -> PathBuf {
    if let Some(path) = std::env::var_os("ITINERO_CHROMIUM") {
        return PathBuf::from(path);
    }
    FALLBACK_BROWSERS
        .iter()
        .map(Path::new)
        .find(|p| p.exists() && !is_snap_launcher(p))
        .unwrap_or(Path::new(FALLBACK_BROWSERS[0]))
        .to_path_buf()
}

/// Ubuntu's `/usr/bin/chromium-browser` is a script that starts the Chromium snap, whose
/// confinement keeps it from starting the native host and hides its private /tmp (where the
/// profile would be) from the harness.
fn is_snap_launcher(path: &Path) -> bool {
    use std::io::Read;
    let mut head = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(4096).read_to_end(&mut head));
    read.is_ok() && head.starts_with(b"#!") && head.windows(6).any(|w| w == b"/snap/")
}

/// What Google-branded Chrome (137 and later) logs when it drops `--load-extension`.
const LOAD_EXTENSION_REFUSED: &str = "--load-extension is not allowed";

impl Default for LaunchOptions {
    fn default() -> Self {
        Self {
            headless: true,
            chromium: default_browser(),
            keep_profile: false,
            host_env: Vec::new(),
        }
    }
}

pub struct Chromium {
    pub browser: Browser,
    child: Child,
    handler: JoinHandle<()>,
    profile: Option<tempfile::TempDir>,
    profile_path: PathBuf,
    log_path: PathBuf,
}

impl Chromium {
    pub async fn launch(options: LaunchOptions) -> Result<Self> {
        if !options.chromium.exists() {
            bail!(
                "no browser was found at {}: run ./scripts/demo or ./scripts/test (they find or install one and set ITINERO_CHROMIUM), install Debian's chromium, or set ITINERO_CHROMIUM to Chromium, Chrome for Testing, Brave or Edge",
                options.chromium.display()
            );
        }
        let dist = dist_dir()?;
        let host = host_binary()?;
        let profile = tempfile::Builder::new()
            .prefix("itinero-chromium-")
            .tempdir()?;
        let profile_path = profile.path().to_path_buf();
        let data_dir = profile_path.join("itinero-data");
        register_host(&host, &profile_path, &data_dir).await?;

        let log_path = profile_path.join("chromium.log");
        let log = std::fs::File::create(&log_path)?;
        let mut cmd = Command::new(&options.chromium);
        if options.headless {
            cmd.arg("--headless");
        }
        cmd.args([
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-quic",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-search-engine-choice-screen",
            "--remote-debugging-port=0",
            // The panel is a tab of its own here, which leaves the task's tab in the
            // background, where Chromium runs timers once a second: each action's wait for the
            // page to settle took about 3 s instead of 0.2. A user's task tab is in front,
            // beside the side panel, and is not slowed.
            "--disable-background-timer-throttling",
            "--disable-renderer-backgrounding",
            "--disable-backgrounding-occluded-windows",
            // Fixtures are laid out for this viewport; headless would otherwise use 800x600.
            "--window-size=1280,720",
            // Any `*.test` name is loopback, so tests can serve look-alike and foreign hosts
            // (`shop.test.evil.test`, punycode) from the fixture server.
            "--host-resolver-rules=MAP *.test 127.0.0.1",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile_path.display()))
        .arg(format!("--disable-extensions-except={}", dist.display()))
        .arg(format!("--load-extension={}", dist.display()))
        .arg("about:blank")
        // The host inherits Chromium's environment: point it at this profile's data dir.
        .env("ITINERO_DATA_DIR", &data_dir)
        // No OS secret store, whatever the machine has: the vault is keyed by a passphrase,
        // the same on every machine the tests run on.
        .env("ITINERO_VAULT_KEYRING", "off")
        .env(
            "ITINERO_LOG",
            // The GPU stack's own debug lines (every shader naga parses) would bury the host's.
            std::env::var("ITINERO_LOG")
                .unwrap_or_else(|_| "debug,naga=warn,wgpu_core=warn,wgpu_hal=warn".into()),
        )
        .envs(
            options
                .host_env
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str())),
        )
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .kill_on_drop(true);
        let mut child = cmd
            .spawn()
            .with_context(|| format!("cannot start {}", options.chromium.display()))?;

        let ws = match devtools_url(&profile_path, &mut child).await {
            Ok(ws) => ws,
            Err(e) => {
                let log = std::fs::read_to_string(&log_path).unwrap_or_default();
                bail!("{e:#}\n--- chromium log ---\n{}", tail(&log, 40));
            }
        };
        let (browser, mut handler) = Browser::connect(ws)
            .await
            .context("connecting to Chromium's DevTools")?;
        let handler = tokio::spawn(async move {
            // Errors here are protocol events chromiumoxide does not model; they do not stop the session.
            while handler.next().await.is_some() {}
        });
        if let Err(e) = wait_for_extension(&browser).await {
            let log = std::fs::read_to_string(&log_path).unwrap_or_default();
            if log.contains(LOAD_EXTENSION_REFUSED) {
                bail!(
                    "{} ignores --load-extension (Google-branded Chrome does since version 137), so the extension cannot be loaded in it; set ITINERO_CHROMIUM to Chromium, Chrome for Testing, Brave or Edge (scripts/setup.sh finds one)",
                    options.chromium.display()
                );
            }
            bail!("{e:#}\n--- chromium log ---\n{}", tail(&log, 40));
        }
        let mut profile = Some(profile);
        if options.keep_profile {
            profile.take().map(|p| p.keep());
        }
        Ok(Self {
            browser,
            child,
            handler,
            profile,
            profile_path,
            log_path,
        })
    }

    /// Opens a new tab at `url`, with the viewport fixtures are laid out for.
    pub async fn open(&self, url: &str) -> Result<Page> {
        // Start blank, fix the viewport, then navigate: the page lays out at its final size once.
        let page = self
            .browser
            .new_page("about:blank")
            .await
            .with_context(|| format!("opening a tab for {url}"))?;
        page.execute(SetDeviceMetricsOverrideParams::new(
            VIEWPORT.0, VIEWPORT.1, 1.0, false,
        ))
        .await
        .context("setting the viewport")?;
        page.goto(url)
            .await
            .with_context(|| format!("opening {url}"))?;
        Ok(page)
    }

    pub fn profile_dir(&self) -> &Path {
        &self.profile_path
    }

    pub fn host_data_dir(&self) -> PathBuf {
        self.profile_path.join("itinero-data")
    }

    /// Everything Chromium wrote to stderr so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log_path).unwrap_or_default()
    }

    /// The host's log files in this profile, concatenated.
    pub fn host_log(&self) -> String {
        let dir = self.host_data_dir().join("logs");
        let mut out = String::new();
        if let Ok(entries) = std::fs::read_dir(dir) {
            let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
            paths.sort();
            for p in paths {
                out.push_str(&std::fs::read_to_string(p).unwrap_or_default());
            }
        }
        out
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "--- chromium log (last lines) ---\n{}",
                tail(&self.log(), 60)
            );
            eprintln!(
                "--- itinero-host log (last lines) ---\n{}",
                tail(&self.host_log(), 60)
            );
            if let Some(p) = self.profile.take() {
                eprintln!("profile kept for inspection: {}", p.keep().display());
            }
        }
        self.handler.abort();
        let _ = self.child.start_kill();
    }
}

pub(crate) fn tail(text: &str, lines: usize) -> String {
    // D-Bus complaints are noise on machines without a session bus.
    let all: Vec<&str> = text.lines().filter(|l| !l.contains("dbus/")).collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Chromium answers DevTools before it has loaded the unpacked extension: a panel opened
/// earlier shows an error page for good, and a fixture tab opened earlier gets no content
/// script. The extension's service worker, woken by its install, is the sign it has loaded.
async fn wait_for_extension(browser: &Browser) -> Result<()> {
    let prefix = format!("chrome-extension://{}/", itinero_shared::DEV_EXTENSION_ID);
    let deadline = Instant::now() + EXTENSION_WAIT;
    loop {
        let targets = browser
            .execute(GetTargetsParams::default())
            .await
            .context("listing Chromium's targets")?
            .result
            .target_infos;
        if targets.iter().any(|t| t.url.starts_with(&prefix)) {
            return Ok(());
        }
        if Instant::now() > deadline {
            let urls: Vec<&str> = targets.iter().map(|t| t.url.as_str()).collect();
            bail!(
                "the extension had not loaded {EXTENSION_WAIT:?} after Chromium started (targets: {urls:?})"
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Registers the host for this profile exactly as a user would, through `itinero-host install`.
async fn register_host(host: &Path, profile: &Path, data_dir: &Path) -> Result<()> {
    let out = Command::new(host)
        .args(["install", "--browser", "chromium", "--profile-dir"])
        .arg(profile)
        .env("ITINERO_DATA_DIR", data_dir)
        .output()
        .await
        .with_context(|| format!("cannot run {}", host.display()))?;
    if !out.status.success() {
        bail!(
            "`itinero-host install` failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

/// Chromium writes its DevTools port to `DevToolsActivePort` once it listens.
async fn devtools_url(profile: &Path, child: &mut Child) -> Result<String> {
    let file = profile.join("DevToolsActivePort");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(text) = tokio::fs::read_to_string(&file).await {
            let mut lines = text.lines();
            if let (Some(port), Some(path)) = (lines.next(), lines.next()) {
                return Ok(format!("ws://127.0.0.1:{}{}", port.trim(), path.trim()));
            }
        }
        if let Some(status) = child.try_wait()? {
            bail!("Chromium exited during start-up with {status}");
        }
        if Instant::now() > deadline {
            bail!("Chromium did not open its DevTools port within 60 s");
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snap_launchers_are_told_from_browsers() {
        let dir = tempfile::tempdir().unwrap();
        let shim = dir.path().join("chromium-browser");
        std::fs::write(&shim, "#!/bin/sh\nexec /snap/bin/chromium \"$@\"\n").unwrap();
        assert!(is_snap_launcher(&shim));
        // Debian's /usr/bin/chromium is a launcher script too, for the real binary.
        let deb = dir.path().join("chromium");
        std::fs::write(&deb, "#!/bin/sh\nexec /usr/lib/chromium/chromium \"$@\"\n").unwrap();
        assert!(!is_snap_launcher(&deb));
        assert!(!is_snap_launcher(&dir.path().join("missing")));
    }
}
