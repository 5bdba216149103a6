#!/usr/bin/env python3
"""Writes crates/model/tests/data/smollm2-reference.json: what gguf-py (llama.cpp's own GGUF
package) reads from SmolLM2-135M-Instruct.Q4_1.gguf, for `tests/smollm2.rs`.

It records the file's version, its tensor count by type, the metadata a Llama model needs
(integers, floats, the tokenizer's kind and sizes, a few tokens and merges), and for some
tensors of each type their row-major shape, their first and last 16 values (as gguf-py
dequantizes them) and the float64 sum of all their values.

    target/onnx-venv/bin/pip install gguf==0.19.0        # or any venv with gguf and numpy
    ATTNLAB_SMOLLM2=target/models/SmolLM2-135M-Instruct.Q4_1.gguf \\
        target/onnx-venv/bin/python tools/gguf/smollm2_reference.py
"""

import collections
import json
import os

import numpy as np
import gguf
from gguf.quants import dequantize

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "crates", "model", "tests", "data", "smollm2-reference.json")
PATH = os.environ.get("ATTNLAB_SMOLLM2", os.path.join(ROOT, "target", "models", "SmolLM2-135M-Instruct.Q4_1.gguf"))

TENSORS = [
    "token_embd.weight",
    "blk.0.attn_norm.weight",
    "blk.0.attn_q.weight",
    "blk.0.attn_k.weight",
    "blk.0.attn_v.weight",
    "blk.15.ffn_gate.weight",
    "blk.29.ffn_down.weight",
    "output_norm.weight",
]
KEYS = [
    "general.architecture",
    "llama.block_count",
    "llama.context_length",
    "llama.embedding_length",
    "llama.feed_forward_length",
    "llama.attention.head_count",
    "llama.attention.head_count_kv",
    "llama.rope.freq_base",
    "llama.attention.layer_norm_rms_epsilon",
    "tokenizer.ggml.model",
    "tokenizer.ggml.pre",
    "tokenizer.ggml.bos_token_id",
    "tokenizer.ggml.eos_token_id",
]


def main():
    r = gguf.GGUFReader(PATH)
    field = lambda k: r.fields[k].contents()
    meta = {k: field(k) for k in KEYS}
    tokens = field("tokenizer.ggml.tokens")
    merges = field("tokenizer.ggml.merges")
    meta["tokens"] = {"count": len(tokens), "sample": {str(i): tokens[i] for i in [0, 1, 2, 216, 905, 19556, len(tokens) - 1]}}
    meta["merges"] = {"count": len(merges), "first": merges[:3], "last": merges[-1]}
    types = collections.Counter(t.tensor_type.name for t in r.tensors)
    tensors = {}
    for t in r.tensors:
        if t.name not in TENSORS:
            continue
        values = dequantize(t.data, t.tensor_type).astype(np.float32)
        shape = [int(d) for d in reversed(t.shape)]
        values = values.reshape(shape)
        flat = values.reshape(-1)
        tensors[t.name] = {
            "type": t.tensor_type.name,
            "shape": shape,
            "first": [float(x) for x in flat[:16]],
            "last": [float(x) for x in flat[-16:]],
            "sum": float(flat.astype(np.float64).sum()),
        }
    out = {
        "file": os.path.basename(PATH),
        "version": int(field("GGUF.version")),
        "tensor_count": len(r.tensors),
        "types": dict(sorted(types.items())),
        "metadata": meta,
        "tensors": tensors,
    }
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
