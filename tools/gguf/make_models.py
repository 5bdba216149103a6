#!/usr/bin/env python3
"""Writes crates/model/tests/data/gguf-models/: the references for attnlab's reading of qwen2
and Llama 3 GGUF files and of the pre-tokenizers named "qwen2" and "llama-bpe".

- qwen2-mqa.gguf: the weights of tests/data/hf/qwen2-mqa (a random Qwen2: q, k and v biases,
  4 query heads on 1 key/value head, tied head) as llama.cpp's converter names and lays them
  out for a qwen2 file (F32; q and k rows in Hugging Face's order, not permuted as for a
  llama file), with qwen2.* metadata and a byte-level BPE tokenizer of at most 96 tokens.
  What it must compute is hf/qwen2-mqa/expected.safetensors: transformers' logits and
  attention on those weights (tools/hf/make_fixtures.py).
- llama3-untied-bias.gguf: tests/data/hf/llama3-untied-bias (q, k, v and o biases, an
  untied head, Llama 3's rope_scaling) as a llama file: q and k rows (and biases) permuted
  so that RoPE's pairs are adjacent, and the scaling as llama.cpp's converter writes it, a
  `rope_freqs.weight` tensor of one factor per dimension pair that divides the pair's
  frequency; its tokenizer says add_bos_token, with a control token `<|begin_of_text|>`.
  Expected: hf/llama3-untied-bias/expected.safetensors.
- tokenizer-qwen2.gguf, tokenizer-llama-bpe.gguf: metadata only, one byte-level BPE
  vocabulary (the 256 bytes and merges learned from tools/long/long-en.txt and a few lines
  with numbers, contractions, line breaks and Korean, by GPT-2's split, so that it holds
  merges of digits and across the places the two splits cut) under either pre-tokenizer name.
- tokenizer-llama-bpe-bos.gguf: the same "llama-bpe" vocabulary with one more token, a
  control token `<|begin_of_text|>`, and `tokenizer.ggml.add_bos_token` true with it as
  `bos_token_id`, as a Llama 3 file says it: every text begins with it.
- tokenizer-spm.gguf: metadata only, a SentencePiece vocabulary as Llama 2's, Mistral 7B's and
  TinyLlama's files hold it (`tokenizer.ggml.model` "llama"): `<unk>`, `<s>`, `</s>`, the 256
  byte tokens `<0x00>`…`<0xFF>`, then pieces learned from the same text with "▁" for a space
  (characters past the 50 most common left to the byte tokens), each scored by when it was
  learned; no merges (a reader recovers them from the scores), no add_bos_token (a
  SentencePiece vocabulary adds its BOS unless it says otherwise).
- tokenized.json: transformers' tokenization of TEXTS with each of the tokenizer files and
  the first text with the models': `PreTrainedTokenizerFast.from_pretrained(folder,
  gguf_file=…)(text)`, the way a user opens a GGUF file's tokenizer, special tokens added as
  the file says. transformers builds the tokenizer from the GGUF metadata itself
  (transformers.integrations.gguf: its own table of each pre-tokenizer's split), an
  implementation independent of attnlab's.

    python3 -m venv target/gguf-venv
    target/gguf-venv/bin/pip install gguf==0.19.0 numpy safetensors tokenizers transformers==5.25.0
    target/gguf-venv/bin/python tools/gguf/make_models.py

(transformers here needs no torch: only its code that builds a tokenizer from GGUF metadata
is used; its metadata reader, which imports torch, is replaced by one that reads the same
metadata with gguf-py, llama.cpp's reader.)
"""

import json
import os

import gguf
import numpy as np
from safetensors.numpy import load_file
import sys
import types

from tokenizers import Tokenizer, models, pre_tokenizers, trainers

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "crates", "model", "tests", "data")
HF = os.path.join(DATA, "hf", "qwen2-mqa")
OUT = os.path.join(DATA, "gguf-models")

# what each tokenizer is checked on: numbers (one digit a token, or up to three), English
# contractions in either case, runs of spaces and line breaks, punctuation, Korean, an emoji
TEXTS = [
    "Which do you like better, coffee or tea?",
    "In 2024 we paid 12345 won, then 3.14 and 1,000,000 more.",
    "I'LL go, you'd stay; we've DONE it, haven't we?",
    "line one\n\n   indented\tand  two spaces  \n\n end ",
    "나는 어제 산 커피를 오늘 마셨다. 커피 123잔",
    "emoji 🙂 and ‘quotes’ — and $5",
]

# learned from these besides long-en.txt: every kind of piece the texts have
EXTRA = [
    "Which do you like better, coffee or tea? I like coffee better than tea.",
    "In 2024 there were 12345 cups, 3.14 of them, 1,000,000 in all; 999 and 2048.",
    "I'll, I'LL, you'd, we've, haven't, she's, they're, I'm DONE.",
    "line one\n\n   indented\tand  two spaces  \n\n end ",
    "나는 어제 산 커피를 오늘 마셨다. 우리는 커피 123잔을 마셨다.",
    "emoji 🙂 and ‘quotes’ — and $5",
]

