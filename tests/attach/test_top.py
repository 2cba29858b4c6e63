"""`hotline top` under tmux (send-keys / capture-pane): the live screen of a
running Python's hottest lines, `q` and Ctrl-C quit leaving the target
running and unchanged, a script run until it exits (its output in a log,
its exit status passed on), and the final screen without a terminal.
Judges what the screen says, not time.

usage: python test_top.py  (env: HOTLINE_BUILD, HOTLINE_PYTHON)"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from tmuxpane import FAILS, check, screen, start, tmux, wait_screen  # noqa: E402,F401

BUILD = os.path.abspath(os.environ["HOTLINE_BUILD"])
HOTLINE = os.path.join(BUILD, "hotline")
PY = os.environ.get("HOTLINE_PYTHON", sys.executable)

TARGET = """import os, sys, time
sys.stderr.write("%d\\n" % os.getpid())
sys.stderr.flush()
def busy():
    s = 0
    for i in range(20000):
        s += i * i  # BUSY
    return s
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    busy()
print("hello from the script")
sys.exit(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
"""


def main():
    if not shutil.which("tmux"):
        print("FAIL: no tmux (.ci/install-deps installs it)")
        return 1
    tmp = tempfile.mkdtemp(prefix="hotline-top-")
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
    target = subprocess.Popen([PY, script, "120"], stderr=subprocess.PIPE, stdout=subprocess.PIPE)
    pid = int(target.stderr.readline())

    # 1. a PID: the live screen, then q
    start("pid", "%s top --refresh 0.5 %d" % (HOTLINE, pid), tmp)
    def samples(x):
        m = re.search(r"(\d+) samples", x)
        return int(m.group(1)) if m else 0

    s = wait_screen("pid", lambda s: "target.py:7" in s and samples(s) >= 150)
    print(s)
    check("hotline top: process %d target.py (Python " % pid in s, "header names the target", s)
    rows = {int(m.group(2)): (float(m.group(1)), l) for l in s.splitlines()
            for m in [re.match(r"\s+\d+\.\d\s+(\d+\.\d{3}).*target\.py:(\d+)", l)] if m}
    check(7 in rows and 6 in rows and rows[7][0] > rows[6][0] and
          "s += i * i  # BUSY" in rows[7][1], "the busy line, its seconds and source", s)
    check("busy (target.py:4)" in s, "the function table", s)
    check(s.count("hotline top: process") == 1, "one screen, redrawn in place", s)
    before = re.search(r"(\d+) samples", s)
    s2 = wait_screen("pid", lambda x: re.search(r"(\d+) samples", x) and
                     re.search(r"(\d+) samples", x).group(1) != before.group(1))
    check(s2.count("hotline top: process") == 1, "refreshed, still one screen", s2)
    tmux("send-keys", "-t", "pid", "q")
    s = wait_screen("pid", lambda s: "EXIT=" in s)
    print(s)
    check("EXIT=0" in s and "detached (interrupted)" in s and "%all" in s,
          "q quits with a final screen, exit 0", s)
    check(target.poll() is None, "the target runs on after q")

    # 2. Ctrl-C
    start("ctrlc", "%s top --refresh 0.5 %d" % (HOTLINE, pid), tmp)
    wait_screen("ctrlc", lambda s: "target.py:7" in s)
    tmux("send-keys", "-t", "ctrlc", "C-c")
    s = wait_screen("ctrlc", lambda s: "EXIT=" in s)
    check("EXIT=0" in s and "detached (interrupted)" in s, "Ctrl-C quits, exit 0", s)
    check(target.poll() is None, "the target runs on after Ctrl-C")

    # 3. no terminal: --duration, the final screen on a pipe
    p = subprocess.run([HOTLINE, "top", "--duration", "1", str(pid)], capture_output=True,
                       text=True, timeout=60)
    check(p.returncode == 0 and "target.py:7" in p.stdout and "detached (duration)" in p.stdout,
          "without a terminal: the final screen", p.stdout + p.stderr)
    target.kill()
    target.wait()

    # 4. a script: shown until it exits, its status passed on, its output logged
    start("script", "%s top --refresh 0.3 --python %s -- %s 2.0 3" % (HOTLINE, PY, script), tmp)
    s = wait_screen("script", lambda s: "target.py:7" in s and "%now" in s)
    check("target.py:7" in s, "the script's busy line live", s)
    s = wait_screen("script", lambda s: "EXIT=" in s)
    print(s)
    check("EXIT=3" in s and "target exited" in s, "ends with the script, its exit status 3", s)
    m = re.search(r"output is in (hotline-top-\d+\.log)", s)
    log = os.path.join(tmp, m.group(1)) if m else ""
    check(m and open(log).read().strip().endswith("hello from the script"),
          "the script's output in the log", s)

    # 5. usage and errors
    for args, rc in ((["top"], 2), (["top", "1", "--", script], 2), (["top", "--bogus", "1"], 2),
                     (["top", "12x"], 2), (["top", "2147483"], 3)):
        p = subprocess.run([HOTLINE] + args, capture_output=True, text=True, timeout=30)
        check(p.returncode == rc, "%r: exit %d (wanted %d)" % (args, p.returncode, rc),
              p.stderr)


if __name__ == "__main__":
    sys.exit(main())
