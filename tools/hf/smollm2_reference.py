#!/usr/bin/env python3
"""Writes crates/model/tests/data/smollm2-transformers.json: what Hugging Face transformers
computes with SmolLM2-135M-Instruct's GGUF file (its GGUF loader dequantizes the weights to
float32 and undoes the converter's q/k row permutation; eager attention). For each text whose
llama.cpp tokenization smollm2-llamacpp.json records, run as those token ids:

- `top`: at every position, the 20 likeliest next tokens with their logits;
- `attention`: every row of a few heads' attention weights (the induction head L18H6, the
  previous-token head L16H0, and L0H0), as `layer.head` → T x T.

    target/hf-venv/bin/pip install torch transformers gguf==0.19.0 numpy
    target/hf-venv/bin/python tools/hf/smollm2_reference.py [target/models/SmolLM2-135M-Instruct.Q4_1.gguf]
"""

import json
import os
import sys

import torch
import transformers
from transformers import AutoModelForCausalLM

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "crates", "model", "tests", "data")
HEADS = [(18, 6), (16, 0), (0, 0)]
TOP = 20


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        ROOT, "target", "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
    model = AutoModelForCausalLM.from_pretrained(
        os.path.dirname(path), gguf_file=os.path.basename(path), dtype=torch.float32,
        attn_implementation="eager").eval()
    llama_cpp = json.load(open(os.path.join(DATA, "smollm2-llamacpp.json")))
    texts = {}
    for text, ids in llama_cpp["tokens"].items():
        with torch.no_grad():
            out = model(torch.tensor([ids]), output_attentions=True)
        logits = out.logits[0]
        top = []
        for row in logits:
            values, order = torch.topk(row, TOP)
            top.append({"ids": order.tolist(), "logits": [round(v, 5) for v in values.tolist()]})
        attention = {
            f"{l}.{h}": [[round(w, 6) for w in row] for row in out.attentions[l][0, h].tolist()]
            for l, h in HEADS
        }
        texts[text] = {"ids": ids, "top": top, "attention": attention}
        print(f"{text!r}: {len(ids)} tokens, first choice after the last: {top[-1]['ids'][0]}")
    doc = {
        "file": os.path.basename(path),
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "texts": texts,
    }
    out = os.path.join(DATA, "smollm2-transformers.json")
    with open(out, "w") as f:
        json.dump(doc, f, ensure_ascii=False, separators=(",", ":"))
    print(f"wrote {out} ({os.path.getsize(out)} bytes)")


if __name__ == "__main__":
    main()
