//! `install` and `uninstall`: register the host with browsers, and take it back.
//!
//! A browser only starts a native-messaging host it finds through a manifest in a
//! fixed per-browser, per-OS place (on Windows: a registry key naming the
//! manifest). Getting that place, the manifest's fields or the extension id
//! slightly wrong fails silently in the browser ("Specified native messaging
//! host not found"), so all of that knowledge lives here, as pure functions over
//! a [`Layout`], where tests can check it for every browser and OS on one machine.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use itinero_shared::{DEV_EXTENSION_ID, FIREFOX_EXTENSION_ID, HOST_NAME};
use serde_json::{json, Value};

use crate::paths;

/// The manifest's `description`; browsers show it nowhere important, but require it.
pub const MANIFEST_DESCRIPTION: &str = "itinero native host";

/// Directory a Chromium-family browser searches, relative to its user-data-dir.
const CHROMIUM_HOSTS_DIR: &str = "NativeMessagingHosts";

/// The Chromium snap's user-data-dir under the home directory: the snap sets CHROME_CONFIG_HOME
/// to its `$SNAP_USER_COMMON`, so it never reads `~/.config/chromium`.
const SNAP_CHROMIUM_PROFILE: [&str; 4] = ["snap", "chromium", "common", "chromium"];

/// Why a manifest in the Chromium snap's profile may still not connect: snapd confines the
/// browser, and its AppArmor profile does not let it run programs from the home directory, so
/// the host it finds is not started (reported by snapd's and KeePassXC's maintainers; this
/// machine has no snapd to try it on).
pub const SNAP_CONFINEMENT_NOTE: &str = "the Chromium snap is confined by snapd and does not start native-messaging hosts outside the snap (\"Native host has exited\" in the panel)";

/// What to use instead of the Chromium snap.
pub const SNAP_CONFINEMENT_FIX: &str = "use a browser installed from a .deb: Chromium where the distribution has one (Debian: sudo apt-get install chromium), Google Chrome, Brave or Microsoft Edge; then itinero-host install --browser chromium,chrome,brave,edge";

/// Arguments of `itinero-host install`.
#[derive(clap::Args, Debug)]
pub struct InstallArgs {
    /// which browsers: chrome, chromium, edge, brave, firefox, or all (default: all that appear installed — their config dir exists; if none, chrome+chromium)
    #[arg(long, value_enum, value_delimiter = ',')]
    pub browser: Vec<Browser>,
    /// extension id(s) allowed to start the host (chromium-family id, 32 chars a-p; Firefox add-on ids contain '@' or '{'); default DEV_EXTENSION_ID
    #[arg(long = "extension-id")]
    pub extension_id: Vec<String>,
    /// write the manifest into this browser user-data-dir (`<dir>/NativeMessagingHosts/`) instead of the per-user location — used for a fresh test/demo profile. Linux/macOS chromium-family only.
    #[arg(long)]
    pub profile_dir: Option<PathBuf>,
    /// path of the host binary to register (default: the current executable, canonicalised)
    #[arg(long)]
    pub host_path: Option<PathBuf>,
    /// print what was written as JSON: {"ok", "manifests": [{"browser", "snap", "path", "registry_key"}], "allowed_extensions": {"file", "added", "allowed"}, "warnings"}
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `itinero-host uninstall`.
#[derive(clap::Args, Debug)]
pub struct UninstallArgs {
    /// which browsers (default: every browser that appears installed or has a manifest)
    #[arg(long, value_enum, value_delimiter = ',')]
    pub browser: Vec<Browser>,
    /// remove the manifest from this browser user-data-dir instead of the per-user location
    #[arg(long)]
    pub profile_dir: Option<PathBuf>,
}

/// A browser the host can be registered with. `All` only selects; it names no browser.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Browser {
    Chrome,
    Chromium,
    Edge,
    Brave,
    Firefox,
    All,
}

impl Browser {
    /// Every real browser, in the order reports list them.
    pub const EACH: [Browser; 5] = [
        Browser::Chrome,
        Browser::Chromium,
        Browser::Edge,
        Browser::Brave,
        Browser::Firefox,
    ];

    /// The spelling `--browser` accepts, so reports can print commands that work.
    pub fn name(self) -> &'static str {
        match self {
            Browser::Chrome => "chrome",
            Browser::Chromium => "chromium",
            Browser::Edge => "edge",
            Browser::Brave => "brave",
            Browser::Firefox => "firefox",
            Browser::All => "all",
        }
    }

    /// Firefox manifests list add-on ids instead of origins.
    pub fn is_firefox(self) -> bool {
        self == Browser::Firefox
    }
}

/// The operating systems whose browser conventions differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Os {
    Linux,
    MacOs,
    Windows,
}

impl Os {
    /// The OS this binary was built for; other Unixes follow Linux's (XDG) conventions.
    pub fn current() -> Os {
        if cfg!(windows) {
            Os::Windows
        } else if cfg!(target_os = "macos") {
            Os::MacOs
        } else {
            Os::Linux
        }
    }
}

/// Where things live for one user on one OS. Passed explicitly (instead of read
/// from the environment deep inside) so tests can point everything at a tempdir
/// and check the other OSes' conventions on this machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub os: Os,
    pub home: PathBuf,
    /// Linux: `$XDG_CONFIG_HOME` or `~/.config` (Chromium honours XDG); macOS:
    /// `~/Library/Application Support`; Windows: roaming AppData.
    pub config_dir: PathBuf,
    /// Windows: local AppData, where Chromium-family browsers keep their profiles.
    pub local_data_dir: PathBuf,
    /// itinero's data directory; on Windows the manifests live here too.
    pub data_dir: PathBuf,
    pub log_dir: PathBuf,
    pub allowed_extensions_file: PathBuf,
}

impl Layout {
    /// The real layout of the user running the command.
    pub fn detect() -> Result<Layout> {
        let base = directories::BaseDirs::new()
            .context("cannot determine your home directory (is HOME set?)")?;
        Ok(Layout {
            os: Os::current(),
            home: base.home_dir().to_path_buf(),
            config_dir: base.config_dir().to_path_buf(),
            local_data_dir: base.data_local_dir().to_path_buf(),
            data_dir: paths::data_dir()?,
            log_dir: paths::log_dir()?,
            allowed_extensions_file: paths::allowed_extensions_file()?,
        })
    }

