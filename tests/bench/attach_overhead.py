"""Target slowdown under `hotline attach` (docs/attach.md, "Overhead").
A benchmark, not a test: it asserts nothing.

Default (time sampling only): whole-process wall time of a CPU-bound
pure-Python workload, attached at the default rate vs unattached,
interleaved (A B A B ...) so that load drifts hit both; prints the median
ratio and attach's own CPU per sample.

--memory: what `attach --memory` costs the target while attached, against
`hotline run` (memory on) and a plain run, on two allocating loops: "int"
(one int object per iteration, pymalloc's smallest) and "dict" (small-dict
churn: a dict, a list and a str per iteration). The loop's rate is taken
per second of the main thread's CPU time (time.thread_time()), which the
other jobs on a shared machine disturb less than the wall clock, over
SECONDS of steady state: for attach, from the moment the target sees the
agent running. Plain, attached and run are interleaved, rotated every
round; the load average (`uptime`'s first figure) is printed with every
figure. Prints per round and per workload the range and median of
attached/plain and run/plain.

--before BUILD2 adds a fourth figure in the same rounds, "attach0":
attach --memory with BUILD2's hotline (another commit's build), for a
before/after comparison under the same load.

usage: python attach_overhead.py BUILD_DIR [rounds]
       python attach_overhead.py BUILD_DIR --memory [--rounds N] [--seconds S]
                                 [--python PY] [--only int,dict] [--before BUILD2]"""
import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

WORK = ("import os,sys,time\nsys.stderr.write('%d\\n' % os.getpid()); sys.stderr.flush()\n"
        "t=time.perf_counter()\ns=0\nfor i in range(12_000_000): s += i % 7\n"
        "print(time.perf_counter()-t)\n")

# The --memory target: runs its loop in chunks until DIR/stop exists and
# appends "rate_per_cpu_s agent_running mem_mode" to DIR/rates every ~0.5 s.
MEM_WORK = r'''
import os, sys, time
kind, d = sys.argv[1], sys.argv[2]
sys.stderr.write("%d\n" % os.getpid()); sys.stderr.flush()

def int_loop(n):
    s = 0
    for i in range(n):
        s += i * 3 + 1000        # a new int object every iteration
    return s

def dict_loop(n):
    for i in range(n):
        x = {"k": i, "v": [i, i + 1], "s": "x" * (i % 7)}   # small-dict churn

loop = int_loop if kind == "int" else dict_loop
n = 20000
out = open(os.path.join(d, "rates"), "a", buffering=1)
stop = os.path.join(d, "stop")
while not os.path.exists(stop):
    c0, w0, it = time.thread_time(), time.perf_counter(), 0
    while time.perf_counter() - w0 < 0.5:
        loop(n)
        it += n
    c = time.thread_time() - c0
    h = sys.modules.get("_hotline_agent")
    on = bool(h and h.running())
    mode = h._agent.stats().get("mem_mode", "-") if on else "-"
    out.write("%.1f %d %s\n" % (it / c if c > 0 else 0, on, mode))
'''


