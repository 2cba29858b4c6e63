"""`hotline top`'s memory under tmux, 80 columns: a script that keeps
100 MB on one line and churns 20 MB a round on another, its memory
columns against that ground truth (kept ~100 MB on the KEEP line, the
live footprint in the header), and the m key's orders (time: the BUSY
line first; MB allocated: CHURN; MB kept: KEEP). Then a PID with
--memory (the injected agent: allocations from then on) and a PID
without it (the view says memory is off).

usage: python test_top_memory.py  (env: HOTLINE_BUILD, HOTLINE_PYTHON)"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from tmuxpane import FAILS, check, screen, start as _start, tmux, wait_screen  # noqa: E402,F401


def start(name, cmd, cwd):
    _start(name, cmd, cwd, 80, 40)  # 80 columns: the layout must fit


BUILD = os.path.abspath(os.environ["HOTLINE_BUILD"])
HOTLINE = os.path.join(BUILD, "hotline")
PY = os.environ.get("HOTLINE_PYTHON", sys.executable)

TARGET = """import itertools, os, sys, time
keep = []
def grow():
    keep.append(bytearray(100 * 1024 * 1024))  # KEEP
def churn():
    for _ in range(20):
        b = bytearray(1024 * 1024)  # CHURN
        del b
def busy():
    x = 0
    for _ in itertools.repeat(None, 300000):
        x ^= 1  # BUSY
    return x
grow()
sys.stderr.write("%d\\n" % os.getpid())
sys.stderr.flush()
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    busy()
    churn()
"""
KEEP, CHURN, BUSY = 4, 7, 12
# a memory row: %now total python native system alloc kept place
ROW = re.compile(r"^\s+(\d+\.\d)\s+(\d+\.\d\d)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\d+\.\d)\s+(\d+\.\d)"
                 r"\s+target\.py:(\d+)")


def rows(s):
    """line -> (alloc MB, kept MB), and the lines in screen order"""
    got, order = {}, []
    for l in s.splitlines():
        m = ROW.match(l)
        if m:
            line = int(m.group(8))
            got[line] = (float(m.group(6)), float(m.group(7)))
            order.append(line)
    return got, order


def first_after_m(name, want):
    """press m until the header names want; the first line row then"""
    s = screen(name)
    for _ in range(3):
        if "; by %s (" % want in s:
            break
        tmux("send-keys", "-t", name, "m")
        s = wait_screen(name, lambda x: "; by %s (" % want in x, timeout=5)
    time.sleep(1.2)  # a screen drawn in that order with this period's numbers
    s = screen(name)
    order = rows(s)[1]
    return (order[0] if order else None), s


def main():
    if not shutil.which("tmux"):
        print("FAIL: no tmux (.ci/install-deps installs it)")
        return 1
    tmp = tempfile.mkdtemp(prefix="hotline-topmem-")
    try:
        run(tmp)
    finally:
        tmux("kill-server", check_rc=False)
        shutil.rmtree(tmp, ignore_errors=True)
    print("FAILED: %d" % len(FAILS) if FAILS else "PASS")
    return 1 if FAILS else 0


def run(tmp):
    script = os.path.join(tmp, "target.py")
    with open(script, "w") as f:
        f.write(TARGET)

    # 1. a script: memory on by default
    start("script", "%s top --refresh 0.5 --python %s -- %s 60" % (HOTLINE, PY, script), tmp)
    s = wait_screen("script", lambda s: KEEP in rows(s)[0] and CHURN in rows(s)[0] and
                    BUSY in rows(s)[0] and rows(s)[0][CHURN][0] > 0)
    print(s)
    got = rows(s)[0]
    check(all(len(l) <= 80 for l in s.splitlines()), "80 columns hold the screen", s)
    check("alloc MB" in s and "kept MB" in s, "the memory columns", s)
    m = re.search(r"memory: live (\d+\.\d) MB, peak (\d+\.\d) MB", s)
    check(m and 90 <= float(m.group(1)) <= 130 and float(m.group(2)) >= float(m.group(1)),
          "header: the live footprint ~100 MB and its peak", s)
    keep = got.get(KEEP, (0, 0))
    check(90 <= keep[0] <= 115 and 90 <= keep[1] <= 115,
          "the KEEP line: ~100 MB allocated and kept (%r)" % (keep,), s)
    churn = got.get(CHURN, (0, 0))
    check(churn[0] > 100 and churn[1] < 10,
          "the CHURN line: more allocated than KEEP, nothing kept (%r)" % (churn,), s)
    # nothing, up to one stray sample: in 1 of ~20 runs (a CI pass, ctest
    # -j2 beside heavy tests; never reproduced alone or beside busy loops)
    # the busy line read 0.6 MB allocated, 0.0 kept, on the first screen,
    # its source not found (docs/memory.md, "Open: a stray sample on a line
    # that allocates nothing"); the CHURN line's hundreds of MB stay apart
    busy = got.get(BUSY, (9, 9))
    check(busy[0] <= 1.0 and busy[1] == 0.0,
          "the BUSY line allocates nothing, up to one stray sample (%r)" % (busy,), s)
    check(re.search(r"\s100\.\d\s+grow \(target\.py:3\)", s) is not None,
          "the function table: grow keeps ~100 MB", s)
    first, s = first_after_m("script", "time")
    check(first == BUSY, "by time: the BUSY line first (%r)" % first, s)
    first, s = first_after_m("script", "MB allocated")
    check(first == CHURN, "m: by MB allocated, the CHURN line first (%r)" % first, s)
    first, s = first_after_m("script", "MB kept")
    print(s)
    check(first == KEEP, "m again: by MB kept, the KEEP line first (%r)" % first, s)
    tmux("send-keys", "-t", "script", "q")
    s = wait_screen("script", lambda s: "EXIT=" in s)
    print(s)
    check("%all" in s and "stopped (interrupted)" in s and "kept MB" in s,
          "q: the final screen with memory", s)

    # 2. a PID with --memory: allocations from the injection on
    target = subprocess.Popen([PY, script, "120"], stderr=subprocess.PIPE, stdout=subprocess.PIPE)
    pid = int(target.stderr.readline())
    try:
        start("mem", "%s top --memory --refresh 0.5 %d" % (HOTLINE, pid), tmp)
        s = wait_screen("mem", lambda s: CHURN in rows(s)[0] and rows(s)[0][CHURN][0] > 0 or
                        "EXIT=" in s, timeout=60)
        print(s)
        check(CHURN in rows(s)[0] and "memory: live" in s,
              "--memory PID: the churn line's MB", s)
        first, s = first_after_m("mem", "MB allocated")
        check(first == CHURN, "--memory PID, m: the CHURN line first (%r)" % first, s)
        tmux("send-keys", "-t", "mem", "q")
        s = wait_screen("mem", lambda s: "EXIT=" in s)
        check("EXIT=0" in s and "detached" in s, "--memory PID: q detaches, exit 0", s)
        check(target.poll() is None, "the target runs on after q")

        # 3. a PID without --memory: said to be off
        p = subprocess.run([HOTLINE, "top", "--duration", "1", str(pid)], capture_output=True,
                           text=True, timeout=60)
        check(p.returncode == 0 and "memory: off (hotline top --memory PID reads it)" in p.stdout
              and "alloc MB" not in p.stdout, "without --memory: memory off, no columns",
              p.stdout + p.stderr)
    finally:
        target.kill()
        target.wait()


if __name__ == "__main__":
    sys.exit(main())