TOKEN_NORMAL, TOKEN_CONTROL = 1, 3
EOS, BOS = "<|endoftext|>", "<|begin_of_text|>"


def train(corpus, vocab_size, alphabet):
    """A byte-level BPE learned by GPT-2's split: its tokens in id order and its merges."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        initial_alphabet=alphabet,
        special_tokens=["<|endoftext|>"],
        show_progress=False,
    )
    tok.train_from_iterator(corpus, trainer)
    model = json.loads(tok.to_str())["model"]
    vocab = sorted(model["vocab"].items(), key=lambda kv: kv[1])
    assert [i for _, i in vocab] == list(range(len(vocab)))
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    return [t for t, _ in vocab], merges


def add_tokenizer(w, tokens, merges, pre, bos=False):
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types([TOKEN_CONTROL if t in (EOS, BOS) else TOKEN_NORMAL for t in tokens])
    w.add_token_merges(merges)
    w.add_eos_token_id(tokens.index(EOS))
    if bos:
        w.add_bos_token_id(tokens.index(BOS))
    w.add_add_bos_token(bos)


NAMES = {
    "input_layernorm.weight": "attn_norm.weight",
    "self_attn.q_proj.weight": "attn_q.weight",
    "self_attn.q_proj.bias": "attn_q.bias",
    "self_attn.k_proj.weight": "attn_k.weight",
    "self_attn.k_proj.bias": "attn_k.bias",
    "self_attn.v_proj.weight": "attn_v.weight",
    "self_attn.v_proj.bias": "attn_v.bias",
    "self_attn.o_proj.weight": "attn_output.weight",
    "self_attn.o_proj.bias": "attn_output.bias",
    "post_attention_layernorm.weight": "ffn_norm.weight",
    "mlp.gate_proj.weight": "ffn_gate.weight",
    "mlp.up_proj.weight": "ffn_up.weight",
    "mlp.down_proj.weight": "ffn_down.weight",
}


def pairs_adjacent(w, n_head):
    """llama.cpp's permutation of a llama file's q or k rows (or bias): within each head, the
    two halves that Hugging Face's rotate_half pairs are interleaved, so that RoPE rotates
    adjacent dimensions."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def rope_factors(config):
    """Llama 3's rope_scaling as llama.cpp's converter stores it: per dimension pair, the
    factor its frequency is divided by (1 for short wavelengths, `factor` for long ones, a
    blend between)."""
    p = config["rope_parameters"]
    head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    freqs = 1.0 / p["rope_theta"] ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    old = p["original_max_position_embeddings"]
    low, high = old / p["low_freq_factor"], old / p["high_freq_factor"]
    out = []
    for f in freqs:
        wavelen = 2 * np.pi / f
        if wavelen < high:
            out.append(1.0)
        elif wavelen > low:
            out.append(p["factor"])
        else:
            smooth = (old / wavelen - p["low_freq_factor"]) / (p["high_freq_factor"] - p["low_freq_factor"])
            out.append(1.0 / ((1 - smooth) / p["factor"] + smooth))
    return np.array(out, dtype=np.float32)


