#!/usr/bin/env python3
"""Export an attnlab model folder (config.json + model.safetensors) to ONNX.

    python3 tools/onnx/export.py MODEL_DIR OUT.onnx [--layernorm op|decomposed]

The graph mirrors crates/model/src/forward.rs and cpu.rs:

  x      = wte[input_ids] (· √d_model with scale_embedding) + wpe[0:T]
  block  post-LN: x = LN1(x + Attn(x));      x = LN2(x + FFN(x))
         pre-LN:  x = x + Attn(LN1(x));      x = x + FFN(LN2(x))
  (ln_f if the safetensors has it)
  logits = h · wteᵀ  (tied lm head)

  Attn:  q,k,v = split(x·W_attn + b, 3); per head
         w = softmax(where(causal, q·kᵀ · (1/√d_k), f32::MIN)); out = concat(w·v)·W_proj + b
  FFN:   GELU(x·W_fc + b)·W_proj + b
         gelu_new (tanh form) is written the way cpu.rs computes it:
         u / (1 + exp(-2·√(2/π)·(u + 0.044715·u³)))   (= 0.5·u·(1 + tanh(√(2/π)(u + 0.044715u³))))
         gelu (exact) is 0.5·u·(1 + erf(u/√2)) with the ONNX Erf op.

Input  `input_ids`  int64   [1, T]   (1 ≤ T ≤ n_positions)
Output `logits`     float32 [1, T, vocab_size]

Opset 17 (LayerNormalization), IR version 8, only standard ai.onnx ops, f32 initializers.
Needs only `numpy` and `onnx`; the safetensors file is parsed here (F32, F16 and BF16).
"""

from __future__ import annotations

import argparse
import json
import math
import struct
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8  # the IR version that goes with opset 17; newer runtimes read it too

# cpu.rs: MASKED = f32::MIN, the value a masked score takes
MASKED = float(np.finfo(np.float32).min)


# --------------------------------------------------------------------------- config


def read_config(model_dir: Path) -> dict:
    """Reads config.json with the same defaults and checks as crates/model/src/config.rs."""
    c = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    for key in ("n_embd", "n_head", "n_layer", "n_positions", "vocab_size"):
        if key not in c:
            raise SystemExit(f"config.json: missing field `{key}`")
        if not isinstance(c[key], int) or c[key] <= 0:
            raise SystemExit(f"config.json: {key} = {c[key]!r} must be a positive integer")
    c.setdefault("layer_norm_epsilon", 1e-5)
    if c.get("n_inner") is None:
        c["n_inner"] = 4 * c["n_embd"]
    act = c.get("activation_function", "gelu_new")
    if act in ("gelu_new", "gelu_pytorch_tanh", "gelu_fast"):
        c["_act"] = "tanh"
    elif act == "gelu":
        c["_act"] = "erf"
    else:
        raise SystemExit(f"config.json: activation_function {act!r} is not one attnlab accepts")
    ln = c.get("ln_placement", "pre")
    if ln not in ("pre", "post"):
        raise SystemExit(f"config.json: ln_placement {ln!r} is not `pre` or `post`")
    c["ln_placement"] = ln
    if not isinstance(c.get("scale_embedding", False), bool):
        raise SystemExit(f"config.json: scale_embedding {c['scale_embedding']!r} must be true or false")
    c["scale_embedding"] = c.get("scale_embedding", False)
    if c["n_embd"] % c["n_head"]:
        raise SystemExit(f"config.json: n_embd = {c['n_embd']} is not divisible by n_head = {c['n_head']}")
    return c