    /// The default layout for `os` under `home`, with itinero's files in `data_dir`
    /// arranged as in [`crate::paths`].
    pub fn with_home(os: Os, home: PathBuf, data_dir: PathBuf) -> Layout {
        let (config_dir, local_data_dir) = match os {
            Os::Linux => (home.join(".config"), home.join(".local").join("share")),
            Os::MacOs => {
                let support = home.join("Library").join("Application Support");
                (support.clone(), support)
            }
            Os::Windows => {
                let app_data = home.join("AppData");
                (app_data.join("Roaming"), app_data.join("Local"))
            }
        };
        Layout {
            os,
            home,
            config_dir,
            local_data_dir,
            log_dir: data_dir.join("logs"),
            allowed_extensions_file: data_dir.join("allowed-extensions"),
            data_dir,
        }
    }

    /// The browser's own profile directory; its presence is how we tell the
    /// browser is installed (and used) without asking a package manager.
    pub fn browser_data_dir(&self, browser: Browser) -> Option<PathBuf> {
        let parts: &[&str] = match (self.os, browser) {
            (_, Browser::All) => return None,
            (Os::Linux, Browser::Firefox) => {
                return Some(self.home.join(".mozilla").join("firefox"))
            }
            (Os::Linux, Browser::Chrome) => &["google-chrome"],
            (Os::Linux, Browser::Chromium) => &["chromium"],
            (Os::Linux, Browser::Edge) => &["microsoft-edge"],
            (Os::Linux, Browser::Brave) => &["BraveSoftware", "Brave-Browser"],
            (Os::MacOs, Browser::Chrome) => &["Google", "Chrome"],
            (Os::MacOs, Browser::Chromium) => &["Chromium"],
            (Os::MacOs, Browser::Edge) => &["Microsoft Edge"],
            (Os::MacOs, Browser::Brave) => &["BraveSoftware", "Brave-Browser"],
            (Os::MacOs, Browser::Firefox) => &["Firefox"],
            (Os::Windows, Browser::Firefox) => {
                return Some(join_all(&self.config_dir, &["Mozilla", "Firefox"]))
            }
            (Os::Windows, Browser::Chrome) => {
                return Some(join_all(
                    &self.local_data_dir,
                    &["Google", "Chrome", "User Data"],
                ))
            }
            (Os::Windows, Browser::Chromium) => {
                return Some(join_all(&self.local_data_dir, &["Chromium", "User Data"]))
            }
            (Os::Windows, Browser::Edge) => {
                return Some(join_all(
                    &self.local_data_dir,
                    &["Microsoft", "Edge", "User Data"],
                ))
            }
            (Os::Windows, Browser::Brave) => {
                return Some(join_all(
                    &self.local_data_dir,
                    &["BraveSoftware", "Brave-Browser", "User Data"],
                ))
            }
        };
        Some(join_all(&self.config_dir, parts))
    }

    /// The Chromium snap's profile directory (Linux only), which exists once the snap has run
    /// for this user.
    pub fn snap_chromium_dir(&self) -> Option<PathBuf> {
        (self.os == Os::Linux).then(|| join_all(&self.home, &SNAP_CHROMIUM_PROFILE))
    }

    /// Whether the Chromium snap has run for this user (`~/snap/chromium` exists): then
    /// `install` writes the manifest into its profile too.
    pub fn has_snap_chromium(&self) -> bool {
        self.os == Os::Linux && self.home.join("snap").join("chromium").is_dir()
    }

    /// Where the host gets registered in the Chromium snap's profile; `None` off Linux.
    pub fn snap_target(&self) -> Option<Target> {
        Some(Target {
            browser: Browser::Chromium,
            profile_dir: None,
            snap: true,
            manifest_path: self
                .snap_chromium_dir()?
                .join(CHROMIUM_HOSTS_DIR)
                .join(manifest_file_name()),
            registry_key: None,
        })
    }

    /// Every place the host gets registered for `browser`: its per-user location and, for
    /// Chromium on Linux where the snap has run, the snap's profile.
    pub fn targets(&self, browser: Browser) -> Vec<Target> {
        let mut targets: Vec<Target> = self.target(browser).into_iter().collect();
        if browser == Browser::Chromium && self.has_snap_chromium() {
            targets.extend(self.snap_target());
        }
        targets
    }

    /// Directory the browser searches for host manifests (on Windows: where we
    /// keep the manifest the registry key points at).
    pub fn manifest_dir(&self, browser: Browser) -> Option<PathBuf> {
        match (self.os, browser) {
            (_, Browser::All) => None,
            (Os::Windows, b) => Some(join_all(
                &self.data_dir,
                &["native-messaging-hosts", b.name()],
            )),
            (Os::Linux, Browser::Firefox) => Some(join_all(
                &self.home,
                &[".mozilla", "native-messaging-hosts"],
            )),
            (Os::MacOs, Browser::Firefox) => Some(join_all(
                &self.config_dir,
                &["Mozilla", "NativeMessagingHosts"],
            )),
            (Os::Linux | Os::MacOs, b) => Some(self.browser_data_dir(b)?.join(CHROMIUM_HOSTS_DIR)),
        }
    }

    /// Key under `HKEY_CURRENT_USER` whose default value names the manifest;
    /// only Windows browsers look there.
    pub fn registry_key(&self, browser: Browser) -> Option<String> {
        if self.os != Os::Windows {
            return None;
        }
        let vendor = match browser {
            Browser::All => return None,
            Browser::Chrome => r"Software\Google\Chrome",
            Browser::Chromium => r"Software\Chromium",
            Browser::Edge => r"Software\Microsoft\Edge",
            Browser::Brave => r"Software\BraveSoftware\Brave-Browser",
            Browser::Firefox => r"Software\Mozilla",
        };
        Some(format!(r"{vendor}\NativeMessagingHosts\{HOST_NAME}"))
    }

    /// Where the host gets registered for `browser`; `None` for `All`.
    pub fn target(&self, browser: Browser) -> Option<Target> {
        Some(Target {
            browser,
            profile_dir: None,
            snap: false,
            manifest_path: self.manifest_dir(browser)?.join(manifest_file_name()),
            registry_key: self.registry_key(browser),
        })
    }

    /// Whether the browser seems to be installed and used: its profile directory
    /// holds something besides a manifest directory — which `install` itself may
    /// have created, and which must not make a browser look installed afterwards.
    /// Chromium counts as installed when either its deb's or its snap's profile is in use.
    pub fn appears_installed(&self, browser: Browser) -> bool {
        if browser == Browser::Chromium && self.snap_appears_installed() {
            return true;
        }
        self.profile_in_use(browser)
    }

    /// Whether the browser's own profile directory (for Chromium: the deb's, not the snap's)
    /// holds a profile.
    pub fn profile_in_use(&self, browser: Browser) -> bool {
        self.browser_data_dir(browser)
            .is_some_and(|dir| holds_a_profile(&dir))
    }

