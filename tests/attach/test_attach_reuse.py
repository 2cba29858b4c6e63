"""`hotline attach` when the target's pid is reused: the target (a busy
line FIRST) is killed while attached and a new Python (a busy line SECOND)
is started at the same pid (root: /proc/sys/kernel/ns_last_pid). The attach
must end with the target ("target exited"), not merge the new process into
its report. Needs root (exits 77, a skip, otherwise); another process
taking the pid first is retried.

usage: python test_attach_reuse.py  (env: HOTLINE_BUILD)"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

BUILD = os.environ["HOTLINE_BUILD"]
HOTLINE = os.path.join(BUILD, "hotline")
FAILS = []

SCRIPT = """import os, sys, time
sys.stderr.write("%d\\n" % os.getpid())
sys.stderr.flush()
end = time.monotonic() + float(sys.argv[1])
n = 0
while time.monotonic() < end: n += 1  # BUSY
"""


def check(cond, msg):
    print(("ok   " if cond else "FAIL ") + msg)
    if not cond:
        FAILS.append(msg)


def start(script, seconds):
    p = subprocess.Popen([sys.executable, script, str(seconds)], stderr=subprocess.PIPE)
    return p


def attempt(tmp, first, second):
    """One try: (True, attach rc, stderr, profile) when the second target got
    the first's pid, (False, ...) when another process took it first."""
    a = start(first, 60)
    pid = int(a.stderr.readline())  # up (a condition, not a sleep)
    out = os.path.join(tmp, "reuse.json")
    if os.path.exists(out):
        os.unlink(out)
    # a long interval: the reuse happens between two ticks, as on a busy
    # machine where a pid comes round again while attach sleeps
    att = subprocess.Popen([HOTLINE, "attach", str(pid), "--interval", "300", "--duration", "8",
                            "--json", out], stderr=subprocess.PIPE)
    err_first = ""
    while "thread CPU from" not in err_first:  # printed after its first tick
        line = att.stderr.readline().decode()
        if not line:
            break
        err_first += line
    a.kill()
    a.wait()  # reaped: the pid is free
    with open("/proc/sys/kernel/ns_last_pid", "w") as f:
        f.write(str(pid - 1))
    b = start(second, 4)
    got = b.pid == pid
    if got:
        int(b.stderr.readline())  # the second is up
    rest = att.communicate(timeout=60)[1].decode()
    b.kill()
    b.wait()
    prof = None
    if os.path.exists(out):
        with open(out) as f:
            prof = json.load(f)
    return got, att.returncode, err_first + rest, prof


def main():
    if os.geteuid() != 0 or not os.access("/proc/sys/kernel/ns_last_pid", os.W_OK):
        print("skip: needs root to choose the next pid (ns_last_pid)")
        sys.exit(1 if os.environ.get("CI") else 77)  # CI runs as root: a skip there hides a loss
    tmp = tempfile.mkdtemp(prefix="hotline-attach-reuse-")
    try:
        first = os.path.join(tmp, "first.py")
        second = os.path.join(tmp, "second.py")
        for path in (first, second):
            with open(path, "w") as f:
                f.write(SCRIPT)
        for k in range(10):
            got, rc, err, prof = attempt(tmp, first, second)
            if got:
                break
            print("another process took the pid first: again (%d)" % k)
        check(got, "the second target got the first's pid")
        print(err)
        check(rc == 0, "attach exits 0 (got %s)" % rc)
        check(prof is not None, "attach wrote its profile")
        if prof:
            files = prof.get("files", {})
            lines = lambda p: sum(s.get("python_s", 0) + s.get("native_s", 0)
                                  + s.get("system_s", 0)
                                  for s in files.get(p, {}).get("lines", {}).values())
            reason = (prof.get("exit") or {}).get("reason")
            print("first %.2f s, second %.2f s, reason %s" % (lines(first), lines(second), reason))
            check(first in files, "the first target is in the report")
            check(second not in files and lines(second) == 0,
                  "the new process at the reused pid is not (%.2f s)" % lines(second))
            check(reason == "target exited", "the attach ends with the target (%s)" % reason)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        sys.exit(1)
    print("all checks passed")


main()
