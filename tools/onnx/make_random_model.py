#!/usr/bin/env python3
"""Write a small attnlab model folder with random weights, for testing export.py / check.py.

    python3 tools/onnx/make_random_model.py OUT_DIR --ln pre --ln-f [--dtype f16] [--act gelu_new]
        [--tokenizer assets/model/tokenizer.json] [--n-embd 64 --n-head 4 --n-layer 3 --n-positions 128]
        [--n-inner N] [--prefix] [--seed 0]

OUT_DIR gets config.json, model.safetensors (GPT-2 names and Conv1D (in, out) layout, as
crates/model/src/weights.rs `tensor_specs`) and a copy of the tokenizer; vocab_size is the
tokenizer's id count (vocabulary plus added tokens) unless --vocab-size is given.
Only numpy is needed; the safetensors file is written here (F32, F16 or BF16).
"""

from __future__ import annotations

import argparse
import json
import shutil
import struct
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from export import tensor_specs  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def tokenizer_ids(path: Path) -> int:
    t = json.loads(path.read_text(encoding="utf-8"))
    ids = list(t["model"]["vocab"].values()) + [a["id"] for a in t.get("added_tokens") or []]
    return max(ids) + 1


def write_safetensors(path: Path, tensors: dict[str, np.ndarray], dtype: str) -> None:
    header, blobs, off = {}, [], 0
    for name, a in tensors.items():
        a = np.ascontiguousarray(a, dtype=np.float32)
        if dtype == "f32":
            b = a.astype("<f4").tobytes()
        elif dtype == "f16":
            b = a.astype("<f2").tobytes()
        else:  # bf16, round to nearest even
            u = a.view(np.uint32).astype(np.uint64)
            b = (((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype("<u2")).tobytes()
        header[name] = {"dtype": dtype.upper(), "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    path.write_bytes(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="random attnlab model folder")
    ap.add_argument("out", type=Path)
    ap.add_argument("--ln", choices=["pre", "post"], required=True)
    ap.add_argument("--ln-f", action="store_true", help="include ln_f (required for --ln pre)")
    ap.add_argument("--dtype", choices=["f32", "f16", "bf16"], default="f32")
    ap.add_argument("--act", choices=["gelu_new", "gelu"], default="gelu_new")
    ap.add_argument("--tokenizer", type=Path, default=REPO / "assets" / "model" / "tokenizer.json")
    ap.add_argument("--vocab-size", type=int)
    ap.add_argument("--n-embd", type=int, default=64)
    ap.add_argument("--n-head", type=int, default=4)
    ap.add_argument("--n-layer", type=int, default=3)
    ap.add_argument("--n-positions", type=int, default=128)
    ap.add_argument("--n-inner", type=int, help="FFN width (default: null in config.json = 4·n_embd)")
    ap.add_argument("--eps", type=float, default=1e-5)
    ap.add_argument("--prefix", action="store_true", help="name tensors transformer.* (HF GPT2LMHeadModel style)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scale-embedding", action="store_true",
                    help="wte · √d_model before adding wpe (config scale_embedding: true)")
    a = ap.parse_args(argv)
    if a.ln == "pre" and not a.ln_f:
        ap.error("a pre-LN model needs --ln-f")

    vocab = a.vocab_size or tokenizer_ids(a.tokenizer)
    config = {
        "n_embd": a.n_embd,
        "n_head": a.n_head,
        "n_layer": a.n_layer,
        "n_positions": a.n_positions,
        "vocab_size": vocab,
        "layer_norm_epsilon": a.eps,
        "n_inner": a.n_inner,
        "activation_function": a.act,
        "ln_placement": a.ln,
    }
    if a.scale_embedding:
        config["scale_embedding"] = True
    c = dict(config, n_inner=a.n_inner or 4 * a.n_embd)
    rng = np.random.default_rng(a.seed)
    d = a.n_embd
    tensors = {}
    for name, shape in tensor_specs(c, a.ln_f):
        leaf = name.rsplit(".", 1)[-1]
        if name.startswith(("wte", "wpe")):
            x = rng.normal(0.0, 0.3, shape)
        elif ".ln_" in name or name.startswith("ln_"):
            x = rng.normal(1.0, 0.2, shape) if leaf == "weight" else rng.normal(0.0, 0.1, shape)
        elif leaf == "weight":  # Conv1D (in, out): keep activations O(1)
            x = rng.normal(0.0, 1.2 / np.sqrt(shape[0]), shape)
        else:
            x = rng.normal(0.0, 0.1, shape)
        tensors[("transformer." if a.prefix else "") + name] = x.astype(np.float32)

    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    write_safetensors(a.out / "model.safetensors", tensors, a.dtype)
    shutil.copyfile(a.tokenizer, a.out / "tokenizer.json")
    n = sum(t.size for t in tensors.values())
    print(f"wrote {a.out}: {a.ln}-LN{' + ln_f' if a.ln_f else ''}, {a.act}, {a.dtype}, vocab {vocab}, {n:,} parameters")
    return 0


if __name__ == "__main__":
    sys.exit(main())