def write_model(path, hf_name, arch, pre):
    hf = os.path.join(DATA, "hf", hf_name)
    config = json.load(open(os.path.join(hf, "config.json")))
    weights = load_file(os.path.join(hf, "model.safetensors"))
    llama = arch == "llama"
    assert config["model_type"] == ("llama" if llama else "qwen2")
    # the lesson's sentence's own characters, merged up to the model's vocabulary
    tokens, merges = train([TEXTS[0]] * 4, config["vocab_size"] - 1, [])
    # a Llama 3 file begins every text with its BOS token, as Meta's converted files say
    if llama:
        tokens.append(BOS)
    assert len(tokens) <= config["vocab_size"]
    n_head, n_kv = config["num_attention_heads"], config["num_key_value_heads"]
    w = gguf.GGUFWriter(path, arch=arch)
    w.add_name(f"{hf_name} (random, attnlab fixture)")
    w.add_block_count(config["num_hidden_layers"])
    w.add_context_length(config["max_position_embeddings"])
    w.add_embedding_length(config["hidden_size"])
    w.add_feed_forward_length(config["intermediate_size"])
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_rope_freq_base(config["rope_parameters"]["rope_theta"])
    w.add_layer_norm_rms_eps(config["rms_norm_eps"])
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    add_tokenizer(w, tokens, merges, pre, bos=llama)
    w.add_tensor("token_embd.weight", weights["model.embed_tokens.weight"].astype(np.float32))
    for l in range(config["num_hidden_layers"]):
        for hf_part, gguf_name in NAMES.items():
            key = f"model.layers.{l}.{hf_part}"
            if key not in weights:
                continue
            x = weights[key].astype(np.float32)
            if llama and hf_part.startswith("self_attn.q_proj"):
                x = pairs_adjacent(x, n_head)
            elif llama and hf_part.startswith("self_attn.k_proj"):
                x = pairs_adjacent(x, n_kv)
            w.add_tensor(f"blk.{l}.{gguf_name}", x)
    w.add_tensor("output_norm.weight", weights["model.norm.weight"].astype(np.float32))
    if not config["tie_word_embeddings"]:
        w.add_tensor("output.weight", weights["lm_head.weight"].astype(np.float32))
    if config["rope_parameters"].get("rope_type") == "llama3":
        w.add_tensor("rope_freqs.weight", rope_factors(config))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def train_spm(corpus, vocab_size):
    """A SentencePiece-style vocabulary: its tokens, their scores and types."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first", split=True)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, limit_alphabet=50, show_progress=False)
    tok.train_from_iterator(corpus, trainer)
    learned = [t for t, _ in sorted(json.loads(tok.to_str())["model"]["vocab"].items(), key=lambda kv: kv[1])]
    special = ["<unk>", "<s>", "</s>"]
    byte_tokens = [f"<0x{b:02X}>" for b in range(256)]
    tokens = special + byte_tokens + learned
    scores = [0.0] * len(special + byte_tokens) + [-float(i) for i in range(len(learned))]
    types = [2, 3, 3] + [6] * 256 + [TOKEN_NORMAL] * len(learned)  # unknown, control, byte
    return tokens, scores, types


def write_spm(path, tokens, scores, types):
    w = gguf.GGUFWriter(path, arch="llama")
    w.add_tokenizer_model("llama")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_unk_token_id(0)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_tokenizer(path, arch, pre, tokens, merges, bos=False):
    w = gguf.GGUFWriter(path, arch=arch)
    add_tokenizer(w, tokens, merges, pre, bos)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def read_gguf_metadata(path, full=()):
    """transformers' GGUF metadata reader, done by gguf-py: every key, an array of strings
    not named in `full` given as its length (as transformers' own reader gives it)."""
    fields = {}
    for name, f in gguf.GGUFReader(path).fields.items():
        v = f.contents()
        if isinstance(v, list) and v and isinstance(v[0], str) and name not in full:
            v = len(v)
        fields[name] = v
    return fields, None


reader = types.ModuleType("transformers.integrations.gguf.reader")
reader.read_gguf_metadata = read_gguf_metadata
sys.modules[reader.__name__] = reader
from transformers import PreTrainedTokenizerFast  # noqa: E402 (after the reader is in place)


def tokenized(path):
    """transformers' ids for TEXTS, its tokenizer opened from the file as a user opens it."""
    tok = PreTrainedTokenizerFast.from_pretrained(os.path.dirname(path), gguf_file=os.path.basename(path))
    return [tok(t)["input_ids"] for t in TEXTS]


def main():
    os.makedirs(OUT, exist_ok=True)
    model_files = {}
    for hf_name, arch, pre in [("qwen2-mqa", "qwen2", "qwen2"), ("llama3-untied-bias", "llama", "llama-bpe")]:
        path = os.path.join(OUT, f"{hf_name}.gguf")
        write_model(path, hf_name, arch, pre)
        model_files[os.path.basename(path)] = path
    corpus = [open(os.path.join(ROOT, "tools", "long", "long-en.txt"), encoding="utf-8").read()] + EXTRA * 3
    tokens, merges = train(corpus, 700, pre_tokenizers.ByteLevel.alphabet())
    files = dict(model_files)
    for arch, pre, name, bos in [
        ("qwen2", "qwen2", "tokenizer-qwen2", False),
        ("llama", "llama-bpe", "tokenizer-llama-bpe", False),
        ("llama", "llama-bpe", "tokenizer-llama-bpe-bos", True),
    ]:
        path = os.path.join(OUT, f"{name}.gguf")
        write_tokenizer(path, arch, pre, tokens + [BOS] if bos else tokens, merges, bos)
        files[os.path.basename(path)] = path
    path = os.path.join(OUT, "tokenizer-spm.gguf")
    write_spm(path, *train_spm(corpus, 600))
    files[os.path.basename(path)] = path
    out = {
        "texts": TEXTS,
        # a model's own tokenizer knows the first text's characters only
        "ids": {name: tokenized(p)[:1] if name in model_files else tokenized(p) for name, p in files.items()},
    }
    with open(os.path.join(OUT, "tokenized.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    for name, p in files.items():
        print(f"{name}: {os.path.getsize(p)} bytes")


if __name__ == "__main__":
    main()