# ---------------------------------------------------------------------- safetensors


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """All tensors of a safetensors file as float32 numpy arrays (F32, F16, BF16)."""
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        buf = raw[base + start : base + end]
        shape = tuple(info["shape"])
        dt = info["dtype"]
        if dt == "F32":
            a = np.frombuffer(buf, dtype="<f4")
        elif dt == "F16":
            a = np.frombuffer(buf, dtype="<f2").astype(np.float32)
        elif dt == "BF16":
            a = (np.frombuffer(buf, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            raise SystemExit(f"{path}: tensor {name} has dtype {dt}; only F32, F16, BF16 are read")
        out[name] = np.ascontiguousarray(a.reshape(shape), dtype=np.float32)
    return out


def tensor_specs(c: dict, with_ln_f: bool) -> list[tuple[str, tuple[int, ...]]]:
    """crates/model/src/weights.rs `tensor_specs`."""
    d, f = c["n_embd"], c["n_inner"]
    specs = [("wte.weight", (c["vocab_size"], d)), ("wpe.weight", (c["n_positions"], d))]
    for i in range(c["n_layer"]):
        for name, shape in [
            ("ln_1.weight", (d,)),
            ("ln_1.bias", (d,)),
            ("attn.c_attn.weight", (d, 3 * d)),
            ("attn.c_attn.bias", (3 * d,)),
            ("attn.c_proj.weight", (d, d)),
            ("attn.c_proj.bias", (d,)),
            ("ln_2.weight", (d,)),
            ("ln_2.bias", (d,)),
            ("mlp.c_fc.weight", (d, f)),
            ("mlp.c_fc.bias", (f,)),
            ("mlp.c_proj.weight", (f, d)),
            ("mlp.c_proj.bias", (d,)),
        ]:
            specs.append((f"h.{i}.{name}", shape))
    if with_ln_f:
        specs += [("ln_f.weight", (d,)), ("ln_f.bias", (d,))]
    return specs


def load_weights(model_dir: Path, c: dict) -> tuple[dict[str, np.ndarray], bool]:
    """The weights by their un-prefixed GPT-2 name, checked like weights.rs does."""
    st = read_safetensors(model_dir / "model.safetensors")

    def find(name):
        if name in st:
            return st[name]
        return st.get("transformer." + name)

    has_ln_f = find("ln_f.weight") is not None or find("ln_f.bias") is not None
    if c["ln_placement"] == "pre" and not has_ln_f:
        raise SystemExit("model.safetensors: a pre-LN model needs ln_f.weight")
    w = {}
    for name, shape in tensor_specs(c, has_ln_f):
        a = find(name)
        if a is None:
            raise SystemExit(f"model.safetensors: missing tensor {name}")
        if a.shape != shape:
            raise SystemExit(f"model.safetensors: {name} has shape {list(a.shape)}, expected {list(shape)}")
        if not np.isfinite(a).all():
            raise SystemExit(f"model.safetensors: {name} has a non-finite value")
        w[name] = a
    return w, has_ln_f


# ---------------------------------------------------------------------------- graph


class Graph:
    """A small helper around onnx.helper that names nodes and collects initializers."""

    def __init__(self):
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self._n = 0
        self._consts: dict[tuple, str] = {}

    def fresh(self, hint: str) -> str:
        self._n += 1
        return f"{hint}_{self._n}"

    def op(self, op_type: str, inputs: list[str], hint: str | None = None, n_out: int = 1, **attrs):
        outs = [self.fresh(hint or op_type.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=self.fresh("n_" + op_type), **attrs))
        return outs[0] if n_out == 1 else outs

    def init(self, name: str, array: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(array, name=name))
        return name

    def const(self, value, dtype) -> str:
        a = np.asarray(value, dtype=dtype)
        key = (a.dtype.str, a.shape, a.tobytes())
        if key not in self._consts:
            self._consts[key] = self.init(self.fresh("const"), a)
        return self._consts[key]

    def f32(self, value) -> str:
        return self.const(value, np.float32)

    def i64(self, value) -> str:
        return self.const(value, np.int64)


def layernorm(g: Graph, x: str, gamma: str, beta: str, eps: float, mode: str, hint: str) -> str:
    if mode == "op":
        return g.op("LayerNormalization", [x, gamma, beta], hint, axis=-1, epsilon=eps)
    # decomposed: (x − mean)/√(var + ε)·g + b with a two-pass variance, as cpu.rs
    mean = g.op("ReduceMean", [x], hint + "_mean", axes=[-1], keepdims=1)
    xc = g.op("Sub", [x, mean], hint + "_xc")
    var = g.op("ReduceMean", [g.op("Mul", [xc, xc])], hint + "_var", axes=[-1], keepdims=1)
    std = g.op("Sqrt", [g.op("Add", [var, g.f32(eps)])], hint + "_std")
    inv = g.op("Div", [g.f32(1.0), std], hint + "_inv")
    return g.op("Add", [g.op("Mul", [g.op("Mul", [xc, inv]), gamma]), beta], hint)


def gelu(g: Graph, u: str, act: str, hint: str) -> str:
    if act == "tanh":
        # cpu.rs: u / (1 + exp(−C2·(u + 0.044715·u·u·u))), C2 = 2·0.7978846 (in f32)
        c2 = np.float32(2.0) * np.float32(0.7978846)
        cube = g.op("Mul", [g.op("Mul", [g.op("Mul", [g.f32(0.044715), u]), u]), u])
        z = g.op("Mul", [g.f32(-c2), g.op("Add", [u, cube])])
        return g.op("Div", [u, g.op("Add", [g.f32(1.0), g.op("Exp", [z])])], hint)
    # exact GELU: 0.5·u·(1 + erf(u·(1/√2)))
    e = g.op("Erf", [g.op("Mul", [u, g.f32(np.float32(1.0 / math.sqrt(2.0)))])])
    return g.op("Mul", [g.op("Mul", [g.f32(0.5), u]), g.op("Add", [g.f32(1.0), e])], hint)


def linear(g: Graph, x: str, w: str, b: str, hint: str) -> str:
    """Conv1D: x·W + b with W (in, out)."""
    return g.op("Add", [g.op("MatMul", [x, w]), b], hint)


def with_head(g: Graph, x: str, head: str, dv: tuple[int, int], name: str, producer: str, doc: str) -> onnx.ModelProto:
    """The model whose graph is `g`'s nodes then the output head: the last hidden states `x`
    (1, T, d) times `head`ᵀ, a (V, d) initializer, with Gemm(transB) so that a tied head is the
    embedding stored once → `logits` (1, T, V) from `input_ids` (1, T)."""
    d, V = dv
    flat = g.op("Reshape", [x, g.i64([-1, d])], "h_flat")
    logits2 = g.op("Gemm", [flat, head], "logits_2d", transB=1)  # (T, V)
    g.nodes.append(helper.make_node("Reshape", [logits2, g.i64([1, -1, V])], ["logits"], name="n_logits"))
    graph = helper.make_graph(
        g.nodes,
        name,
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "T"])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, "T", V])],
        initializer=g.inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name=producer, doc_string=doc)
    model.ir_version = IR_VERSION
    return model


