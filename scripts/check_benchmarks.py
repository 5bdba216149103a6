#!/usr/bin/env python3
"""Check that BENCHMARKS.md's summary names only commands that exist in this repository.

The summary is the section of BENCHMARKS.md headed exactly `## Today's figures`; it ends at
the next `## ` heading. Every Markdown table in it must have a column headed `command`, and
every row of such a table must name, in that column, at least one command in backticks, e.g.

    | ... | `node web/e2e/bench.mjs --samples 30` | ... |

Each backticked command is split at `&&` and `;`; leading `NAME=value` assignments are
skipped. The program of each part must be one of these, and must exist:

    node FILE ...                    FILE exists (also python3, python, bash, sh)
    ./FILE ... or dir/FILE ...       FILE exists (any program named by a path)
    cargo bench -p CRATE [--bench NAME]      the crate exists; NAME is in its benches/ or Cargo.toml
    cargo run   -p CRATE [--example NAME]    ... its examples/
    cargo test  -p CRATE [--test NAME]       ... its tests/

Anything else fails: the check would rather be told about a new kind of command than pass a
row it cannot check. It prints one line per failure, naming the table, the row and what is
missing, then a last line `N passed, M failed` (N = rows checked), and exits non-zero when a
row fails, when the section is missing or when it has no rows.

    python3 scripts/check_benchmarks.py [--file BENCHMARKS.md] [--root DIR]
    python3 scripts/check_benchmarks.py --self-test

Standard library only (Python 3.8 or later).
"""

import argparse
import os
import re
import shlex
import sys
import tempfile

HEADING = "## Today's figures"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILE_RUNNERS = {"node", "python3", "python", "bash", "sh"}


class Repo:
    """What the checks look up in a checkout: files and crates."""

    def __init__(self, root):
        self.root = root
        self._crates = None

    def has_file(self, rel):
        rel = rel[2:] if rel.startswith("./") else rel
        if os.path.isabs(rel) or ".." in rel.split("/"):
            return False
        return os.path.isfile(os.path.join(self.root, rel))

    def crates(self):
        """Package name → folder, for every Cargo.toml under crates/ and tools/."""
        if self._crates is None:
            self._crates = {}
            for top in ("crates", "tools"):
                base = os.path.join(self.root, top)
                if not os.path.isdir(base):
                    continue
                for name in sorted(os.listdir(base)):
                    toml = os.path.join(base, name, "Cargo.toml")
                    if os.path.isfile(toml):
                        pkg = package_name(read(toml))
                        if pkg:
                            self._crates[pkg] = os.path.join(base, name)
        return self._crates

def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def package_name(toml):
    section = None
    for line in toml.splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line
        elif section == "[package]":
            m = re.match(r'name\s*=\s*"([^"]+)"', line)
            if m:
                return m.group(1)
    return None


def split_cells(line):
    """The cells of a Markdown table row: `|` splits, except escaped (`\\|`) or in backticks."""
    cells, cur, in_code, i = [], [], False, 0
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body) and body[i + 1] == "|":
            cur.append("|")
            i += 2
            continue
        if c == "`":
            in_code = not in_code
        if c == "|" and not in_code:
            cells.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    cells.append("".join(cur).strip())
    return cells


def summary_tables(text):
    """(tables, error): each table as (its heading, [(row label, command cell)])."""
    lines = text.splitlines()
    try:
        start = next(i for i, l in enumerate(lines) if l.rstrip() == HEADING)
    except StopIteration:
        return None, "the summary section (a line '%s') is missing" % HEADING
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    tables, heading, i = [], HEADING.lstrip("# "), start + 1
    while i < end:
        line = lines[i]
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        if line.lstrip().startswith("|"):
            block = []
            while i < end and lines[i].lstrip().startswith("|"):
                block.append(lines[i])
                i += 1
            header = [c.lower() for c in split_cells(block[0])]
            rows = [split_cells(l) for l in block[1:] if not re.match(r"^\s*\|[\s:|-]*\|?\s*$", l)]
            if "command" not in header:
                return None, "the table under '%s' has no 'command' column" % heading
            col = header.index("command")
            tables.append((heading, [(r[0] if r else "", r[col] if col < len(r) else "") for r in rows]))
            continue
        i += 1
    return tables, None


