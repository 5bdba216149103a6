#!/usr/bin/env bash
# The CLI on a long text: peak memory and time of one head's maps
# (`trace --layer L --head H --format csv`) on tools/long/long-en.txt, for SmolLM2-135M
# (1,050 tokens) and a GPT-2-small-sized random model (its whole context, 1,024 tokens of the
# 4,708 its tokenizer makes), by /usr/bin/time -f %M (peak resident set, KB).
#
#   tools/long/bench-cli.sh [BINARY...]
#
# Each BINARY (default: target/release/attnlab, built first) runs both models once; pass an
# older build's binary first to compare (e.g. one built in a `git worktree` of the commit
# before). Needs SmolLM2 in target/models (the serve or test command fetches it) and writes
# the random model to target/big-model once
# (`cargo run --release -p attnlab-model --example random_model`).
set -euo pipefail
cd "$(dirname "$0")/../.."
smollm2=target/models/SmolLM2-135M-Instruct.Q4_1.gguf
[ -f "$smollm2" ] || { echo "no $smollm2: run ./scripts/test.sh or ./scripts/serve.sh once" >&2; exit 1; }
[ -f target/big-model/model.safetensors ] ||
  cargo run --release -q -p attnlab-model --example random_model -- target/big-model
if [ $# -eq 0 ]; then
  cargo build --release -q -p attnlab-cli
  set -- target/release/attnlab
fi
text="$(cat tools/long/long-en.txt)"
printf '%-28s %-22s %8s %9s %s\n' binary model "peak MB" seconds outcome
for bin in "$@"; do
  for run in "$smollm2 18 6" "target/big-model 5 3"; do
    read -r model layer head <<<"$run"
    log=$(mktemp)
    if /usr/bin/time -f '%M %e' -o "$log" "$bin" --model "$model" trace --layer "$layer" \
        --head "$head" --format csv "$text" >/dev/null 2>"$log.err"; then
      outcome="L${layer}H${head}, $(("$("$bin" --model "$model" predict --format json "$text" |
        python3 -c 'import json,sys; print(len(json.load(sys.stdin)["tokens"]))')")) tokens"
    else
      outcome="refused: $(tail -1 "$log.err" | cut -c1-90)"
    fi
    read -r kb secs < <(tail -1 "$log")
    printf '%-28s %-22s %8.0f %9s %s\n' "$bin" "$(basename "$model")" "$((kb / 1024))" "$secs" "$outcome"
    rm -f "$log" "$log.err"
  done
done
