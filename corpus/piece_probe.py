#!/usr/bin/env python3
"""Repeated random-piece texts, by how often their pieces occur in the training text: a
diagnostic beside `attnlab heads`' probe, which draws its pieces uniformly from the whole
vocabulary (every piece of two or more bytes that is neither an added token nor a byte).

A small model's vocabulary holds pieces that its training text barely has (rare Hangul
syllables and CJK characters from the tokenizer's alphabet); their embeddings hardly moved
from the start, so no head can match them. This script counts every probe piece in TRAIN and
writes, to OUTDIR, LINES texts per band, each LEN distinct pieces drawn at random from that
band (a fixed seed) and said twice with nothing between:

    pieces-all.txt      from every probe piece, as `attnlab heads` draws
    pieces-common.txt   from the pieces that occur at least 1,000 times in TRAIN
    pieces-rare.txt     from the pieces that occur at most 10 times in TRAIN
    bands.json          how many probe pieces each band has, and the counts' quartiles

then read each head's induction weight on them with drill_attention.py:

    /tmp/tokvenv/bin/python corpus/piece_probe.py MODEL/tokenizer.json data/corpus-r12/train.txt OUTDIR
    python3 corpus/drill_attention.py MODEL OUTDIR/pieces-common.txt

The texts are decoded pieces, so attnlab's tokenizer may split a few of them differently;
drill_attention.py reads the repeat from the ids the trace really has.
"""
import argparse
import collections
import json
import os
import random
import re

from tokenizers import Tokenizer

SEED = 2022
BANDS = {"all": (0, None), "common": (1000, None), "rare": (0, 10)}
BYTE = re.compile(r"^<0x[0-9A-F]{2}>$")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tokenizer")
    ap.add_argument("train")
    ap.add_argument("outdir")
    ap.add_argument("--len", type=int, default=32)
    ap.add_argument("--lines", type=int, default=40)
    args = ap.parse_args()

    tok = Tokenizer.from_file(args.tokenizer)
    # pieces become text by turning "▁" into a space: right for the bundled Metaspace (SentencePiece-
    # style) tokenizer, wrong for a byte-level one, whose pieces spell bytes ("Ġ" for a space)
    decoder = json.loads(tok.to_str()).get("decoder") or {}
    kinds = [d.get("type") for d in decoder.get("decoders", [decoder])]
    if "ByteLevel" in kinds:
        raise SystemExit(f"{args.tokenizer}: a byte-level tokenizer; this probe reads Metaspace pieces only")
    added = set(tok.get_added_tokens_decoder())
    # the probe's candidates (crates/model's Tokenizer::probe_candidates): whole pieces of two
    # or more bytes, no byte-fallback piece, no added token, no control character
    pieces = {}
    for piece, i in tok.get_vocab(with_added_tokens=False).items():
        if i in added or BYTE.match(piece):
            continue
        text = piece.replace("\u2581", " ")
        if len(text.encode()) >= 2 and not any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in text):
            pieces[i] = text
    with open(args.train, encoding="utf-8") as f:
        lines = f.read().split("\n")
    count = collections.Counter()
    for enc in tok.encode_batch(lines):
        count.update(enc.ids)

    os.makedirs(args.outdir, exist_ok=True)
    rng = random.Random(SEED)
    summary = {"train": args.train, "probe_pieces": len(pieces), "seed": SEED, "len": args.len, "bands": {}}
    for name, (lo, hi) in BANDS.items():
        band = sorted(i for i in pieces if count[i] >= lo and (hi is None or count[i] <= hi))
        n = min(args.len, len(band))
        out = os.path.join(args.outdir, f"pieces-{name}.txt")
        if n < 2:
            print(f"warning: band {name!r} has {len(band)} pieces, too few for a repeat: no {out}")
            if os.path.exists(out):
                os.remove(out)
            summary["bands"][name] = {"min_count": lo, "max_count": hi, "pieces": len(band), "quartiles": []}
            continue
        if n < args.len:
            print(f"warning: band {name!r} has only {len(band)} pieces: its texts repeat {n}, not {args.len}")
        texts = []
        for _ in range(args.lines):
            x = "".join(pieces[i] for i in rng.sample(band, n))
            texts.append(x + x)
        with open(out, "w", encoding="utf-8") as f:
            f.write("\n".join(texts) + "\n")
        counts = sorted(count[i] for i in band)
        summary["bands"][name] = {
            "min_count": lo, "max_count": hi, "pieces": len(band),
            "quartiles": [counts[len(counts) * q // 4] for q in (1, 2, 3)] if counts else [],
        }
    summary["never_in_train"] = sum(1 for i in pieces if count[i] == 0)
    with open(os.path.join(args.outdir, "bands.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, ensure_ascii=False, indent=2)
    print(json.dumps(summary, ensure_ascii=False))


if __name__ == "__main__":
    main()
