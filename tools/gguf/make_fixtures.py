#!/usr/bin/env python3
"""Writes crates/model/tests/data/quants.gguf: the reference for attnlab's GGUF reader.

Written with gguf-py (the GGUF package of llama.cpp, an independent implementation):
- metadata of every value type (integers of each width, floats, bool, string, arrays, an
  array of arrays), read back by `gguf::tests` in crates/model;
- for each supported tensor type (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K,
  Q5_K, Q6_K) a tensor `q.<TYPE>` of 2 rows x 2 blocks of seeded random blocks (each block's
  f16 scales set to small finite values), and beside it `want.<TYPE>`: gguf-py's own
  dequantization of those bytes, as F32. The Rust reader must give `want` bit for bit;
- one tensor of a type the reader refuses (Q2_K), to check that it is named.

    python3 -m venv target/gguf-venv && target/gguf-venv/bin/pip install gguf==0.19.0 numpy
    target/gguf-venv/bin/python tools/gguf/make_fixtures.py
"""

import os

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q
from gguf.quants import dequantize

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "crates", "model", "tests", "data", "quants.gguf")

rng = np.random.default_rng(2026_12_05)

# where each block keeps its f16 scale (d) and, for the types with one, its minimum (m/dmin)
SCALES = {
    Q.Q4_0: (0, None), Q.Q4_1: (0, 2), Q.Q5_0: (0, None), Q.Q5_1: (0, 2), Q.Q8_0: (0, None),
    Q.Q4_K: (0, 2), Q.Q5_K: (0, 2), Q.Q6_K: (208, None), Q.Q2_K: (80, 82),
}


def f16_bytes(x):
    return np.array([x], dtype="<f2").tobytes()


def random_blocks(qtype, n_blocks):
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    raw = bytearray(rng.integers(0, 256, size=n_blocks * size, dtype=np.uint8).tobytes())
    d_at, m_at = SCALES[qtype]
    for b in range(n_blocks):
        base = b * size
        raw[base + d_at: base + d_at + 2] = f16_bytes(rng.uniform(-0.05, 0.05))
        if m_at is not None:
            raw[base + m_at: base + m_at + 2] = f16_bytes(rng.uniform(-0.05, 0.05))
    return np.frombuffer(bytes(raw), dtype=np.uint8)


def main():
    w = gguf.GGUFWriter(OUT, arch="attnlab-fixture")
    # metadata: one key per value type
    w.add_uint8("fixture.u8", 200)
    w.add_int8("fixture.i8", -100)
    w.add_uint16("fixture.u16", 60000)
    w.add_int16("fixture.i16", -30000)
    w.add_uint32("fixture.u32", 4_000_000_000)
    w.add_int32("fixture.i32", -2_000_000_000)
    w.add_float32("fixture.f32", 0.1)
    w.add_bool("fixture.bool", True)
    w.add_string("fixture.string", "나는 어제 산 커피를 오늘 마셨다")
    w.add_uint64("fixture.u64", 18_000_000_000_000_000_000)
    w.add_int64("fixture.i64", -9_000_000_000_000_000_000)
    w.add_float64("fixture.f64", 1e-300)
    w.add_array("fixture.strings", ["<|im_start|>", "Ġthe", "커피"])
    w.add_array("fixture.ints", [1, -2, 3])
    w.add_array("fixture.nested", [[1, 2], [3]])
    for qtype in [Q.F32, Q.F16, Q.BF16]:
        values = rng.normal(0, 1, size=(2, 64)).astype(np.float32)
        if qtype == Q.F32:
            w.add_tensor(f"q.{qtype.name}", values)
            want = values
        elif qtype == Q.F16:
            w.add_tensor(f"q.{qtype.name}", values.astype(np.float16))
            want = values.astype(np.float16).astype(np.float32)
        else:
            bits = (values.view(np.uint32) >> 16).astype(np.uint16)
            raw = bits.view(np.uint8).reshape(2, 128)
            w.add_tensor(f"q.{qtype.name}", raw, raw_dtype=qtype)
            want = dequantize(raw, qtype)
        w.add_tensor(f"want.{qtype.name}", np.ascontiguousarray(want, dtype=np.float32))
    for qtype in [Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q5_1, Q.Q8_0, Q.Q4_K, Q.Q5_K, Q.Q6_K, Q.Q2_K]:
        block, size = gguf.GGML_QUANT_SIZES[qtype]
        raw = random_blocks(qtype, 4).reshape(2, 2 * size)
        w.add_tensor(f"q.{qtype.name}", raw, raw_dtype=qtype)
        if qtype != Q.Q2_K:
            want = dequantize(raw, qtype).astype(np.float32)
            assert want.shape == (2, 2 * block) and np.isfinite(want).all()
            w.add_tensor(f"want.{qtype.name}", np.ascontiguousarray(want))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print(f"wrote {OUT} ({os.path.getsize(OUT)} bytes)")


if __name__ == "__main__":
    main()
