#!/usr/bin/env python3
"""Writes the malformed-GGUF corpus, crates/model/tests/data/malformed-gguf/: `valid.gguf`, a
tiny llama-architecture model written by gguf-py (llama.cpp's own GGUF writer, an independent
implementation), and beside it one file per way a GGUF model can be wrong, each with a
`<case>.expect` file: the words attnlab's error must contain, one per line.
tests/malformed_gguf.rs loads every case: each must be refused with an error naming the problem,
without a panic; the valid file loads and runs.

Cases are made two ways: by writing a different file with gguf-py (a missing tensor, a shape
or a vocabulary that disagrees with the metadata, …), or by changing bytes of the valid file at
the places gguf-py's reader says its header fields are (bad magic, versions, truncation, absurd
counts and lengths, unknown types, offsets out of bounds).

    python3 -m venv target/gguf-venv && target/gguf-venv/bin/pip install gguf==0.19.0 numpy
    target/gguf-venv/bin/python tools/gguf/make_malformed.py
"""

import os
import shutil
import struct

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q
from gguf.quants import quantize

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "crates", "model", "tests", "data", "malformed-gguf")

# the tiny model: 1 block, width 32, 4 query heads sharing 2 key/value heads, FFN 64
D, FF, HEADS, KV_HEADS, CONTEXT = 32, 64, 4, 2, 16


