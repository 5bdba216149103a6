#!/usr/bin/env bash
# Exports and checks every test model: the bundled one, the committed small one, and three
# random ones written to a temporary folder. Exit status 0 when all pass.
# Usage: tools/onnx/run_all.sh [--cli PATH]   (run from anywhere; Python at nice 10)
set -u
cd "$(dirname "$0")/../.."
PY="nice -n 10 ${ATTNLAB_ONNX_PYTHON:-python3}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
$PY tools/onnx/make_random_model.py "$TMP/pre_f16" --ln pre --ln-f --dtype f16 --seed 0 || exit 2
$PY tools/onnx/make_random_model.py "$TMP/pre_erf_bf16" --ln pre --ln-f --dtype bf16 --act gelu \
    --tokenizer crates/model/tests/data/malformed/valid/tokenizer.json \
    --n-embd 48 --n-head 3 --n-layer 2 --n-positions 32 --n-inner 96 --prefix --seed 1 || exit 2
$PY tools/onnx/make_random_model.py "$TMP/post_lnf_f32" --ln post --ln-f --n-layer 4 --seed 2 || exit 2
$PY tools/onnx/make_random_model.py "$TMP/post_scaled" --ln post --scale-embedding --n-embd 48 --n-head 3 \
    --n-layer 2 --seed 3 || exit 2
fail=0
for m in assets/model crates/model/tests/data/malformed/valid "$TMP/pre_f16" "$TMP/pre_erf_bf16" "$TMP/post_lnf_f32" "$TMP/post_scaled"; do
    echo "=== $m"
    $PY tools/onnx/check.py "$m" "$@" || fail=1
done
[ $fail = 0 ] && echo "ALL PASS" || echo "SOME FAILED"
exit $fail
