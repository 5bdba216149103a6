#!/usr/bin/env python3
"""Induction and duplicate-token attention of every head on lines that say a list twice, read
from `attnlab trace --format json`.

    python3 corpus/drill_attention.py MODEL_DIR FILE [--lines 40] [--attnlab target/release/attnlab]

FILE holds one line per text, e.g. `twice.txt` of corpus/drill_pairs.py. In each line the
repeat is found as the offset at which most tokens equal the token that many positions
earlier; at every position j of the repeat, a head's induction weight is its weight on the
token after the earlier occurrence (j − offset + 1), its duplicate weight the one on that
occurrence (j − offset). `attnlab heads` reads the same two scores from repeated random tokens.
"""
import argparse
import collections
import json
import subprocess


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("file")
    ap.add_argument("--lines", type=int, default=40)
    ap.add_argument("--attnlab", default="target/release/attnlab")
    args = ap.parse_args()
    with open(args.file, encoding="utf-8") as f:
        lines = [l.rstrip("\n") for l in f if l.strip()][: args.lines]
    induction, duplicate = collections.defaultdict(list), collections.defaultdict(list)
    for line in lines:
        run = subprocess.run([args.attnlab, "trace", "--model", args.model, "--format", "json", line],
                             capture_output=True, text=True, check=True)
        trace = json.loads(run.stdout)
        ids = [t["id"] for t in trace["tokens"]]
        n = len(ids)
        if n < 2:
            continue  # nothing can repeat
        off = max(range(1, n), key=lambda o: sum(ids[j] == ids[j - o] for j in range(o, n)))
        repeat = [j for j in range(off, n) if ids[j] == ids[j - off]]
        for h in trace["heads"]:
            w, key = h["weights"], (h["layer"], h["head"])
            for j in repeat:
                induction[key].append(w[j][j - off + 1])
                duplicate[key].append(w[j][j - off])
    print(f"{len(lines)} lines of {args.file}, model {args.model}\n")
    print("| layer | head | induction | duplicate | positions |\n|---|---|---:|---:|---:|")
    for (l, h) in sorted(induction):
        i, d = induction[(l, h)], duplicate[(l, h)]
        print(f"| {l} | {h} | {sum(i) / len(i):.3f} | {sum(d) / len(d):.3f} | {len(i)} |")


if __name__ == "__main__":
    main()