def run(hotline, attached):
    p = subprocess.Popen([sys.executable, "-c", WORK], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    pid = int(p.stderr.readline())
    h = None
    if attached:
        h = subprocess.Popen([hotline, "attach", str(pid)], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
    out, _ = p.communicate()
    samples, cpu = 0, 0.0
    if h:
        err = h.stderr.read().decode()
        _, _, ru = os.wait4(h.pid, 0)
        h.returncode = 0
        cpu = ru.ru_utime + ru.ru_stime
        for line in err.splitlines():  # "python 3.X, T s elapsed, N samples, ..."
            m = re.search(r", (\d+) samples", line)
            if m:
                samples = int(m.group(1))
    return float(out), samples, cpu


def time_only(hotline, rounds):
    plain, att, samples, cpu = [], [], 0, 0.0
    for k in range(2 * rounds):  # A B B A A B ...: both orders equally often
        for attached in ((False, True) if k % 2 == 0 else (True, False)):
            t, n, c = run(hotline, attached)
            (att if attached else plain).append(t)
            samples += n
            cpu += c
    per = cpu / samples * 1e6 if samples else float("nan")
    print("unattached median %.3f s, attached median %.3f s, ratio %.3fx"
          % (statistics.median(plain), statistics.median(att),
             statistics.median(att) / statistics.median(plain)))
    print("attach's own CPU per sample: %.0f us (%d samples)" % (per, samples))


def load():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def read_rates(d):
    try:
        with open(os.path.join(d, "rates")) as f:
            return [l.split() for l in f if l.strip()]
    except OSError:
        return []


def mem_one(hotline, py, kind, how, seconds, script):
    """One figure: (median rate per CPU s over the steady part, mem_mode, load)."""
    d = tempfile.mkdtemp(prefix="hl-attbench-")
    env = dict(os.environ)
    argv = [py, script, kind, d]
    if how == "run":
        argv = [hotline["run"], "run", "--python", py, "--", script, kind, d]
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    h = None
    try:
        pid = int(p.stderr.readline())
        if how.startswith("attach"):
            h = subprocess.Popen([hotline[how], "attach", str(pid), "--memory"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # steady state: 1 s of warm-up (and, attached, the agent running)
        deadline = time.monotonic() + 60
        start = None
        while time.monotonic() < deadline:
            rows = read_rates(d)
            ready = [i for i, r in enumerate(rows) if how == "plain" or r[1] == "1"]
            if len(ready) >= 2:
                start = ready[1]
                break
            time.sleep(0.1)
        if start is None:
            return None, "no agent", load()
        time.sleep(seconds)
        la = load()
        rows = read_rates(d)[start:]
        if how != "plain":
            rows = [r for r in rows if r[1] == "1"]
        rates = [float(r[0]) for r in rows]
        mode = rows[-1][2] if rows else "-"
        return (statistics.median(rates) if rates else None), mode, la
    finally:
        open(os.path.join(d, "stop"), "w").close()
        if h:
            h.send_signal(signal.SIGINT)
            try:
                h.wait(30)
            except subprocess.TimeoutExpired:
                h.kill()
                h.wait()
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        for f in ("rates", "stop"):
            try:
                os.unlink(os.path.join(d, f))
            except OSError:
                pass
        try:
            os.rmdir(d)
        except OSError:
            pass


def memory(hotline, args):
    fd, script = tempfile.mkstemp(prefix="hl-attbench-", suffix=".py")
    with os.fdopen(fd, "w") as f:
        f.write(MEM_WORK)
    hows = ["plain", "attach", "run"] + (["attach0"] if "attach0" in hotline else [])
    ratios = {}
    try:
        for rnd in range(args.rounds):
            for kind in args.only.split(","):
                order = hows[rnd % len(hows):] + hows[:rnd % len(hows)]
                got = {}
                for how in order:
                    rate, mode, la = mem_one(hotline, args.python, kind, how, args.seconds, script)
                    got[how] = rate
                    print("round %d %-4s %-7s %9s it/CPU s  mem_mode %-12s load %.2f"
                          % (rnd + 1, kind, how, "%.0f" % rate if rate else "-", mode, la),
                          flush=True)
                for how in hows[1:]:
                    if got.get(how) and got.get("plain"):
                        ratios.setdefault((kind, how), []).append(got[how] / got["plain"])
    finally:
        os.unlink(script)
    for (kind, how), rs in sorted(ratios.items()):
        print("%-4s %-7s / plain: %.2f-%.2fx, median %.2fx (%d rounds)"
              % (kind, how, min(rs), max(rs), statistics.median(rs), len(rs)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("rounds_pos", nargs="?", type=int)
    ap.add_argument("--memory", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--only", default="int,dict")
    ap.add_argument("--before", help="another build: its attach --memory as attach0")
    args = ap.parse_args()
    hotline = os.path.join(os.path.abspath(args.build), "hotline")
    if args.memory:
        tools = {"attach": hotline, "run": hotline}
        if args.before:
            tools["attach0"] = os.path.join(os.path.abspath(args.before), "hotline")
        memory(tools, args)
    else:
        time_only(hotline, args.rounds_pos or 5)


if __name__ == "__main__":
    main()
