#!/usr/bin/env bash
# Runs every fuzz target (fuzz/fuzz_targets) for SECONDS each (default 600) with cargo-fuzz on
# nightly, starting from the seed corpora in fuzz/corpus. Crashes land in fuzz/artifacts/;
# turn each into a regression test. Not part of the test command (it runs for minutes).
#   ./scripts/fuzz.sh [SECONDS] [TARGET…]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

SECONDS_EACH="${1:-600}"
shift || true
command -v rustup >/dev/null || { log "rustup is required"; exit 1; }
rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
cargo +nightly fuzz --version >/dev/null 2>&1 || cargo install cargo-fuzz --locked
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(loader tokenizer forward url_state gguf)
for t in "${TARGETS[@]}"; do
  log "fuzzing $t for ${SECONDS_EACH}s"
  # a copy of the seeds, so the committed corpus stays small
  work="fuzz/corpus-run/$t"
  mkdir -p "$work"
  cp -n fuzz/corpus/"$t"/* "$work"/ 2>/dev/null || true
  # the GGUF target starts from the malformed-GGUF corpus of the model crate's tests
  [ "$t" = gguf ] && cp -n crates/model/tests/data/malformed-gguf/*.gguf "$work"/
  (cd fuzz && cargo +nightly fuzz run "$t" "corpus-run/$t" -- -max_total_time="$SECONDS_EACH" -print_final_stats=1)
done
log "no crashes"
