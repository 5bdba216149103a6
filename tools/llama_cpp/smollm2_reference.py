#!/usr/bin/env python3
"""Writes crates/model/tests/data/smollm2-llamacpp.json: what llama.cpp (through
llama-cpp-python, an implementation independent of attnlab) makes of SmolLM2-135M-Instruct:
how it tokenizes texts (Korean, English, digits, spaces, emoji, chat tokens) and, for a few
prompts, its next-token logits at every position (the top 10 ids and logits of each, and the
log-sum-exp of all of them).

llama.cpp multiplies Q4_1 weights by activations it quantizes to 8 bits on the fly, so its
logits differ from an exact f32 forward by a little: the tests compare with a tolerance.

    python3 -m venv target/llama-venv
    # builds llama.cpp (≈ 7 min on 2 cores); without -march=native, whose AMX code stops
    # with "illegal instruction" on this project's machines
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF \
        -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_OPENMP=OFF" \
        target/llama-venv/bin/pip install llama-cpp-python==0.3.36 numpy
    target/llama-venv/bin/python tools/llama_cpp/smollm2_reference.py
"""

import json
import os

import numpy as np
from llama_cpp import Llama, __version__

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "crates", "model", "tests", "data", "smollm2-llamacpp.json")
PATH = os.environ.get("ATTNLAB_SMOLLM2", os.path.join(ROOT, "target", "models", "SmolLM2-135M-Instruct.Q4_1.gguf"))

TEXTS = [
    "나는 어제 산 커피를 오늘 마셨다",
    "Which do you like better, coffee or tea?",
    "The capital of France is",
    "Hello world! 123",
    "  multiple   spaces\tand\nnew lines\n\n",
    "3.14159 and 2026-12-05, 1,000,000",
    "emoji 🙂👍🏽 and ä ö ü ß",
    "<|im_start|>user\nHi<|im_end|>",
    "def f(x):\n    return x ** 2  # square",
]
PROMPTS = [
    "The capital of France is",
    "Which do you like better, coffee or tea?",
    "나는 어제 산 커피를 오늘 마셨다",
]


def main():
    llm = Llama(model_path=PATH, n_ctx=512, logits_all=True, verbose=False, n_threads=2, seed=0)
    tokens = {t: llm.tokenize(t.encode("utf-8"), add_bos=False, special=True) for t in TEXTS}
    logits = {}
    for p in PROMPTS:
        ids = llm.tokenize(p.encode("utf-8"), add_bos=False, special=True)
        llm.reset()
        llm.eval(ids)
        scores = np.array(llm.scores[: len(ids)], dtype=np.float64)
        rows = []
        for row in scores:
            top = np.argsort(-row, kind="stable")[:10]
            m = row.max()
            rows.append({
                "top": [[int(i), float(row[i])] for i in top],
                "logsumexp": float(m + np.log(np.exp(row - m).sum())),
            })
        logits[p] = {"ids": ids, "positions": rows}
    out = {
        "file": os.path.basename(PATH),
        "llama_cpp_python": __version__,
        "tokens": tokens,
        "logits": logits,
    }
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
