#!/usr/bin/env python3
"""Overhead benchmark (not a test): the sampler's cost on one workload,
measured inside one process by switching the agent on and off between
short blocks of the same work. Prints medians and quartiles; asserts nothing.

    PYTHONPATH=build/python /usr/bin/python3 tests/bench/inproc_ab.py \
        [--workload numeric] [--block-s 0.3] [--rounds 30] [--memory]

Why not whole-process runs (bench.py): on the shared 2-core VM the plain
run of a 5 s workload moves by up to 2x between consecutive runs, so a ratio
of medians over 5 reps cannot resolve a few percent. Here each block with
the agent (`on`) is paired with the block next to it without (`off`), in
ABBA order, so that load changing over seconds hits both alike. Per pair it
reports wall on/off and the main thread's CPU on/off (CPU excludes time
spent waiting for a CPU: it moves with cache and preemption cost, not with
the machine's load), and the sampler's own CPU (`cost_s` of its ticks).

It measures the agent only (no `hotline run` server, no start-up or exit):
those are the difference between this and bench.py. The memory profiler is
off unless --memory (then its allocator wrappers stay installed after the
first start, in the `off` blocks too: docs/sampling.md, "Measured").
"""
import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def load_workload(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, "workloads", name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.main


def sched():
    """(run-queue wait s, involuntary context switches) of this thread so far."""
    tid = threading.get_native_id()
    with open("/proc/self/task/%d/schedstat" % tid) as f:
        wait = int(f.read().split()[1]) * 1e-9
    with open("/proc/self/task/%d/status" % tid) as f:
        nv = [int(l.split()[1]) for l in f if l.startswith("nonvoluntary_ctxt_switches")]
    return wait, nv[0] if nv else 0


def quart(xs):
    q = statistics.quantiles(xs, n=4) if len(xs) > 1 else [xs[0]] * 3
    return "median %.3f (quartiles %.3f-%.3f)" % (statistics.median(xs), q[0], q[2])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workload", default="numeric")
    ap.add_argument("--block-s", type=float, default=0.3)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--memory", action="store_true")
    a = ap.parse_args()

    import hotline
    work = load_workload(a.workload)
    t = time.perf_counter()
    work(0.05)  # warm-up: imports, first allocations
    t = time.perf_counter()
    work(0.05)
    scale = max(0.05, 0.05 * a.block_s / max(1e-3, time.perf_counter() - t))

    def block():
        t, c, (q, n) = time.perf_counter(), time.thread_time(), sched()
        work(scale)
        q1, n1 = sched()
        return time.perf_counter() - t, time.thread_time() - c, q1 - q, n1 - n

    out = tempfile.mkdtemp(prefix="hotline-ab-")
    wall = {"off": [], "on": []}
    cpu = {"off": [], "on": []}
    rq = {"off": [], "on": []}
    nvcs = {"off": [], "on": []}
    cost = samples = ticks = 0
    for r in range(a.rounds):
        for mode in (("off", "on") if r % 2 == 0 else ("on", "off")):
            if mode == "on":
                os.environ["HOTLINE_OUT"] = os.path.join(out, "p%d.jsonl" % r)
                hotline.start(memory=a.memory)
            w, c, q, n = block()
            if mode == "on":
                st = hotline.stats() or {}
                hotline.stop()
                cost += st.get("cost_s", 0)
                samples += st.get("thread_samples", 0)
                ticks += st.get("ticks", 0)
            wall[mode].append(w)
            cpu[mode].append(c)
            rq[mode].append(q / w)
            nvcs[mode].append(n / w)
    on_s = sum(wall["on"])
    print("%s, %s, %d rounds of %.2f s blocks, memory %s" % (
        sys.executable, a.workload, a.rounds, statistics.median(wall["off"]),
        "on" if a.memory else "off"))
    print("wall on/off        %s" % quart([x / y for x, y in zip(wall["on"], wall["off"])]))
    print("main CPU on/off    %s" % quart([x / y for x, y in zip(cpu["on"], cpu["off"])]))
    print("main CPU/wall      off %.2f on %.2f (below 1: it waited for a CPU)" % (
        sum(cpu["off"]) / sum(wall["off"]), sum(cpu["on"]) / on_s))
    print("run-queue wait     off %.1f%% on %.1f%% of wall (medians; schedstat)" % (
        statistics.median(rq["off"]) * 100, statistics.median(rq["on"]) * 100))
    print("preempted          off %.0f/s on %.0f/s (medians; nonvoluntary_ctxt_switches)" % (
        statistics.median(nvcs["off"]), statistics.median(nvcs["on"])))
    print("sampler CPU        %.1f us per tick, %.2f%% of one core (%d ticks, %d thread samples)" % (
        cost / max(1, ticks) * 1e6, cost / on_s * 100, ticks, samples))
    return 0


if __name__ == "__main__":
    sys.exit(main())
