#!/usr/bin/env bash
# Runs every attnlab test: formatting, the check of BENCHMARKS.md's summary, the import-cycle
# check, clippy, the whole workspace's tests (GPU tests on
# Mesa's lavapipe Vulkan driver; a missing adapter is a failure), the wasm32 builds, the GPU
# engine's parity tests on WebGPU in headless Chromium, the ONNX export's check against the
# CLI (onnxruntime), the GGUF reader on a real model (SmolLM2-135M, fetched once), the Python
# package (its wheel and pytest), and the app's end-to-end tests in
# headless Chromium with and without WebGPU. Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

ensure_apt mesa-vulkan-drivers libvulkan1 fonts-noto-cjk chromium chromium-driver
ensure_rust
ensure_wasm_bindgen
ensure_trunk
ensure_web_deps
ensure_runtime_dir
export ATTNLAB_REQUIRE_GPU=1
# a test run builds each crate once: incremental caches would only take disk
export CARGO_INCREMENTAL=0

log "cargo fmt --check"
cargo fmt --all -- --check
log "BENCHMARKS.md's summary names commands that exist"
python3 scripts/check_benchmarks.py
python3 scripts/check_benchmarks.py --self-test
log "no import cycle between any crate's source files"
python3 tools/imports/cycles.py --self-test
python3 tools/imports/cycles.py
log "cargo clippy -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings
log "cargo test"
cargo test --workspace --locked
log "clippy for wasm32 (the app as the browser runs it)"
cargo clippy -p attnlab-app -p attnlab-gpu -p attnlab-model --target wasm32-unknown-unknown --locked -- -D warnings
log "GPU engine on WebGPU in headless Chromium (wasm-bindgen-test)"
# each test may take 20 s by default; SwiftShader compiles every kernel of each device it makes
(cd crates/gpu && WASM_BINDGEN_TEST_TIMEOUT=120 CHROMEDRIVER=/usr/bin/chromedriver cargo test --target wasm32-unknown-unknown --locked --test browser)
log "the ONNX export against the CLI (onnxruntime, natively)"
cargo build --workspace --bins --locked
ensure_onnx_tools
tools/onnx/run_all.sh
log "SmolLM2-135M: the GGUF reader against gguf-py, the tokenizer against llama.cpp, the Llama forward (CPU and WGSL) against llama.cpp and transformers, every CLI command on it"
ensure_smollm2
# one workspace-wide selection, so the dependencies built for `cargo test --workspace` serve
# (a `-p` per crate resolves other features and builds every dependency again)
cargo test --workspace --locked --test smollm2 --test llama -- --ignored
log "the Python package (crates/py): its wheel, its numbers against the CLI's and transformers' (pytest)"
build_py_wheel
"$ATTNLAB_PY" -m pytest -q crates/py/tests
build_app
log "the app end to end in headless Chromium (WebGPU and CPU), against the CLI's numbers"
cargo build --workspace --bins --locked
node --test --test-concurrency=1 web/e2e/*.test.mjs
log "all tests passed"
