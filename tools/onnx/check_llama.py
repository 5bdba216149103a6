#!/usr/bin/env python3
"""Check export_llama.py's graph of SmolLM2 against Hugging Face transformers.

    python3 tools/onnx/check_llama.py MODEL.onnx [--fixture crates/model/tests/data/smollm2-transformers.json]
                                      [--tol 1e-3]

The fixture holds, for three texts, the ids and transformers' 20 largest logits at every
position (tools/hf/smollm2_reference.py wrote it with transformers' GGUF loader, which
dequantizes the same file). onnxruntime (CPU) runs the graph on those ids; every one of those
logits must agree within --tol (absolute). Neither side is attnlab's code: this is what makes
the graph a fair stand-in for the model in the race (web/bench-peer).
Exit 0 = pass, 1 = a text failed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort

ROOT = Path(__file__).resolve().parents[2]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("onnx", type=Path)
    ap.add_argument("--fixture", type=Path, default=ROOT / "crates/model/tests/data/smollm2-transformers.json")
    ap.add_argument("--tol", type=float, default=1e-3)
    a = ap.parse_args(argv)
    fixture = json.loads(a.fixture.read_text(encoding="utf-8"))
    sess = ort.InferenceSession(str(a.onnx), providers=["CPUExecutionProvider"])
    bad = 0
    for text, ref in fixture["texts"].items():
        ids = np.asarray([ref["ids"]], dtype=np.int64)
        logits = sess.run(None, {"input_ids": ids})[0][0]  # (T, V)
        worst = 0.0
        same_top = 0
        for pos, top in enumerate(ref["top"]):
            got = logits[pos, top["ids"]]
            worst = max(worst, float(np.max(np.abs(got - np.asarray(top["logits"], dtype=np.float32)))))
            same_top += int(np.argmax(logits[pos]) == top["ids"][0])
        ok = worst <= a.tol
        bad += not ok
        print(
            f"{'ok ' if ok else 'BAD'} {text[:40]!r}: {len(ref['ids'])} tokens, max |Δlogit| vs transformers "
            f"{worst:.2e} (top 20 at every position), argmax equal at {same_top}/{len(ref['top'])}"
        )
    print(f"transformers {fixture.get('transformers')}, onnxruntime {ort.__version__}, tolerance {a.tol}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
