#!/usr/bin/env python3
"""Korean text from the translation catalogues that Debian packages ship: gettext .mo files, and
the Fluent (.ftl), .properties and .dtd files inside Mozilla language packs (.xpi).

    python3 corpus/l10n.py FILE.mo|FILE.xpi...     # prints the lines that would be kept

A catalogue maps each English user-interface string to its translation; only the translations
are used. Each one is cleaned for running text:

- printf / format placeholders go: %s, %d, %1$s, %-10lu, %(name)s, {0}, {name}, ${x}, $(ARG1),
  %1, #1, Fluent { $var }; "%%" becomes "%"; LibreOffice's %PRODUCTNAME becomes "LibreOffice"
  and Mozilla's brand terms ({ -brand-short-name }, &brandShortName;) their defined names;
- a paragraph is dropped where a removed placeholder stood right before Hangul ("%s을(를)",
  "%d 개", "“%s”의") or right after a letter or digit ("0x%x"), or where a particle is left
  without its noun ("… 을(를) …"): what would be left is no sentence;
- keyboard mnemonics go: "파일(_F)", "(&F)", "(~F)", and a bare "_", "&" or "~" before a letter;
- markup tags (<b>, <span …>) go, entities are decoded;
- command-line option columns in --help texts ("  -a, --all   설명") keep only the description;
- a translation is split into paragraphs at blank lines and list items; wrapped lines are joined;
- Fluent messages with selectors ({ $n -> … }) are skipped.

build_corpus.py then applies the Hangul-dominance rule of every Korean source; `keep` drops
fragments of fewer than two words or fewer than 8 characters (button labels, menu items).
"""
import html
import re
import struct
import sys

HANGUL = re.compile(r"[\uac00-\ud7a3]")
LATIN = re.compile(r"[A-Za-z]")

PRINTF = re.compile(
    r"%(?:\([A-Za-z_][\w-]*\))?(?:\d+\$)?[-+ #0']*(?:\d+|\*)?(?:\.(?:\d+|\*))?"
    r"(?:hh|h|ll|l|L|q|j|z|t|I64|I32|I)?[diouxXeEfFgGaAcCsSpnm%]"
    r"|%<[A-Z0-9a-z_]+>"            # %<PRIu64>
    r"|%[1-9]\d?(?![\d.])"          # Qt / LibreOffice %1
    r"|%[A-Z][A-Z_]+%?"             # %PRODUCTNAME handled before, other %NAME tokens go
)
BRACES = re.compile(r"\$\{[^}]*\}|\$\([^)]*\)|\{ *\$?[\w.:!-]* *\}|\$[1-9]|\$[A-Z_]{2,}|#[1-9]\b"
                    r"|&[A-Za-z][\w.-]*;")   # left-over XML entities of .dtd files
MNEMONIC = re.compile(r"\s?\((?:_|&|~)[^)\s]\)|(?<![\w/])[_&~](?=[A-Za-z0-9\uac00-\ud7a3])")
TAG = re.compile(r"</?[A-Za-z][^<>]{0,200}>")
OPTION_COL = re.compile(r"^\s*(?:-{1,2}[\w?][\w=\[\]<>,.|:-]*(?:,\s*|\s(?=-)))*-{1,2}[\w?][\w=\[\]<>,.|:-]*\s{2,}"
                        r"|^[ \t]{1,8}\S(?:[^\n]{0,40}?\S)?[ \t]{2,}(?=\S)")   # "  TERM    description"
SPACE = re.compile(r"\s+")
# a particle left without its noun: "서비스에서 을(를) 찾을 수 없습니다"
DANGLING = re.compile(r"(^|\s)(을\(를\)|를\(을\)|이\(가\)|가\(이\)|은\(는\)|는\(은\)|와\(과\)|과\(와\)|\(으\)로|\(이\)라)")


def read_mo(path):
    """Returns the translations (msgstr) of a .mo file, header excluded; plural forms apart.
    Decoded with the charset the header names (a few old catalogues are EUC-KR)."""
    data = open(path, "rb").read()
    order = "<" if struct.unpack("<I", data[:4])[0] == 0x950412DE else ">"
    _rev, n, orig, trans = struct.unpack(order + "4I", data[4:20])
    entries = []
    charset = "utf-8"
    for i in range(n):
        olen, _ooff = struct.unpack(order + "2I", data[orig + 8 * i:orig + 8 * i + 8])
        tlen, toff = struct.unpack(order + "2I", data[trans + 8 * i:trans + 8 * i + 8])
        raw = data[toff:toff + tlen]
        if olen == 0:  # the catalogue header
            m = re.search(rb"charset=([\w-]+)", raw)
            if m:
                charset = m.group(1).decode("ascii")
            continue
        entries.append(raw)
    try:
        "".encode(charset)
    except LookupError:
        charset = "utf-8"
    out = []
    for raw in entries:
        out.extend(x for x in raw.decode(charset, "replace").split("\x00") if x)
    return out


def _unescape_props(v):
    v = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), v)
    return v.replace("\\n", "\n").replace("\\t", " ").replace("\\", "")


