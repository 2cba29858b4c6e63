#!/usr/bin/env python3
"""The server's folders are layers (docs/development.md, "Layers"): a file
may include headers of its own folder and of the folders below it, never
above, so that the include graph between folders has no cycle. Server
headers are included by folder ("core/lsp.h"); a bare name that is a server
header is an error too (it would hide which layer it comes from).

attach/ (the out-of-process profiler) is below the server: server/ may
include it, it never includes a server header (check_attach).

Inside a folder, files are modules (x.c and x.h are one module x): the
include graph between the modules of one folder has no circle either
(file_circles), so that a folder's files stay layers of their own.

usage: check_layers.py SERVER_DIR [ATTACH_DIR]
       check_layers.py --self-test   (file_circles finds a planted circle)"""
import os
import re
import sys

# folder -> folders it may include (besides its own)
ALLOWED = {
    "store": set(),
    "text": set(),
    "anchor": {"store", "text"},
    "proc": {"store"},
    "llm": set(),
    "core": {"anchor", "proc", "store", "text"},
    "providers": {"core", "llm", "proc", "anchor", "store", "text"},
    "cli": {"core", "proc", "store", "text"},
    "": {"cli", "core", "providers", "llm", "proc", "anchor", "store", "text"},  # main.c
}
# Circles between files that are known and have an issue to remove them:
# reported, not failed on; once one is gone the check fails until it is
# taken off this list (a ratchet). None left: store/'s memprof <-> profile
# went with issue 24, item 7 (profile owns a struct memprof and calls in).
KNOWN_CIRCLES = set()
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def check_attach(attach, server):
    """Errors of attach/: an include of a server folder ("proc/x.h",
    "server/x.h") or a bare name only server/ has."""
    folders = {n for n in os.listdir(server) if os.path.isdir(os.path.join(server, n))}
    server_headers = set()
    for dirpath, _, names in os.walk(server):
        server_headers.update(n for n in names if n.endswith(".h"))
    own = {n for n in os.listdir(attach) if n.endswith(".h")}
    bad, n = [], 0
    for name in sorted(os.listdir(attach)):
        if not name.endswith((".c", ".h")):
            continue
        n += 1
        with open(os.path.join(attach, name), encoding="utf-8") as f:
            text = f.read()
        for inc in INCLUDE.findall(text):
            top = inc.split("/")[0] if "/" in inc else None
            if top in folders or top == "server" or (
                    top is None and inc in server_headers and inc not in own):
                bad.append("attach/%s: includes \"%s\" (attach/ never includes server/)"
                           % (name, inc))
    return n, bad


def main():
    if sys.argv[1] == "--self-test":
        return file_circles_self_test()
    root = sys.argv[1]
    headers = {}
    sources = []
    for dirpath, _, names in os.walk(root):
        for n in names:
            if n.endswith((".c", ".h")):
                rel = os.path.relpath(os.path.join(dirpath, n), root)
                sources.append(rel)
                if n.endswith(".h"):
                    headers.setdefault(n, rel)
    bad = []
    for rel in sorted(sources):
        folder = os.path.dirname(rel)
        if folder not in ALLOWED:
            bad.append("%s: folder %r is not a known layer (add it to ALLOWED and the docs)"
                       % (rel, folder))
            continue
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            text = f.read()
        for inc in INCLUDE.findall(text):
            if "/" not in inc:
                if inc in headers:
                    bad.append("%s: includes \"%s\" without its folder (\"%s\")"
                               % (rel, inc, headers[inc]))
                continue  # protocol/ or generated headers
            to = inc.split("/")[0]
            if to != folder and to not in ALLOWED[folder]:
                bad.append("%s: %s/ may not include %s (%s/ is not below it)"
                           % (rel, folder or "server", inc, to))
    nattach = 0
    if len(sys.argv) > 2:
        nattach, abad = check_attach(sys.argv[2], root)
        bad += abad
    circles = file_circles(root, sources)
    for comp, text in circles:
        if comp in KNOWN_CIRCLES:
            print("known (not failed on): " + text)
        else:
            bad.append(text)
    for gone in sorted(KNOWN_CIRCLES - {comp for comp, _ in circles}):
        bad.append("circle %s is gone: take it off KNOWN_CIRCLES" % " <-> ".join(gone))
    for b in bad:
        print(b)
    print("%d files checked, %d layering errors" % (len(sources) + nattach, len(bad)))
    return 1 if bad or not sources or (len(sys.argv) > 2 and not nattach) else 0


def module(rel):
    """core/lsp.c, core/lsp.h -> core/lsp; store/profile_internal.h -> store/profile"""
    stem = os.path.splitext(rel)[0]
    return stem[: -len("_internal")] if stem.endswith("_internal") else stem


def file_circles(root, sources):
    """(modules, message), one per circle: modules of one folder (a .c and
    its .h are one module, named by the stem; x_internal.h is x's private
    header) whose includes of each other form a cycle."""
    edges = {}  # "folder/stem" -> {"folder/stem" included, same folder}
    for rel in sources:
        folder = os.path.dirname(rel)
        mod = module(rel)
        edges.setdefault(mod, set())
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            text = f.read()
        for inc in INCLUDE.findall(text):
            if os.path.dirname(inc) == folder and folder:
                to = module(inc)
                if to != mod:
                    edges[mod].add(to)
    # strongly connected components (Tarjan), each of more than one module
    index, low, stack, on, sccs = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
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
                sccs.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    bad = []
    for comp in sorted(sccs):
        cyc = ", ".join(
            "%s -> %s" % (a, b) for a in comp for b in sorted(edges[a]) if b in comp)
        bad.append((tuple(comp), "include circle between files of %s/: %s"
                    % (os.path.dirname(comp[0]), cyc)))
    return bad


def file_circles_self_test():
    """0 when file_circles reports a planted circle (core/a.c includes
    core/b.h, core/b.c includes core/a.h) and nothing once it is cut."""
    import tempfile
    with tempfile.TemporaryDirectory() as root:
        os.mkdir(os.path.join(root, "core"))
        files = {"core/a.h": "", "core/b.h": "", "core/a.c": '#include "core/b.h"\n',
                 "core/b.c": '#include "core/a.h"\n'}
        for rel, text in files.items():
            with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
                f.write(text)
        found = file_circles(root, sorted(files))
        with open(os.path.join(root, "core/b.c"), "w", encoding="utf-8") as f:
            f.write("")
        cut = file_circles(root, sorted(files))
    ok = [c for c, _ in found] == [("core/a", "core/b")] and not cut
    print("file_circles self-test: %s" % ("ok" if ok else "FAILED %r %r" % (found, cut)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
