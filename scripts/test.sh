#!/usr/bin/env bash
# Runs every attnlab test: formatting, clippy, the whole workspace's tests (GPU tests on
# Mesa's lavapipe Vulkan driver; a missing adapter is a failure), the wasm32 builds, and the
# GPU engine's parity tests on WebGPU in headless Chromium. Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

ensure_apt mesa-vulkan-drivers libvulkan1 fonts-noto-cjk chromium chromium-driver
ensure_rust
ensure_wasm_bindgen
ensure_runtime_dir
export ATTNLAB_REQUIRE_GPU=1

log "cargo fmt --check"
cargo fmt --all -- --check
log "cargo clippy -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings
log "cargo test"
cargo test --workspace --locked
log "wasm32 builds of crates/model (the CPU fallback) and crates/gpu"
cargo build -p attnlab-model -p attnlab-gpu --target wasm32-unknown-unknown --locked
log "GPU engine on WebGPU in headless Chromium (wasm-bindgen-test)"
(cd crates/gpu && CHROMEDRIVER=/usr/bin/chromedriver cargo test --target wasm32-unknown-unknown --locked --test browser)
log "all tests passed"
