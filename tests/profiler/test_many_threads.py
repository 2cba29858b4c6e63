"""More Python threads than a tick samples (256): 300 idle workers and a
main thread busy for ~2 s on one line, under `hotline run` and under
`hotline attach`. The main thread's line must get most of its busy time
(a functional check: at least half of the CPU the loop measured itself;
the interpreter lists its newest threads first, and a plain cut left the
main thread out: 0.00 s), and the threads left out must be reported.

usage: python test_many_threads.py  (env: HOTLINE_BUILD)"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

BUILD = os.environ["HOTLINE_BUILD"]
HOTLINE = os.path.join(BUILD, "hotline")
FAILS = []
WORKERS = 300

# argv[1] "wait": after its threads are up it says its pid on stderr and
# waits for a line on stdin (attach is then on); the busy loop's own thread
# CPU goes to stdout
TARGET = """import os, sys, threading, time
ev = threading.Event()
ts = [threading.Thread(target=ev.wait, daemon=True) for _ in range(%d)]
for t in ts:
    t.start()
if sys.argv[1] == "wait":
    sys.stderr.write("%%d\\n" %% os.getpid())
    sys.stderr.flush()
    sys.stdin.readline()
t0 = time.thread_time()
end = time.monotonic() + 2.0
n = 0
while time.monotonic() < end: n += 1  # BUSY
print("%%.3f" %% (time.thread_time() - t0))
sys.stdout.flush()
ev.set()
""" % WORKERS


def check(cond, msg):
    print(("ok   " if cond else "FAIL ") + msg)
    if not cond:
        FAILS.append(msg)


def busy_line(script):
    with open(script) as f:
        return next(i for i, l in enumerate(f, 1) if "# BUSY" in l)


def line_seconds(out_json, script):
    with open(out_json) as f:
        prof = json.load(f)
    s = prof["files"].get(script, {}).get("lines", {}).get(str(busy_line(script)), {})
    return s.get("python_s", 0) + s.get("native_s", 0) + s.get("system_s", 0)


def judge(what, rc, err, busy_cpu, out_json, script):
    check(rc == 0, "%s exits 0 (got %s)" % (what, rc))
    got = line_seconds(out_json, script) if os.path.exists(out_json) else 0
    print("%s: main thread's busy line %.2f s, the loop measured %.2f s of CPU"
          % (what, got, busy_cpu))
    check(busy_cpu > 0.05, "%s: the loop ran (%.2f s CPU)" % (what, busy_cpu))
    check(got >= 0.5 * busy_cpu,
          "%s: the main thread's line gets at least half its time (%.2f of %.2f s)"
          % (what, got, busy_cpu))
    check("not sampled" in err or "left out" in err,
          "%s: the threads left out are reported" % what)


def main():
    tmp = tempfile.mkdtemp(prefix="hotline-many-threads-")
    try:
        script = os.path.join(tmp, "many.py")
        with open(script, "w") as f:
            f.write(TARGET)

        out = os.path.join(tmp, "run.json")
        r = subprocess.run([HOTLINE, "run", "--python", sys.executable, "--json", out, script,
                            "go"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        err = r.stderr.decode()
        print(err)
        busy = float(r.stdout.decode().split()[-1]) if r.stdout.strip() else 0
        judge("hotline run", r.returncode, err, busy, out, script)

        p = subprocess.Popen([sys.executable, script, "wait"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        pid = int(p.stderr.readline())  # its threads are up (a condition, not a sleep)
        out = os.path.join(tmp, "attach.json")
        att = subprocess.Popen([HOTLINE, "attach", str(pid), "--json", out],
                               stderr=subprocess.PIPE)
        err = ""
        while "thread CPU from" not in err:  # printed after attach's first tick
            line = att.stderr.readline().decode()
            if not line:
                break
            err += line
        p.stdin.write(b"go\n")
        p.stdin.flush()
        busy = p.communicate(timeout=60)[0].decode().split()
        busy = float(busy[-1]) if busy else 0
        err += att.communicate(timeout=60)[1].decode()
        print(err)
        judge("hotline attach", att.returncode, err, busy, out, script)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        sys.exit(1)
    print("all checks passed")


main()
