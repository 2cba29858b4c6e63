#!/usr/bin/env python3
"""What memory profiling costs (not a test): CPU and wall time of a few
workloads run plain, under `hotline run --no-memory` ("time") and under
`hotline run` ("full", memory on), interleaved, median of --reps.

    tests/bench/mem_cost.py [--hotline build/hotline] [--python /usr/bin/python3]
                            [--reps 5] [--seconds 2] [--only loop,churn,idle,empty]
                            [--compare other-build/hotline]

CPU is user + system of the whole process tree (getrusage of the waited
child: the program, its agent's sampler thread and the `hotline run`
server), so it shows what the agent burns beside the program, which wall
time hides on an idle core but not when every core is busy. Each figure is
printed with /proc/loadavg before and after: the machine is shared.
Workloads: `loop` (`x += i`: one small int allocation per iteration),
tests/bench/workloads/churn.py (small dicts, lists, strs), pycalls.py,
`idle` (one thread asleep: what an idle process pays) and empty.py
(start-up); `--only` takes any other file of tests/bench/workloads by name
too (alloc, gmm, ...). Nothing is asserted.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

LOOP = "import sys\nx = 0\nfor i in range(int(15_000_000 * float(sys.argv[1]))):\n    x += i\n"
IDLE = "import sys, time\ntime.sleep(float(sys.argv[1]))\n"


# Runs the workload, then appends to $MEMCOST_OUT the process's CPU
# seconds and its main thread's: the difference is what other threads (the
# agent's sampler) burnt, whatever the machine's load does to wall time.
RUNNER = """import os, runpy, sys, time
path = sys.argv[1]
sys.argv = sys.argv[1:]
runpy.run_path(path, run_name="__main__")
t = time.process_time()
with open(os.environ["MEMCOST_OUT"], "a") as f:
    f.write("%f %f\\n" % (t, time.thread_time()))
"""


def run(cmd, res):
    """(wall s, CPU s of the tree, CPU s of the program's main thread, CPU s
    of its other threads) of one run of argv cmd, which must succeed."""
    open(res, "w").close()
    t0 = time.perf_counter()
    with open(os.devnull, "wb") as null:
        pid = subprocess.Popen(cmd, stdout=null, stderr=null,
                               env=dict(os.environ, MEMCOST_OUT=res)).pid
        _, status, ru = os.wait4(pid, 0)
    dt = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit("failed: %s" % " ".join(cmd))
    with open(res) as f:
        proc, main = [float(x) for x in f.read().split()]
    return dt, ru.ru_utime + ru.ru_stime, main, proc - main


def load():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hotline", default=os.path.join(ROOT, "build", "hotline"))
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=2.0, help="plain run length to scale to")
    ap.add_argument("--only", default="loop,churn,pycalls,idle,empty")
    ap.add_argument("--compare", default="", help="another hotline binary, run interleaved")
    a = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="hotline-memcost-")
    out = os.path.join(tmp, "p.json")
    progs = {}
    res = os.path.join(tmp, "cpu.txt")
    runner = os.path.join(tmp, "runner.py")
    with open(runner, "w") as f:
        f.write(RUNNER)
    for name, src in (("loop", LOOP), ("idle", IDLE)):
        progs[name] = os.path.join(tmp, name + ".py")
        with open(progs[name], "w") as f:
            f.write(src)
    for name in a.only.split(","):  # any of tests/bench/workloads (alloc, gmm, ...)
        if name not in progs:
            progs[name] = os.path.join(HERE, "workloads", name + ".py")
    hl = [a.hotline, "run", "--python", a.python, "--json", out]
    modes = {"plain": [a.python], "time": hl + ["--no-memory"], "full": hl}
    if a.compare:  # another build, e.g. main's, interleaved with this one
        hl0 = [a.compare] + hl[1:]
        modes.update({"time0": hl0 + ["--no-memory"], "full0": hl0})

    print("python %s, %d reps; medians; ratios over plain's median; time = --no-memory, "
          "full = memory on%s" % (a.python, a.reps, "; *0 = " + a.compare if a.compare else ""))
    others = [m for m in modes if m != "plain"]
    print("wall: whole run; cpu: process tree (+ `hotline run`'s server); main: the "
          "program's main thread's CPU; agent: CPU of the process's other threads, ms a second")
    print("%-8s %6s %6s | %s | %s | %s | %s | load" % (
        "workload", "plain", "cpu", " ".join("%9s" % ("wall " + m) for m in others),
        " ".join("%9s" % ("cpu " + m) for m in others),
        " ".join("%9s" % ("main " + m) for m in others),
        " ".join("%9s" % ("agent " + m) for m in others)))
    for name in a.only.split(","):
        args = []
        if name == "idle":
            args = [str(a.seconds)]
        elif name != "empty":
            w = run([a.python, runner, progs[name], "0.2"], res)[0]
            args = ["%.3f" % max(0.05, 0.2 * a.seconds / w)]
        l0 = load()
        walls, cpus, mains, agents = ({m: [] for m in modes} for _ in range(4))
        for _ in range(a.reps):
            for m, pre in modes.items():
                w, c, mc, ac = run(pre + [runner, progs[name]] + args, res)
                walls[m].append(w)
                cpus[m].append(c)
                mains[m].append(mc)
                agents[m].append(ac / w * 1e3)
        wm = {m: statistics.median(v) for m, v in walls.items()}
        cm = {m: statistics.median(v) for m, v in cpus.items()}
        mm = {m: statistics.median(v) for m, v in mains.items()}
        am = {m: statistics.median(v) for m, v in agents.items()}
        cmain = ["%8.3fx" % (mm[m] / mm["plain"]) if mm["plain"] > 0.05 else "-" for m in others]
        cagent = ["%7.1fms" % am[m] for m in others]
        if name in ("empty", "idle"):  # differences say more than ratios here
            cw = ["%+7.1fms" % ((wm[m] - wm["plain"]) * 1e3) for m in others]
            cc = ["%+7.1fms" % ((cm[m] - cm["plain"]) * 1e3) for m in others]
        else:
            cw = ["%8.3fx" % (wm[m] / wm["plain"]) for m in others]
            cc = ["%8.3fx" % (cm[m] / cm["plain"]) for m in others]
        print("%-8s %6.3f %6.3f | %s | %s | %s | %s | %s-%s" % (
            name, wm["plain"], cm["plain"], " ".join("%9s" % c for c in cw),
            " ".join("%9s" % c for c in cc), " ".join("%9s" % c for c in cmain),
            " ".join("%9s" % c for c in cagent), l0, load()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
