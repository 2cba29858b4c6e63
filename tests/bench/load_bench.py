#!/usr/bin/env python3
"""Benchmark (not a test): loading a saved profile that the workspace holds.

Two profiles a cloned repository could carry in .hotline/profile.json
(docs/profile-format.md):
  huge-line  a 188-byte file naming line 10,000,000 of one file
  cap-line   the same at line 1,000,000 (the highest line kept)
  many-files N files (default 30,000) of one line each, with a memory
             timeline (the leak analysis runs over every file)
For each: `hotline view` (wall time, peak RSS) and `hotline lsp` (time until
initialize answers, time until the profile is in, the server's peak RSS).
The view's peak RSS also counts this Python's pages, shared with the child
until it execs (tens of MB).

Usage: load_bench.py HOTLINE [--files N]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.parse


def frame(obj):
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def huge_line(line=10000000):
    # 188 bytes: one line number far past any source file
    return ('{"version":1,"program":"/w/a.py","files":{"/w/a.py":{"lines":'
            '{"%d":{"python_s":1.0,"samples":100}},"functions":[]}},'
            '"samples":10,"elapsed_s":1,"interval_ms":10,"argv":[],"stacks":[]}' % line)


def many_files(n):
    files = {}
    for i in range(n):
        files["/w/pkg%d/mod%d.py" % (i // 100, i)] = {
            "lines": {"3": {"python_s": 0.001, "samples": 1, "alloc_mb": 2.0, "kept_mb": 2.0,
                            "memory_timeline": [[0.1, 0.5], [0.5, 1.0], [0.9, 2.0]]}},
            "functions": []}
    return json.dumps({"version": 1, "program": "/w/main.py", "argv": [], "elapsed_s": 1.0,
                       "interval_ms": 10.0, "samples": n, "files": files, "stacks": [],
                       "memory_timeline": [[0.1, 1.0], [0.9, 50.0]], "peak_mb": 50.0})


def view(hotline, path):
    t = time.perf_counter()
    p = subprocess.Popen([hotline, "view", path], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    err = p.stderr.read().decode(errors="replace")
    return time.perf_counter() - t, ru.ru_maxrss / 1024, p.returncode, err


def read_msg(out):
    length = None
    while True:
        line = out.readline()
        if not line:
            raise EOFError("server closed its output")
        line = line.strip()
        if not line:
            break
        k, _, v = line.decode().partition(":")
        if k.lower() == "content-length":
            length = int(v)
    return json.loads(out.read(length))


def lsp(hotline, root):
    p = subprocess.Popen([hotline, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, cwd=root)
    t0 = time.perf_counter()
    p.stdin.write(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": None, "rootUri": "file://" + urllib.parse.quote(root), "capabilities": {}}}))
    p.stdin.flush()
    while read_msg(p.stdout).get("id") != 1:
        pass
    t_init = time.perf_counter() - t0
    p.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    # hotline/debug/state until "profile" is true: the load has finished
    # (before the load moved off the loop it was true at once)
    rid, loaded, why = 1, None, ""
    while loaded is None and time.perf_counter() - t0 < 120:
        rid += 1
        p.stdin.write(frame({"jsonrpc": "2.0", "id": rid, "method": "hotline/debug/state",
                             "params": {}}))
        p.stdin.flush()
        while True:
            m = read_msg(p.stdout)
            if m.get("method") == "window/logMessage" and "profile" in m["params"]["message"]:
                why = m["params"]["message"]
            if m.get("id") == rid:
                break
        if m["result"].get("profile") or why:
            loaded = time.perf_counter() - t0
    with open("/proc/%d/status" % p.pid) as f:
        hwm = [int(l.split()[1]) for l in f if l.startswith("VmHWM:")][0]
    p.stdin.write(frame({"jsonrpc": "2.0", "id": 999, "method": "shutdown"}))
    p.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
    p.stdin.flush()
    p.wait(60)
    return t_init, loaded, hwm / 1024, why


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("hotline")
    ap.add_argument("--files", type=int, default=30000)
    a = ap.parse_args()
    a.hotline = os.path.abspath(a.hotline)
    for name, text in (("huge-line", huge_line()), ("cap-line", huge_line(1000000)),
                       ("many-files", many_files(a.files))):
        root = tempfile.mkdtemp(prefix="hotline-load-bench-")
        os.makedirs(os.path.join(root, ".hotline"))
        path = os.path.join(root, ".hotline", "profile.json")
        with open(path, "w") as f:
            f.write(text)
        print("%s: %d bytes" % (name, len(text)))
        secs, rss, rc, err = view(a.hotline, path)
        print("  hotline view: %.2f s, peak RSS %.0f MB, exit %d %s" % (
            secs, rss, rc, err.strip().splitlines()[-1][:100] if rc and err.strip() else ""))
        t_init, loaded, hwm, why = lsp(a.hotline, root)
        print("  hotline lsp:  initialize answered after %.3f s, profile in after %s, "
              "peak RSS %.0f MB %s" % (t_init, "%.2f s" % loaded if loaded else "never", hwm,
                                       why[:100]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