    /// Whether the Chromium snap's profile holds a profile (not only a manifest directory).
    pub fn snap_appears_installed(&self) -> bool {
        self.snap_chromium_dir()
            .is_some_and(|dir| holds_a_profile(&dir))
    }
}

/// A browser data directory that holds something besides a manifest directory.
fn holds_a_profile(dir: &Path) -> bool {
    match fs::read_dir(dir) {
        Ok(entries) => entries.flatten().any(|e| {
            e.file_name() != CHROMIUM_HOSTS_DIR && e.file_name() != "native-messaging-hosts"
        }),
        Err(_) => false,
    }
}

fn join_all(base: &Path, parts: &[&str]) -> PathBuf {
    parts
        .iter()
        .fold(base.to_path_buf(), |p, part| p.join(part))
}

/// `<HOST_NAME>.json`: browsers look the host up by this exact file name.
pub fn manifest_file_name() -> String {
    format!("{HOST_NAME}.json")
}

/// One place a manifest is written: a browser's per-user location, or a profile directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The browser (a profile directory counts as Chromium: same manifest format).
    pub browser: Browser,
    pub profile_dir: Option<PathBuf>,
    /// The Chromium snap's profile rather than the deb's (reports name it, and warn).
    pub snap: bool,
    pub manifest_path: PathBuf,
    /// Windows only; relative to `HKEY_CURRENT_USER`.
    pub registry_key: Option<String>,
}

impl Target {
    /// A manifest in a browser user-data-dir of the caller's choosing. Chromium on
    /// Windows only reads the registry, and Firefox has no such directory, hence
    /// the refusals.
    pub fn profile(os: Os, dir: &Path) -> Result<Target> {
        if os == Os::Windows {
            bail!("--profile-dir works on Linux and macOS only: on Windows, browsers find native-messaging hosts through the registry");
        }
        let dir = std::path::absolute(dir)
            .with_context(|| format!("cannot make {} absolute", dir.display()))?;
        Ok(Target {
            browser: Browser::Chromium,
            snap: false,
            manifest_path: dir.join(CHROMIUM_HOSTS_DIR).join(manifest_file_name()),
            profile_dir: Some(dir),
            registry_key: None,
        })
    }

    /// How reports name this target.
    pub fn label(&self) -> String {
        match &self.profile_dir {
            Some(dir) => format!("profile {}", dir.display()),
            None if self.snap => format!("{} (snap)", self.browser.name()),
            None => self.browser.name().to_owned(),
        }
    }

    /// The `install` command that (re)creates this target, for fix lines.
    pub fn install_command(&self, extension_ids: &[String]) -> String {
        let mut cmd = String::from("itinero-host install");
        match &self.profile_dir {
            Some(dir) => {
                cmd.push_str(" --profile-dir ");
                cmd.push_str(&shell_quote(&dir.to_string_lossy()));
            }
            None => {
                cmd.push_str(" --browser ");
                cmd.push_str(self.browser.name());
            }
        }
        for id in extension_ids {
            cmd.push_str(" --extension-id ");
            cmd.push_str(&shell_quote(id));
        }
        cmd
    }
}

/// Quotes `s` for the user's shell if it needs it, so printed fixes can be pasted.
pub fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars().all(|c| {
            c.is_ascii_alphanumeric() || "/._-:@+=".contains(c) || (cfg!(windows) && c == '\\')
        });
    if plain {
        s.to_owned()
    } else if cfg!(windows) {
        format!("\"{s}\"")
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// Expands `All`, drops duplicates, and defaults an empty choice to the browsers
/// that appear installed (or Chrome and Chromium, the likely ones, when none does).
pub fn resolve_browsers(layout: &Layout, requested: &[Browser]) -> Vec<Browser> {
    if requested.contains(&Browser::All) {
        return Browser::EACH.to_vec();
    }
    if !requested.is_empty() {
        return Browser::EACH
            .into_iter()
            .filter(|b| requested.contains(b))
            .collect();
    }
    let installed: Vec<Browser> = Browser::EACH
        .into_iter()
        .filter(|&b| layout.appears_installed(b))
        .collect();
    if installed.is_empty() {
        vec![Browser::Chrome, Browser::Chromium]
    } else {
        installed
    }
}

/// The manifests `install` writes for this choice of browsers / profile directory.
pub fn select_targets(
    layout: &Layout,
    browsers: &[Browser],
    profile_dir: Option<&Path>,
) -> Result<Vec<Target>> {
    if let Some(dir) = profile_dir {
        if browsers.contains(&Browser::Firefox) {
            bail!("--profile-dir is for Chromium-family browsers; Firefox reads hosts from ~/.mozilla only (drop --browser firefox)");
        }
        return Ok(vec![Target::profile(layout.os, dir)?]);
    }
    Ok(resolve_browsers(layout, browsers)
        .into_iter()
        .flat_map(|b| layout.targets(b))
        .collect())
}

/// Extension ids split by the browser family that understands them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtensionIds {
    /// 32-letter Chromium ids, put into `allowed_origins`.
    pub chromium: Vec<String>,
    /// Firefox add-on ids, put into `allowed_extensions`.
    pub firefox: Vec<String>,
}

impl ExtensionIds {
    /// Sorts `--extension-id` values by family (Firefox ids contain `@` or `{`),
    /// refusing malformed ones before anything is written; a family with no id
    /// given gets the default id of itinero's own build.
    pub fn parse(given: &[String]) -> Result<ExtensionIds> {
        let mut chromium = Vec::new();
        let mut firefox = Vec::new();
        for id in given.iter().map(|id| id.trim()) {
            let (list, valid) = if id.contains('@') || id.contains('{') {
                (&mut firefox, is_firefox_id(id))
            } else {
                (&mut chromium, is_chromium_id(id))
            };
            if !valid {
                bail!(
                    "`{id}` is not a valid extension id: a Chromium-family id is 32 letters a-p \
                     (see chrome://extensions with Developer mode on); a Firefox add-on id looks \
                     like name@domain or {{xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}}"
                );
            }
            if !list.iter().any(|known| known == id) {
                list.push(id.to_owned());
            }
        }
        // None named: the ids the build was made for (a release's store listings), else the
        // development extension and the Firefox add-on, which is what this repository builds.
        let built = crate::origin::BUILD_IDS.map(|_| crate::origin::built_in_ids());
        if chromium.is_empty() {
            chromium = match &built {
                Some(ids) => ids.iter().filter(|i| is_chromium_id(i)).cloned().collect(),
                None => vec![DEV_EXTENSION_ID.to_owned()],
            };
        }
        if firefox.is_empty() {
            firefox = match &built {
                Some(ids) => ids.iter().filter(|i| is_firefox_id(i)).cloned().collect(),
                None => vec![FIREFOX_EXTENSION_ID.to_owned()],
            };
        }
        Ok(ExtensionIds { chromium, firefox })
    }

