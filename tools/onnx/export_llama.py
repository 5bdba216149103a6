#!/usr/bin/env python3
"""Export a Llama-architecture GGUF file (e.g. SmolLM2-135M-Instruct) to an f32 ONNX graph.

    python3 tools/onnx/export_llama.py MODEL.gguf OUT.onnx [--max-positions 1024]

The weights are dequantized by gguf-py (llama.cpp's own Python reader, `gguf.quants`), not by
attnlab, and widened to f32: the graph is what onnxruntime runs in the race against attnlab
(web/bench-peer), on the same weights attnlab multiplies block by block.

  x      = token_embd[input_ids]
  block  x = x + Attn(RMSNorm(x)·attn_norm);   x = x + FFN(RMSNorm(x)·ffn_norm)
  logits = (RMSNorm(x)·output_norm) · outputᵀ   (output = token_embd when the file has none)

  RMSNorm(x) = x / √(mean(x²) + ε)
  Attn:  q = x·Wq, k = x·Wk, v = x·Wv (+ biases when the file has them), per head d_k wide;
         RoPE on q and k: GGUF's converter lays each rotation pair side by side (2p, 2p+1), so
         rope(x) = x·cos + (x·R)·sin with R the fixed d_k × d_k matrix that sends
         (x[2p], x[2p+1]) to (−x[2p+1], x[2p]); angle of pair p at position t: t·θ^(−2p/d_k);
         grouped-query attention: key/value head j serves query heads j·G … j·G + G − 1
         (G = n_head / n_head_kv, the k and v heads are tiled, not the weights);
         w = softmax(where(causal, q·kᵀ · (1/√d_k), f32::MIN)); out = concat(w·v)·Wo
  FFN:   (silu(x·Wgate) ⊙ x·Wup)·Wdown,  silu(u) = u·sigmoid(u)

Input  `input_ids`  int64   [1, T]   (1 ≤ T ≤ --max-positions: the causal mask and the RoPE
                                      tables are constants of that many positions)
Output `logits`     float32 [1, T, vocab_size]

Opset 17, IR version 8, only standard ai.onnx ops. Needs numpy, onnx and gguf (gguf-py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import onnx

from export import MASKED, Graph, summary, with_head

try:
    import gguf
except ImportError:  # pragma: no cover - a setup error, said plainly
    raise SystemExit("export_llama.py needs gguf-py: pip install -r tools/onnx/requirements.txt")


def field(reader: "gguf.GGUFReader", key: str, default=None):
    f = reader.fields.get(key)
    if f is None:
        if default is None:
            raise SystemExit(f"GGUF: metadata key `{key}` is missing")
        return default
    return f.contents()


def read_gguf(path: Path) -> tuple[dict, dict[str, np.ndarray]]:
    """The hyperparameters and every tensor, dequantized to f32 by gguf-py, as (rows, cols)."""
    r = gguf.GGUFReader(str(path))
    arch = field(r, "general.architecture")
    if arch != "llama":
        raise SystemExit(f"GGUF: architecture {arch!r}; this exporter writes `llama` only")
    if f"{arch}.rope.scaling.type" in r.fields:
        raise SystemExit("GGUF: RoPE scaling is not written by this exporter")
    c = {
        "n_layer": int(field(r, f"{arch}.block_count")),
        "d_model": int(field(r, f"{arch}.embedding_length")),
        "n_head": int(field(r, f"{arch}.attention.head_count")),
        "d_ff": int(field(r, f"{arch}.feed_forward_length")),
        "eps": float(field(r, f"{arch}.attention.layer_norm_rms_epsilon")),
        "theta": float(field(r, f"{arch}.rope.freq_base", 10000.0)),
    }
    c["n_head_kv"] = int(field(r, f"{arch}.attention.head_count_kv", c["n_head"]))
    c["d_k"] = c["d_model"] // c["n_head"]
    w = {}
    for t in r.tensors:
        # gguf-py gives numpy's shape (the reverse of ggml's): (rows, cols) = (out, in)
        a = gguf.quants.dequantize(t.data, t.tensor_type)
        w[t.name] = np.ascontiguousarray(a.reshape([int(n) for n in reversed(t.shape)]).astype(np.float32))
    c["vocab"] = w["token_embd.weight"].shape[0]
    c["tied"] = "output.weight" not in w
    return c, w


def rms_norm(g: Graph, x: str, weight: str, eps: float, hint: str) -> str:
    ms = g.op("ReduceMean", [g.op("Mul", [x, x])], hint + "_ms", axes=[-1], keepdims=1)
    rms = g.op("Sqrt", [g.op("Add", [ms, g.f32(eps)])], hint + "_rms")
    return g.op("Mul", [g.op("Div", [x, rms]), weight], hint)


def build_model(c: dict, w: dict[str, np.ndarray], max_pos: int) -> onnx.ModelProto:
    d, h, hkv, dk, L, V = c["d_model"], c["n_head"], c["n_head_kv"], c["d_k"], c["n_layer"], c["vocab"]
    if h % hkv:
        raise SystemExit(f"GGUF: {h} query heads do not share {hkv} key/value heads evenly")
    group = h // hkv
    eps = float(np.float32(c["eps"]))
    g = Graph()

    def weight(name: str, transpose: bool) -> str:
        a = w[name]
        return g.init(name, np.ascontiguousarray(a.T) if transpose else a)

    emb = weight("token_embd.weight", False)  # (V, d)
    x = g.op("Gather", [emb, "input_ids"], "embedding", axis=0)  # (1, T, d)

    t_vec = g.op("Slice", [g.op("Shape", ["input_ids"]), g.i64([1]), g.i64([2])], "T")
    tri = g.init("causal_mask", np.tril(np.ones((max_pos, max_pos), dtype=bool)))
    mask = g.op("Slice", [tri, g.i64([0, 0]), g.op("Concat", [t_vec, t_vec], axis=0), g.i64([0, 1])], "mask")

    # RoPE tables (positions × d_k, each pair's value twice) and the pair-turning matrix R
    pair = np.arange(dk // 2, dtype=np.float64)
    inv_freq = c["theta"] ** (-2.0 * pair / dk)
    angle = np.arange(max_pos, dtype=np.float64)[:, None] * inv_freq[None, :]  # (P, dk/2)
    cos = g.init("rope_cos", np.repeat(np.cos(angle), 2, axis=1).astype(np.float32))
    sin = g.init("rope_sin", np.repeat(np.sin(angle), 2, axis=1).astype(np.float32))
    turn = np.zeros((dk, dk), dtype=np.float32)
    for p in range(dk // 2):
        turn[2 * p + 1, 2 * p] = -1.0  # (x·R)[2p] = −x[2p+1]
        turn[2 * p, 2 * p + 1] = 1.0  # (x·R)[2p+1] = x[2p]
    turn = g.init("rope_turn", turn)
    cos_t = g.op("Slice", [cos, g.i64([0]), t_vec, g.i64([0])], "rope_cos_t")  # (T, dk)
    sin_t = g.op("Slice", [sin, g.i64([0]), t_vec, g.i64([0])], "rope_sin_t")

    def rope(v: str, hint: str) -> str:
        turned = g.op("MatMul", [v, turn])
        return g.op("Add", [g.op("Mul", [v, cos_t]), g.op("Mul", [turned, sin_t])], hint)

    def linear(v: str, name: str, hint: str) -> str:
        y = g.op("MatMul", [v, weight(name + ".weight", True)], hint)
        bias = name + ".bias"
        return g.op("Add", [y, g.init(bias, w[bias])], hint + "_b") if bias in w else y

    scale = g.f32(np.float32(1.0) / np.sqrt(np.float32(dk)))
    q_shape = g.i64([0, 0, h, dk])
    kv_shape = g.i64([0, 0, hkv, dk])
    grouped = g.i64([1, hkv, 1, -1, dk])
    tiles = g.i64([1, 1, group, 1, 1])
    all_heads = g.i64([1, h, -1, dk])
    merge = g.i64([0, 0, h * dk])

    for i in range(L):
        p = f"blk.{i}."
        a_in = rms_norm(g, x, weight(p + "attn_norm.weight", False), eps, f"l{i}_attn_norm")
        q = g.op("Transpose", [g.op("Reshape", [linear(a_in, p + "attn_q", f"l{i}_q_proj"), q_shape])], perm=[0, 2, 1, 3])
        k = g.op("Transpose", [g.op("Reshape", [linear(a_in, p + "attn_k", f"l{i}_k_proj"), kv_shape])], perm=[0, 2, 1, 3])
        v = g.op("Transpose", [g.op("Reshape", [linear(a_in, p + "attn_v", f"l{i}_v_proj"), kv_shape])], perm=[0, 2, 1, 3])
        q = rope(q, f"l{i}_q")  # (1, H, T, dk)
        k = rope(k, f"l{i}_k")  # (1, Hkv, T, dk)
        if group > 1:
            k = g.op("Reshape", [g.op("Tile", [g.op("Reshape", [k, grouped]), tiles]), all_heads], f"l{i}_k_heads")
            v = g.op("Reshape", [g.op("Tile", [g.op("Reshape", [v, grouped]), tiles]), all_heads], f"l{i}_v_heads")
        kt = g.op("Transpose", [k], f"l{i}_kT", perm=[0, 1, 3, 2])
        scaled = g.op("Mul", [g.op("MatMul", [q, kt]), scale], f"l{i}_scaled")
        weights = g.op("Softmax", [g.op("Where", [mask, scaled, g.f32(MASKED)])], f"l{i}_weights", axis=-1)
        heads = g.op("MatMul", [weights, v], f"l{i}_heads")  # (1, H, T, dk)
        concat = g.op("Reshape", [g.op("Transpose", [heads], perm=[0, 2, 1, 3]), merge], f"l{i}_concat")
        x = g.op("Add", [x, linear(concat, p + "attn_output", f"l{i}_attn_out")], f"l{i}_resid_attn")

        f_in = rms_norm(g, x, weight(p + "ffn_norm.weight", False), eps, f"l{i}_ffn_norm")
        gate = linear(f_in, p + "ffn_gate", f"l{i}_gate")
        up = linear(f_in, p + "ffn_up", f"l{i}_up")
        act = g.op("Mul", [g.op("Mul", [gate, g.op("Sigmoid", [gate])]), up], f"l{i}_swiglu")
        x = g.op("Add", [x, linear(act, p + "ffn_down", f"l{i}_ffn_out")], f"l{i}_resid_ffn")

    x = rms_norm(g, x, weight("output_norm.weight", False), eps, "output_norm")
    head = emb if c["tied"] else weight("output.weight", False)  # (V, d) either way
    return with_head(
        g,
        x,
        head,
        (d, V),
        "attnlab-llama",
        producer="attnlab tools/onnx/export_llama.py",
        doc=f"Llama, {L} blocks × {h} heads ({hkv} key/value heads), d_model {d}, RoPE θ {c['theta']}; "
        f"input_ids int64 [1, T] with T ≤ {max_pos} → logits float32 [1, T, {V}]",
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("gguf", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--max-positions", type=int, default=1024, help="positions the graph accepts (default 1024)")
    a = ap.parse_args(argv)
    if a.max_positions < 1:
        raise SystemExit("--max-positions must be at least 1")
    c, w = read_gguf(a.gguf)
    model = build_model(c, w, a.max_positions)
    onnx.checker.check_model(model)
    onnx.save_model(model, str(a.out))
    print(summary(model, a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
