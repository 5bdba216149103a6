#!/usr/bin/env python3
"""Writes crates/model/tests/data/hf/: small random Hugging Face models and what `transformers`
computes with them — the independent reference for attnlab's Llama-family and GPT-2 forwards.

Each folder holds the model as transformers saves it (config.json, model.safetensors or shards
with model.safetensors.index.json) and `expected.safetensors`: the token ids run (`ids`, I64),
the logits (`logits`, T x V) and every layer's attention weights (`attn.<layer>`, H x T x T),
from eager attention with `output_attentions=True` in float32, by the model transformers reads
back from the folder (a model stored in bf16 runs on its bf16 weights widened to f32, which is
what attnlab computes with).

    llama-gqa-tied        Llama, 4 heads on 2 key/value heads, tied head, a WordLevel
                          tokenizer.json over the lesson's English sentence (its text is run)
    llama3-untied-bias    Llama with attention_bias (q, k, v and o biases), an untied head and
                          Llama 3's rope_scaling, whose three bands all occur at head_dim 8
    qwen2-mqa             Qwen2: q, k, v biases, 4 heads on 1 key/value head
    mistral-bf16-sharded  Mistral, stored in bf16 and in three shards
    gpt2                  GPT-2 (the bundled layout), pre-LN, tied head

    python3 -m venv target/hf-venv && target/hf-venv/bin/pip install torch transformers safetensors numpy
    target/hf-venv/bin/python tools/hf/make_fixtures.py
"""

import os
import re
import shutil

import torch
from safetensors.torch import save_file
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import (
    GPT2Config,
    GPT2LMHeadModel,
    LlamaConfig,
    LlamaForCausalLM,
    MistralConfig,
    MistralForCausalLM,
    Qwen2Config,
    Qwen2ForCausalLM,
)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "crates", "model", "tests", "data", "hf")
SENTENCE = "Which do you like better, coffee or tea? I like coffee better than tea, but my friend likes tea."
VOCAB = 96
COMMON = dict(
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=64,
    vocab_size=VOCAB,
    max_position_embeddings=64,
    rms_norm_eps=1e-5,
    attn_implementation="eager",
)


def word_tokenizer():
    """A WordLevel tokenizer over the sentence's words and punctuation (ids from 1; 0 unknown)."""
    vocab = {"[UNK]": 0}
    for w in re.findall(r"\w+|[^\w\s]", SENTENCE):
        vocab.setdefault(w, len(vocab))
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()])
    return tok


def randomize(model, seed):
    """Weights drawn at a scale that gives attention some contrast (a fresh model's are tiny),
    norms around 1."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1 and ("norm" in name or "ln_" in name) and name.endswith("weight"):
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.3 * torch.randn(p.shape, generator=g))
    return model


def write(name, model, ids, dtype=torch.float32, shard=None, tokenizer=None):
    path = os.path.join(OUT, name)
    os.makedirs(path)
    model = model.to(dtype)
    kwargs = dict(safe_serialization=True)
    if shard:
        kwargs["max_shard_size"] = shard
    model.save_pretrained(path, **kwargs)
    for extra in ["generation_config.json"]:
        if os.path.exists(os.path.join(path, extra)):
            os.remove(os.path.join(path, extra))
    if tokenizer is not None:
        tokenizer.save(os.path.join(path, "tokenizer.json"))
    # the reference is what transformers reads back from the files, in float32 (a model cast
    # to bf16 and back would keep bf16-rounded RoPE frequencies in its buffers)
    model = type(model).from_pretrained(path, dtype=torch.float32, attn_implementation="eager").eval()
    with torch.no_grad():
        out = model(torch.tensor([ids]), output_attentions=True)
    tensors = {"ids": torch.tensor(ids, dtype=torch.int64), "logits": out.logits[0].contiguous()}
    for layer, a in enumerate(out.attentions):
        tensors[f"attn.{layer}"] = a[0].contiguous()
    save_file(tensors, os.path.join(path, "expected.safetensors"))
    files = sorted(os.listdir(path))
    size = sum(os.path.getsize(os.path.join(path, f)) for f in files)
    print(f"{name}: {files} ({size} bytes)")


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(2026_12_05)
    random_ids = lambda n: torch.randint(1, VOCAB, (n,), generator=g).tolist()

    tok = word_tokenizer()
    ids = tok.encode(SENTENCE).ids
    assert 0 not in ids, "every word of the sentence is in the vocabulary"
    cfg = LlamaConfig(**COMMON, num_key_value_heads=2, tie_word_embeddings=True, rope_theta=10000.0)
    write("llama-gqa-tied", randomize(LlamaForCausalLM(cfg), 1), ids, tokenizer=tok)

    cfg = LlamaConfig(**COMMON, num_key_value_heads=4, tie_word_embeddings=False,
                      attention_bias=True, rope_theta=10000.0,
                      rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                    "high_freq_factor": 4.0,
                                    "original_max_position_embeddings": 16})
    write("llama3-untied-bias", randomize(LlamaForCausalLM(cfg), 2), random_ids(24))

    cfg = Qwen2Config(**COMMON, num_key_value_heads=1, tie_word_embeddings=True,
                      rope_theta=1000000.0, use_sliding_window=False)
    write("qwen2-mqa", randomize(Qwen2ForCausalLM(cfg), 3), random_ids(12))

    cfg = MistralConfig(**COMMON, num_key_value_heads=2, tie_word_embeddings=False,
                        rope_theta=10000.0, sliding_window=4096)
    write("mistral-bf16-sharded", randomize(MistralForCausalLM(cfg), 4), random_ids(12),
          dtype=torch.bfloat16, shard="20KB")

    cfg = GPT2Config(n_embd=32, n_layer=2, n_head=4, n_positions=64, vocab_size=VOCAB,
                     bos_token_id=0, eos_token_id=0, attn_implementation="eager")
    write("gpt2", randomize(GPT2LMHeadModel(cfg), 5), random_ids(12))


if __name__ == "__main__":
    main()
