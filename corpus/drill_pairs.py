#!/usr/bin/env python3
"""Writes a copying check from a corpus built with --drill-share: 150 new Korean dictation
drills ("받아쓰기: X / 다시: X"), each a list of 5–14 words drawn with a fixed seed from the
words of the corpus's own Korean drills, so that no list is one the model trained on. They are
written as they are (twice.txt) and with the second saying cut off (once.txt).

    python3 corpus/drill_pairs.py data/corpus-r10/train.txt OUTDIR
    attnlab-train --model-dir MODEL eval OUTDIR/once.txt --windows 200
    attnlab-train --model-dir MODEL eval OUTDIR/twice.txt --windows 200

A model that copies predicts the second saying almost for free: the nats of twice.txt less
those of once.txt, over the tokens twice.txt has more, is what the second saying costs it.
"""
import os
import random
import sys

SEP = " / 다시: "


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    train, out = sys.argv[1:]
    with open(train, encoding="utf-8") as f:
        drills = [l.rstrip("\n") for l in f if l.startswith("받아쓰기: ") and SEP in l]
    if len(drills) < 150:
        sys.exit(f"{train}: {len(drills)} Korean dictation drills, fewer than 150 (was it built with --drill-share?)")
    words = sorted({w for l in drills for w in l.split(SEP)[0].removeprefix("받아쓰기: ").split()})
    rng = random.Random(1)
    lists = [" ".join(rng.choice(words) for _ in range(rng.randint(5, 14))) for _ in range(150)]
    picked = [f"받아쓰기: {x}{SEP}{x}" for x in lists]
    assert not set(picked) & set(drills), "a new drill is one of the corpus's"
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "twice.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(picked) + "\n")
    with open(os.path.join(out, "once.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(l.split(SEP)[0] for l in picked) + "\n")


if __name__ == "__main__":
    main()
