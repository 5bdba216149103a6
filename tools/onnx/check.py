#!/usr/bin/env python3
"""Check the ONNX export of an attnlab model folder against attnlab's own CPU forward pass.

    python3 tools/onnx/check.py MODEL_DIR [--cli PATH] [--tol 1e-4] [--text TEXT ...]

Exports MODEL_DIR to a temporary .onnx (tools/onnx/export.py), then for each text:
  1. runs `attnlab --model MODEL_DIR trace TEXT --format json --full` and takes the token
     ids that were run (trace.tokens, after truncation to n_positions) and the reference
     logits (trace.logits, (T, V) row-major);
  2. runs the ONNX graph with onnxruntime (CPUExecutionProvider) on those ids;
  3. compares: max |Δlogit| must be ≤ --tol (default 1e-4).
Exit status 0 when every text passes, 1 otherwise (2 for usage/setup errors).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort

sys.path.insert(0, str(Path(__file__).resolve().parent))
import export  # noqa: E402  (tools/onnx/export.py)

REPO = Path(__file__).resolve().parents[2]

PARAGRAPH = (  # 100 tokens with the bundled tokenizer (assets/model)
    "어제 저녁에 친구와 함께 서울의 작은 카페에 갔다. We ordered two cups of coffee and a slice "
    "of cheesecake. 친구는 요즘 회사 일이 너무 바빠서 잠을 잘 못 잔다고 했다. I told her that she "
    "should take a short vacation. 우리는 창밖으로 비가 내리는 것을 보면서 이야기를 나누었다."
)
TEXTS = ["나는 어제 산 커피를 오늘 마셨다", "Which do you like better, coffee or tea?", PARAGRAPH]

OPT_LEVELS = {
    "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
    "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
    "disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
}


def reference(cli: Path, model_dir: Path, text: str) -> tuple[np.ndarray, np.ndarray, int]:
    """(token ids (T,), logits (T, V) f32, tokens dropped) from attnlab's CPU forward pass."""
    cmd = [str(cli), "--model", str(model_dir), "trace", text, "--format", "json", "--full"]
    p = subprocess.run(cmd, capture_output=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.decode(errors='replace').strip()}")
    tr = json.loads(p.stdout)["trace"]
    t, v = tr["dims"]["t"], tr["dims"]["vocab"]
    ids = np.asarray(tr["tokens"], dtype=np.int64)
    logits = np.asarray(tr["logits"], dtype=np.float32).reshape(t, v)
    assert ids.shape == (t,), (ids.shape, t)
    return ids, logits, int(tr["dropped"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="ONNX export vs. attnlab CPU forward: max |Δlogit|")
    ap.add_argument("model_dir", type=Path)
    ap.add_argument("--cli", type=Path, default=REPO / "target" / "debug" / "attnlab", help="attnlab binary")
    ap.add_argument("--tol", type=float, default=1e-4, help="largest allowed |Δlogit| (default 1e-4)")
    ap.add_argument("--text", action="append", help="texts to run instead of the three defaults (repeatable)")
    ap.add_argument("--layernorm", choices=["op", "decomposed"], default="op", help="passed to export.py")
    ap.add_argument("--ort-opt", choices=sorted(OPT_LEVELS), default="all", help="onnxruntime graph optimisation level")
    ap.add_argument("--keep", type=Path, help="also write the exported .onnx here")
    a = ap.parse_args(argv)

    if not a.cli.is_file():
        print(f"error: attnlab CLI not found at {a.cli} (build it: cargo build -p attnlab-cli, or pass --cli)")
        return 2
    texts = a.text or TEXTS

    with tempfile.TemporaryDirectory() as tmp:
        path = a.keep or Path(tmp) / "model.onnx"
        t0 = time.perf_counter()
        model = export.export(a.model_dir, path, a.layernorm)
        size = path.stat().st_size
        ops = sorted({n.op_type for n in model.graph.node})
        so = ort.SessionOptions()
        so.graph_optimization_level = OPT_LEVELS[a.ort_opt]
        sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        cfg = json.loads({p.key: p.value for p in model.metadata_props}["attnlab_config"])
        print(
            f"model {a.model_dir}: {cfg['ln_placement']}-LN, n_layer {cfg['n_layer']}, n_head {cfg['n_head']}, "
            f"n_embd {cfg['n_embd']}, n_positions {cfg['n_positions']}, vocab {cfg['vocab_size']}, "
            f"{cfg.get('activation_function', 'gelu_new')}, ln_f {'yes' if any(i.name == 'ln_f.weight' for i in model.graph.initializer) else 'no'}"
        )
        print(
            f"onnx: {size:,} bytes, opset {export.OPSET}, IR {model.ir_version}, layernorm={a.layernorm}, "
            f"ort {ort.__version__} opt={a.ort_opt}, export {time.perf_counter() - t0:.1f}s"
        )
        print(f"ops: {', '.join(ops)}")

        failed = 0
        for text in texts:
            label = text if len(text) <= 40 else text[:37] + "..."
            try:
                ids, ref, dropped = reference(a.cli, a.model_dir, text)
            except Exception as e:  # noqa: BLE001  report and go on
                print(f"FAIL  {label!r}: reference run failed: {e}")
                failed += 1
                continue
            (out,) = sess.run(["logits"], {"input_ids": ids[None, :]})
            if out.shape != (1,) + ref.shape:
                print(f"FAIL  {label!r}: onnx logits shape {out.shape}, reference {ref.shape}")
                failed += 1
                continue
            diff = np.abs(out[0].astype(np.float64) - ref.astype(np.float64))
            worst = float(diff.max())
            wt, wv = np.unravel_index(int(diff.argmax()), diff.shape)
            argmax_same = int((out[0].argmax(-1) == ref.argmax(-1)).sum())
            ok = bool(np.isfinite(out).all()) and worst <= a.tol
            failed += not ok
            print(
                f"{'ok  ' if ok else 'FAIL'}  T={len(ids):3d}{f' (dropped {dropped})' if dropped else ''}  "
                f"max|Δlogit| = {worst:.3e} (pos {wt}, id {wv})  mean {diff.mean():.2e}  "
                f"max|logit| {float(np.abs(ref).max()):.2f}  argmax same {argmax_same}/{len(ids)}  {label!r}"
            )
        verdict = "PASS" if not failed else f"FAIL ({failed} of {len(texts)} texts)"
        print(f"{verdict}: tolerance {a.tol:g}")
        return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
