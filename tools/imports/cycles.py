#!/usr/bin/env python3
"""Import cycles between the source files of attnlab's crates.

Usage: tools/imports/cycles.py [CRATE_DIR ...]   (default: every crates/*/src)
       tools/imports/cycles.py --self-test

A file depends on another when it names something there: a `use` of the other file's module
or of an item in it (`crate::…`, `super::…`, `self::…`, a child module by its name), or such a
path written inline (`crate::dom::now()`). `mod x;` is not a dependency (it only says where x
lives); a `pub use` is. Paths are resolved to the deepest module that has a file: `crate::engine::
Compute` is in engine/mod.rs, `crate::engine::wire::Header` in engine/wire.rs. Inline modules
are part of their file; test modules (`#[cfg(test)] mod … { … }`) are left out, since a test
may use what it tests. Files in src/bin/ are crates of their own and are left out.

Prints each cycle (a strongly connected set of files, with one dependency of each on the next)
and exits 1 if there is one; otherwise prints how many files and dependencies it read.
"""
import os
import re
import sys


# a char literal ('a', '\n', '\u{1F600}'); a lone quote is a lifetime's
CHAR = re.compile(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'")


def strip(code):
    """The code without comments, string and char literals (their text could look like paths)."""
    out = []
    i, n = 0, len(code)
    while i < n:
        c = code[i]
        if code.startswith('//', i):
            j = code.find('\n', i)
            i = n if j < 0 else j
        elif code.startswith('/*', i):
            depth, i = 1, i + 2
            while i < n and depth:
                if code.startswith('/*', i):
                    depth, i = depth + 1, i + 2
                elif code.startswith('*/', i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif c == 'r' and re.match(r'r#*"', code[i:i + 10]) and not (i and (code[i - 1].isalnum() or code[i - 1] == '_')):
            hashes = re.match(r'r(#*)"', code[i:]).group(1)
            end = code.find('"' + hashes, i + 2 + len(hashes))
            out.append('""')
            i = n if end < 0 else end + 1 + len(hashes)
        elif c == '"':
            i += 1
            while i < n and code[i] != '"':
                i += 2 if code[i] == '\\' else 1
            out.append('""')
            i += 1
        elif c == "'" and (m := CHAR.match(code, i)):
            out.append("' '")
            i = m.end()
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def expand(tree):
    """The paths of a `use` tree: `a::{b, c::{d, e}}` → a::b, a::c::d, a::c::e."""
    tree = re.sub(r'\s+as\s+\w+', '', tree)
    tree = re.sub(r'\s+', '', tree)
    m = re.match(r'^(.*?)\{(.*)\}$', tree)
    if not m:
        return [tree]
    prefix, inner = m.groups()
    parts, depth, cur = [], 0, ''
    for ch in inner:
        if ch == ',' and depth == 0:
            parts.append(cur)
            cur = ''
            continue
        depth += ch == '{'
        depth -= ch == '}'
        cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        if p:
            out += [prefix + x for x in expand(p)]
    return out


def modules(src):
    """Module path (tuple) → file, for a crate's src folder (bin/ left out)."""
    out = {}
    for root, dirs, files in os.walk(src):
        rel = os.path.relpath(root, src)
        if rel == '.':
            rel = ''
        if rel.split(os.sep)[0] == 'bin':
            continue
        base = tuple(x for x in rel.split(os.sep) if x)
        for f in files:
            if not f.endswith('.rs'):
                continue
            path = os.path.join(root, f)
            if f in ('lib.rs', 'main.rs') and not base:
                if f == 'lib.rs' or ('lib.rs' not in files):
                    out[()] = path
            elif f == 'mod.rs':
                out[base] = path
            else:
                out[base + (f[:-3],)] = path
    return out


def uses(code):
    """(module path inside the file, path text) for every use and inline path of the code."""
    code = strip(code)
    # test modules (`#[cfg(test)] mod … { … }`) are left out: a test may use what it tests
    while True:
        m = re.search(r'#\[cfg\(test\)\]\s*mod\s+\w+\s*\{', code)
        if not m:
            break
        depth, i = 1, m.end()
        while i < len(code) and depth:
            depth += code[i] == '{'
            depth -= code[i] == '}'
            i += 1
        code = code[:m.start()] + ' ' * (i - m.start()) + code[i:]
    # inline modules: which module each offset is in
    spans = []  # (start, end, name)
    for m in re.finditer(r'\bmod\s+(\w+)\s*\{', code):
        depth, i = 1, m.end()
        while i < len(code) and depth:
            depth += code[i] == '{'
            depth -= code[i] == '}'
            i += 1
        spans.append((m.end(), i, m.group(1)))

    def inside(at):
        return tuple(name for s, e, name in sorted(spans) if s <= at < e)

    out = []
    blanked = list(code)
    for m in re.finditer(r'\buse\s+([^;]+);', code):
        for p in expand(m.group(1)):
            out.append((inside(m.start()), p.strip()))
        blanked[m.start():m.end()] = ' ' * (m.end() - m.start())
    # paths written inline, outside the use statements
    for m in re.finditer(r'(?<![\w:])((?:crate|super|self)(?:::\w+)+)', ''.join(blanked)):
        out.append((inside(m.start()), m.group(1)))
    return out


def resolve(mods, here, path):
    """The module file a path from module `here` names, or None (another crate, std)."""
    segs = [s for s in path.split('::') if s]
    if not segs:
        return None
    if segs[0] == 'crate':
        at, segs = (), segs[1:]
    elif segs[0] in ('super', 'self'):
        at = tuple(here)
        while segs and segs[0] in ('super', 'self'):
            if segs[0] == 'super':
                at = at[:-1]
            segs = segs[1:]
    elif tuple(here) + (segs[0],) in mods:
        at = tuple(here)  # a child module named directly (2018 paths)
    else:
        return None
    best = at
    for s in segs:
        if best + (s,) in mods:
            best = best + (s,)
        else:
            break
    return best


def graph(src):
    mods = modules(src)
    files = {v: k for k, v in mods.items()}
    edges = {}
    for path, mod in files.items():
        with open(path, encoding='utf-8') as f:
            code = f.read()
        for inner, p in uses(code):
            target = resolve(mods, mod + inner, p)
            # an inline module's own items resolve into its file's module path: keep file level
            while target is not None and target not in mods:
                target = target[:-1]
            if target is None:
                continue
            dst = mods[target]
            if dst != path:
                edges.setdefault(path, {}).setdefault(dst, p)
    return files, edges


def cycles(nodes, edges):
    """Strongly connected sets of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def loop_in(comp, edges):
    """A shortest closed walk from the set's first file back to it, as (file, path named, next
    file) per step (breadth-first)."""
    comp = set(comp)
    start = min(comp)
    came_from, queue = {}, [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(edges.get(v, {})):
            if w == start:
                steps = [(v, w)]
                while v != start:
                    steps.insert(0, (came_from[v], v))
                    v = came_from[v]
                return [(a, edges[a][b], b) for a, b in steps]
            if w in comp and w not in came_from:
                came_from[w] = v
                queue.append(w)
    return []


def check(dirs):
    found = 0
    files_n = deps_n = 0
    for src in dirs:
        files, edges = graph(src)
        files_n += len(files)
        deps_n += sum(len(v) for v in edges.values())
        for comp in cycles(files, edges):
            found += 1
            print(f'cycle: {" ↔ ".join(os.path.relpath(f) for f in comp)}')
            for a, p, b in loop_in(comp, edges):
                print(f'  {os.path.relpath(a)} names {p} → {os.path.relpath(b)}')
    if found:
        print(f'{found} import cycle(s)')
        return 1
    print(f'no import cycle: {files_n} files, {deps_n} dependencies between them')
    return 0


def self_test():
    import tempfile
    ok = True

    def case(name, tree, want):
        nonlocal ok
        with tempfile.TemporaryDirectory() as d:
            for path, text in tree.items():
                full = os.path.join(d, path)
                os.makedirs(os.path.dirname(full), exist_ok=True)
                with open(full, 'w') as f:
                    f.write(text)
            files, edges = graph(d)
            got = [[os.path.relpath(f, d) for f in c] for c in cycles(files, edges)]
            if got != want:
                ok = False
                print(f'self-test {name}: got {got}, want {want}')
    case('two files using each other', {
        'lib.rs': 'mod a; mod b;',
        'a.rs': 'use crate::b::B; pub struct A;',
        'b.rs': 'use crate::a::A; pub struct B;',
    }, [['a.rs', 'b.rs']])
    case('a one-way use', {
        'lib.rs': 'mod a; mod b;',
        'a.rs': 'use crate::b::B;',
        'b.rs': 'pub struct B; // use crate::a::A;\nconst S: &str = "crate::a::A";',
    }, [])
    case('parent and child through super and a re-export', {
        'lib.rs': 'mod e;',
        'e/mod.rs': 'mod w; pub use w::W; pub trait T {}',
        'e/w.rs': 'use super::T; pub struct W;',
    }, [['e/mod.rs', 'e/w.rs']])
    case('a trait in its own file breaks it', {
        'lib.rs': 'mod e;',
        'e/mod.rs': 'mod t; mod w; pub use t::T; pub use w::W;',
        'e/t.rs': 'pub trait T {}',
        'e/w.rs': 'use super::t::T; pub struct W;',
    }, [])
    case('an inline module using super is its own file', {
        'lib.rs': 'mod a; mod b;',
        'a.rs': 'use crate::b::f; pub fn g() {}\nmod inner { use super::*; }',
        'b.rs': 'pub fn f() {}',
    }, [])
    case('a test module is left out', {
        'lib.rs': 'mod a; mod b;',
        'a.rs': 'use crate::b::f; pub fn g() {}',
        'b.rs': 'pub fn f() {}\n#[cfg(test)]\nmod tests { use crate::a::g; }',
    }, [])
    case('an inline path and a nested use tree', {
        'lib.rs': 'mod a; mod b; mod c;',
        'a.rs': 'use crate::{b::{self, B}, c::C};',
        'b.rs': 'pub struct B; fn f() { crate::a::g(); }',
        'c.rs': 'pub struct C;',
    }, [['a.rs', 'b.rs']])
    print('self-test passed' if ok else 'self-test FAILED')
    return 0 if ok else 1


if __name__ == '__main__':
    args = sys.argv[1:]
    if args == ['--self-test']:
        sys.exit(self_test())
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
    dirs = args or sorted(
        os.path.join(root, 'crates', c, 'src') for c in os.listdir(os.path.join(root, 'crates'))
        if os.path.isdir(os.path.join(root, 'crates', c, 'src')))
    sys.exit(check(dirs))
