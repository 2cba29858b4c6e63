"""`hotline attach` from a build that knew one Python only: the binary of a
build configured with -DHOTLINE_PYTHONS=/usr/bin/python3 (the fixture
attach_one_python_build, in $HOTLINE_ONE_PYTHON_BUILD) attaches to a busy
loop run by the interpreter under test, whatever its version, and the
report names the loop's line. The reader's rows are the committed
attach/layouts/3.X.inc, not the build machine's interpreters
(docs/attach.md, "Layout").

usage: python test_attach_one_python.py  (env: HOTLINE_ONE_PYTHON_BUILD)"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

BUILD = os.environ["HOTLINE_ONE_PYTHON_BUILD"]
HOTLINE = os.path.join(BUILD, "hotline")
FAILS = []

TARGET = """import os, sys, time
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


def main():
    with open(os.path.join(BUILD, "CMakeCache.txt")) as f:
        m = re.search(r"^HOTLINE_PYTHONS:STRING=(.*)$", f.read(), re.M)
    pythons = m.group(1) if m else None
    check(pythons == "/usr/bin/python3",
          "%s was configured with HOTLINE_PYTHONS=/usr/bin/python3 alone (got %s)" % (BUILD, pythons))
    tmp = tempfile.mkdtemp(prefix="hotline-attach-one-python-")
    p = None
    try:
        script = os.path.join(tmp, "loop.py")
        with open(script, "w") as f:
            f.write(TARGET)
        with open(script) as f:
            line = next(i for i, l in enumerate(f, 1) if "# BUSY" in l)
        p = subprocess.Popen([sys.executable, script, "30"], stderr=subprocess.PIPE)
        pid = int(p.stderr.readline())  # up (a condition, not a sleep)
        out = os.path.join(tmp, "a.json")
        cmd = [HOTLINE, "attach", "--duration", "1", "--json", out, str(pid)]
        try:
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
        except subprocess.TimeoutExpired:
            check(False, "attach ends within 30 s")
            return
        sys.stdout.write(r.stdout.decode(errors="replace"))
        sys.stdout.write(r.stderr.decode(errors="replace"))
        check(r.returncode == 0, "attach to Python %s exits 0 (got %d)" %
              (sys.version.split()[0], r.returncode))
        if r.returncode != 0:
            return
        text = (r.stdout + r.stderr).decode(errors="replace")
        check("%s:%d" % (os.path.basename(script), line) in text or
              "%s:%d" % (script, line) in text,
              "the report names the loop's line (loop.py:%d)" % line)
        with open(out) as f:
            prof = json.load(f)
        s = prof["files"].get(script, {}).get("lines", {}).get(str(line), {})
        busy = s.get("python_s", 0) + s.get("native_s", 0) + s.get("system_s", 0)
        check(busy > 0.3, "the loop's line has its time (%.2f s of 1 s)" % busy)
    finally:
        if p:
            p.kill()
            p.wait()
        shutil.rmtree(tmp, ignore_errors=True)


main()
if FAILS:
    print("%d check(s) failed" % len(FAILS))
    sys.exit(1)
print("all checks passed")
