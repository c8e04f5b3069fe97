#!/usr/bin/env python3
"""Lists the module-level imports of a crate's src/ and reports import loops between files.

Usage: tools/layers.py CRATE_SRC_DIR [--edges] [--ladder a,b|c,d,...]
With --ladder (the top-level modules from the top layer down, `|` between modules of one
layer), an import from a lower layer into a higher one is reported too. A file's imports are its `use crate::…`, `use super::…`, `crate::a::b` paths in code, and
`super::` paths; each is resolved to the file that defines the module. Test modules
(`#[cfg(test)] mod tests { … }` to the end of the file) are left out. Exits 1 on a loop.
"""
import os, re, sys

def module_files(src):
    files = {}
    for root, _, names in os.walk(src):
        for n in names:
            if not n.endswith('.rs'):
                continue
            p = os.path.join(root, n)
            rel = os.path.relpath(p, src)[:-3].split(os.sep)
            if rel[-1] in ('mod', 'lib', 'main'):
                rel = rel[:-1]
            files[tuple(rel)] = p
    return files

def strip_tests(text):
    m = re.search(r'#\[cfg\(test\)\]\s*(pub\s+)?mod\s+\w+\s*\{', text)
    text = text[:m.start()] if m else text
    text = re.sub(r'//[^\n]*', '', text)
    return text

def resolve(path, files):
    # Longest prefix of `path` that is a module file.
    for k in range(len(path), -1, -1):
        if tuple(path[:k]) in files:
            return tuple(path[:k])
    return None

def imports(mod, text, files):
    out = set()
    # Expand `use crate::a::{b, c::d}` groups one level.
    for m in re.finditer(r'\b(crate|super)((?:::(?:super|\w+))+)(::\{([^}]*)\})?', text):
        head, rest, group = m.group(1), m.group(2), m.group(4)
        parts = [p for p in rest.split('::') if p]
        if head == 'crate':
            base = []
        else:
            # `super` from a file module: its parent; from mod.rs it is also the parent module.
            base = list(mod[:-1])
        while parts and parts[0] == 'super':
            base = base[:-1]
            parts = parts[1:]
        targets = [base + parts]
        if group:
            targets = [base + parts + [g.strip().split('::')[0]] for g in group.split(',') if g.strip() and g.strip() != 'self'] or targets
        for t in targets:
            r = resolve(t, files)
            if r is not None and r != mod and not (len(r) < len(mod) and mod[:len(r)] == r and r != ()):
                out.add(r)
    return out

def main():
    src = sys.argv[1]
    files = module_files(src)
    graph = {}
    for mod, p in files.items():
        graph[mod] = imports(mod, strip_tests(open(p).read()), files) - {()}
    if '--edges' in sys.argv:
        for mod in sorted(graph):
            print('/'.join(mod) or '<root>', '->', ', '.join(sorted('/'.join(t) for t in graph[mod])))
    # Loops: strongly connected components with more than one file.
    index, low, stack, on, sccs, n = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)
    def visit(v):
        index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v: break
            if len(comp) > 1:
                sccs.append(comp)
    for v in graph:
        if v not in index:
            visit(v)
    for c in sccs:
        print('loop:', ' <-> '.join(sorted('/'.join(m) for m in c)))
    upward = []
    if '--ladder' in sys.argv:
        ladder = sys.argv[sys.argv.index('--ladder') + 1].split(',')
        rank = {m: len(ladder) - i for i, layer in enumerate(ladder) for m in layer.split('|')}
        for mod in sorted(graph):
            if not mod or mod[0] not in rank:
                continue
            for t in sorted(graph[mod]):
                if t and t[0] in rank and rank[t[0]] > rank[mod[0]]:
                    upward.append((mod, t))
                    print('upward:', '/'.join(mod), '->', '/'.join(t))
        unplaced = sorted({m[0] for m in files if m and m[0] not in rank})
        if unplaced:
            print('not on the ladder:', ', '.join(unplaced))
    print(f'{len(files)} files, {len(sccs)} loops, {len(upward)} upward imports')
    sys.exit(1 if sccs or upward else 0)

main()