    /// The ids a manifest for `browser` lists.
    pub fn for_browser(&self, browser: Browser) -> &[String] {
        if browser.is_firefox() {
            &self.firefox
        } else {
            &self.chromium
        }
    }
}

/// Chromium ids are 32 letters from `a` to `p` (a hex hash with digits shifted to letters).
pub fn is_chromium_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| (b'a'..=b'p').contains(&b))
}

/// The two forms Firefox accepts: `name@domain` or a braced GUID.
pub fn is_firefox_id(id: &str) -> bool {
    let email_char = |c: char| c.is_ascii_alphanumeric() || "-._".contains(c);
    if let Some(guid) = id.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
        let groups: Vec<&str> = guid.split('-').collect();
        let lens = [8, 4, 4, 4, 12];
        return groups.len() == lens.len()
            && groups
                .iter()
                .zip(lens)
                .all(|(g, n)| g.len() == n && g.chars().all(|c| c.is_ascii_hexdigit()));
    }
    match id.split_once('@') {
        Some((name, domain)) => {
            !domain.is_empty() && name.chars().all(email_char) && domain.chars().all(email_char)
        }
        None => false,
    }
}

/// `chrome-extension://<id>/`, the form `allowed_origins` and the host's argv use.
pub fn chromium_origin(id: &str) -> String {
    format!("chrome-extension://{id}/")
}

/// The native-messaging host manifest for `browser`.
pub fn host_manifest_json(browser: Browser, host_path: &Path, ids: &ExtensionIds) -> Result<Value> {
    let path = host_path.to_str().with_context(|| {
        format!(
            "the host path {} is not valid UTF-8, which a JSON manifest cannot hold; move the binary",
            host_path.display()
        )
    })?;
    let mut manifest = json!({
        "name": HOST_NAME,
        "description": MANIFEST_DESCRIPTION,
        "path": path,
        "type": "stdio",
    });
    let (key, list): (&str, Vec<String>) = if browser.is_firefox() {
        ("allowed_extensions", ids.firefox.clone())
    } else {
        (
            "allowed_origins",
            ids.chromium.iter().map(|id| chromium_origin(id)).collect(),
        )
    };
    manifest[key] = json!(list);
    Ok(manifest)
}

/// Whether a person could run `path` (on Windows: it has a runnable extension).
pub fn is_executable(path: &Path) -> bool {
    let Ok(meta) = fs::metadata(path) else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
            ["exe", "bat", "cmd", "com"]
                .iter()
                .any(|x| e.eq_ignore_ascii_case(x))
        })
    }
}

/// The absolute path browsers should start. Unix resolves symlinks so the manifest
/// survives a `cargo` rebuild swapping links; Windows avoids canonicalize's `\\?\`
/// prefix, which browsers do not accept.
pub fn resolve_host_path(path: &Path) -> Result<PathBuf> {
    let meta =
        fs::metadata(path).with_context(|| format!("host binary {} not found", path.display()))?;
    if !meta.is_file() {
        bail!("host binary {} is not a file", path.display());
    }
    let abs = if cfg!(windows) {
        std::path::absolute(path)
    } else {
        path.canonicalize()
    }
    .with_context(|| format!("cannot resolve the host binary path {}", path.display()))?;
    if !is_executable(&abs) {
        bail!(
            "host binary {} is not executable; run `chmod +x {}` first",
            abs.display(),
            shell_quote(&abs.to_string_lossy())
        );
    }
    Ok(abs)
}

/// Replaces `path` in one step, so a browser never reads a half-written manifest.
fn write_atomically(path: &Path, contents: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .with_context(|| format!("{} has no parent directory", path.display()))?;
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
    tmp_name.push(format!(".tmp-{}", std::process::id()));
    let tmp = dir.join(tmp_name);
    fs::write(&tmp, contents).with_context(|| format!("cannot write {}", tmp.display()))?;
    fs::rename(&tmp, path).with_context(|| {
        let _ = fs::remove_file(&tmp);
        format!("cannot replace {}", path.display())
    })
}

/// Adds `ids` to the allowed-extensions file, keeping what is there (other
/// installs' ids, comments) and never listing an id twice. Returns the ids added.
pub fn merge_allowed_ids(file: &Path, ids: &[String]) -> Result<Vec<String>> {
    let existing = match fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", file.display())),
    };
    let mut listed: Vec<&str> = existing
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let mut added = Vec::new();
    for id in ids {
        if !listed.contains(&id.as_str()) {
            listed.push(id);
            added.push(id.clone());
        }
    }
    if added.is_empty() {
        return Ok(added);
    }
    let mut text = existing.clone();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    for id in &added {
        text.push_str(id);
        text.push('\n');
    }
    write_atomically(file, text.as_bytes())?;
    Ok(added)
}

/// What `install` wrote, as `--json` prints it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct InstallReport {
    pub manifests: Vec<WrittenManifest>,
    pub allowed_extensions: AllowedExtensions,
    /// Things that were written but may not work as they are (the Chromium snap).
    pub warnings: Vec<String>,
}

/// One manifest written, and the registry key naming it on Windows.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct WrittenManifest {
    /// The `--browser` name; `chromium` for a profile directory.
    pub browser: &'static str,
    pub snap: bool,
    pub profile_dir: Option<PathBuf>,
    pub path: PathBuf,
    pub registry_key: Option<String>,
}

/// The host's own list of extension ids it answers.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct AllowedExtensions {
    pub file: PathBuf,
    /// Ids this install added to the file.
    pub added: Vec<String>,
    /// Ids this install needed, added or already there.
    pub allowed: Vec<String>,
}