def read_xpi(path):
    """Returns the translated strings of a Mozilla language pack (.ftl, .properties, .dtd)."""
    import zipfile
    z = zipfile.ZipFile(path)
    names = sorted(z.namelist())
    texts = {n: z.read(n).decode("utf-8", "replace") for n in names
             if n.endswith((".ftl", ".properties", ".dtd"))}
    # brand terms: Fluent "-brand-short-name = Firefox", DTD <!ENTITY brandShortName "Firefox">
    terms, entities = {}, {}
    for n, t in texts.items():
        if n.endswith(".ftl"):
            for m in re.finditer(r"^(-[\w-]+) = ([^{\n]+)$", t, re.M):
                terms[m.group(1)] = m.group(2).strip()
        elif n.endswith(".dtd"):
            for m in re.finditer(r'<!ENTITY\s+([\w.-]+)\s+"([^"&{]*)"\s*>', t):
                if "brand" in m.group(1).lower() or "vendor" in m.group(1).lower():
                    entities[m.group(1)] = m.group(2)

    def brands(v):
        v = re.sub(r"\{ *(-[\w-]+)(?:\([^)]*\))? *\}", lambda m: terms.get(m.group(1), m.group(0)), v)
        return re.sub(r"&([\w.-]+);", lambda m: entities.get(m.group(1), m.group(0)), v)

    out = []
    for n, t in texts.items():
        if n.endswith(".ftl"):
            values, cur = [], None
            for line in t.split("\n"):
                if not line.strip() or line.lstrip().startswith("#"):
                    cur = None
                    continue
                m = re.match(r"^-?[A-Za-z][\w-]* *= *(.*)$", line)
                a = re.match(r"^\s+\.[\w-]+ *= *(.*)$", line)
                if m and not line.startswith("-"):
                    cur = [m.group(1)]
                    values.append(cur)
                elif m or line.startswith("-"):
                    cur = None          # a term definition, not a message
                elif a:
                    if a.group(1).strip().lower() in ("", "accesskey") or re.search(r"accesskey|commandkey|key\b", line.split("=")[0]):
                        cur = None
                        continue
                    cur = [a.group(1)]
                    values.append(cur)
                elif cur is not None and line.startswith((" ", "\t")):
                    cur.append(line.strip())
            for v in values:
                v = "\n".join(x for x in v if x)
                if "->" in v or not v:
                    continue    # selectors (plural/gender variants): no single sentence
                out.append(brands(v))
        elif n.endswith(".properties"):
            for line in t.split("\n"):
                if line.lstrip().startswith(("#", "!")) or "=" not in line:
                    continue
                key, v = line.split("=", 1)
                if re.search(r"accesskey|commandkey|\.key$|keybinding", key, re.I):
                    continue
                for form in _unescape_props(v.strip()).split(";"):   # plural forms
                    out.append(brands(form))
        else:
            for m in re.finditer(r'<!ENTITY\s+([\w.-]+)\s+"([^"]*)"\s*>', t):
                if not re.search(r"accesskey|commandkey|\.key$", m.group(1), re.I):
                    out.append(brands(m.group(2)))
    return [x for x in out if x.strip()]


def clean_piece(s):
    """Cleans one paragraph. Returns None where a removed placeholder carried a Korean particle
    or counter ("%s을(를)", "%d 개") or sat inside a word ("0x%x"): what is left would not be
    a sentence."""
    s = s.replace("%PRODUCTNAME", "LibreOffice").replace("%%", "%")
    s = TAG.sub(" ", s)
    s = html.unescape(s)
    for rx in (PRINTF, BRACES):
        for m in rx.finditer(s):
            nxt = s[m.end():m.end() + 4].lstrip(" \"'”’」』)]>")[:1]
            prev = s[m.start() - 1:m.start()]
            if (nxt and HANGUL.match(nxt)) or (prev.isascii() and prev.isalnum()):
                return None
        s = rx.sub(" ", s)
    s = MNEMONIC.sub("", s)
    s = re.sub(r"<([^<>\s]{1,20})>", r"\1", s)           # <개수> metavariables in --help texts
    s = s.replace("\\n", " ").replace("\\t", " ")
    s = re.sub(r"\(\s*\)|\[\s*\]|\"\s*\"|'\s*'|“\s*”|‘\s*’|「\s*」", " ", s)   # emptied quotes/brackets
    s = SPACE.sub(" ", s).strip()
    s = re.sub(r"\s+([,.:;?!)])", r"\1", s)
    if DANGLING.search(s):
        return None
    return s.strip(" :;,")


def paragraphs(msgstr):
    """Splits one translation into cleaned paragraphs: blank lines and list items (options,
    bullets, "  TERM   description" rows) start a new one; deeper-indented lines continue it."""
    out = []
    for block in re.split(r"\n\s*\n", msgstr):
        cur = []
        for line in block.split("\n"):
            indent = len(line) - len(line.lstrip(" \t"))
            if OPTION_COL.match(line):
                if cur:
                    out.append(" ".join(cur))
                    cur = []
                line = OPTION_COL.sub("", line)
            elif cur and indent <= 8 and line.lstrip().startswith(("-", "*", "•", "·")):
                out.append(" ".join(cur))
                cur = []
            elif cur and 0 < indent <= 8:
                out.append(" ".join(cur))
                cur = []
            line = line.strip()
            if line:
                cur.append(line)
        if cur:
            out.append(" ".join(cur))
    return [c for c in (clean_piece(p) for p in out) if c]


def keep(line):
    """Long enough to be text rather than a button label."""
    return len(line) >= 8 and len(line.split()) >= 2


def catalogue_lines(path):
    """The kept paragraphs of one .mo or .xpi file, in file order."""
    strings = read_xpi(path) if path.endswith(".xpi") else read_mo(path)
    out = []
    for msgstr in strings:
        out.extend(p for p in paragraphs(msgstr) if keep(p))
    return out


if __name__ == "__main__":
    for f in sys.argv[1:]:
        for line in catalogue_lines(f):
            print(line)
