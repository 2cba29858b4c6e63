"""`hotline attach PID --every T --duration S --keep N --json DIR`: periodic
profiles of a running program (docs/attach.md, "Periodic profiles").

A busy target runs; attach takes a 0.3 s profile every 0.8 s, keeping 2.
After five rounds it is stopped with SIGINT: exit 0, "stopped after N
profiles", only the newest two files left (in time order), each a profile
that `hotline view` reads with samples on the busy line, and `hotline diff`
compares them. A second run ends by itself when the target exits ("target
exited"). The target is never changed: it runs on and exits 0. Judges
counts and names, not time.

usage: python test_attach_every.py  (env: HOTLINE_BUILD, HOTLINE_PYTHON)"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

BUILD = os.environ["HOTLINE_BUILD"]
HOTLINE = os.path.join(BUILD, "hotline")
PY = os.environ.get("HOTLINE_PYTHON", sys.executable)
FAILS = []

SCRIPT = """import os, sys, time
sys.stderr.write("%d\\n" % os.getpid())
sys.stderr.flush()
end = time.monotonic() + float(sys.argv[1])
n = 0
while time.monotonic() < end: n += 1  # BUSY
"""


def check(cond, msg, extra=""):
    print(("ok   " if cond else "FAIL ") + msg)
    if not cond:
        FAILS.append(msg)
        if extra:
            print("--- " + str(extra))


def main():
    tmp = tempfile.mkdtemp(prefix="hotline-every-")
    try:
        run(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("FAILED: %d" % len(FAILS) if FAILS else "PASS")
    return 1 if FAILS else 0


def saved(err):
    return re.findall(r"profile (\d+) saved to (\S+)", err)


def run(tmp):
    script = os.path.join(tmp, "target.py")
    with open(script, "w") as f:
        f.write(SCRIPT)
    target = subprocess.Popen([PY, script, "60"], stderr=subprocess.PIPE)
    pid = int(target.stderr.readline())
    out = os.path.join(tmp, "profiles")
    att = subprocess.Popen([HOTLINE, "attach", str(pid), "--every", "800ms", "--duration", "0.3s",
                            "--keep", "2", "--json", out], stderr=subprocess.PIPE, text=True)
    err = ""
    deadline = time.monotonic() + 60
    while len(saved(err)) < 5 and time.monotonic() < deadline:
        line = att.stderr.readline()
        if not line:
            break
        err += line
    att.send_signal(signal.SIGINT)
    _, rest = att.communicate(timeout=30)
    err += rest or ""
    print(err)
    rounds = saved(err)
    check(att.returncode == 0, "exit 0 after SIGINT (got %s)" % att.returncode, err)
    check(len(rounds) >= 5, "five rounds at least: %d" % len(rounds), err)
    check(re.search(r"stopped after %d profiles" % len(rounds), err) is not None,
          "says it stopped and how many", err)
    check(err.count("thread CPU from") <= 1, "the engine's notes once, not per round", err)
    files = sorted(os.listdir(out))
    want = [os.path.basename(p) for _, p in rounds[-2:]]
    check(files == want, "the newest two kept: %r, wanted %r" % (files, want))
    check(all(re.fullmatch(r"hotline-%d-\d{8}T\d{6}\.\d{3}Z(-\d+)?\.json" % pid, f)
              for f in files), "names: hotline-PID-<UTC stamp, ms>.json: %r" % files)
    for f in files:
        j = json.load(open(os.path.join(out, f)))
        lines = j["files"].get(os.path.realpath(script), j["files"].get(script, {})).get("lines", {})
        busy = sum(v["python_s"] + v["native_s"] + v["system_s"] for v in lines.values())
        check(j["samples"] > 0 and busy > 0.05, "%s: samples on the busy line (%.3f s)" % (f, busy))
        check(j["elapsed_s"] < 2.0, "%s: one round's time, not the whole run (%.2f s)"
              % (f, j["elapsed_s"]))
    p = subprocess.run([HOTLINE, "diff", os.path.join(out, files[0]), os.path.join(out, files[1])],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 0 and "target.py" in p.stdout, "hotline diff of two rounds", p.stdout)

    # the target exits while attach waits: it ends by itself
    target.kill()
    target.wait()
    target = subprocess.Popen([PY, script, "2.5"], stderr=subprocess.PIPE)
    pid = int(target.stderr.readline())
    out2 = os.path.join(tmp, "p2")
    p = subprocess.run([HOTLINE, "attach", str(pid), "--every", "1", "--duration", "0.3",
                        "--json", out2], capture_output=True, text=True, timeout=60)
    target.wait(timeout=30)
    print(p.stderr)
    check(p.returncode == 0 and "target exited after" in p.stderr,
          "ends when the target exits (exit %d)" % p.returncode, p.stderr)
    check(target.returncode == 0, "the target ran to its end, exit %s" % target.returncode)
    n = len(saved(p.stderr))
    check(1 <= n <= 4 and len(os.listdir(out2)) == n, "%d rounds, all kept (default 24)" % n)

    # usage errors before anything is attached
    for args, why in ((["--every", "1", "--json", out2], "--duration"),
                      (["--every", "1", "--duration", "2", "--json", out2], "at most the period"),
                      (["--every", "1", "--duration", "0.5"], "--json DIR"),
                      (["--every", "1", "--duration", "0.5", "--json", out2, "--memory"],
                       "without --memory"),
                      (["--every", "soon", "--duration", "0.5", "--json", out2], "--every wants"),
                      (["--keep", "3"], "--keep goes with --every")):
        p = subprocess.run([HOTLINE, "attach", "1"] + args, capture_output=True, text=True,
                           timeout=30)
        check(p.returncode == 2 and why in p.stderr, "usage: %r -> %r" % (args, why), p.stderr)


if __name__ == "__main__":
    sys.exit(main())