/// Writes the manifests (and registry keys) for `targets` and records the ids the
/// host must accept, reporting one line per thing written to `out`.
pub fn install_into(
    layout: &Layout,
    targets: &[Target],
    ids: &ExtensionIds,
    host_path: &Path,
    out: &mut dyn Write,
) -> Result<InstallReport> {
    let mut manifests = Vec::new();
    let mut warnings = Vec::new();
    for target in targets {
        let manifest = host_manifest_json(target.browser, host_path, ids)?;
        let mut text = serde_json::to_string_pretty(&manifest)?;
        text.push('\n');
        write_atomically(&target.manifest_path, text.as_bytes())?;
        tracing::debug!(target = %target.label(), path = %target.manifest_path.display(), "wrote host manifest");
        writeln!(
            out,
            "wrote {} ({})",
            target.manifest_path.display(),
            target.label()
        )?;
        if let Some(key) = &target.registry_key {
            set_registry_default(key, &target.manifest_path)?;
            writeln!(
                out,
                "set registry HKCU\\{key} = {}",
                target.manifest_path.display()
            )?;
        }
        if target.snap {
            let warning = format!(
                "{}: {}; {}",
                target.label(),
                SNAP_CONFINEMENT_NOTE,
                SNAP_CONFINEMENT_FIX
            );
            writeln!(out, "warning: {warning}")?;
            warnings.push(warning);
        }
        manifests.push(WrittenManifest {
            browser: target.browser.name(),
            snap: target.snap,
            profile_dir: target.profile_dir.clone(),
            path: target.manifest_path.clone(),
            registry_key: target.registry_key.clone(),
        });
    }
    let mut allowed: Vec<String> = Vec::new();
    for target in targets {
        for id in ids.for_browser(target.browser) {
            if !allowed.contains(id) {
                allowed.push(id.clone());
            }
        }
    }
    let file = &layout.allowed_extensions_file;
    let added = merge_allowed_ids(file, &allowed)?;
    if added.is_empty() {
        writeln!(
            out,
            "kept  {} (already allows {})",
            file.display(),
            allowed.join(", ")
        )?;
    } else {
        writeln!(out, "wrote {} (added {})", file.display(), added.join(", "))?;
    }
    Ok(InstallReport {
        manifests,
        allowed_extensions: AllowedExtensions {
            file: file.clone(),
            added,
            allowed,
        },
        warnings,
    })
}

/// `uninstall --browser` with nothing given means: wherever `install` would have
/// written, plus wherever a manifest is found (the browser may be gone since).
pub fn uninstall_targets(
    layout: &Layout,
    browsers: &[Browser],
    profile_dir: Option<&Path>,
) -> Result<Vec<Target>> {
    if profile_dir.is_some() || !browsers.is_empty() {
        return select_targets(layout, browsers, profile_dir);
    }
    let mut chosen = resolve_browsers(layout, &[]);
    for browser in Browser::EACH {
        let present = layout
            .target(browser)
            .is_some_and(|t| t.manifest_path.exists());
        if present && !chosen.contains(&browser) {
            chosen.push(browser);
        }
    }
    let mut targets: Vec<Target> = Browser::EACH
        .into_iter()
        .filter(|b| chosen.contains(b))
        .flat_map(|b| layout.targets(b))
        .collect();
    // A snap manifest left behind after the snap's own directory went is still taken away.
    if let Some(snap) = layout.snap_target() {
        if snap.manifest_path.exists() && !targets.contains(&snap) {
            targets.push(snap);
        }
    }
    Ok(targets)
}

/// Removes the manifests (and registry keys) of `targets`; absent ones are
/// reported, not errors. Carries on past a failure so one stuck file does not
/// leave the others registered.
pub fn uninstall_from(targets: &[Target], out: &mut dyn Write) -> Result<()> {
    let mut failures = Vec::new();
    for target in targets {
        let path = &target.manifest_path;
        match fs::remove_file(path) {
            Ok(()) => writeln!(out, "removed {} ({})", path.display(), target.label())?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                writeln!(out, "not present {} ({})", path.display(), target.label())?
            }
            Err(e) => failures.push(format!("cannot remove {}: {e}", path.display())),
        }
        if let Some(key) = &target.registry_key {
            match delete_registry_key(key) {
                Ok(true) => writeln!(out, "removed registry HKCU\\{key}")?,
                Ok(false) => writeln!(out, "not present registry HKCU\\{key}")?,
                Err(e) => failures.push(format!("{e:#}")),
            }
        }
    }
    if !failures.is_empty() {
        bail!("{}", failures.join("; "));
    }
    Ok(())
}

/// `itinero-host install`.
pub fn run_install(args: &InstallArgs) -> Result<()> {
    let ids = ExtensionIds::parse(&args.extension_id)?;
    let layout = Layout::detect()?;
    let host = match &args.host_path {
        Some(path) => path.clone(),
        None => std::env::current_exe()
            .context("cannot find the path of this executable; pass --host-path")?,
    };
    let host = resolve_host_path(&host)?;
    let targets = select_targets(&layout, &args.browser, args.profile_dir.as_deref())?;
    if !args.json {
        install_into(&layout, &targets, &ids, &host, &mut io::stdout().lock())?;
        return Ok(());
    }
    let report = install_into(&layout, &targets, &ids, &host, &mut io::sink())?;
    let mut json = serde_json::to_value(&report)?;
    json["ok"] = Value::Bool(true);
    writeln!(
        io::stdout().lock(),
        "{}",
        serde_json::to_string_pretty(&json)?
    )?;
    Ok(())
}

/// `itinero-host uninstall`.
pub fn run_uninstall(args: &UninstallArgs) -> Result<()> {
    let layout = Layout::detect()?;
    let targets = uninstall_targets(&layout, &args.browser, args.profile_dir.as_deref())?;
    uninstall_from(&targets, &mut io::stdout().lock())
}

/// Points `HKCU\<key>`'s default value at the manifest, which is how Windows
/// browsers find hosts.
#[cfg(windows)]
fn set_registry_default(key: &str, manifest: &Path) -> Result<()> {
    use winreg::enums::HKEY_CURRENT_USER;
    use winreg::RegKey;

    let value: String = manifest
        .to_str()
        .with_context(|| format!("manifest path {} is not valid Unicode", manifest.display()))?
        .to_owned();
    let (subkey, _) = RegKey::predef(HKEY_CURRENT_USER)
        .create_subkey(key)
        .with_context(|| format!("cannot create registry key HKCU\\{key}"))?;
    subkey
        .set_value("", &value)
        .with_context(|| format!("cannot set the default value of HKCU\\{key}"))
}

#[cfg(not(windows))]
fn set_registry_default(key: &str, _manifest: &Path) -> Result<()> {
    bail!("registry key HKCU\\{key} can only be set on Windows")
}

/// Deletes `HKCU\<key>`; `Ok(false)` when it was not there.
#[cfg(windows)]
fn delete_registry_key(key: &str) -> Result<bool> {
    use winreg::enums::HKEY_CURRENT_USER;
    use winreg::RegKey;

    match RegKey::predef(HKEY_CURRENT_USER).delete_subkey_all(key) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e).with_context(|| format!("cannot delete registry key HKCU\\{key}")),
    }
}

