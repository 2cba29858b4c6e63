#!/usr/bin/env python3
"""The server exits at once while it is still loading a big saved profile.

A workspace carries a .hotline/profile.json of ~50 MB (300,000 files of one
line each: under the 64 MB cap, so it is parsed; a quiet machine takes ~8 s
and ~900 MB to load it, a busy one twice that). The client initializes
(which starts the load on the thread pool), then leaves at once:

1. shutdown + exit: the server exits with status 0 within BOUND_S of exit;
2. stdin closes without shutdown: it exits with status 1 within BOUND_S.

Before the load was cancellable the server waited for the whole load (parse,
store, leak analysis) before it could exit. BOUND_S is a correctness bound
with a wide margin for a loaded 2-core machine and sanitizers, not a
benchmark: a cancelled load ends within milliseconds (docs/lsp.md).
The test also checks that the load was still under way at the exit (no
"loaded the last profile" message), else it proves nothing.

Usage: test_exit_during_load.py HOTLINE
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

FILES = 300000
BOUND_S = 3.0
TIMEOUT = 120.0


def frame(obj):
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def write_profile(path, n):
    # the many-files profile of tests/bench/load_bench.py, written as it goes
    line = ('"/w/pkg%d/mod%d.py":{"lines":{"3":{"python_s":0.001,"samples":1,"alloc_mb":2.0,'
            '"kept_mb":2.0,"memory_timeline":[[0.1,0.5],[0.5,1.0],[0.9,2.0]]}},"functions":[]}')
    with open(path, "w") as f:
        f.write('{"version":1,"program":"/w/main.py","argv":[],"elapsed_s":1.0,'
                '"interval_ms":10.0,"samples":%d,"stacks":[],"peak_mb":50.0,'
                '"memory_timeline":[[0.1,1.0],[0.9,50.0]],"files":{' % n)
        f.write(",".join(line % (i // 100, i) for i in range(n)))
        f.write("}}\n")
    return os.path.getsize(path)


def messages(data):
    out = []
    while True:
        sep = data.find(b"\r\n\r\n")
        if sep < 0:
            return out
        n = int(data[:sep].split(b":")[1])
        out.append(json.loads(data[sep + 4: sep + 4 + n]))
        data = data[sep + 4 + n:]


def leave(hotline, root, how):
    """Initialize in root, then leave `how` at once; (seconds to exit, status)."""
    p = subprocess.Popen([hotline, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, cwd=root, bufsize=0)
    try:
        p.stdin.write(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": None, "rootUri": "file://" + urllib.parse.quote(root),
            "capabilities": {}}}))
        p.stdin.flush()
        head = p.stdout.readline()  # unbuffered: the answer begins, the load is queued
        assert head.startswith(b"Content-Length"), head
        p.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        if how == "exit":
            p.stdin.write(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
            p.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
            p.stdin.flush()
        t0 = time.monotonic()
        # communicate closes stdin: for "eof" that is all (no shutdown, the
        # client is gone)
        out, err = p.communicate(timeout=TIMEOUT)
        secs = time.monotonic() - t0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    logs = [m["params"]["message"] for m in messages(head + out)
            if m.get("method") == "window/logMessage"]
    assert not [m for m in logs if "loaded the last profile" in m], \
        "the load finished before the client left: the profile is too small to test this"
    if how == "exit":
        assert [m for m in messages(head + out) if m.get("id") == 2], "no answer to shutdown"
    return secs, p.returncode, err.decode("utf-8", "replace")


def main():
    hotline = os.path.abspath(sys.argv[1])
    root = tempfile.mkdtemp(prefix="hotline-exit-load-")
    try:
        os.mkdir(os.path.join(root, ".hotline"))
        size = write_profile(os.path.join(root, ".hotline", "profile.json"), FILES)
        print("profile: %d files, %.1f MB" % (FILES, size / 1e6))
        fails = []
        for how, want in (("exit", 0), ("eof", 1)):
            secs, code, err = leave(hotline, root, how)
            print("%s: exited %.3f s after the client left, status %d" % (how, secs, code))
            if code != want:
                fails.append("%s: exit status %d, want %d\n%s" % (how, code, want, err))
            if secs >= BOUND_S:
                fails.append("%s: the server took %.1f s to exit (bound %.1f s): it waited "
                             "for the profile load" % (how, secs, BOUND_S))
        if fails:
            print("FAIL:\n" + "\n".join(fails))
            return 1
        print("PASS")
        return 0
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