def byte_alphabet():
    """GPT-2's byte-level alphabet: the printable bytes stand for themselves, the others
    are moved to code points from 256 up."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    out, n = {}, 0
    for b in range(256):
        if b in keep:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + n)
            n += 1
    return [out[b] for b in range(256)]


def vocabulary():
    tokens = byte_alphabet()
    merges = ["Ġ t", "h e", "Ġt he", "i s"]
    for m in merges:
        tokens.append(m.replace(" ", ""))
    tokens.append("<|endoftext|>")
    types = [1] * (len(tokens) - 1) + [3]
    return tokens, types, merges


def tensors(rng, n_vocab):
    """name → (values, type) of a valid model; matrices are (rows, cols) = (out, in)."""
    m = lambda r, c: rng.normal(0, 0.2, size=(r, c)).astype(np.float32)
    norm = lambda: (1 + rng.normal(0, 0.1, size=(D,))).astype(np.float32)
    return {
        "token_embd.weight": (m(n_vocab, D), Q.Q8_0),
        "blk.0.attn_norm.weight": (norm(), Q.F32),
        "blk.0.attn_q.weight": (m(D, D), Q.F16),
        "blk.0.attn_k.weight": (m(KV_HEADS * D // HEADS, D), Q.Q4_0),
        "blk.0.attn_v.weight": (m(KV_HEADS * D // HEADS, D), Q.Q4_1),
        "blk.0.attn_output.weight": (m(D, D), Q.Q8_0),
        "blk.0.ffn_norm.weight": (norm(), Q.F32),
        "blk.0.ffn_gate.weight": (m(FF, D), Q.Q5_0),
        "blk.0.ffn_up.weight": (m(FF, D), Q.Q5_1),
        "blk.0.ffn_down.weight": (m(D, FF), Q.Q8_0),
        "output_norm.weight": (norm(), Q.F32),
    }


def metadata(n_vocab):
    return {
        "llama.block_count": ("u32", 1),
        "llama.context_length": ("u32", CONTEXT),
        "llama.embedding_length": ("u32", D),
        "llama.feed_forward_length": ("u32", FF),
        "llama.attention.head_count": ("u32", HEADS),
        "llama.attention.head_count_kv": ("u32", KV_HEADS),
        "llama.rope.freq_base": ("f32", 10000.0),
        "llama.attention.layer_norm_rms_epsilon": ("f32", 1e-5),
        "llama.vocab_size": ("u32", n_vocab),
    }


def write(path, arch="llama", meta=None, tokenizer=None, tens=None, extra=None):
    w = gguf.GGUFWriter(path, arch=arch)
    for key, (kind, value) in meta.items():
        {"u32": w.add_uint32, "f32": w.add_float32, "str": w.add_string}[kind](key, value)
    model, pre, tokens, types, merges = tokenizer
    w.add_tokenizer_model(model)
    w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types(types)
    if merges is not None:
        w.add_token_merges(merges)
    for add in extra or []:
        add(w)
    for name, (values, qtype) in tens.items():
        if qtype == Q.F32:
            w.add_tensor(name, values)
        elif qtype == Q.F16:
            w.add_tensor(name, values.astype(np.float16))
        else:
            w.add_tensor(name, quantize(values, qtype), raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def field_at(field, part):
    """The byte offset of part `part` of a reader field."""
    return field.offset + sum(p.nbytes for p in field.parts[:part])


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    rng = np.random.default_rng(2026_12_05)
    tokens, types, merges = vocabulary()
    base = dict(
        meta=metadata(len(tokens)),
        tokenizer=("gpt2", "smollm", tokens, types, merges),
        tens=tensors(rng, len(tokens)),
    )
    valid = os.path.join(OUT, "valid.gguf")
    write(valid, **base)
    raw = open(valid, "rb").read()
    reader = gguf.GGUFReader(valid)
    cases = {}

    def case(name, data, *words):
        cases[name] = (data, words)

    def written(name, words, **changes):
        path = os.path.join(OUT, name + ".gguf")
        write(path, **{**base, **changes})
        cases[name] = (None, words)

    def patched(at, new):
        return raw[:at] + new + raw[at + len(new):]

    # the header
    case("bad-magic", b"GGML" + raw[4:], "not a GGUF file")
    case("version-1", patched(4, struct.pack("<I", 1)), "version 1")
    case("version-4", patched(4, struct.pack("<I", 4)), "version 4")
    case("big-endian", patched(4, struct.pack(">I", 3)), "big-endian")
    case("empty", b"", "not a GGUF file")
    case("truncated-header", raw[:12], "ends inside", "tensor count")
    case("absurd-tensor-count", patched(8, struct.pack("<Q", 1 << 60)), "tensor count", "more than")
    case("absurd-metadata-count", patched(16, struct.pack("<Q", (1 << 64) - 1)), "metadata count", "more than")
    # the metadata
    arch = reader.fields["general.architecture"]
    case("absurd-key-length", patched(arch.offset, struct.pack("<Q", 1 << 62)), "metadata key", "more than")
    case("absurd-string-length", patched(field_at(arch, 3), struct.pack("<Q", 1 << 40)),
         "general.architecture", "more than")
    case("unknown-value-type", patched(field_at(arch, 2), struct.pack("<I", 13)),
         "general.architecture", "value type 13")
    tokens_field = reader.fields["tokenizer.ggml.tokens"]
    case("truncated-metadata", raw[:field_at(tokens_field, 5) + 100], "tokenizer.ggml.tokens", "bytes left")
    flag = lambda w: w.add_bool("attnlab.flag", True)
    path = os.path.join(OUT, "_flag.gguf")
    write(path, **base, extra=[flag])
    flagged = open(path, "rb").read()
    f = gguf.GGUFReader(path).fields["attnlab.flag"]
    at = field_at(f, 3)
    case("bool-of-2", flagged[:at] + b"\x02" + flagged[at + 1:], "attnlab.flag", "bool")
    os.remove(path)
    deep = lambda w: w.add_array("attnlab.deep", [[[[[[1]]]]]])
    written("arrays-too-deep", ["attnlab.deep", "deeper"], extra=[deep])
    # the tensor directory
    t_q = next(t for t in reader.tensors if t.name == "blk.0.attn_q.weight")
    case("unknown-tensor-type", patched(field_at(t_q.field, 4), struct.pack("<I", 99)),
         "blk.0.attn_q.weight", "not a known tensor type")
    case("offset-out-of-bounds", patched(field_at(t_q.field, 5), struct.pack("<Q", 1 << 40)),
         "blk.0.attn_q.weight", "outside the file")
    case("offset-misaligned", patched(field_at(t_q.field, 5), struct.pack("<Q", int(t_q.field.parts[5][0]) + 4)),
         "blk.0.attn_q.weight", "alignment")
    case("absurd-dimension", patched(field_at(t_q.field, 3), struct.pack("<Q", 1 << 50)),
         "blk.0.attn_q.weight", "more than the file holds")
    case("truncated-data", raw[:-64], "outside the file")
    # the model: what the metadata says against the tensors
    tens = base["tens"]
    written("missing-tensor", ["blk.0.ffn_up.weight", "missing"],
            tens={k: v for k, v in tens.items() if k != "blk.0.ffn_up.weight"})
    written("key-shape-disagrees", ["blk.0.attn_k.weight", "shape", "[32, 32]"],
            tens={**tens, "blk.0.attn_k.weight": (rng.normal(size=(D, D)).astype(np.float32), Q.Q4_0)})
    written("embedding-width-disagrees", ["token_embd.weight", "shape"],
            tens={**tens, "token_embd.weight": (rng.normal(size=(len(tokens), 64)).astype(np.float32), Q.Q8_0)})
    # Llama 3's RoPE scaling as a tensor: one positive factor per dimension pair
    pairs = D // HEADS // 2
    written("rope-freqs-shape", ["rope_freqs.weight", "shape", f"[{pairs}]"],
            tens={**tens, "rope_freqs.weight": (np.ones(pairs + 1, dtype=np.float32), Q.F32)})
    written("rope-freqs-not-positive", ["rope_freqs.weight", "positive"],
            tens={**tens, "rope_freqs.weight": (np.array([1.0] * (pairs - 1) + [0.0], dtype=np.float32), Q.F32)})
    # a qwen2 file: its keys are qwen2.*, and its q, k and v biases are required
    written("qwen2-without-biases", ["blk.0.attn_q.bias", "missing"], arch="qwen2",
            meta={k.replace("llama.", "qwen2.", 1): v for k, v in base["meta"].items()})
    more = tokens + ["Ġa", "Ġb"]
    written("vocabulary-disagrees", ["tokenizer", "263 tokens", "261 rows"],
            tokenizer=("gpt2", "smollm", more, [1] * len(more), merges),
            meta={**base["meta"], "llama.vocab_size": ("u32", len(tokens))})
    written("vocab-size-disagrees", ["llama.vocab_size", "300"],
            meta={**base["meta"], "llama.vocab_size": ("u32", 300)})
    written("zero-ffn", ["llama.feed_forward_length is 0"],
            meta={**base["meta"], "llama.feed_forward_length": ("u32", 0)},
            tens={**tens, "blk.0.ffn_gate.weight": (rng.normal(size=(0, D)).astype(np.float32), Q.F32),
                  "blk.0.ffn_up.weight": (rng.normal(size=(0, D)).astype(np.float32), Q.F32),
                  "blk.0.ffn_down.weight": (rng.normal(size=(D, 0)).astype(np.float32), Q.F32)})
    written("zero-epsilon", ["layer_norm_rms_epsilon 0"],
            meta={**base["meta"], "llama.attention.layer_norm_rms_epsilon": ("f32", 0.0)})
    written("theta-not-a-number", ["llama.rope.freq_base", "not a number"],
            meta={**base["meta"], "llama.rope.freq_base": ("str", "ten thousand")})
    written("zero-heads", ["llama.attention.head_count", "0"],
            meta={**base["meta"], "llama.attention.head_count": ("u32", 0)})
    written("heads-do-not-divide", ["5 query heads", "divide"],
            meta={**base["meta"], "llama.attention.head_count": ("u32", 5)})
    written("missing-block-count", ["llama.block_count", "missing"],
            meta={k: v for k, v in base["meta"].items() if k != "llama.block_count"})
    written("rope-scaling", ["RoPE scaling"],
            meta={**base["meta"], "llama.rope.scaling.type": ("str", "linear")})
    written("not-llama", ["general.architecture", "gpt2"], arch="gpt2")
    # a SentencePiece vocabulary's merges come from its scores: neither is there
    written("sentencepiece-without-scores", ["tokenizer.ggml.scores"],
            tokenizer=("llama", "default", tokens, types, None))
    written("unknown-tokenizer-model", ["tokenizer.ggml.model", "bert"],
            tokenizer=("bert", "default", tokens, types, merges))
    written("unknown-pre-tokenizer", ["pre-tokenizer", "chatglm-bpe"],
            tokenizer=("gpt2", "chatglm-bpe", tokens, types, merges))
    written("merge-of-unknown-tokens", ["tokenizer", "merge", "커피"],
            tokenizer=("gpt2", "smollm", tokens, types, merges + ["Ġ 커피"]))
    t_up = next(t for t in reader.tensors if t.name == "blk.0.ffn_up.weight")
    case("tensor-twice", patched(field_at(t_up.field, 1), b"blk.0.attn_q.weight"),
         "blk.0.attn_q.weight", "twice")
    for name, (data, words) in cases.items():
        if data is not None:
            open(os.path.join(OUT, name + ".gguf"), "wb").write(data)
        open(os.path.join(OUT, name + ".expect"), "w").write("".join(w + "\n" for w in words))
    total = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT))
    print(f"wrote {len(cases)} cases and valid.gguf to {OUT} ({total} bytes)")


if __name__ == "__main__":
    main()
