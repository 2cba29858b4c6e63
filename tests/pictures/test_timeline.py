#!/usr/bin/env python3
"""The pictures of time from a real run: speedscope in time order and the
Firefox Profiler's gecko file.

The program runs alpha, then a child Python process that runs gamma (the
parent waits), then beta, then alpha again, each a busy loop of a known
length. Checked:
- speedscope: the main thread's samples, read in order, go alpha -> (the
  wait) -> beta -> alpha, with each phase's weight within 40 % of its true
  length (a whole phase, not a sample); speedscope's own importer loads the
  file (headless Chromium, tests/pictures/speedscope_import.js); `hotline
  view` of the saved JSON gives the same order (the timeline is saved);
- gecko: the file passes the format's schema check (gecko_schema.py);
  the parent's main-thread samples keep the same order; the child's
  samples lie inside the parent's wait on one clock (each agent's hello
  says where its ts 0 is on CLOCK_MONOTONIC), and each process has its
  "Process" marker.

usage: test_timeline.py --hotline PATH --build DIR --agent DIR --python PATH
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "run"))
import gecko_schema  # noqa: E402
from test_cli import check_speedscope, Failed  # noqa: E402
from test_speedscope import importer_loads, install  # noqa: E402

BUSY = '''import time
def spin(t):
    end = time.perf_counter() + t
    n = 0
    while time.perf_counter() < end:
        n += 1
'''
PARENT = BUSY + '''import subprocess, sys, os
def alpha(t): spin(t)
def beta(t): spin(t)
alpha(0.6)
subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "chïld.py")], check=True)
beta(0.6)
alpha(0.4)
'''
CHILD = BUSY + '''def gamma(t): spin(t)
gamma(0.6)
'''
TRUTH = [("alpha", 0.6), ("beta", 0.6), ("alpha", 0.4)]


def phases(seq, min_s):
    """[(function, seconds)] of consecutive runs of the same function, runs
    shorter than min_s dropped (the boundaries of a delta period) and the
    runs they separated joined."""
    runs = []
    for name, w in seq:
        if runs and runs[-1][0] == name:
            runs[-1][1] += w
        else:
            runs.append([name, w])
    out = []
    for name, w in runs:
        if w < min_s:
            continue
        if out and out[-1][0] == name:
            out[-1][1] += w
        else:
            out.append([name, w])
    return out


PHASES = ("alpha", "beta", "<module>")


def owner(frames, prog):
    """The innermost phase function (alpha, beta, or the module waiting)
    of the program's own file in a stack (root first): spin() is under
    each, "alpha (/p/x.py:9)" -> "alpha"."""
    for loc in reversed(frames):
        name = loc.split(" (")[0]
        if prog in loc and name in PHASES:
            return name
    return "?"


def speedscope_phases(s, prog):
    frames = s["shared"]["frames"]
    main = s["profiles"][0]
    seq = [(owner([frames[i]["name"] + " (" + frames[i].get("file", "") + ")" for i in st], prog), w)
           for st, w in zip(main["samples"], main["weights"])]
    return phases([(n, w) for n, w in seq if n in ("alpha", "beta", "<module>")], 0.08)


def check_phases(got, where):
    """alpha, <module> (the wait), beta, alpha, each near its truth."""
    names = [n for n, _ in got]
    want = ["alpha", "<module>", "beta", "alpha"]
    if names != want:
        raise Failed("%s: phases %r, want %r" % (where, got, want))
    timed = [g for g in got if g[0] != "<module>"]
    for (name, w), (tname, truth) in zip(timed, TRUTH):
        if abs(w - truth) > 0.4 * truth:
            raise Failed("%s: %s took %.2f s, truth %.2f s" % (where, name, w, truth))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hotline", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--agent", required=True)
    ap.add_argument("--python", required=True)
    a = ap.parse_args()
    for tool in ("node", "npm"):
        if not shutil.which(tool):
            print("FAIL: NOT RUN: no %s on PATH" % tool)
            return 1
    if not os.access("/usr/bin/chromium", os.X_OK):
        print("FAIL: NOT RUN: no /usr/bin/chromium (.ci/install-deps installs it)")
        return 1
    tmp = tempfile.mkdtemp(prefix="hotline-timeline-")
    try:
        mods = install(a.build)
        d = os.path.join(tmp, "prøg dir")
        os.mkdir(d)
        prog = os.path.join(d, "phases.py")
        with open(prog, "w", encoding="utf-8") as f:
            f.write(PARENT)
        with open(os.path.join(d, "chïld.py"), "w", encoding="utf-8") as f:
            f.write(CHILD)
        pj, ss, gk = (os.path.join(tmp, n) for n in ("p.json", "p.speedscope.json", "p.gecko.json"))
        env = dict(os.environ, HOTLINE_AGENT_PATH=a.agent)
        r = subprocess.run([a.hotline, "run", "--python", a.python, "--json", pj, "--speedscope",
                            ss, "--gecko", gk, prog], capture_output=True, timeout=120, env=env)
        if r.returncode:
            raise Failed("hotline run: %d %s" % (r.returncode, r.stderr.decode()[-2000:]))
        prof = json.load(open(pj))
        if not prof.get("timeline", {}).get("ticks"):
            raise Failed("the saved profile has no timeline")
        # every thread's seconds, as the thread table has them
        thread_s = sum(t["python_s"] + t["native_s"] + t["system_s"] for t in prof["threads"])
        s = check_speedscope(ss, thread_s, tol=0.02 * thread_s)
        got = speedscope_phases(s, prog)
        print("speedscope phases:", got)
        check_phases(got, "speedscope")
        # the saved profile keeps the order
        ss2 = os.path.join(tmp, "view.speedscope.json")
        v = subprocess.run([a.hotline, "view", "--speedscope", ss2, pj], capture_output=True,
                           timeout=60)
        if v.returncode:
            raise Failed("hotline view: %s" % v.stderr.decode())
        check_phases(speedscope_phases(check_speedscope(ss2, thread_s, tol=0.02 * thread_s), prog),
                     "view of the saved JSON")
        # speedscope's own importer
        if not importer_loads(mods, ss, {p["name"]: sum(p["weights"]) for p in s["profiles"]},
                              tmp):
            raise Failed("speedscope's importer refused the time-ordered file")
        # gecko
        g = json.load(open(gk))
        problems = gecko_schema.check(g)
        if problems:
            raise Failed("gecko schema: " + "; ".join(problems[:10]))
        parent = next(t for t in g["threads"] if t["pid"] == t["tid"] and
                      any(prog in s for s in t["stringTable"]))
        data = parent["samples"]["data"]
        named = [(owner(gecko_schema.frames_of(parent, r[0]), prog), r[1]) for r in data]
        interval = g["meta"]["interval"] / 1000.0
        gp = phases([(n, interval) for n, _ in named if n in ("alpha", "beta", "<module>")], 0.08)
        print("gecko phases (samples x interval):", gp)
        if [n for n, _ in gp] != ["alpha", "<module>", "beta", "alpha"]:
            raise Failed("gecko: parent's phases %r" % gp)
        # the child's samples inside the parent's wait, on one clock
        wait = [ms for n, ms in named if n == "<module>"]
        child = [t for t in g["threads"] if t["pid"] != parent["pid"]]
        if not child:
            raise Failed("gecko: no thread of the child process")
        cms = [r[1] for t in child for r in t["samples"]["data"]]
        lo, hi = min(wait), max(wait)
        print("parent waits %.0f..%.0f ms, child samples %.0f..%.0f ms" % (lo, hi, min(cms), max(cms)))
        if min(cms) < lo - 150 or max(cms) > hi + 150:
            raise Failed("gecko: the child's samples (%.0f..%.0f ms) are not inside the parent's "
                         "wait (%.0f..%.0f ms)" % (min(cms), max(cms), lo, hi))
        for t in [parent] + child[:1]:
            names = [t["stringTable"][m[0]] for m in t["markers"]["data"]]
            if "Process" not in names:
                raise Failed("gecko: thread %s (pid %d) has no Process marker: %r"
                             % (t["name"], t["pid"], names))
        print("PASS")
        return 0
    except Failed as e:
        print("FAIL:", e)
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
