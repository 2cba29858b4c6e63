#!/usr/bin/env python3
"""check_layers.py: the profiler's modules form layers, not a knot.

Two graphs must have no cycle (profiler/README.md, "Layers"):
  - includes: file -> the local header it #includes ("x.h");
  - calls: module X -> module Y when X's object file uses a global function
    or variable that Y's object file defines (read with `nm` from the built
    agent, so a call through any header, or none, counts).
A cycle is printed as X -> Y -> ... -> X and fails the test.

With --pure (sampling/, the code the agent and attach share) the folder must
also stand alone: a local include names a file of the folder itself (nothing
of profiler/, protocol/, server/ or attach/), and a system include is a
header of the C library (no Python.h, jansson or libuv).

usage: check_layers.py --src profiler/ --objdir <CMakeFiles/hotline_agent*.dir>
       check_layers.py --src sampling/ --objdir <CMakeFiles/hotline_sampling.dir> --pure
"""
import argparse
import os
import re
import subprocess
import sys


def find_cycle(graph):
    """One cycle of graph {node: set(nodes)} as a list, or None."""
    color, stack = {}, []

    def visit(n):
        color[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if color.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if not color.get(m):
                c = visit(m)
                if c:
                    return c
        stack.pop()
        color[n] = 2
        return None

    for n in sorted(graph):
        if not color.get(n):
            c = visit(n)
            if c:
                return c
    return None


def include_graph(src):
    g = {}
    for root, _, files in os.walk(src):
        for f in files:
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, src)
            edges = g.setdefault(rel, set())
            with open(path, encoding="utf-8") as fh:
                for line in fh:
                    m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                    if not m:
                        continue
                    target = os.path.normpath(os.path.join(os.path.dirname(rel), m.group(1)))
                    if os.path.exists(os.path.join(src, target)):
                        edges.add(target)
    return g


# C11 and POSIX headers: what "libc only" allows
LIBC = {
    "assert.h", "ctype.h", "errno.h", "float.h", "inttypes.h", "limits.h", "math.h",
    "stdalign.h", "stdarg.h", "stdbool.h", "stddef.h", "stdint.h", "stdio.h", "stdlib.h",
    "string.h", "fnmatch.h", "strings.h",
}


def pure_errors(src):
    """Includes of src's files that leave the folder or the C library."""
    bad = []
    for f in sorted(os.listdir(src)):
        if not f.endswith((".c", ".h")):
            continue
        with open(os.path.join(src, f), encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                m = re.match(r'\s*#\s*include\s+([<"])([^">]+)[">]', line)
                if not m:
                    continue
                name = m.group(2)
                if m.group(1) == '"' and not os.path.exists(os.path.join(src, name)):
                    bad.append('%s:%d: "%s" is not a file of %s' % (f, n, name, src))
                elif m.group(1) == "<" and name not in LIBC:
                    bad.append("%s:%d: <%s> is not a C library header (libc only; add a "
                               "libc header to LIBC)" % (f, n, name))
    return bad


def call_graph(objdir):
    objs = {}
    for root, _, files in os.walk(objdir):
        for f in files:
            if f.endswith(".c.o"):
                objs[f[: -len(".c.o")]] = os.path.join(root, f)
    if not objs:
        sys.exit("check_layers: no object files under %s" % objdir)
    defined, used = {}, {}
    for mod, path in objs.items():
        out = subprocess.run(["nm", path], check=True, capture_output=True, text=True).stdout
        used[mod] = set()
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == "U":
                used[mod].add(parts[1])
            elif len(parts) == 3 and parts[1] in "TDBR":
                defined[parts[2]] = mod
    g = {}
    for mod, syms in used.items():
        g[mod] = {defined[s] for s in syms if s in defined and defined[s] != mod}
    return g


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", required=True)
    ap.add_argument("--objdir", required=True)
    ap.add_argument("--pure", action="store_true", help="libc and the folder's own files only")
    args = ap.parse_args()
    bad = 0
    if args.pure:
        for e in pure_errors(args.src):
            print("FAIL: " + e)
            bad = 1
    inc = include_graph(args.src)
    calls = call_graph(args.objdir)
    for name, g in (("include", inc), ("call", calls)):
        c = find_cycle(g)
        if c:
            print("FAIL: %s cycle: %s" % (name, " -> ".join(c)))
            bad = 1
    print("call graph (module -> modules it calls):")
    for mod in sorted(calls):
        print("  %-10s -> %s" % (mod, ", ".join(sorted(calls[mod])) or "-"))
    if not bad:
        print("ok: %d files, %d modules, no include or call cycle" % (len(inc), len(calls)))
    return bad


if __name__ == "__main__":
    sys.exit(main())
