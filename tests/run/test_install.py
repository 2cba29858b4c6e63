#!/usr/bin/env python3
"""`cmake --install` gives a working Hotline: install the build into a
fresh prefix, then run `P/bin/hotline run --json` on a small program with
nothing pointing at the build (no HOTLINE_AGENT_PATH, another working
directory). The binary must find its agent at P/lib/hotline/python (the
layout server/session.c searches), the program must run, and the profile
must hold the program's hot line with samples and its memory line with the
shim's allocations.

usage: test_install.py --build BUILD_DIR --python PY [--cmake CMAKE]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

PROG = '''import time

def spin(seconds):
    end = time.perf_counter() + seconds
    n = 0
    while time.perf_counter() < end:
        n += 1                                   # HOT
    return n

def grab():
    return [bytearray(8 << 20) for _ in range(4)]   # MEM

keep = grab()
spin(0.6)
'''


def fail(msg, *extra):
    print("FAIL:", msg)
    for e in extra:
        print("---", e)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--python", required=True)
    ap.add_argument("--cmake", default="cmake")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="hotline-install-")
    prefix = os.path.join(tmp, "prefix")
    r = subprocess.run([a.cmake, "--install", a.build, "--prefix", prefix],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        fail("cmake --install exited %d" % r.returncode, r.stdout[-3000:], r.stderr[-3000:])
    hotline = os.path.join(prefix, "bin", "hotline")
    agent = os.path.join(prefix, "lib", "hotline", "python")
    pkg = os.path.join(agent, "_hotline_agent")  # what hotline run imports: a private name
    expected = [hotline, os.path.join(agent, "sitecustomize.py"),
                os.path.join(agent, "hotline", "__init__.py"),  # the public face
                os.path.join(agent, "hotline", "__main__.py"),
                os.path.join(pkg, "__init__.py"),
                os.path.join(pkg, "_config.py"),
                os.path.join(pkg, "_cells.py"),
                os.path.join(pkg, "libhotline_memshim.so")]
    missing = [p for p in expected if not os.path.exists(p)]
    agents = [f for f in os.listdir(pkg) if f.startswith("_agent")] if os.path.isdir(pkg) else []
    if missing or not agents:
        fail("installed tree incomplete: missing %s, agents %s" % (missing, agents))
    work = os.path.join(tmp, "work")
    os.mkdir(work)
    prog = os.path.join(work, "prog.py")
    with open(prog, "w") as f:
        f.write(PROG)
    lines = {l.split("# ")[-1].strip(): i for i, l in enumerate(PROG.splitlines(), 1) if "# " in l}
    out = os.path.join(work, "profile.json")
    env = dict(os.environ)
    for k in ("HOTLINE_AGENT_PATH", "PYTHONPATH", "VIRTUAL_ENV"):
        env.pop(k, None)
    r = subprocess.run([hotline, "run", "--python", a.python, "--json", out, prog], cwd=work,
                       env=env, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        fail("installed hotline run exited %d" % r.returncode, r.stderr[-3000:])
    with open(out) as f:
        prof = json.load(f)
    files = prof.get("files", {})
    fo = files.get(prog) or files.get(os.path.realpath(prog))
    if not fo:
        fail("the program's file is not in the profile: %s" % list(files), r.stderr[-3000:])
    hot = fo["lines"].get(str(lines["HOT"]), {})
    mem = fo["lines"].get(str(lines["MEM"]), {})
    print("hot line:", hot)
    print("mem line:", mem)
    # not an accuracy test (profiler.truth is): the line is there and sampled
    if hot.get("samples", 0) < 3 or hot.get("python_s", 0) + hot.get("native_s", 0) <= 0:
        fail("the hot line is missing or unsampled: %r" % hot)
    if mem.get("alloc_mb", 0) < 16:
        fail("the memory line lacks its 32 MB of allocations: %r" % mem, r.stderr[-3000:])
    print("PASS: installed into", prefix)
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
