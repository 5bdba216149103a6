#!/usr/bin/env python3
"""Writes a copying check from a corpus built with --drill-share: 150 new Korean dictation
drills ("받아쓰기: X / 다시: X"). Each X is a list of DRILL_LENGTHS words drawn with a fixed seed
from the words of the corpus's own Korean dictation drills (lines in that frame whose every
word is a drill word), so that no list is one the model trained on. Written to OUTDIR:

    twice.txt     the drills as they are
    once.txt      the drills with the second saying cut off
    noframe.txt   each list said twice with no frame ("X X")

    python3 corpus/drill_pairs.py data/corpus-r11/train.txt OUTDIR
    attnlab-train --model-dir MODEL eval OUTDIR/once.txt --windows 200
    attnlab-train --model-dir MODEL eval OUTDIR/twice.txt --windows 200
    python3 corpus/drill_attention.py MODEL OUTDIR/twice.txt

The nats of twice.txt less those of once.txt, over the tokens twice.txt has more, is what the
second saying (with its " / 다시:") costs the model. It is an upper bound on what copying
costs: `eval` cuts the text into fixed windows that ignore line ends, so a second saying whose
first one fell into the previous window cannot be copied. drill_attention.py reads each line
whole.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from build_corpus import DRILL_LENGTHS, DRILL_WORDS, ECHO_FRAMES  # noqa: E402

FRAME = ECHO_FRAMES["ko"][0]  # "받아쓰기: {x} / 다시: {x}"
HEAD, SEP = FRAME.split("{x}")[0], FRAME.split("{x}")[1]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    train, out = sys.argv[1:]
    with open(train, encoding="utf-8") as f:
        lines = [l.rstrip("\n") for l in f if l.startswith(HEAD) and SEP in l]
    lists = [l[len(HEAD):].split(SEP)[0] for l in lines]
    drills = {l for l, x in zip(lines, lists) if l == FRAME.format(x=x) and all(DRILL_WORDS["ko"].match(w) for w in x.split())}
    if len(drills) < 150:
        sys.exit(f"{train}: {len(drills)} Korean dictation drills, fewer than 150 (was it built with --drill-share?)")
    words = sorted({w for l in drills for w in l[len(HEAD):].split(SEP)[0].split()})
    rng = random.Random(1)
    new = [" ".join(rng.choice(words) for _ in range(rng.randint(*DRILL_LENGTHS))) for _ in range(150)]
    twice = [FRAME.format(x=x) for x in new]
    assert not set(twice) & drills, "a new drill is one of the corpus's"
    os.makedirs(out, exist_ok=True)
    for name, rows in (("twice.txt", twice), ("once.txt", [HEAD + x for x in new]), ("noframe.txt", [f"{x} {x}" for x in new])):
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
