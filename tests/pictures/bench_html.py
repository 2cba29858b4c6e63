#!/usr/bin/env python3
"""Benchmark, not a test (issue 15): a profile with N distinct stacks
(default 50,000; shared prefixes, 3-14 frames, three files) through
`hotline view --html`, then bench_html.js prints how long Chromium takes to
draw its flame graph. Needs `npm ci` done by the pictures tests.

usage: bench_html.py --hotline PATH --build DIR [--stacks N]
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hotline", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--stacks", type=int, default=50000)
    a = ap.parse_args()
    rnd = random.Random(1)
    prog = "/p/app.py"
    files = ["/usr/lib/python3.11/json/encoder.py", "/usr/lib/python3.11/re/__init__.py", prog]
    stacks, seen = [], set()
    while len(stacks) < a.stacks:
        fr = tuple((files[(d + c) % 3], "f%d_%d" % (d, c), 10 + c)
                   for d in range(rnd.randint(3, 14)) for c in [rnd.randint(0, 5)])
        if fr in seen:
            continue
        seen.add(fr)
        n = rnd.randint(1, 20)
        stacks.append({"frames": [{"file": f, "name": nm, "line": ln} for f, nm, ln in reversed(fr)],
                       "samples": n, "seconds": n / 100})
    total = sum(s["samples"] for s in stacks)
    with tempfile.TemporaryDirectory(prefix="hotline-bench-html-") as tmp:
        pj, html = os.path.join(tmp, "big.json"), os.path.join(tmp, "big.html")
        with open(pj, "w") as f:
            json.dump({"version": 1, "program": prog, "samples": total,
                       "files": {prog: {"lines": {"1": {"python_s": total / 100,
                                                        "samples": total}}}},
                       "stacks": stacks}, f)
        t = time.monotonic()
        subprocess.run([a.hotline, "view", "--html", html, pj], check=True,
                       stdout=subprocess.DEVNULL)
        print("%d stacks: hotline view --html %.2f s (loading a %.1f MB profile), page %.1f MB"
              % (a.stacks, time.monotonic() - t, os.path.getsize(pj) / 1e6,
                 os.path.getsize(html) / 1e6), flush=True)
        mods = os.path.join(os.path.abspath(a.build), "pictures-node", "node_modules")
        return subprocess.run(["node", os.path.join(HERE, "bench_html.js"), mods, html]).returncode


if __name__ == "__main__":
    sys.exit(main())
