#!/usr/bin/env python3
"""How much copying pays in a corpus's training windows: the signal an induction head learns from.

    python3 -m venv /tmp/tokvenv && /tmp/tokvenv/bin/pip install tokenizers numpy
    /tmp/tokvenv/bin/python corpus/copy_stats.py MODEL_DIR/tokenizer.json CORPUS/train.txt

The text is tokenized as the trainer does (each non-empty line, then a newline) and cut into
random windows of 128 + 1 tokens (4,000 of them, seed 1), like the trainer's batches. At each
position i whose previous token t[i-1] occurred earlier in the window (last at k), an induction
head would predict t[k+1]. The script reports how often that copy is right, how often the bigram
guess (the most frequent successor of t[i-1] over the whole text) is right, and how often the
copy is right where the bigram guess is wrong: what only copying can earn, as a share of those
positions and of all positions.
"""
import collections
import random
import sys

import numpy as np
from tokenizers import Tokenizer

WINDOW = 128
WINDOWS = 4000


def main(tokenizer_path: str, train_path: str) -> None:
    tok = Tokenizer.from_file(tokenizer_path)
    lines = [l for l in open(train_path, encoding="utf-8").read().split("\n") if l.strip()]
    newline = tok.encode("\n", add_special_tokens=False).ids
    ids = []
    for enc in tok.encode_batch(lines, add_special_tokens=False):
        ids.extend(enc.ids)
        ids.extend(newline)
    ids = np.array(ids)
    successors = collections.defaultdict(collections.Counter)
    for a, b in zip(ids[:-1].tolist(), ids[1:].tolist()):
        successors[a][b] += 1
    bigram = {a: c.most_common(1)[0][0] for a, c in successors.items()}
    rng = random.Random(1)
    positions = seen = copy_right = bigram_right = copy_only = 0
    for _ in range(WINDOWS):
        start = rng.randrange(0, len(ids) - WINDOW - 1)
        w = ids[start : start + WINDOW + 1].tolist()
        last = {}
        for i in range(1, WINDOW + 1):
            prev = w[i - 1]
            k = last.get(prev)
            if k is not None:
                seen += 1
                c = w[k + 1] == w[i]
                b = bigram.get(prev) == w[i]
                copy_right += c
                bigram_right += b
                copy_only += c and not b
            last[prev] = i - 1
            positions += 1
    print(f"{train_path}: {len(ids)} tokens; {positions} positions in {WINDOWS} windows of {WINDOW}")
    print(f"  previous token seen earlier in the window: {seen / positions:.3f} of positions")
    print(
        f"  there: copy right {copy_right / seen:.3f}, bigram right {bigram_right / seen:.3f}, "
        f"copy right where the bigram is wrong {copy_only / seen:.3f} "
        f"({copy_only / positions:.3f} of all positions)"
    )


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