#[cfg(not(windows))]
fn delete_registry_key(key: &str) -> Result<bool> {
    bail!("registry key HKCU\\{key} can only be deleted on Windows")
}

/// The default value of `HKCU\<key>` (the manifest path a browser would use);
/// `Ok(None)` when the key or value is missing.
#[cfg(windows)]
pub fn registry_default(key: &str) -> Result<Option<String>> {
    use winreg::enums::HKEY_CURRENT_USER;
    use winreg::RegKey;

    let subkey = match RegKey::predef(HKEY_CURRENT_USER).open_subkey(key) {
        Ok(k) => k,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot open registry key HKCU\\{key}")),
    };
    match subkey.get_value::<String, _>("") {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read registry key HKCU\\{key}")),
    }
}

#[cfg(not(windows))]
pub fn registry_default(key: &str) -> Result<Option<String>> {
    bail!("registry key HKCU\\{key} can only be read on Windows")
}

#[cfg(test)]
mod tests {
    use super::*;

    const OTHER_ID: &str = "ponmlkjihgfedcbaponmlkjihgfedcba";

    fn fake_host(dir: &Path) -> PathBuf {
        let host = dir
            .join("bin")
            .join(format!("itinero-host{}", std::env::consts::EXE_SUFFIX));
        fs::create_dir_all(host.parent().unwrap()).unwrap();
        fs::write(&host, b"#!/bin/sh\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&host, fs::Permissions::from_mode(0o755)).unwrap();
        }
        host.canonicalize().unwrap()
    }

    fn layout(os: Os, root: &Path) -> Layout {
        Layout::with_home(os, root.join("home"), root.join("data"))
    }

    fn ids(given: &[&str]) -> ExtensionIds {
        let given: Vec<String> = given.iter().map(|s| s.to_string()).collect();
        ExtensionIds::parse(&given).unwrap()
    }

    #[test]
    fn chromium_manifest_lists_origins() {
        let m =
            host_manifest_json(Browser::Chrome, Path::new("/opt/itinero-host"), &ids(&[])).unwrap();
        assert_eq!(
            m,
            json!({
                "name": "dev.itinero.host",
                "description": "itinero native host",
                "path": "/opt/itinero-host",
                "type": "stdio",
                "allowed_origins": [format!("chrome-extension://{DEV_EXTENSION_ID}/")],
            })
        );
    }

    #[test]
    fn firefox_manifest_lists_addon_ids_not_chromium_ids() {
        let m = host_manifest_json(
            Browser::Firefox,
            Path::new("/opt/itinero-host"),
            &ids(&[OTHER_ID]),
        )
        .unwrap();
        assert_eq!(
            m,
            json!({
                "name": "dev.itinero.host",
                "description": "itinero native host",
                "path": "/opt/itinero-host",
                "type": "stdio",
                "allowed_extensions": ["itinero@itinero.dev"],
            })
        );
        let m = host_manifest_json(
            Browser::Firefox,
            Path::new("/h"),
            &ids(&[OTHER_ID, "me@example.org"]),
        )
        .unwrap();
        assert_eq!(m["allowed_extensions"], json!(["me@example.org"]));
        assert!(m.get("allowed_origins").is_none());
    }

    #[test]
    fn extension_ids_are_sorted_by_family_and_deduplicated() {
        let got = ids(&[OTHER_ID, OTHER_ID, "{12345678-9abc-def0-1234-56789abcdef0}"]);
        assert_eq!(got.chromium, vec![OTHER_ID.to_owned()]);
        assert_eq!(
            got.firefox,
            vec!["{12345678-9abc-def0-1234-56789abcdef0}".to_owned()]
        );
        let defaults = ids(&[]);
        assert_eq!(defaults.chromium, vec![DEV_EXTENSION_ID.to_owned()]);
        assert_eq!(defaults.firefox, vec![FIREFOX_EXTENSION_ID.to_owned()]);
    }

    #[test]
    fn malformed_extension_ids_are_refused() {
        for bad in [
            "abc",
            "adflldoibhdmbdhpfcfphainaiaokjkz", // z is out of a-p
            "ADFLLDOIBHDMBDHPFCFPHAINAIAOKJKM",
            "adflldoibhdmbdhpfcfphainaiaokjkmm",
            "",
            "chrome-extension://adflldoibhdmbdhpfcfphainaiaokjkm/",
            "{not-a-guid}",
            "me@",
            "me@exa mple.org",
        ] {
            let err = ExtensionIds::parse(&[bad.to_owned()]).unwrap_err();
            assert!(
                err.to_string().contains("not a valid extension id"),
                "{bad}: {err}"
            );
        }
        assert!(is_chromium_id(DEV_EXTENSION_ID));
        assert!(is_firefox_id(FIREFOX_EXTENSION_ID));
    }

    #[test]
    fn linux_locations() {
        let l = layout(Os::Linux, Path::new("/r"));
        let dir = |b| l.manifest_dir(b).unwrap();
        assert_eq!(
            dir(Browser::Chrome),
            Path::new("/r/home/.config/google-chrome/NativeMessagingHosts")
        );
        assert_eq!(
            dir(Browser::Chromium),
            Path::new("/r/home/.config/chromium/NativeMessagingHosts")
        );
        assert_eq!(
            dir(Browser::Edge),
            Path::new("/r/home/.config/microsoft-edge/NativeMessagingHosts")
        );
        assert_eq!(
            dir(Browser::Brave),
            Path::new("/r/home/.config/BraveSoftware/Brave-Browser/NativeMessagingHosts")
        );
        assert_eq!(
            dir(Browser::Firefox),
            Path::new("/r/home/.mozilla/native-messaging-hosts")
        );
        assert_eq!(l.manifest_dir(Browser::All), None);
        let t = l.target(Browser::Chrome).unwrap();
        assert_eq!(
            t.manifest_path,
            Path::new("/r/home/.config/google-chrome/NativeMessagingHosts/dev.itinero.host.json")
        );
        assert_eq!(t.registry_key, None);
    }

    #[test]
    fn macos_locations() {
        let l = layout(Os::MacOs, Path::new("/r"));
        let dir = |b| l.manifest_dir(b).unwrap();
        let support = "/r/home/Library/Application Support";
        assert_eq!(
            dir(Browser::Chrome),
            Path::new(&format!("{support}/Google/Chrome/NativeMessagingHosts"))
        );
        assert_eq!(
            dir(Browser::Chromium),
            Path::new(&format!("{support}/Chromium/NativeMessagingHosts"))
        );
        assert_eq!(
            dir(Browser::Edge),
            Path::new(&format!("{support}/Microsoft Edge/NativeMessagingHosts"))
        );
        assert_eq!(
            dir(Browser::Brave),
            Path::new(&format!(
                "{support}/BraveSoftware/Brave-Browser/NativeMessagingHosts"
            ))
        );
        assert_eq!(
            dir(Browser::Firefox),
            Path::new(&format!("{support}/Mozilla/NativeMessagingHosts"))
        );
        assert_eq!(l.registry_key(Browser::Chrome), None);
    }

