#!/usr/bin/env python3
"""Overhead benchmark (not a test): whole-process wall time of workloads run
plain, under `hotline run`, and under Scalene, interleaved, several times.
Prints median ratios measured in this one run; nothing is asserted.

    tests/bench/bench.py [--hotline build/hotline] [--python /usr/bin/python3]
                         [--reps 5] [--seconds 1,5] [--no-scalene] [--memory]
                         [--only pycalls,churn]

Each workload does a fixed amount of work scaled so that its plain run lasts
about the target seconds (calibrated once, plain). Runs of the three modes
are interleaved (plain, hotline, scalene, plain, ...) so that machine noise
hits all modes alike. Start-up cost is `empty.py` under each mode minus plain.
Scalene: Debian's python3-scalene (`apt-get install python3-scalene`), run as
`python3 -m scalene --cli --cpu-only` (or its full CPU+memory mode with
--memory, to compare against Hotline with memory profiling on).
"""
import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WORKLOADS = ["pycalls", "churn", "numeric", "threads", "io", "alloc", "npalloc"]


RSS = {}  # mode -> [max RSS in KiB of the process tree's largest process]
# mode -> [CPU seconds (user + system) of the run's process tree: the child
# and every descendant it waited for]; moves far less than wall time with
# other load on the machine (the run waits for a core, it does not burn)
CPU = {}


class RunFailed(RuntimeError):
    """A run that failed: why ("failed with 3", "timed out after 60 s") and
    the end of its stderr on one line."""

    def __init__(self, cmd, why, tail):
        self.why, self.tail = why, " ".join(tail.split())
        super().__init__("%s %s: %s" % (" ".join(cmd), why, self.tail))


def wall(cmd, env=None, mode=None, timeout=None):
    """Wall seconds of one run of argv cmd; raises RuntimeError (with the end of
    its stderr) when it fails or outlives timeout seconds (then its whole
    session is killed: profilers that spawn the program leave no orphans)."""
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env,
                             start_new_session=True)
        timer = None
        if timeout:
            timer = threading.Timer(timeout, os.killpg, (p.pid, signal.SIGKILL))
            timer.start()
        _, status, ru = os.wait4(p.pid, 0)
        dt = time.perf_counter() - t0
        if timer:
            timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            err.seek(0)
            tail = err.read()[-400:].decode(errors="replace").strip()
            why = "timed out after %.0f s" % timeout if timeout and dt >= timeout else \
                "failed with %d" % p.returncode
            raise RunFailed(cmd, why, tail)
    if mode:
        RSS.setdefault(mode, []).append(ru.ru_maxrss)
        CPU.setdefault(mode, []).append(ru.ru_utime + ru.ru_stime)
    return dt


