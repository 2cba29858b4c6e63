#!/usr/bin/env python3
"""Memory profiling tests (docs/memory.md): run a small program under
`hotline run --json` and check per-line memory fields and leaks against
what the program did (amounts it allocated, rates it measured itself).

  test_memory.py --hotline BIN --python PY --lib libhotline_memtest.so --case NAME

Cases whose ground truth needs numpy run the numpy variant when the
interpreter has numpy and the ctypes variant (libhotline_memtest) otherwise.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

MB = 1 << 20

PRELUDE = r'''
import ctypes, json, os, sys, time
LIB = ctypes.CDLL(os.environ["MT_LIB"])
LIB.mt_alloc.restype = ctypes.c_void_p
LIB.mt_alloc.argtypes = [ctypes.c_size_t]
LIB.mt_free.argtypes = [ctypes.c_void_p]
LIB.mt_copy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
LIB.mt_map.restype = ctypes.c_void_p
LIB.mt_map.argtypes = [ctypes.c_size_t]
LIB.mt_unmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
def truth(**kw):
    with open(os.environ["MT_TRUTH"], "w") as f:
        json.dump(kw, f)
'''

PROGRAMS = {
    "amounts": r'''
CH = 65536
def main():
    # WARM (not checked): a first allocating line (3.9 charged it extra)
    w = [bytearray(CH) for _ in range(16)]          # WARM
    a = [bytearray(CH) for _ in range(5 * 16)]      # L5
    b = [bytearray(CH) for _ in range(50 * 16)]     # L50
    c = [bytearray(CH) for _ in range(500 * 16)]    # L500
    d = [bytes(CH) for _ in range(20 * 16)]         # LB20
    return w, a, b, c, d
keep = main()
''',
    "native": r'''
keep = []
def main():
    for _ in range(30):
        keep.append(LIB.mt_alloc(MB))               # LNAT30
    for _ in range(20):
        p = LIB.mt_alloc(MB); LIB.mt_free(p)        # LNATCHURN
    if HAVE_NP:
        keep.append(np.ones(40 * MB // 8))          # LNP40
    for _ in range(6):
        keep.append(LIB.mt_map(4 * MB))             # LMAP24
    for _ in range(10):
        p = LIB.mt_map(2 * MB); LIB.mt_unmap(p, 2 * MB)  # LMAPCHURN
main()
''',
    "copy": r'''
def main():
    src = LIB.mt_alloc(100 * MB)
    dst = LIB.mt_alloc(100 * MB)
    for _ in range(3):
        LIB.mt_copy(dst, src, 100 * MB)             # LCOPY300
    if HAVE_NP:
        a = np.ones(100 * MB // 8)
        for _ in range(4):
            b = np.array(a)                         # LNPCOPY400
            del b
main()
''',
    "leak": r'''
keep = []
def main():
    t0 = time.perf_counter()
    for i in range(40):
        keep.append(bytearray(MB))                  # LLEAK
        tmp = [bytearray(65536) for _ in range(32)] # LCHURN1
        del tmp
        s = bytearray(3 * MB); del s                # LCHURN2
        time.sleep(0.05)
    truth(rate=40.0 / (time.perf_counter() - t0))
main()
''',
    "leak_small": r'''
keep = []
def main():
    t0 = time.perf_counter()
    for i in range(50):
        keep.append(bytearray(100 * 1024))          # LLEAK
        s = bytearray(MB); del s                    # LCHURN1
        t = [bytearray(1000) for _ in range(1500)]  # LCHURN2
        del t
        time.sleep(0.04)
    truth(rate=50 * 100 * 1024 / MB / (time.perf_counter() - t0))
main()
''',
    "leak_native": r'''
keep = []
def main():
    t0 = time.perf_counter()
    for i in range(40):
        keep.append(LIB.mt_alloc(MB))               # LLEAK
        p = LIB.mt_alloc(2 * MB); LIB.mt_free(p)    # LCHURN1
        time.sleep(0.05)
    truth(rate=40.0 / (time.perf_counter() - t0))
main()
''',
    "leak_fast": r'''
keep = []
def main():
    # 500 MB kept in a fraction of a second, among 4x more churn: the whole
    # leak fits in a few of the agent's 0.1 s delta periods
    t0 = time.perf_counter()
    ticks = [t0]
    for i in range(2000):
        keep.append(bytearray(256 * 1024))          # LLEAK
        s = bytearray(MB); del s                    # LCHURN1
        if i % 100 == 99:
            ticks.append(time.perf_counter())
    dt = time.perf_counter() - t0
    print("leak_fast: 500 MB in %.3f s" % dt)
    gaps = sorted(b - a for a, b in zip(ticks, ticks[1:]))
    truth(rate=2000 * 256 * 1024 / MB / dt, seconds=dt, stall=gaps[-1] / gaps[len(gaps) // 2])
main()
''',
    "cache": r'''
cache = {}
def main():
    for i in range(60):
        if len(cache) < 20:
            cache[i] = bytearray(MB)                # LCACHE
        tmp = bytearray(2 * MB); del tmp            # LCHURN1
        time.sleep(0.04)
main()
''',
    "cache_idle": r'''
cache = []
def main():
    for i in range(20):
        cache.append(bytearray(MB))                 # LCACHE
        time.sleep(0.04)
    time.sleep(2.0)                                 # LIDLE: no allocation at all
main()
''',
    "noleak": r'''
def main():
    for i in range(40):
        t = [bytearray(65536) for _ in range(64)]   # LCHURN1
        del t
        u = LIB.mt_alloc(3 * MB); LIB.mt_free(u)    # LCHURN2
        time.sleep(0.04)
main()
''',
    "freed_at_exit": r'''
keep = []
def main():
    for i in range(40):
        keep.append(bytearray(MB))                  # LGROW
        time.sleep(0.04)
    keep.clear()                                    # LCLEAR
main()
''',
    "threads": r'''
import threading
def work(out):
    for _ in range(40):
        out.append(bytearray(512 * 1024))           # LTHREAD
        LIB.mt_free(LIB.mt_alloc(256 * 1024))
        x = [str(i) for i in range(2000)]
def main():
    outs = [[] for _ in range(4)]
    ts = [threading.Thread(target=work, args=(o,)) for o in outs]
    for t in ts: t.start()
    for t in ts: t.join()
    return outs
keep = main()
''',
    "fork": r'''
def main():
    a = [bytearray(65536) for _ in range(30 * 16)]  # LPARENT
    pid = os.fork()
    if pid == 0:
        global child_keep
        child_keep = [bytearray(65536) for _ in range(20 * 16)]  # LCHILD
        time.sleep(0.3)
        sys.exit(0)
    _, st = os.waitpid(pid, 0)
    assert st == 0, st
    return a
keep = main()
''',
    "pymalloc_off": r'''
def main():
    a = [bytearray(65536) for _ in range(50 * 16)]  # L50
    b = [str(i) * 20 for i in range(200000)]        # LSMALL
    truth(small_mb=(sys.getsizeof(b) + sum(sys.getsizeof(x) for x in b)) / MB)
    return a, b
keep = main()
''',
    "malloc_trim": r'''
trim = ctypes.CDLL(None).malloc_trim
keep = []
def main():
    for i in range(30):
        keep.append(bytearray(MB))                  # L30
        s = bytearray(4 * MB); del s
        trim(0)
main()
''',
    "no_memory": r'''
import time
keep = []
def main():
    for i in range(20):
        keep.append(bytearray(MB))                  # LKEEP
        keep.append(LIB.mt_alloc(MB))
    time.sleep(0.3)  # samples in the program file, whatever the machine's speed
main()
''',
    "small_objects": r'''
from _hotline_agent import _agent  # what `hotline run` imported (private name)
print("mem_mode", _agent.stats()["mem_mode"])
keep = []
def main():
    t0 = time.perf_counter()
    n = 0
    for i in range(40):
        keep.extend(["%040d" % (i * 100000 + j) for j in range(15000)])   # LKEEPS
        for j in range(20000):
            d = {"k%d" % (j % 97): [j, j + 1], "s": str(j) * 3}             # LCHURNS
        time.sleep(0.01)
    truth(small_mb=sum(sys.getsizeof(s) for s in keep) / MB,
          rate=sum(sys.getsizeof(s) for s in keep) / MB / (time.perf_counter() - t0))
main()
print("windows", {k: round(v, 3) for k, v in _agent.stats().items() if k[:4] in ("win_", "call", "late")})
''',
    # No shim (`python -m hotline`, as in a target of `attach --memory`):
    # windows with the RAW domain wrapped (docs/memory.md, "windows_raw").
    "no_shim": r'''
from _hotline_agent import _agent
print("mem_mode", _agent.stats()["mem_mode"])
keep = []
def main():
    for i in range(40):
        keep.extend(["%0100d" % (i * 100000 + j) for j in range(17000)])  # LKEEPS
        for j in range(20000):
            d = {"k%d" % (j % 97): [j, j + 1], "s": str(j) * 3}            # LCHURNS
        time.sleep(0.01)
    big = [bytearray(MB) for _ in range(50)]                               # LBIG50
    nat = LIB.mt_alloc(10 * MB)                                            # LNAT10
    truth(small_mb=(sys.getsizeof(keep) + sum(sys.getsizeof(s) for s in keep)) / MB)
    return big, nat
kept = main()
print("windows", {k: round(v, 3) for k, v in _agent.stats().items() if k[:4] in ("win_", "call", "late")})
''',
    # Notebook-like cells: code compiled from text, run once, freed at once,
    # each within a few ms, so its events are resolved after its code object
    # is gone (the next delta comes 0.1 s later). The cell's lines are this
    # file's own (the text is cut from it), as a front end maps a cell.
    "cells": r'''
keep = []
def main():
    with open(__file__) as f:
        src = f.read().splitlines()
    at = [i for i, l in enumerate(src) if l.endswith("# LCELLNAT")][0]
    cell = "\n" * (at - 1) + "if True:\n" + src[at] + "\n" + src[at + 1] + "\n"
    for _ in range(10):
        exec(compile(cell, __file__, "exec"))               # LEXEC
        if REUSE:
            # the freed code's block goes to other objects at once: its
            # events can no longer be resolved through it on 3.9-3.11
            junk = [bytes(n) for n in range(1, 4096, 4)]    # LJUNK
    if sys.version_info >= (3, 12):
        # the next cell's code takes the freed one's memory (pymalloc reuses
        # the block at once): read then, the address names this cell's lines
        at = [i for i, l in enumerate(src) if l.endswith("# LOTHER")][0]
        other = "\n" * (at - 1) + "if True:\n" + src[at] + "\n" + src[at + 1] + "\n"
        exec(compile(other, __file__, "exec"))
if False:
    keep.append(LIB.mt_alloc(4 * MB))               # LCELLNAT
    keep.append(bytearray(4 * MB))                  # LCELLPY
if False:
    keep.append(LIB.mt_alloc(0 * MB))               # LOTHER
    keep.append(bytearray(0 * MB))
main()
''',
    "cells_reused": None,  # "cells" with REUSE = True (main())
    "oom": r'''
import resource
keep = []
def main():
    soft = 400 * MB
    with open("/proc/self/status") as f:
        vm = [int(l.split()[1]) * 1024 for l in f if l.startswith("VmSize")][0]
    resource.setrlimit(resource.RLIMIT_AS, (vm + soft, resource.RLIM_INFINITY))
    for i in range(100000):
        keep.append(bytearray(4 * MB))              # LOOM
main()
''',
}


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def marker_lines(src):
    out = {}
    for i, line in enumerate(src.splitlines(), 1):
        if "# L" in line:
            out[line.split("# ")[-1].strip()] = i
    return out


def run(args, case, env_extra=None, expect_rc=0, extra=(), standalone=False):
    """`hotline run --json`; standalone: `python -m hotline` with no shim
    (the agent's stream in a file, turned into a profile by `hotline view`)."""
    has_np = subprocess.run([args.python, "-c", "import numpy"], capture_output=True).returncode == 0
    body = PROGRAMS["cells" if case == "cells_reused" else case]
    src = PRELUDE + "MB = 1 << 20\nHAVE_NP = %r\nREUSE = %r\n" % (has_np, case == "cells_reused")
    if has_np:
        src += "import numpy as np\n"
    src += body
    work = tempfile.mkdtemp(prefix="hotline-mem-")
    prog = os.path.join(work, "prog.py")
    with open(prog, "w") as f:
        f.write(src)
    out = os.path.join(work, "out.json")
    truth = os.path.join(work, "truth.json")
    env = dict(os.environ, MT_LIB=args.lib, MT_TRUTH=truth)
    env.update(env_extra or {})
    if standalone:
        for k in ("LD_PRELOAD", "HOTLINE_SOCKET", "HOTLINE_BOOT", "HOTLINE_CONFIG"):
            env.pop(k, None)
        stream = os.path.join(work, "out.jsonl")
        env.update(PYTHONPATH=os.path.join(os.path.dirname(os.path.abspath(args.hotline)), "python"),
                   HOTLINE_OUT=stream)
        p = subprocess.run([args.python, "-m", "hotline", prog], cwd=work, env=env,
                           capture_output=True, text=True, timeout=100)
        if p.returncode == 0:
            v = subprocess.run([args.hotline, "view", "--json", out, stream], capture_output=True,
                               text=True, timeout=60)
            if v.returncode != 0:
                fail("hotline view exited %d: %s" % (v.returncode, v.stderr[-2000:]))
    else:
        p = subprocess.run([args.hotline, "run", "--python", args.python, "--json", out] +
                           list(extra) + [prog],
                           cwd=work, env=env, capture_output=True, text=True, timeout=100)
    print(p.stdout[-3000:])
    print(p.stderr[-2000:])
    if expect_rc is not None and p.returncode != expect_rc:
        fail("hotline run exited %d (expected %d)" % (p.returncode, expect_rc))
    with open(out) as f:
        prof = json.load(f)
    prof["_stdout"] = p.stdout
    lines = prof["files"].get(os.path.realpath(prog)) or prof["files"].get(prog)
    if lines is None:
        fail("program file missing from the profile: %s" % list(prof["files"]))
    t = None
    if os.path.exists(truth):
        with open(truth) as f:
            t = json.load(f)
    return prof, lines, marker_lines(src), t, has_np


def field(fileobj, line, key):
    return fileobj["lines"].get(str(line), {}).get(key, 0.0)


def near(name, got, want, tol, extra=0.0):
    """got within tol (a fraction) of want, plus extra (MB) above it."""
    ok = -tol * want <= got - want <= tol * want + extra
    print("%-28s got %9.2f want %9.2f (+-%d%%%s) %s"
          % (name, got, want, tol * 100, " +%.1f MB" % extra if extra else "",
             "ok" if ok else "WRONG"))
    return ok


def leaks_of(fileobj):
    return {l["line"]: l for l in fileobj.get("leaks", [])}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hotline", required=True)
    ap.add_argument("--python", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--case", required=True, choices=sorted(PROGRAMS))
    args = ap.parse_args()
    c = args.case
    ok = True
    if c in ("amounts", "pymalloc_off"):
        env = {"PYTHONMALLOC": "malloc"} if c == "pymalloc_off" else None
        want = {"L5": 5, "L50": 50, "L500": 500, "LB20": 20} if c == "amounts" else {"L50": 50}
        # Each 64 KiB block is counted by the byte countdown (exact in
        # expectation, 1/16 MB steps); the lines' small object headers are
        # sampled in windows, whose samples stand for the time since the
        # previous window: a sampler that wakes late under load gives one
        # such sample a large weight (docs/memory.md, "Windows"). Quiet, 30
        # runs on 3.13: L5 read 4.88-5.50; under CI's load once 5.56. So up
        # to 3 attempts, as small_objects; a wrong count fails all three.
        # 3.9 also charges 0.1-0.8 MB that is not the program's to the line
        # that runs at some moment (docs/memory.md): L5 and L50 read up to
        # 5.78 and 50.67 there.
        for attempt in range(3):
            prof, f, L, t, _ = run(args, c, env)
            py39 = str(prof.get("python_version", "")).startswith("3.9.")
            ok = True
            for k, mb in want.items():
                ok &= near(k + " kept_mb", field(f, L[k], "kept_mb"), mb, 0.10, 0.8 if py39 else 0.0)
                ok &= near(k + " python share", field(f, L[k], "python_alloc_fraction"), 1.0, 0.05)
            if c == "pymalloc_off":
                # 200000 small strs (sys.getsizeof each): counted once, not twice
                ok &= near("LSMALL kept_mb", field(f, L["LSMALL"], "kept_mb"), t["small_mb"], 0.10)
            print("attempt %d: %s" % (attempt + 1, "ok" if ok else "failed"))
            if ok:
                break
        if prof.get("peak_mb", 0) < sum(want.values()) * 0.9:
            fail("peak_mb %.1f below what was kept" % prof.get("peak_mb", 0))
    elif c == "native":
        prof, f, L, _, has_np = run(args, c)
        ok &= near("LNAT30 kept_mb", field(f, L["LNAT30"], "kept_mb"), 30, 0.10)
        ok &= field(f, L["LNAT30"], "python_alloc_fraction") < 0.1
        ok &= near("LNATCHURN alloc_mb", field(f, L["LNATCHURN"], "alloc_mb"), 20, 0.10)
        # anonymous mmap by an extension: kept and churned, native
        ok &= near("LMAP24 kept_mb", field(f, L["LMAP24"], "kept_mb"), 24, 0.10)
        ok &= field(f, L["LMAP24"], "python_alloc_fraction") < 0.1
        ok &= near("LMAPCHURN alloc_mb", field(f, L["LMAPCHURN"], "alloc_mb"), 20, 0.10)
        ok &= near("LMAPCHURN freed_mb", field(f, L["LMAPCHURN"], "freed_mb"), 20, 0.10)
        ok &= field(f, L["LNATCHURN"], "kept_mb") < 2
        if has_np:
            ok &= near("LNP40 kept_mb", field(f, L["LNP40"], "kept_mb"), 40, 0.10)
            ok &= field(f, L["LNP40"], "python_alloc_fraction") < 0.1
    elif c == "copy":
        prof, f, L, _, has_np = run(args, c)
        ok &= near("LCOPY300 copy_mb", field(f, L["LCOPY300"], "copy_mb"), 300, 0.15)
        if has_np:
            ok &= near("LNPCOPY400 copy_mb", field(f, L["LNPCOPY400"], "copy_mb"), 400, 0.15)
    elif c in ("leak", "leak_small", "leak_native"):
        prof, f, L, t, _ = run(args, c)
        lk = leaks_of(f)
        print("leaks:", lk)
        if set(lk) != {L["LLEAK"]}:
            fail("flagged lines %s, expected exactly line %d" % (sorted(lk), L["LLEAK"]))
        ok &= near("leak rate_mb_s", lk[L["LLEAK"]]["rate_mb_s"], t["rate"], 0.25)
    elif c == "leak_fast":
        # The whole leak lasts 0.35-1.5 s: sampled by time alone (one point
        # per 0.1 s delta) its kept timeline had 3-15 points, starting 50-100
        # MB into the leak, and a 0.35 s run was not flagged. Sampled by
        # volume too (docs/memory.md), it has points from its first MBs on.
        # A run this short on a loaded 2-core machine can stall for much of
        # its last third (seen: 0.5 s of a 1.1 s run), which the rule reads
        # as a leak that stopped: up to 3 attempts; before the fix every one
        # fails the timeline checks.
        # The program times each 1/20 of its loop itself: a stretch over
        # STALL x the median one is a stall it really had (the flag and the
        # rate are then not judged in that attempt, and said so); the
        # timeline's points are judged in every attempt.
        STALL = 3.0
        unjudged = None
        for attempt in range(3):
            prof, f, L, t, _ = run(args, c)
            lk = leaks_of(f)
            print("leaks:", lk)
            tl = f["lines"].get(str(L["LLEAK"]), {}).get("memory_timeline", [])
            print("LLEAK timeline: %d points, first %s, last %s" % (len(tl), tl[:1], tl[-1:]))
            pts = len(tl) >= 24 and tl[0][1] <= 0.05 * field(f, L["LLEAK"], "kept_mb")
            flag = set(lk) == {L["LLEAK"]}
            flag = flag and near("leak rate_mb_s", lk[L["LLEAK"]]["rate_mb_s"], t["rate"], 0.25)
            print("attempt %d: timeline %s, flag and rate %s; the program's longest 1/20 took %.1fx"
                  " the median" % (attempt + 1, "ok" if pts else "failed", "ok" if flag else "wrong",
                                   t["stall"]))
            ok = pts and flag
            if ok:
                break
            if pts and t["stall"] > STALL:
                print("  flag and rate not judged: the program stalled (%.1fx > %.1fx)"
                      % (t["stall"], STALL))
                unjudged = True if unjudged is None else unjudged
            else:
                unjudged = False
        if not ok and unjudged:
            print("every attempt with a wrong flag or rate had a stall of its own: not judged")
            ok = True
    elif c in ("cache", "cache_idle", "noleak", "freed_at_exit"):
        prof, f, L, _, _ = run(args, c)
        lk = leaks_of(f)
        print("leaks:", lk)
        if lk:
            fail("leaks reported: %s" % lk)
        if c in ("cache", "cache_idle"):
            ok &= near("LCACHE kept_mb", field(f, L["LCACHE"], "kept_mb"), 20, 0.10)
        if c == "freed_at_exit":
            ok &= near("LGROW alloc_mb", field(f, L["LGROW"], "alloc_mb"), 40, 0.10)
            ok &= field(f, L["LGROW"], "kept_mb") < 2
    elif c == "threads":
        prof, f, L, _, _ = run(args, c)
        ok &= near("LTHREAD kept_mb", field(f, L["LTHREAD"], "kept_mb"), 80, 0.10)
    elif c == "fork":
        prof, f, L, _, _ = run(args, c)
        # 30 MiB, not 10: the estimate of a sampled line's bytes varies as
        # 1/sqrt(its samples); 10 MiB read 9.97-10.84 in 8 runs and 11.06
        # once in CI (outside the 10 %)
        ok &= near("LPARENT kept_mb", field(f, L["LPARENT"], "kept_mb"), 30, 0.10)
        ok &= near("LCHILD kept_mb", field(f, L["LCHILD"], "kept_mb"), 20, 0.10)
    elif c in ("cells", "cells_reused"):
        prof, f, L, _, _ = run(args, c)
        ver = subprocess.run([args.python, "-c", "import sys; print(sys.version_info >= (3, 12))"],
                             capture_output=True, text=True).stdout.strip() == "True"
        if ver:
            ok &= near("LCELLNAT alloc_mb", field(f, L["LCELLNAT"], "alloc_mb"), 40, 0.10)
            ok &= near("LCELLPY alloc_mb", field(f, L["LCELLPY"], "alloc_mb"), 40, 0.10)
        else:
            # no code watcher before 3.12: the events of a cell whose code
            # was freed before the next delta are lost, or charged to the
            # code that took its block (the same cell's text here, so the
            # same lines). How much is lost depends on when the block is
            # reused (CI saw 32 of 40 MB, and once 0): what is promised is
            # the right line or none, never more than was allocated.
            for k in ("LCELLNAT", "LCELLPY"):
                got = field(f, L[k], "alloc_mb")
                print("%s alloc_mb %.1f (3.9-3.11: at most 44)" % (k, got))
                ok &= got <= 44
        # never the caller's line: with the cell's code gone and no copy of
        # it, its events once went to the exec(...) line (4 MB there, 0 on
        # the cell's lines); cells_reused makes that happen every time on
        # 3.9-3.11 by handing the freed code's block to other objects
        # (compile() itself allocates 0.1-1.2 MB there; one cell is 8 MB)
        ex = field(f, L["LEXEC"], "alloc_mb")
        print("LEXEC alloc_mb %.2f (want < 3)" % ex)
        ok &= ex < 3
        # the Python/native split of what is there (nothing to split below 4 MB)
        if field(f, L["LCELLNAT"], "alloc_mb") >= 4 or ver:
            ok &= field(f, L["LCELLNAT"], "python_alloc_fraction") < 0.1
        if field(f, L["LCELLPY"], "alloc_mb") >= 4 or ver:
            ok &= field(f, L["LCELLPY"], "python_alloc_fraction") > 0.9
        # 3.9-3.11 have no code watcher: there a reused address would charge
        # the other cell (docs/memory.md, "Code that is gone"), not tried
        ok &= field(f, L["LOTHER"], "alloc_mb") + field(f, L["LOTHER"] + 1, "alloc_mb") < 1
    elif c == "malloc_trim":
        prof, f, L, _, _ = run(args, c)
        ok &= near("L30 kept_mb", field(f, L["L30"], "kept_mb"), 30, 0.10)
    elif c == "no_memory":
        prof, f, L, _, _ = run(args, c, extra=["--no-memory"])
        mem_keys = {"alloc_mb", "freed_mb", "kept_mb", "peak_mb", "copy_mb"}
        for fo in prof["files"].values():
            for lo in fo["lines"].values():
                if mem_keys & set(lo):
                    fail("memory fields with --no-memory: %s" % lo)
        if "peak_mb" in prof or "memory_timeline" in prof:
            fail("top-level memory fields with --no-memory")
    elif c == "small_objects":
        # Small objects (pymalloc) are seen in windows when the shim is loaded
        # (docs/memory.md, "Windows"): kept memory of 600000 40-char strs and
        # the churn of small dicts must match the exact always-on wrappers
        # (HOTLINE_MEM_WINDOWS=0), and the kept strs the program's own
        # sys.getsizeof sum (the list's item array, ~4.6 MB, comes on top of
        # it: 600000 pointers plus growth slack). Measured here over 12 runs:
        # kept 0.91-1.14x, churn 0.88-0.97x of the wrappers' figures. On the
        # CI machine (2 of 3 runs, never here, docs/memory.md "Windows: a
        # burst right after a sleep") the 2-4 ms kept burst that follows the
        # loop's sleep read 0.59-0.81x while the churn line after it read
        # 1.05-1.14x and the two lines' sum 0.92-0.94x: time moved from one
        # line to its neighbour, not lost. So: the two lines' sum within 20%
        # of the wrappers' (what windows must get right whatever the
        # scheduler does), the kept line within 45% of its references and
        # the churn line within 35% (what a user reads on a line; a missing
        # scale, unseen frees or a double count is off by 2x or more), churn
        # kept < 5%. Sampling in time has
        # variance (more under load: -j2 ctest), so up to 3 attempts; a wrong
        # estimator fails all of them.
        ref, rf, L, _, _ = run(args, c, {"HOTLINE_MEM_WINDOWS": "0"})
        if "mem_mode wrappers" not in ref["_stdout"]:
            fail("expected wrappers with HOTLINE_MEM_WINDOWS=0")
        kept_ref, churn_ref = field(rf, L["LKEEPS"], "kept_mb"), field(rf, L["LCHURNS"], "alloc_mb")
        both_ref = field(rf, L["LKEEPS"], "alloc_mb") + churn_ref
        for attempt in range(3):
            prof, f, L, t, _ = run(args, c)
            if "mem_mode windows" not in prof["_stdout"]:
                fail("expected windows by default (pymalloc, shim loaded)")
            kept, churn = field(f, L["LKEEPS"], "kept_mb"), field(f, L["LCHURNS"], "alloc_mb")
            both = field(f, L["LKEEPS"], "alloc_mb") + churn
            ok = near("both lines alloc vs wrappers", both, both_ref, 0.20)
            ok &= near("LKEEPS kept_mb", kept, t["small_mb"] + 4.6, 0.45)
            ok &= near("LKEEPS kept_mb vs wrappers", kept, kept_ref, 0.45)
            ok &= near("LKEEPS python share", field(f, L["LKEEPS"], "python_alloc_fraction"), 1.0, 0.05)
            ok &= near("LCHURNS alloc_mb vs wrappers", churn, churn_ref, 0.35)
            ok &= field(f, L["LCHURNS"], "kept_mb") < 0.05 * churn
            print("attempt %d: %s" % (attempt + 1, "ok" if ok else "failed"))
            if ok:
                break
        ok &= L["LCHURNS"] not in leaks_of(f)
    elif c == "no_shim":
        # No shim in the process (`hotline attach --memory`'s case, here
        # in-process): windows still, the RAW domain wrapped to see what the
        # shim saw (docs/memory.md, "windows_raw"). ~100 MB of small strs
        # kept and the small-dict churn within the small_objects tolerances
        # (the two lines' sum within 20% of the exact wrappers', the kept
        # line within 45% of the truth, churn 35% of the wrappers: on the CI machine the kept
        # burst after the sleep read 0.71-0.72x in all 3 attempts of one
        # run; kept churn ~0, up to 3 attempts for the variance of sampling
        # in time); 1 MiB
        # objects (> any gap) exactly; native memory is not seen without
        # the shim. The wrappers (HOTLINE_MEM_WINDOWS=0) are the reference.
        ref, rf, L, _, _ = run(args, c, {"HOTLINE_MEM_WINDOWS": "0"}, standalone=True)
        if "mem_mode wrappers" not in ref["_stdout"]:
            fail("expected wrappers with HOTLINE_MEM_WINDOWS=0")
        churn_ref = field(rf, L["LCHURNS"], "alloc_mb")
        both_ref = field(rf, L["LKEEPS"], "alloc_mb") + churn_ref
        for attempt in range(3):
            prof, f, L, t, _ = run(args, c, standalone=True)
            if "mem_mode windows_raw" not in prof["_stdout"]:
                fail("expected windows_raw without the shim (pymalloc)")
            kept, churn = field(f, L["LKEEPS"], "kept_mb"), field(f, L["LCHURNS"], "alloc_mb")
            both = field(f, L["LKEEPS"], "alloc_mb") + churn
            ok = near("both lines alloc vs wrappers", both, both_ref, 0.20)
            ok &= near("LKEEPS kept_mb", kept, t["small_mb"], 0.45)
            ok &= near("LKEEPS python share", field(f, L["LKEEPS"], "python_alloc_fraction"), 1.0,
                       0.05)
            ok &= near("LCHURNS alloc_mb vs wrappers", churn, churn_ref, 0.35)
            ok &= field(f, L["LCHURNS"], "kept_mb") < 0.05 * churn
            ok &= near("LBIG50 kept_mb", field(f, L["LBIG50"], "kept_mb"), 50, 0.02)
            print("attempt %d: %s" % (attempt + 1, "ok" if ok else "failed"))
            if ok:
                break
        nat = field(f, L["LNAT10"], "alloc_mb")
        print("LNAT10 alloc_mb %.2f (native: not seen without the shim)" % nat)
        ok &= nat < 1
    elif c == "oom":
        prof, f, L, _, _ = run(args, c, expect_rc=None)
        got = field(f, L["LOOM"], "kept_mb")
        print("LOOM kept_mb", got, "exit", prof.get("exit"))
        ok &= 150 <= got <= 450
    if not ok:
        fail("see above")
    print("PASS", c)


if __name__ == "__main__":
    main()