def check_command(cmd, repo):
    """None if every program the command runs exists, else what is missing."""
    for part in re.split(r"&&|;", cmd):
        try:
            words = shlex.split(part)
        except ValueError as e:
            return "cannot parse `%s`: %s" % (part.strip(), e)
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
            words = words[1:]
        if not words:
            continue
        problem = check_words(words, repo)
        if problem:
            return problem
    return None


def check_words(words, repo):
    prog, args = words[0], words[1:]
    if prog in FILE_RUNNERS:
        files = [a for a in args if not a.startswith("-")]
        if not files:
            return "`%s` names no file to run" % prog
        return None if repo.has_file(files[0]) else "missing file %s" % files[0]
    if "/" in prog:
        return None if repo.has_file(prog) else "missing file %s" % prog
    if prog == "cargo":
        return check_cargo(args, repo)
    return "unknown program '%s' (the check knows node, python3, bash, cargo and paths)" % prog


def option(args, *names):
    for i, a in enumerate(args):
        for n in names:
            if a == n and i + 1 < len(args):
                return args[i + 1]
            if a.startswith(n + "="):
                return a[len(n) + 1:]
    return None


def check_cargo(args, repo):
    if "--" in args:
        args = args[: args.index("--")]  # what follows goes to the program
    if not args or args[0] not in ("bench", "run", "test", "build"):
        return "unknown cargo command 'cargo %s'" % (args[0] if args else "")
    crate = option(args, "-p", "--package")
    if crate is None:
        return "cargo %s names no crate (-p CRATE)" % args[0]
    folder = repo.crates().get(crate)
    if folder is None:
        return "missing crate %s (no Cargo.toml under crates/ or tools/ names it)" % crate
    rel = os.path.relpath(folder, repo.root)
    toml = read(os.path.join(folder, "Cargo.toml"))
    for flag, sub, table in (("--bench", "benches", "bench"), ("--example", "examples", "example"),
                             ("--test", "tests", "test")):
        name = option(args, flag)
        if name is None:
            continue
        candidates = ["%s/%s/%s.rs" % (rel, sub, name), "%s/%s/%s/main.rs" % (rel, sub, name)]
        declared = re.search(r'\[\[%s\]\][^\[]*name\s*=\s*"%s"' % (table, re.escape(name)), toml)
        path = declared and re.search(r'path\s*=\s*"([^"]+)"', declared.group(0))
        if path:
            candidates.insert(0, "%s/%s" % (rel, path.group(1)))
        if not any(repo.has_file(c) for c in candidates):
            return "missing file %s (cargo %s %s %s)" % (candidates[-2], args[0], flag, name)
    return None


def check(text, repo):
    """(passed, failures, error) for BENCHMARKS.md's text."""
    tables, error = summary_tables(text)
    if error:
        return 0, [], error
    passed, failures = 0, []
    for heading, rows in tables:
        for n, (label, cell) in enumerate(rows, 1):
            where = "'%s', row %d (%s)" % (heading, n, label)
            commands = re.findall(r"`([^`]+)`", cell)
            problems = [p for p in (check_command(c, repo) for c in commands) if p]
            if not commands:
                problems = ["no command in backticks in its command column"]
            if problems:
                failures.append("%s: %s" % (where, "; ".join(problems)))
            else:
                passed += 1
    if passed + len(failures) == 0:
        return 0, [], "the summary section has no table rows"
    return passed, failures, None