def has_module(python, mod):
    return subprocess.run([python, "-c", "import " + mod], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def workload(name):
    return os.path.join(HERE, "workloads", name + ".py")


# A mode is a function (script, args) -> argv that runs script with its
# arguments under one profiler (or none: "plain"). Shared with peers.py.

def calibrate(plain, script, target, env=None):
    """Scale for script such that its plain run lasts about target seconds.
    Runs at scales 1 and 3 give the fixed part (interpreter start, imports:
    1.4 s of gmm's scikit-learn) and the part per unit of scale; scaling the
    whole of one run (as this did) left gmm at 1.75 s for a 3 s target, most
    of it imports rather than the loop the workload is about."""
    t1 = min(wall(plain(script, ["1"]), env=env) for _ in range(2))  # the fastest of two:
    t3 = min(wall(plain(script, ["3"]), env=env) for _ in range(2))  # noise only adds
    per = (t3 - t1) / 2
    fixed = t1 - per
    if per <= 0 or fixed < 0:  # noise larger than the work: the old estimate
        return max(0.05, target / t1)
    return max(0.05, (target - fixed) / per)


def interleave(modes, script, args, reps, env=None, failed=None, timeout=None):
    """{mode: [wall s]} over reps rounds of every mode in turn, so that machine
    noise hits all modes alike; RSS and CPU are refilled. A failing run is raised, or,
    when failed is a dict, counted there (mode -> [failures, last reason]);
    a mode that timed out is not run again (each try would cost the timeout)."""
    times = {m: [] for m in modes}
    RSS.clear()
    CPU.clear()
    for _ in range(reps):
        for m, cmd in modes.items():
            if failed is not None and "timed out" in failed.get(m, [0, ""])[1]:
                continue
            try:
                times[m].append(wall(cmd(script, args), env=env, mode=m, timeout=timeout))
            except RunFailed as e:
                if failed is None:
                    raise
                n = failed.get(m, [0, ""])[0]
                failed[m] = [n + 1, "%s: %s" % (e.why, e.tail[-200:])]
    return {m: t for m, t in times.items() if t}


def startup(modes, reps, failed=None, timeout=None):
    """Median wall seconds of the empty program under each mode."""
    times = interleave(modes, workload("empty"), [], max(reps, 5), failed=failed,
                       timeout=timeout)
    return {m: statistics.median(t) for m, t in times.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hotline", default=os.path.join(ROOT, "build", "hotline"))
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seconds", default="1,5")
    ap.add_argument("--no-scalene", action="store_true")
    ap.add_argument("--memory", action="store_true",
                    help="memory profiling on in Hotline, Scalene in its default CPU+memory mode")
    ap.add_argument("--only", default="")
    a = ap.parse_args()

    out_json = os.path.join(tempfile.mkdtemp(prefix="hotline-bench-"), "p.json")
    modes = {"plain": lambda w, args: [a.python, w] + args}
    hl = [a.hotline, "run", "--python", a.python, "--json", out_json]
    if not a.memory:
        hl.append("--no-memory")
    modes["hotline"] = lambda w, args: hl + [w] + args
    if not a.no_scalene and has_module(a.python, "scalene"):
        sc = [a.python, "-m", "scalene", "--cli", "--outfile", os.devnull]
        if not a.memory:
            sc.append("--cpu-only")
        modes["scalene"] = lambda w, args: sc + [w] + (["---"] + args if args else [])
    elif not a.no_scalene:
        print("(scalene not importable by %s: apt-get install python3-scalene)" % a.python)

    names = [n for n in WORKLOADS if not a.only or n in a.only.split(",")]
    for np_w in ("numeric", "npalloc"):
        if np_w in names and not has_module(a.python, "numpy"):
            print("(numpy missing for %s: skipping the %s workload)" % (a.python, np_w))
            names.remove(np_w)

    print("python %s, %d reps, modes: %s" % (a.python, a.reps, ", ".join(modes)))
    start = startup(modes, a.reps)
    base = start["plain"]
    print("\nstart-up (empty program), median wall: plain %.1f ms" % (base * 1e3))
    for m in modes:
        if m != "plain":
            print("  %-8s +%.1f ms" % (m, (start[m] - base) * 1e3))

    print("\n%-10s %6s %9s %9s %9s %s" % ("workload", "target", "plain s", "hotline", "scalene",
                                         "  max RSS MB plain/hotline/scalene"))
    for target in [float(x) for x in a.seconds.split(",")]:
        for n in names:
            w = workload(n)
            scale = calibrate(modes["plain"], w, target)
            times = interleave(modes, w, [str(scale)], a.reps)
            p = statistics.median(times["plain"])
            cols = ["%.2fx" % (statistics.median(times[m]) / p) if m in times else "-"
                    for m in ("hotline", "scalene")]
            rss = "/".join("%.0f" % (statistics.median(RSS[m]) / 1024) if m in RSS else "-"
                           for m in ("plain", "hotline", "scalene"))
            print("%-10s %5.0fs %9.2f %9s %9s   %s" % (n, target, p, cols[0], cols[1], rss),
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
