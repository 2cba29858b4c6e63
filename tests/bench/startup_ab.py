#!/usr/bin/env python3
"""Start-up of the empty program, two builds interleaved (not a test).

    tests/bench/startup_ab.py --base OTHER/hotline [--new build/hotline]
                              [--python /usr/bin/python3,...] [--runs 21]

Rounds of: plain python, each build with `--no-memory` and with memory on;
min and median wall time of each and the CPU of the process tree
(getrusage of the waited child), with what each adds over plain. Byte code
is cached (PYTHONDONTWRITEBYTECODE unset, one warm-up round). The load
(/proc/loadavg) is printed before and after: the machine is shared.
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EMPTY = os.path.join(HERE, "workloads", "empty.py")


def one(cmd, env):
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, st, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(st) != 0:
        raise SystemExit("failed: %s" % " ".join(cmd))
    return time.perf_counter() - t0, ru.ru_utime + ru.ru_stime


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, help="the other build's hotline binary")
    ap.add_argument("--new", default=os.path.join(ROOT, "build", "hotline"))
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--runs", type=int, default=21)
    a = ap.parse_args()
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    out = os.path.join(tempfile.mkdtemp(prefix="hotline-startup-"), "p.json")
    for py in a.python.split(","):
        modes = {"plain": [py, EMPTY]}
        for name, hl in (("base", a.base), ("new", a.new)):
            run = [hl, "run", "--python", py, "--json", out]
            modes[name + " --no-memory"] = run + ["--no-memory", EMPTY]
            modes[name + " memory"] = run + [EMPTY]
        for cmd in modes.values():  # warm-up: byte code written
            one(cmd, env)
        res = {m: ([], []) for m in modes}
        l0 = load()
        for _ in range(a.runs):
            for m, cmd in modes.items():
                w, c = one(cmd, env)
                res[m][0].append(w)
                res[m][1].append(c)
        print("%s, %d runs, load %s -> %s; min / median ms (over plain's min / median)" % (
            py, a.runs, l0, load()))
        pw, pc = res["plain"]
        for m, (w, c) in res.items():
            print("  %-18s wall %6.1f / %6.1f (%+5.1f / %+5.1f)  cpu %6.1f / %6.1f (%+5.1f / %+5.1f)" % (
                m, min(w) * 1e3, statistics.median(w) * 1e3, (min(w) - min(pw)) * 1e3,
                (statistics.median(w) - statistics.median(pw)) * 1e3, min(c) * 1e3,
                statistics.median(c) * 1e3, (min(c) - min(pc)) * 1e3,
                (statistics.median(c) - statistics.median(pc)) * 1e3))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
