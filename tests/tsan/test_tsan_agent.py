#!/usr/bin/env python3
"""The agent's threads under ThreadSanitizer, inside an ordinary CPython.

The agent (profiler/, built again with -fsanitize=thread by
tests/tsan/CMakeLists.txt) is loaded into an interpreter that is not
instrumented, with libtsan preloaded: TSan then sees every access the agent
makes and every pthread lock and condition the interpreter takes (the GIL
among them), but not the interpreter's own plain accesses. What it judges is
the agent's C: the sampler thread against the program's threads calling the
agent's memory hooks, the stream's writer, start/stop while threads run,
short-lived threads coming and going. Not here: a forked child restarting
the agent. TSan cannot follow a multi-threaded fork whose child starts a
thread (it dies: "starting new threads after multi-threaded fork is not
supported", and with die_after_fork=0 "dup thread with used id"); that
path is run, uninstrumented, by run_real_children and memory.fork.

  1. the canary (canary.c, a deliberate race built the same way) must be
     reported: proof that TSan runs in this interpreter at all;
  2. the program below, profiled (memory on, 1 ms interval), must run with
     no ThreadSanitizer report and leave a profile: samples, memory rows,
     its own functions, an end.

usage: test_tsan_agent.py --python PY --agent BUILD/python --module AGENT.so
                          --canary CANARY.so --libtsan LIBTSAN.so
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

PROG = r'''
import os, sys, threading, time
import hotline

def work(n):
    s = 0
    keep = []
    for i in range(n):
        s += i * i
        if i % 500 == 0:
            keep.append([bytearray(256) for _ in range(8)])  # the memory hooks
            if len(keep) > 20:
                keep.clear()
    return s

def work_for(seconds):
    # by time, not by count: how fast the loop runs depends on the memory
    # mode (windows vs always-on wrappers) and on the machine, and the
    # check below needs the profile to span a number of ticks
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        work(5000)

def short_lived(k):
    ts = [threading.Thread(target=work, args=(2000,)) for _ in range(k)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()

hotline.start(interval_ms=1)
long = [threading.Thread(target=work_for, args=(1.0,)) for _ in range(3)]
for t in long:
    t.start()
short_lived(20)
# stopped and started again while the other threads run and allocate
hotline.stop()
hotline.start(interval_ms=1)
work(100000)
short_lived(10)
for t in long:
    t.join()
hotline.stop()
print("done")
'''


def fail(msg, text=""):
    print("FAIL:", msg)
    if text:
        print(text[-6000:])
    sys.exit(1)


def reports(text):
    return text.count("WARNING: ThreadSanitizer")


def check_profile(path, what):
    strings, samples, mem_rows, ended = set(), 0, 0, False
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                m = json.loads(line)
            except ValueError:
                continue
            t = m.get("t")
            if t == "str":
                strings.add(m.get("s"))
            elif t == "delta":
                samples += m.get("samples", 0)
                mem_rows += sum(1 for r in m.get("lines", []) if "alloc_mb" in r)
            elif t == "end":
                ended = True
    print("%s: %d samples, %d memory rows, end %s" % (what, samples, mem_rows, ended))
    if samples < 20 or "work" not in strings or not ended:
        fail("%s: no usable profile (%d samples, work named: %s, end: %s)"
             % (what, samples, "work" in strings, ended))
    if mem_rows == 0:
        fail("%s: no memory rows (the hooks were not exercised)" % what)


def main():
    ap = argparse.ArgumentParser()
    for a in ("--python", "--agent", "--module", "--canary", "--libtsan"):
        ap.add_argument(a, required=True)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="hotline-tsan-")
    try:
        # the built agent's Python half with the TSan build of _agent
        tree = os.path.join(work, "py")
        shutil.copytree(a.agent, tree, ignore=shutil.ignore_patterns("_agent*.so", "*.so.*"))
        shutil.copy2(a.module, os.path.join(tree, "_hotline_agent", os.path.basename(a.module)))
        shutil.copy2(a.canary, os.path.join(work, os.path.basename(a.canary)))
        env = dict(os.environ, LD_PRELOAD=a.libtsan, PYTHONPATH=tree,
                   TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1")
        env.pop("HOTLINE_SOCKET", None)

        p = subprocess.run([a.python, "-c", "import hotline_tsan_canary as c; print(c.race())"],
                           cwd=work, env=dict(env, PYTHONPATH=work), capture_output=True,
                           text=True, timeout=60)
        if reports(p.stderr) == 0:
            fail("the canary's race was not reported: ThreadSanitizer is not running in %s"
                 % a.python, p.stdout + p.stderr)
        print("canary: race reported (ThreadSanitizer runs in %s)" % a.python)

        prog = os.path.join(work, "prog.py")
        with open(prog, "w") as f:
            f.write(PROG)
        out = os.path.join(work, "out.jsonl")
        p = subprocess.run([a.python, prog], cwd=work, env=dict(env, HOTLINE_OUT=out),
                           capture_output=True, text=True, timeout=240)
        print(p.stdout.strip())
        if reports(p.stderr):
            fail("ThreadSanitizer reported %d warning(s) in the agent" % reports(p.stderr), p.stderr)
        if p.returncode != 0 or not p.stdout.startswith("done"):
            fail("the program failed (rc %d)" % p.returncode, p.stdout + p.stderr)
        check_profile(out, "the program")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("ok: no ThreadSanitizer report in the agent")


if __name__ == "__main__":
    main()