def build_model(c: dict, w: dict[str, np.ndarray], has_ln_f: bool, ln_mode: str = "op") -> onnx.ModelProto:
    d, h, L = c["n_embd"], c["n_head"], c["n_layer"]
    dk, npos, V = d // h, c["n_positions"], c["vocab_size"]
    eps = float(np.float32(c["layer_norm_epsilon"]))
    post = c["ln_placement"] == "post"
    g = Graph()
    for name, a in w.items():
        g.init(name, a)

    # token + position embedding
    tok = g.op("Gather", ["wte.weight", "input_ids"], "tok_emb", axis=0)  # (1, T, D)
    t_vec = g.op("Slice", [g.op("Shape", ["input_ids"]), g.i64([1]), g.i64([2])], "T")  # [T]
    pos = g.op("Slice", ["wpe.weight", g.i64([0]), t_vec, g.i64([0])], "pos_emb")  # (T, D)
    if c["scale_embedding"]:  # forward.rs: wte · √d_model (f32) + wpe
        tok = g.op("Mul", [tok, g.f32(np.sqrt(np.float32(d)))], "tok_emb_scaled")
    x = g.op("Add", [tok, pos], "embedding")

    # causal mask: lower triangle of a constant (n_positions, n_positions), sliced to (T, T)
    tri = g.init("causal_mask", np.tril(np.ones((npos, npos), dtype=bool)))
    tt = g.op("Concat", [t_vec, t_vec], "TT", axis=0)
    mask = g.op("Slice", [tri, g.i64([0, 0]), tt, g.i64([0, 1])], "mask")  # (T, T) bool
    masked_val = g.f32(MASKED)
    scale = g.f32(np.float32(1.0) / np.sqrt(np.float32(dk)))  # forward.rs: 1/√d_k in f32
    split_sizes = g.i64([d, d, d])
    heads_shape = g.i64([0, 0, h, dk])  # (1, T, D) → (1, T, H, dk)
    merge_shape = g.i64([0, 0, d])  # (1, T, H, dk) → (1, T, D)

    for i in range(L):
        p = f"h.{i}."
        ln = lambda v, which, tag: layernorm(g, v, p + which + ".weight", p + which + ".bias", eps, ln_mode, f"l{i}_{tag}")
        attn_in = x if post else ln(x, "ln_1", "attn_in")
        qkv = linear(g, attn_in, p + "attn.c_attn.weight", p + "attn.c_attn.bias", f"l{i}_qkv")
        q, k, v = g.op("Split", [qkv, split_sizes], f"l{i}_qkv_split", n_out=3, axis=-1)
        q = g.op("Transpose", [g.op("Reshape", [q, heads_shape])], f"l{i}_q", perm=[0, 2, 1, 3])  # (1,H,T,dk)
        kt = g.op("Transpose", [g.op("Reshape", [k, heads_shape])], f"l{i}_kT", perm=[0, 2, 3, 1])  # (1,H,dk,T)
        v = g.op("Transpose", [g.op("Reshape", [v, heads_shape])], f"l{i}_v", perm=[0, 2, 1, 3])  # (1,H,T,dk)
        scores = g.op("MatMul", [q, kt], f"l{i}_scores")  # (1, H, T, T)
        scaled = g.op("Mul", [scores, scale], f"l{i}_scaled")
        masked = g.op("Where", [mask, scaled, masked_val], f"l{i}_masked")
        weights = g.op("Softmax", [masked], f"l{i}_weights", axis=-1)
        head_out = g.op("MatMul", [weights, v], f"l{i}_head_out")  # (1, H, T, dk)
        concat = g.op("Reshape", [g.op("Transpose", [head_out], perm=[0, 2, 1, 3]), merge_shape], f"l{i}_concat")
        attn_out = linear(g, concat, p + "attn.c_proj.weight", p + "attn.c_proj.bias", f"l{i}_attn_out")
        resid_attn = g.op("Add", [x, attn_out], f"l{i}_resid_attn")
        if post:
            stream = ln(resid_attn, "ln_1", "ln_1")
            ffn_in = stream
        else:
            stream = resid_attn
            ffn_in = ln(resid_attn, "ln_2", "ffn_in")
        hidden = linear(g, ffn_in, p + "mlp.c_fc.weight", p + "mlp.c_fc.bias", f"l{i}_fc")
        hidden = gelu(g, hidden, c["_act"], f"l{i}_ffn_hidden")
        ffn_out = linear(g, hidden, p + "mlp.c_proj.weight", p + "mlp.c_proj.bias", f"l{i}_ffn_out")
        resid_ffn = g.op("Add", [stream, ffn_out], f"l{i}_resid_ffn")
        x = ln(resid_ffn, "ln_2", "ln_2") if post else resid_ffn

    if has_ln_f:
        x = layernorm(g, x, "ln_f.weight", "ln_f.bias", eps, ln_mode, "ln_f")
    # tied lm head: (T, D) · wteᵀ with Gemm(transB) so wte is stored once
    model = with_head(
        g,
        x,
        "wte.weight",
        (d, V),
        "attnlab",
        producer="attnlab tools/onnx/export.py",
        doc=f"attnlab {c['ln_placement']}-LN GPT, {L}×{h} heads, d_model {d}, context {npos}; "
        "input_ids int64 [1, T] with T ≤ n_positions → logits float32 [1, T, vocab_size]",
    )
    public = {k: v for k, v in c.items() if not k.startswith("_")}
    helper.set_model_props(model, {"attnlab_config": json.dumps(public), "has_ln_f": str(has_ln_f).lower()})
    return model


