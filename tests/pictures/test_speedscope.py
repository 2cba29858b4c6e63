#!/usr/bin/env python3
"""`hotline view --speedscope` checked by speedscope's own importer.

Writes a profile with awkward stacks (unicode and spaces in paths, ';' and a
newline in a name, library frames, samples without a stored stack), exports
it with the built hotline, checks the file's structure here, then imports it
with the pinned speedscope package in headless Chromium
(speedscope_import.js): no error, no warning, one profile per thread (and
one for the threads not told apart), each with its own total weight.

The pinned packages (package.json + package-lock.json beside this file) are
installed with `npm ci` into BUILD/pictures-node, again only when the lock
changed. Without node, npm or /usr/bin/chromium the test fails, saying
which is missing.

usage: test_speedscope.py --hotline PATH --build DIR
"""
import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "run"))
from test_cli import check_speedscope, Failed  # noqa: E402

PROG = "/p/dïr with spaces/日本 main.py"
LIB = "/usr/lib/python3.11/json/encoder.py"
STACKS = [
    {"frames": [{"file": LIB, "name": "odd;name\nhere", "line": 7},
                {"file": PROG, "name": "<module>", "line": 1}], "samples": 30, "seconds": 0.3,
     "threads": [{"pid": 100, "tid": 100, "samples": 20, "seconds": 0.2},
                 {"pid": 100, "tid": 101, "samples": 10, "seconds": 0.1}]},
    {"frames": [{"file": PROG, "name": "work", "line": 3},
                {"file": PROG, "name": "<module>", "line": 2}], "samples": 20, "seconds": 0.2,
     "threads": [{"pid": 100, "tid": 101, "samples": 15, "seconds": 0.15}]},
]
# the worker listed first: the main thread's profile must still come first
THREADS = [{"pid": 100, "tid": 101, "name": "Thread-1 (wörk)", "python_s": 0.25},
           {"pid": 100, "tid": 100, "name": "MainThread", "python_s": 0.3}]
# per profile: MainThread 0.2 s in stacks + 0.1 s of the profile's 0.6 s that
# no stored stack carries (its thread seconds have 0.1 s beyond its stacks);
# the worker's 0.25 s; 0.05 s of the second stack not told apart
EXPECT = {"MainThread (tid 100)": 0.3, "Thread-1 (wörk) (tid 101)": 0.25,
          "[other threads]": 0.05}


def skip_or_fail(msg):
    """A missing tool fails the test: a skip reads like a pass in a summary
    (.ci/install-deps installs node, npm and chromium)."""
    print("FAIL: " + msg)
    return 1


def install(build):
    """npm ci of the pinned packages into build/pictures-node; its node_modules."""
    dest = os.path.join(build, "pictures-node")
    lock = os.path.join(HERE, "package-lock.json")
    stamp = os.path.join(dest, "package-lock.json")
    mods = os.path.join(dest, "node_modules")
    if not (os.path.isdir(mods) and os.path.exists(stamp) and filecmp.cmp(lock, stamp, False)):
        os.makedirs(dest, exist_ok=True)
        shutil.copy(os.path.join(HERE, "package.json"), dest)
        shutil.copy(lock, dest)
        subprocess.run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=dest,
                       check=True, timeout=600)
    return mods


def importer_loads(mods, path, expect, tmp):
    """True when speedscope's own importer (speedscope_import.js, headless
    Chromium) loads path with exactly the profiles of expect ({name: total
    seconds})."""
    ej = os.path.join(tmp, "expect.json")
    with open(ej, "w") as f:
        json.dump(expect, f)
    return subprocess.run(["node", os.path.join(HERE, "speedscope_import.js"), mods, path, ej],
                          timeout=120).returncode == 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hotline", required=True)
    ap.add_argument("--build", required=True)
    a = ap.parse_args()
    for tool in ("node", "npm"):
        if not shutil.which(tool):
            return skip_or_fail("NOT RUN: no %s on PATH" % tool)
    if not os.access("/usr/bin/chromium", os.X_OK):
        return skip_or_fail("NOT RUN: no /usr/bin/chromium (.ci/install-deps installs it)")
    try:
        mods = install(a.build)
    except (subprocess.SubprocessError, OSError) as e:
        return skip_or_fail("NOT RUN: npm ci failed (%s)" % e)
    tmp = tempfile.mkdtemp(prefix="hotline-speedscope-")
    try:
        prof = os.path.join(tmp, "p.json")
        with open(prof, "w", encoding="utf-8") as f:
            json.dump({"version": 1, "program": PROG, "samples": 60,
                       "files": {PROG: {"lines": {"1": {"python_s": 0.6, "samples": 60}}}},
                       "stacks": STACKS, "threads": THREADS,
                       "processes": [{"pid": 100, "ppid": 1}]}, f)
        out = os.path.join(tmp, "prøfile ss.json")
        v = subprocess.run([a.hotline, "view", "--speedscope", out, prof], capture_output=True,
                           timeout=30)
        if v.returncode:
            print("FAIL: hotline view:", v.stderr.decode())
            return 1
        # 0.5 s in the stacks + 0.1 s of the profile's 0.6 s that no stored stack carries
        s = check_speedscope(out, 0.6)
        names = {f["name"] for f in s["shared"]["frames"]}
        if "odd;name\nhere (%s:7)" % LIB not in names or "[other stacks]" not in names:
            print("FAIL: frame names", sorted(names))
            return 1
        got = {p["name"]: sum(p["weights"]) for p in s["profiles"]}
        if [p["name"] for p in s["profiles"]][:1] != ["MainThread (tid 100)"] or \
                set(got) != set(EXPECT) or \
                any(abs(got[k] - EXPECT[k]) > 1e-6 for k in EXPECT):
            print("FAIL: profiles and weights %r, expected %r" % (got, EXPECT))
            return 1
        return 0 if importer_loads(mods, out, EXPECT, tmp) else 1
    except Failed as e:
        print("FAIL:", e)
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
