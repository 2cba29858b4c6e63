#!/usr/bin/env python3
"""The server's folders are layers (docs/development.md, "Layers"): a file
may include headers of its own folder and of the folders below it, never
above, so that the include graph between folders has no cycle. Server
headers are included by folder ("core/lsp.h"); a bare name that is a server
header is an error too (it would hide which layer it comes from).

usage: check_layers.py SERVER_DIR"""
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
    for b in bad:
        print(b)
    print("%d files checked, %d layering errors" % (len(sources), len(bad)))
    return 1 if bad or not sources else 0


if __name__ == "__main__":
    sys.exit(main())
