#!/usr/bin/env bash
# Runs every attnlab test: formatting, clippy, the whole workspace's tests, and the wasm32
# build of the model crate (the browser's CPU fallback). Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

ensure_apt mesa-vulkan-drivers libvulkan1 fonts-noto-cjk
ensure_rust

log "cargo fmt --check"
cargo fmt --all -- --check
log "cargo clippy -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings
log "cargo test"
cargo test --workspace --locked
log "wasm32 build of crates/model"
cargo build -p attnlab-model --target wasm32-unknown-unknown --locked
log "all tests passed"