def run(path, root):
    if not os.path.isfile(path):
        print("check_benchmarks: %s: no such file" % path)
        print("0 passed, 1 failed")
        return 1
    passed, failures, error = check(read(path), Repo(root))
    name = os.path.relpath(path, root) if path.startswith(root) else path
    if error:
        print("check_benchmarks: %s: %s" % (name, error))
        print("0 passed, 1 failed")
        return 1
    for f in failures:
        print("check_benchmarks: %s: %s" % (name, f))
    print("%d passed, %d failed" % (passed, len(failures)))
    return 1 if failures else 0


def self_test(path, root):
    """The check against copies of BENCHMARKS.md it must reject, and the file itself."""
    repo = Repo(root)
    text = read(path)
    results = []

    def expect(what, doc, ok, mention=None):
        passed, failures, error = check(doc, repo)
        good = (not failures and not error and passed > 0) if ok else bool(failures or error)
        said = "; ".join(failures) or error or ""
        if mention and mention not in said:
            good = False
        results.append((good, what, "%d passed, %d failed%s" % (passed, len(failures), (": " + said) if said else "")))

    expect("BENCHMARKS.md as it is passes", text, True)
    start = text.find(HEADING)
    end = text.find("\n## ", start + 1)
    summary = text[start:end if end > 0 else len(text)]
    m = re.search(r"`node (web/[^ `]+\.mjs)", summary)
    if m:
        gone = m.group(1).replace(".mjs", "-removed.mjs")
        renamed = text[:start] + summary.replace(m.group(1), gone, 1) + text[start + len(summary):]
        # through a temporary copy on disk, as the test command would read it
        with tempfile.TemporaryDirectory() as tmp:
            copy = os.path.join(tmp, "BENCHMARKS.md")
            with open(copy, "w", encoding="utf-8") as f:
                f.write(renamed)
            expect("a copy with %s renamed to %s fails, naming it" % (m.group(1), gone),
                   read(copy), False, mention="missing file " + gone)
    else:
        results.append((False, "the summary names a `node web/....mjs` command to rename", "none found"))
    expect("a copy without the summary section fails", text.replace(HEADING, "## Figures"), False,
           mention="missing")
    row = "| what | command |\n|---|---|\n| %s | %s |\n"
    cases = [
        ("`cargo bench -p attnlab-gpu --bench no_such_bench`", False, "missing file"),
        ("`cargo run --release -p attnlab-model --example no_such_example`", False, "missing file"),
        ("`cargo test -p no-such-crate --test forward`", False, "missing crate"),
        ("`./scripts/no-such-script.sh`", False, "missing file"),
        ("`make bench`", False, "unknown program"),
        ("no command here", False, "no command in backticks"),
        ("`cargo bench -p attnlab-gpu --bench forward`", True, None),
        ("`cargo run --release -p attnlab-gpu --example profile -- 16 64`", True, None),
    ]
    for cell, ok, mention in cases:
        doc = "# B\n\n%s\n\n%s\n## History\n" % (HEADING, row % ("case", cell))
        expect("a summary row %s %s" % (cell, "passes" if ok else "fails"), doc, ok, mention)
    expect("a summary with no rows fails", "# B\n\n%s\n\nNothing yet.\n" % HEADING, False, mention="no table rows")
    expect("a summary table without a command column fails",
           "# B\n\n%s\n\n| a | b |\n|---|---|\n| 1 | 2 |\n" % HEADING, False, mention="no 'command' column")

    for good, what, detail in results:
        print("%s  %s  [%s]" % ("ok  " if good else "FAIL", what, detail))
    failed = sum(1 for good, _, _ in results if not good)
    print("%d passed, %d failed" % (len(results) - failed, failed))
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--file", default=os.path.join(ROOT, "BENCHMARKS.md"))
    ap.add_argument("--root", default=ROOT, help="the repository the commands must exist in")
    ap.add_argument("--self-test", action="store_true", help="check the check itself")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    path = os.path.abspath(a.file)
    sys.exit(self_test(path, root) if a.self_test else run(path, root))


if __name__ == "__main__":
    main()
