#!/usr/bin/env python3
"""attnlab's Llama forward against llama.cpp (llama-cpp-python) on the same GGUF file and
thread count: prompt processing of T seeded random tokens and one appended token, medians of
REPEATS runs after a warm-up. attnlab's figures come from its `bench_llama` example (lean:
logits only; traced: every intermediate and every head's map; one appended token: llama.cpp
evaluates it against its key/value cache; attnlab lean runs all T + 1 tokens, attnlab traced
reuses the prompt's trace — its keys and values — and computes the new row, either keeping
every head's maps or, as for a long text, q, k and v, then every head's new row of attention).
Threads: for each count N the whole process (and attnlab's run) is pinned to the first N
cores; llama.cpp gets n_threads = N, attnlab's matrix products (matrixmultiply) take
MATMUL_NUM_THREADS = N.

    cargo build --release -p attnlab-model --example bench_llama
    target/llama-venv/bin/python tools/llama_cpp/bench.py [--tokens 128] [--repeats 5] [--threads 1,2]

ATTNLAB_BENCH_LLAMA=PATH runs another build of the example (an older commit's, for a
before-and-after run).
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import time

from llama_cpp import Llama

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PATH = os.environ.get("ATTNLAB_SMOLLM2", os.path.join(ROOT, "target", "models", "SmolLM2-135M-Instruct.Q4_1.gguf"))
EXAMPLE = os.environ.get("ATTNLAB_BENCH_LLAMA", os.path.join(ROOT, "target", "release", "examples", "bench_llama"))


def llama_cpp(tokens, threads, repeats):
    llm = Llama(model_path=PATH, n_ctx=512, n_threads=threads, n_threads_batch=threads,
                n_batch=512, verbose=False)

    def prompt():
        llm.reset()
        llm.eval(tokens[:-1])

    def appended():
        llm.eval(tokens[-1:])

    runs = {"prompt": [], "appended": []}
    prompt()
    appended()  # warm-up
    for _ in range(repeats):
        s = time.perf_counter()
        prompt()
        runs["prompt"].append((time.perf_counter() - s) * 1e3)
        s = time.perf_counter()
        appended()
        runs["appended"].append((time.perf_counter() - s) * 1e3)
    return {k: statistics.median(v) for k, v in runs.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", default="1,2")
    a = ap.parse_args()
    rng = random.Random(20261205)
    tokens = [rng.randrange(1000, 20000) for _ in range(a.tokens + 1)]
    print(f"{os.path.basename(PATH)}, T = {a.tokens}, medians of {a.repeats} (ms)")
    print("| threads | llama.cpp prompt | attnlab prompt, lean | attnlab prompt, traced | "
          "llama.cpp +1 token | attnlab +1 token, lean / traced (maps) / traced (q, k, v) | "
          "speed, prompt lean / traced; +1 traced, maps / q, k, v (≥ 0.5×) |")
    print("|---|---|---|---|---|---|---|")
    for threads in [int(x) for x in a.threads.split(",")]:
        os.sched_setaffinity(0, set(range(threads)))
        ours = json.loads(subprocess.run(
            [EXAMPLE, PATH, str(a.tokens), str(a.repeats)], check=True, capture_output=True,
            text=True, env={**os.environ, "MATMUL_NUM_THREADS": str(threads)}).stdout)
        theirs = llama_cpp(tokens, threads, a.repeats)
        print(f"| {threads} | {theirs['prompt']:.1f} | {ours['prompt_lean_ms']:.1f} | "
              f"{ours['prompt_traced_ms']:.1f} | {theirs['appended']:.1f} | "
              f"{ours['appended_ms']:.1f} / {ours['appended_traced_ms']:.1f} / "
              f"{ours['appended_streams_ms']:.1f} | "
              f"{theirs['prompt'] / ours['prompt_lean_ms']:.2f}× / "
              f"{theirs['prompt'] / ours['prompt_traced_ms']:.2f}×; "
              f"{theirs['appended'] / ours['appended_traced_ms']:.2f}× / "
              f"{theirs['appended'] / ours['appended_streams_ms']:.2f}× |")


if __name__ == "__main__":
    main()
