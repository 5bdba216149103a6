#!/usr/bin/env bash
# Shows that the suite's checks bite: each mutation below breaks the code the way a real bug
# would; the current tests must fail on it, and (for the record) the tests of a base commit
# may not. Usage: tools/mutations/run.sh [BASE] [--e2e]
#   BASE   the commit whose tests are run as "old" (default 315153a, before issue 39's checks)
#   --e2e  also the page's mutations (a view that panics, the lesson's digits truncated):
#          builds the app with them (trunk, a few minutes), runs the e2e files of both sides
#          against that build, then rebuilds dist/ from the clean tree.
# It edits files under crates/ and restores them with git; it refuses to run on a tree with
# uncommitted changes there. Logs: target/mutations/.
set -euo pipefail
cd "$(dirname "$0")/../.."
BASE=315153a
E2E=0
for a in "$@"; do
  if [ "$a" = --e2e ]; then E2E=1; else BASE=$a; fi
done
if [ -n "$(git status --porcelain -- crates/)" ]; then
  echo "crates/ has uncommitted changes: commit or stash them first" >&2
  exit 2
fi
LOGS=target/mutations
mkdir -p "$LOGS"
mutate() {
  python3 - "$@" <<'PY'
import sys
p, old, new = sys.argv[1:4]
s = open(p).read()
assert s.count(old) == 1, f"{p}: the text to mutate is not there once"
open(p, 'w').write(s.replace(old, new))
PY
}
restore() { git checkout -q -- crates/; }
trap restore EXIT
run() { # name, command…
  local name=$1; shift
  if "$@" > "$LOGS/$name.log" 2>&1; then echo "$name: passed"; else echo "$name: FAILED (log: $LOGS/$name.log)"; fi
}
# side old: the base commit's copy of a test file
old_tests() { git show "$BASE:$1" > "$1"; }

for side in new old; do
  [ $side = old ] && old_tests crates/model/src/sample.rs
  mutate crates/model/src/sample.rs 'let t = self.temperature as f64;' 'let t = (self.temperature as f64).sqrt();'
  run "sampler-uses-sqrt-T-$side" cargo test -q -p attnlab-model --lib sample::
  restore
  [ $side = old ] && old_tests crates/model/tests/loader_errors.rs
  mutate crates/model/src/weights.rs '.map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32())' '.map(|_| 0.0)'
  run "loader-zeroes-bf16-$side" cargo test -q -p attnlab-model --test loader_errors
  restore
  [ $side = old ] && old_tests crates/model/tests/loader_errors.rs
  mutate crates/model/src/weights.rs '.or_else(|_| self.st.tensor(&format!("transformer.{name}")))' \
    '.or_else(|_| self.st.tensor(&format!("transformer.{}", name.replace("h.0.", "h.1."))))'
  run "loader-prefix-maps-h0-to-h1-$side" cargo test -q -p attnlab-model --test loader_errors
  restore
  [ $side = old ] && old_tests crates/cli/tests/cli.rs
  mutate crates/cli/src/main.rs '                seed,
            };' '                seed: seed.wrapping_add(1),
            };'
  run "cli-generate-seed-off-by-one-$side" cargo test -q -p attnlab-cli --test cli lens_flow_and_generate
  restore
done

# the layer fields' table and what is derived from it (no counterpart at the base commit: the
# new side only)
mutate crates/model/src/trace.rs '        Q q: Heads,' '        Q k: Heads,'
mutate crates/model/src/trace.rs '        K k: Heads,' '        K q: Heads,'
run "table-pairs-Q-with-k-new" cargo test -q -p attnlab-model --lib field::
restore
mutate crates/app/src/engine/wire.rs '        out.extend(Field::ALL.map(|f| {' '        out.extend(Field::ALL.map(|f| {
            let f = match f { Field::Q => Field::K, Field::K => Field::Q, f => f };'
run "wire-sends-k-for-q-new" cargo test -q -p attnlab-app --lib engine::wire::
restore
mutate crates/app/src/engine/wire.rs '    Field::Concat,' '    Field::AttnOut,'
run "wire-lite-carries-attn-out-not-concat-new" cargo test -q -p attnlab-app --lib engine::wire::
restore
mutate crates/gpu/src/engine/readback.rs '+ i * heads.count * t * t;' '+ (i ^ 1) * heads.count * t * t;'
(source scripts/lib.sh && ensure_runtime_dir &&
  run "readback-swaps-raw-and-scaled-scores-new" env ATTNLAB_REQUIRE_GPU=1 cargo test -q -p attnlab-gpu --test forward)
restore

if [ $E2E = 1 ]; then
  source scripts/lib.sh
  ensure_web_deps
  OLD_TREE=$(mktemp -d)/old
  git worktree add -q "$OLD_TREE" "$BASE"
  ln -s "$PWD/dist" "$OLD_TREE/dist"
  ln -s "$PWD/target" "$OLD_TREE/target"
  ln -s "$PWD/web/node_modules" "$OLD_TREE/web/node_modules"
  # a view that panics on a timer (the page keeps working) when the head map's cell (3, 3) is
  # focused; the lesson's numbers truncated instead of rounded (0.0775 shows as 0.0774)
  mutate crates/app/src/components/head_map.rs '                if let Some(canvas) = overlay.cast::<HtmlCanvasElement>() {
                    highlight(' '                if *cell == Some((3, 3)) {
                    let boom = wasm_bindgen::closure::Closure::once_into_js(|| -> () { panic!("mutation: a view panics") });
                    let _ = web_sys::window().unwrap().set_timeout_with_callback_and_timeout_and_arguments_0(boom.unchecked_ref(), 0);
                }
                if let Some(canvas) = overlay.cast::<HtmlCanvasElement>() {
                    highlight('
  mutate crates/app/src/components/lesson.rs 'fmt_num(x as f32)' 'fmt_num(((x * 1e4).floor() / 1e4) as f32)'
  cargo build -q -p attnlab-cli --locked
  trunk build --release > "$LOGS/trunk-mutated.log" 2>&1
  export ATTNLAB_ARTIFACTS=$LOGS/e2e
  for side in new old; do
    dir=$PWD; [ $side = old ] && dir=$OLD_TREE
    run "view-panics-$side" bash -c "cd '$dir' && node --test --test-concurrency=1 web/e2e/live.test.mjs"
    run "lesson-digits-truncated-$side" bash -c "cd '$dir' && node --test --test-concurrency=1 --test-name-pattern='nine sections' web/e2e/lesson.test.mjs"
  done
  git worktree remove --force "$OLD_TREE"
  restore
  trunk build --release > "$LOGS/trunk-clean.log" 2>&1
fi
echo "every *-new line must say FAILED"