    #[test]
    fn windows_registry_keys_and_manifests_in_the_data_dir() {
        let l = layout(Os::Windows, Path::new("/r"));
        let key = |b| l.registry_key(b).unwrap();
        assert_eq!(
            key(Browser::Chrome),
            r"Software\Google\Chrome\NativeMessagingHosts\dev.itinero.host"
        );
        assert_eq!(
            key(Browser::Chromium),
            r"Software\Chromium\NativeMessagingHosts\dev.itinero.host"
        );
        assert_eq!(
            key(Browser::Edge),
            r"Software\Microsoft\Edge\NativeMessagingHosts\dev.itinero.host"
        );
        assert_eq!(
            key(Browser::Brave),
            r"Software\BraveSoftware\Brave-Browser\NativeMessagingHosts\dev.itinero.host"
        );
        assert_eq!(
            key(Browser::Firefox),
            r"Software\Mozilla\NativeMessagingHosts\dev.itinero.host"
        );
        for b in Browser::EACH {
            assert!(l.target(b).unwrap().manifest_path.starts_with("/r/data"));
        }
        assert!(Target::profile(Os::Windows, Path::new("/p")).is_err());
    }

    #[test]
    fn default_browsers_are_the_installed_ones() {
        let root = tempfile::tempdir().unwrap();
        let l = layout(Os::Linux, root.path());
        assert_eq!(
            resolve_browsers(&l, &[]),
            vec![Browser::Chrome, Browser::Chromium]
        );
        // A manifest directory alone (left by an earlier install) is not a browser.
        fs::create_dir_all(l.manifest_dir(Browser::Edge).unwrap()).unwrap();
        assert_eq!(
            resolve_browsers(&l, &[]),
            vec![Browser::Chrome, Browser::Chromium]
        );
        fs::write(
            l.browser_data_dir(Browser::Edge)
                .unwrap()
                .join("Local State"),
            "{}",
        )
        .unwrap();
        fs::create_dir_all(l.browser_data_dir(Browser::Firefox).unwrap()).unwrap();
        fs::write(
            l.browser_data_dir(Browser::Firefox)
                .unwrap()
                .join("profiles.ini"),
            "",
        )
        .unwrap();
        assert_eq!(
            resolve_browsers(&l, &[]),
            vec![Browser::Edge, Browser::Firefox]
        );
        assert_eq!(
            resolve_browsers(&l, &[Browser::Firefox, Browser::Chrome, Browser::Firefox]),
            vec![Browser::Chrome, Browser::Firefox]
        );
        assert_eq!(
            resolve_browsers(&l, &[Browser::Edge, Browser::All]),
            Browser::EACH.to_vec()
        );
    }

