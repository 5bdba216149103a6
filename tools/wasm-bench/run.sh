#!/usr/bin/env bash
# Builds tools/wasm-bench for wasm32-wasip1 with WebAssembly SIMD (as the CPU worker is built)
# and runs it under Node's WASI: node tools/wasm-bench/wasi.mjs. Usage:
#   tools/wasm-bench/run.sh [MODEL_DIR | FILE.gguf] [RUNS]      (default assets/model 30)
set -euo pipefail
cd "$(dirname "$0")/../.."
rustup target list --installed | grep -q wasm32-wasip1 || rustup target add wasm32-wasip1
RUSTFLAGS="-C target-feature=+simd128" CARGO_TARGET_DIR=target/wasm-bench \
  cargo build --quiet --release --target wasm32-wasip1 --manifest-path tools/wasm-bench/Cargo.toml
# --no-incremental-marking: Node 20's garbage collector crashed ("unreachable code", in
# ProcessEphemerons) while a SmolLM2 run grew the wasm memory past a few hundred MB
node --no-warnings --no-incremental-marking tools/wasm-bench/wasi.mjs target/wasm-bench/wasm32-wasip1/release/attnlab-wasm-bench.wasm "${1:-assets/model}" "${2:-30}"
