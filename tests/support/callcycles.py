#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Call cycles between source files, from the objects' symbols (issue 21: no call cycles
between files). File A depends on file B when A's object leaves undefined a global
symbol that B's object defines (a call or a data reference). Every strongly connected set
of two or more files is a cycle. The cycles the tree has today are listed, one per line,
in callcycles.allow; a cycle that is not within a listed one fails the check (a new
cycle), and so does a listed one that is gone (shrink the list as cycles are broken).

Usage: callcycles.py BUILD_DIR SOURCE_DIR [--write | --arrows [FOLDER]]
  --write: record today's cycles; --arrows: print the file arrows (of FOLDER's files,
  e.g. daemon/), the graph docs/design.md draws
Exit: 0 clean, 1 a new or stale cycle, 77 no objects or no nm (skipped)."""
import os
import re
import shutil
import subprocess
import sys

# The objects of the project's own code: libraries, daemon, CLI. Tests and tools are
# left out (a test may call anything).
TARGET_DIRS = {
    "lib/CMakeFiles/npf_core.dir": "lib",
    "lib/CMakeFiles/npf_sys.dir": "lib",
    "probe/CMakeFiles/npf_probe.dir": "probe",
    "daemon/CMakeFiles/netpreflightd.dir": "daemon",
    "cli/CMakeFiles/netpreflight.dir": "cli",
}


def objects(build):
    """(source path relative to the tree, object path) for every object of TARGET_DIRS."""
    out = []
    for tdir, srcdir in TARGET_DIRS.items():
        root = os.path.join(build, tdir)
        for dirpath, _, files in os.walk(root):
            for f in files:
                if not f.endswith(".c.o"):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, f), root)[: -len(".o")]
                out.append((os.path.join(srcdir, rel), os.path.join(dirpath, f)))
    return sorted(out)


def symbols(obj):
    """(defined globals, undefined) of one object, from nm's POSIX output."""
    res = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True)
    defined, undefined = set(), set()
    for line in res.stdout.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            undefined.add(name)
        elif kind in "TDBRCVW" and kind.isupper():
            defined.add(name)
    return defined, undefined


def sccs(nodes, edges):
    """Tarjan's strongly connected components, iteratively (no recursion limit)."""
    index, low, on, stack, comps = {}, {}, set(), [], []
    counter = [0]
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    comps.append(tuple(sorted(comp)))
    return sorted(comps)


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    build, src = argv[1], argv[2]
    write = "--write" in argv[3:]
    if shutil.which("nm") is None:
        print("SKIP: nm not installed (binutils)")
        return 77
    objs = objects(build)
    if not objs:
        print(f"SKIP: no objects under {build} (build the daemon and the CLI first)")
        return 77
    owner, needs = {}, {}
    for srcpath, obj in objs:
        d, u = symbols(obj)
        needs[srcpath] = u
        for s in d:
            owner.setdefault(s, srcpath)
    edges = {f: {owner[s] for s in u if s in owner and owner[s] != f} for f, u in needs.items()}
    found = sccs([f for f, _ in objs], edges)

    if "--arrows" in argv[3:]:
        rest = argv[argv.index("--arrows") + 1:]
        folder = rest[0] if rest else ""
        for f in sorted(edges):
            if f.startswith(folder):
                print(f"{f} -> {' '.join(sorted(edges[f])) or '(none)'}")
        return 0

    allow_path = os.path.join(src, "tests/support/callcycles.allow")
    if write:
        with open(allow_path, "w") as fh:
            fh.write("# Call cycles between files that the tree still has (tests/support/callcycles.py).\n")
            fh.write("# One cycle per line. Break them; never add one.\n")
            for c in found:
                fh.write(" ".join(c) + "\n")
        print(f"wrote {len(found)} cycle(s) to {allow_path}")
        return 0
    allowed = []
    if os.path.exists(allow_path):
        with open(allow_path) as fh:
            for line in fh:
                line = line.split("#", 1)[0].split()
                if line:
                    allowed.append(tuple(sorted(line)))
    bad = 0
    for c in found:
        if not any(set(c) <= set(a) for a in allowed):
            bad += 1
            print("FAIL new call cycle: " + " <-> ".join(c))
            for f in c:
                for g in sorted(edges[f] & set(c)):
                    syms = sorted(s for s in needs[f] if owner.get(s) == g)
                    print(f"       {f} -> {g}: {', '.join(syms[:4])}{' ...' if len(syms) > 4 else ''}")
    for a in allowed:
        if a not in found:
            bad += 1
            print("FAIL listed cycle is gone or changed (update tests/support/callcycles.allow): "
                  + " ".join(a))
    for c in found:
        if c in allowed:
            print("known cycle: " + " <-> ".join(c))
    print(f"{len(objs)} files, {sum(len(e) for e in edges.values())} file arrows, "
          f"{len(found)} cycle(s), {bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