def export(model_dir: Path, out: Path, ln_mode: str = "op") -> onnx.ModelProto:
    c = read_config(model_dir)
    w, has_ln_f = load_weights(model_dir, c)
    model = build_model(c, w, has_ln_f, ln_mode)
    onnx.checker.check_model(model, full_check=True)
    onnx.save_model(model, str(out))
    return model


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model_dir", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument(
        "--layernorm",
        choices=["op", "decomposed"],
        default="op",
        help="LayerNormalization op (default) or ReduceMean/Sub/Mul/Sqrt/Div decomposition",
    )
    a = ap.parse_args(argv)
    model = export(a.model_dir, a.out, a.layernorm)
    print(summary(model, a.out))
    return 0


def summary(model: onnx.ModelProto, out: Path) -> str:
    """One line on the model written to `out`: size, opset, nodes, f32 values, ops."""
    ops = sorted({n.op_type for n in model.graph.node})
    n_params = sum(int(np.prod(t.dims)) for t in model.graph.initializer if t.data_type == TensorProto.FLOAT)
    return (
        f"wrote {out} ({out.stat().st_size:,} bytes): opset {OPSET}, IR {model.ir_version}, "
        f"{len(model.graph.node)} nodes, {n_params:,} f32 values; ops: {', '.join(ops)}"
    )


if __name__ == "__main__":
    sys.exit(main())