    #[test]
    fn install_writes_manifests_and_allowed_ids_then_uninstall_removes_them() {
        let root = tempfile::tempdir().unwrap();
        let host = fake_host(root.path());
        let l = layout(Os::Linux, root.path());
        let targets = select_targets(&l, &[Browser::Chromium, Browser::Firefox], None).unwrap();
        let mut out = Vec::new();
        install_into(&l, &targets, &ids(&[OTHER_ID]), &host, &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();

        let chromium = l.target(Browser::Chromium).unwrap().manifest_path;
        let firefox = l.target(Browser::Firefox).unwrap().manifest_path;
        assert!(
            out.contains(&format!("wrote {} (chromium)", chromium.display())),
            "{out}"
        );
        assert!(
            out.contains(&format!("wrote {} (firefox)", firefox.display())),
            "{out}"
        );
        let m: Value = serde_json::from_str(&fs::read_to_string(&chromium).unwrap()).unwrap();
        assert_eq!(m["path"], json!(host.to_str().unwrap()));
        assert_eq!(m["allowed_origins"], json!([chromium_origin(OTHER_ID)]));
        let allowed = fs::read_to_string(&l.allowed_extensions_file).unwrap();
        assert_eq!(allowed, format!("{OTHER_ID}\n{FIREFOX_EXTENSION_ID}\n"));

        let mut out = Vec::new();
        uninstall_from(&targets, &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(
            out.contains(&format!("removed {}", chromium.display())),
            "{out}"
        );
        assert!(!chromium.exists() && !firefox.exists());

        // Again: nothing there, still no error.
        let mut out = Vec::new();
        uninstall_from(&targets, &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(
            out.contains(&format!("not present {}", firefox.display())),
            "{out}"
        );
    }

    #[test]
    fn install_into_a_profile_dir() {
        let root = tempfile::tempdir().unwrap();
        let host = fake_host(root.path());
        let l = layout(Os::MacOs, root.path());
        let profile = root.path().join("profile");
        let targets = select_targets(&l, &[], Some(&profile)).unwrap();
        assert_eq!(targets.len(), 1);
        install_into(&l, &targets, &ids(&[]), &host, &mut io::sink()).unwrap();
        let path = profile
            .join("NativeMessagingHosts")
            .join("dev.itinero.host.json");
        let m: Value = serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
        assert_eq!(
            m["allowed_origins"],
            json!([chromium_origin(DEV_EXTENSION_ID)])
        );
        assert!(select_targets(&l, &[Browser::Firefox], Some(&profile)).is_err());
        assert_eq!(
            targets[0].install_command(&[]),
            format!(
                "itinero-host install --profile-dir {}",
                shell_quote(&profile.to_string_lossy())
            )
        );
    }

    #[test]
    fn uninstall_defaults_include_leftover_manifests() {
        let root = tempfile::tempdir().unwrap();
        let l = layout(Os::Linux, root.path());
        let brave = l.target(Browser::Brave).unwrap().manifest_path;
        fs::create_dir_all(brave.parent().unwrap()).unwrap();
        fs::write(&brave, "{}").unwrap();
        let chosen: Vec<Browser> = uninstall_targets(&l, &[], None)
            .unwrap()
            .into_iter()
            .map(|t| t.browser)
            .collect();
        assert_eq!(
            chosen,
            vec![Browser::Chrome, Browser::Chromium, Browser::Brave]
        );
    }

    #[test]
    fn allowed_extensions_merge_keeps_existing_lines_and_skips_duplicates() {
        let root = tempfile::tempdir().unwrap();
        let file = root.path().join("data").join("allowed-extensions");
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(&file, format!("# mine\n{OTHER_ID}")).unwrap();
        let added =
            merge_allowed_ids(&file, &[OTHER_ID.to_owned(), DEV_EXTENSION_ID.to_owned()]).unwrap();
        assert_eq!(added, vec![DEV_EXTENSION_ID.to_owned()]);
        assert_eq!(
            fs::read_to_string(&file).unwrap(),
            format!("# mine\n{OTHER_ID}\n{DEV_EXTENSION_ID}\n")
        );
        let added = merge_allowed_ids(&file, &[DEV_EXTENSION_ID.to_owned()]).unwrap();
        assert!(added.is_empty());
        assert_eq!(
            fs::read_to_string(&file).unwrap(),
            format!("# mine\n{OTHER_ID}\n{DEV_EXTENSION_ID}\n")
        );
    }

    #[test]
    fn host_path_must_exist_and_be_executable() {
        let root = tempfile::tempdir().unwrap();
        assert!(resolve_host_path(&root.path().join("missing")).is_err());
        let host = fake_host(root.path());
        assert_eq!(resolve_host_path(&host).unwrap(), host);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&host, fs::Permissions::from_mode(0o644)).unwrap();
            let err = resolve_host_path(&host).unwrap_err().to_string();
            assert!(err.contains("chmod +x"), "{err}");
        }
    }

    /// A home where the Chromium snap has run: its profile under ~/snap/chromium/common.
    fn with_snap_profile(l: &Layout) -> PathBuf {
        let profile = l.snap_chromium_dir().unwrap();
        fs::create_dir_all(profile.join("Default")).unwrap();
        profile
    }

    #[test]
    fn chromium_snap_location() {
        let l = layout(Os::Linux, Path::new("/r"));
        let snap = l.snap_target().unwrap();
        assert_eq!(
            snap.manifest_path,
            Path::new(
                "/r/home/snap/chromium/common/chromium/NativeMessagingHosts/dev.itinero.host.json"
            )
        );
        assert_eq!(snap.label(), "chromium (snap)");
        assert_eq!(
            snap.install_command(&[]),
            "itinero-host install --browser chromium"
        );
        // No ~/snap/chromium under /r: only the deb's place.
        assert_eq!(
            l.targets(Browser::Chromium),
            vec![l.target(Browser::Chromium).unwrap()]
        );
        for os in [Os::MacOs, Os::Windows] {
            assert_eq!(layout(os, Path::new("/r")).snap_target(), None);
        }
    }

    #[test]
    fn install_writes_into_the_chromium_snap_profile_when_the_snap_has_run() {
        let root = tempfile::tempdir().unwrap();
        let host = fake_host(root.path());
        let l = layout(Os::Linux, root.path());
        with_snap_profile(&l);
        // The snap's profile alone makes Chromium look installed.
        assert!(l.appears_installed(Browser::Chromium));
        assert!(!l.profile_in_use(Browser::Chromium));
        assert_eq!(resolve_browsers(&l, &[]), vec![Browser::Chromium]);

        let targets = select_targets(&l, &[], None).unwrap();
        let snap = l.snap_target().unwrap();
        assert_eq!(
            targets,
            vec![l.target(Browser::Chromium).unwrap(), snap.clone()]
        );
        let mut out = Vec::new();
        let report = install_into(&l, &targets, &ids(&[]), &host, &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(
            out.contains(&format!(
                "wrote {} (chromium (snap))",
                snap.manifest_path.display()
            )),
            "{out}"
        );
        assert!(
            out.contains("warning: chromium (snap): the Chromium snap is confined"),
            "{out}"
        );
        let m: Value =
            serde_json::from_str(&fs::read_to_string(&snap.manifest_path).unwrap()).unwrap();
        assert_eq!(m["path"], json!(host.to_str().unwrap()));

        // What --json prints.
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["manifests"].as_array().unwrap().len(), 2);
        assert_eq!(json["manifests"][1]["browser"], json!("chromium"));
        assert_eq!(json["manifests"][1]["snap"], json!(true));
        assert_eq!(
            json["manifests"][1]["path"],
            json!(snap.manifest_path.to_str().unwrap())
        );
        assert_eq!(json["manifests"][0]["snap"], json!(false));
        assert_eq!(
            json["allowed_extensions"]["added"],
            json!([DEV_EXTENSION_ID])
        );
        assert_eq!(json["warnings"].as_array().unwrap().len(), 1);

        // uninstall takes both away, the snap's even once ~/snap/chromium is gone.
        fs::remove_dir_all(l.snap_chromium_dir().unwrap().join("Default")).unwrap();
        fs::remove_file(l.target(Browser::Chromium).unwrap().manifest_path).unwrap();
        let gone: Vec<String> = uninstall_targets(&l, &[], None)
            .unwrap()
            .iter()
            .map(Target::label)
            .collect();
        assert!(gone.contains(&"chromium (snap)".to_owned()), "{gone:?}");
        uninstall_from(&uninstall_targets(&l, &[], None).unwrap(), &mut io::sink()).unwrap();
        assert!(!snap.manifest_path.exists());
    }

    #[test]
    fn install_report_without_a_snap_has_no_warning() {
        let root = tempfile::tempdir().unwrap();
        let host = fake_host(root.path());
        let l = layout(Os::Linux, root.path());
        let targets = select_targets(&l, &[Browser::Brave], None).unwrap();
        let report = install_into(&l, &targets, &ids(&[]), &host, &mut io::sink()).unwrap();
        assert!(report.warnings.is_empty());
        assert_eq!(report.manifests[0].browser, "brave");
        assert_eq!(report.allowed_extensions.file, l.allowed_extensions_file);
        // Again: nothing new to allow.
        let report = install_into(&l, &targets, &ids(&[]), &host, &mut io::sink()).unwrap();
        assert!(report.allowed_extensions.added.is_empty());
        assert_eq!(
            report.allowed_extensions.allowed,
            vec![DEV_EXTENSION_ID.to_owned()]
        );
    }

    #[test]
    fn fix_commands_quote_what_needs_quoting() {
        assert_eq!(shell_quote("/tmp/p"), "/tmp/p");
        if !cfg!(windows) {
            assert_eq!(shell_quote("/tmp/my profile"), "'/tmp/my profile'");
            assert_eq!(shell_quote("it's"), r"'it'\''s'");
        }
        let t = layout(Os::Linux, Path::new("/r"))
            .target(Browser::Edge)
            .unwrap();
        assert_eq!(
            t.install_command(&[OTHER_ID.to_owned()]),
            format!("itinero-host install --browser edge --extension-id {OTHER_ID}")
        );
    }
}
