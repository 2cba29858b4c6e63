#!/usr/bin/env python3
"""The server's folders are layers (docs/development.md, "Layers"): a file
may include headers of its own folder and of the folders below it, never
above, so that the include graph between folders has no cycle. Server
headers are included by folder ("core/lsp.h"); a bare name that is a server
header is an error too (it would hide which layer it comes from).

attach/ (the out-of-process profiler) is below the server: server/ may
include it, it never includes a server header (check_attach).

usage: check_layers.py SERVER_DIR [ATTACH_DIR]"""
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
    for b in bad:
        print(b)
    print("%d files checked, %d layering errors" % (len(sources) + nattach, len(bad)))
    return 1 if bad or not sources or (len(sys.argv) > 2 and not nattach) else 0


if __name__ == "__main__":
    sys.exit(main())
