"""`hotline attach PID --memory` (docs/attach.md), run by the interpreter
under test against mem_target.py started as a non-child (setsid):
  - the agent is injected and connects; the 100 MiB the target keeps on its
    KEEP line after that are reported within 10%; on detach the agent
    unloads (no hotline-sampler thread, hotline.running() False); the
    target's stdout and exit status are those of an unattached run;
  - failed injections leave the target running and unchanged, with a
    clear message and exit status 7: no gdb on PATH, gdb that fails
    (HOTLINE_GDB=/bin/false), a pending call Python refuses (a fake gdb
    that reports it), a target that reaches no safe point in time
    (blocked in a read: gdb is stopped and must take its breakpoints out);
  - Ctrl-C while gdb waits for a safe point: exit 130, the target unchanged;
  - a target already profiled (`hotline run`) is refused, exit status 1;
    no agent build for its version: 5; another user (as root: setpriv): 6.
Fails when gdb is not installed (.ci/install-deps installs it).

usage: python test_attach_memory.py  (env: HOTLINE_BUILD)"""
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

BUILD = os.environ["HOTLINE_BUILD"]
HOTLINE = os.path.join(BUILD, "hotline")
HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = os.path.join(HERE, "mem_target.py")
FAILS = []


def check(cond, msg):
    print(("ok   " if cond else "FAIL ") + msg, flush=True)
    if not cond:
        FAILS.append(msg)


def keep_line():
    with open(TARGET) as f:
        for i, l in enumerate(f, 1):
            if "# KEEP" in l:
                return i
    raise AssertionError("KEEP")


class Lines:
    """A pipe's lines, read by a thread, waited for with a deadline."""

    def __init__(self, pipe):
        self.q, self.all = queue.Queue(), []
        threading.Thread(target=self._read, args=(pipe,), daemon=True).start()

    def _read(self, pipe):
        for raw in iter(pipe.readline, b""):
            self.q.put(raw.decode(errors="replace"))
        self.q.put(None)

    def wait_for(self, text, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                l = self.q.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            if l is None:
                return False
            self.all.append(l)
            if text in l:
                return True
        return False

    def rest(self, timeout=30):
        while self.wait_for("\0never\0", timeout):
            pass
        return "".join(self.all)


def start_target(d, *mode):
    p = subprocess.Popen([sys.executable, TARGET, d] + list(mode), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    pid = int(p.stderr.readline())  # the target is up (a condition, not a sleep)
    return p, pid, Lines(p.stdout)


def touch(d, name):
    open(os.path.join(d, name), "w").close()


def wait_until(cond, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


def sampler_threads(pid):
    n = 0
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                n += f.read().strip() == "hotline-sampler"
    except OSError:
        pass
    return n


def finish(p, out, d):
    touch(d, "exit")
    rc = p.wait(timeout=60)
    return out.rest(), rc


def reference(tmp):
    d = tempfile.mkdtemp(dir=tmp)
    touch(d, "go")
    touch(d, "exit")
    p, _, out = start_target(d)
    return finish(p, out, d)


def attached(tmp, ref_out, ref_rc):
    d = tempfile.mkdtemp(dir=tmp)
    p, pid, out = start_target(d)
    check(out.wait_for("started", 30), "target started")
    js = os.path.join(tmp, "mem.json")
    h = subprocess.Popen([HOTLINE, "attach", str(pid), "--memory", "--json", js],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = Lines(h.stderr)
    connected = err.wait_for("agent connected", 60)
    check(connected, "the agent connected back")
    check(any("--memory: gdb" in l for l in err.all), "stderr says what it does to the target")
    check(wait_until(lambda: sampler_threads(pid) == 1, 15),
          "the agent's sampler thread runs in the target")
    touch(d, "go")
    check(out.wait_for("grown", 60), "target grew by 100 MiB")
    h.send_signal(signal.SIGINT)
    rc = h.wait(timeout=60)
    report = err.rest()
    print(report)
    check(rc == 0, "attach --memory exits 0 on Ctrl-C (got %d)" % rc)
    check("kept MB" in report, "the report has the memory table")
    kept = None
    if os.path.exists(js):
        with open(js) as f:
            prof = json.load(f)
        line = prof["files"].get(TARGET, {}).get("lines", {}).get(str(keep_line()), {})
        kept = line.get("kept_mb")
    print("kept on the KEEP line: %s MB (truth 100 MiB)" % kept)
    check(kept is not None and abs(kept - 100) <= 10, "kept within 10%% of 100 MB (%s)" % kept)
    check(wait_until(lambda: sampler_threads(pid) == 0, 15),
          "after detach the sampler thread is gone")
    # again, now that hotline is imported there: the agent connects before
    # gdb has even exited, and --duration must still end it
    t0 = time.monotonic()
    r = subprocess.run([HOTLINE, "attach", str(pid), "--memory", "--duration", "1"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    took, msg = time.monotonic() - t0, r.stderr.decode()
    check(r.returncode == 0 and "detached (duration)" in msg and took < 15,
          "a second attach ends after --duration (%d, %.1f s)" % (r.returncode, took))
    check(wait_until(lambda: sampler_threads(pid) == 0, 15), "and unloads again")
    got_out, got_rc = finish(p, out, d)
    check(got_out == ref_out, "target stdout unchanged (%r)" % got_out)
    check(got_rc == ref_rc, "target exit status unchanged (%s)" % got_rc)


def failed(tmp, ref_out, ref_rc, what, env, expect, mode=()):
    d = tempfile.mkdtemp(dir=tmp)
    p, pid, out = start_target(d, *mode)
    e = dict(os.environ)
    e.update(env)
    t0 = time.monotonic()
    r = subprocess.run([HOTLINE, "attach", str(pid), "--memory"], env=e, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    msg = r.stderr.decode()
    print("%s: %.1f s, %s" % (what, time.monotonic() - t0, msg.strip()))
    check(r.returncode == 7, "%s: exit status 7 (got %d)" % (what, r.returncode))
    check(expect in msg, "%s: the message says %r" % (what, expect))
    check(p.poll() is None, "%s: the target still runs" % what)
    if mode:
        p.stdin.write(b"\n")  # wake it: its next malloc would trap on a breakpoint left
        p.stdin.flush()
    check(out.wait_for("started", 30), "%s: the target goes on" % what)
    touch(d, "go")
    got_out, got_rc = finish(p, out, d)
    check(got_out == ref_out and got_rc == ref_rc,
          "%s: target output and status unchanged (%r, %s)" % (what, got_out, got_rc))


def tracer(pid):
    with open("/proc/%d/status" % pid) as f:
        for l in f:
            if l.startswith("TracerPid:"):
                return int(l.split()[1])
    return 0


def ctrl_c_while_waiting(tmp, ref_out, ref_rc):
    """Ctrl-C in hotline's terminal (SIGINT to its process group) while gdb
    waits for a safe point: gdb must not get it (its interrupt would SIGINT
    the target's group, and pass it on); attach gives up, exit 130."""
    d = tempfile.mkdtemp(dir=tmp)
    p, pid, out = start_target(d, "idle")
    h = subprocess.Popen([HOTLINE, "attach", str(pid), "--memory"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    check(wait_until(lambda: tracer(pid) != 0, 30), "ctrl-c: gdb is attached and waiting")
    os.killpg(h.pid, signal.SIGINT)
    rc = h.wait(timeout=60)
    msg = h.stderr.read().decode()
    check(rc == 130 and "interrupted" in msg, "ctrl-c: exit 130, says so (%d, %s)"
          % (rc, msg.strip()[-100:]))
    check(wait_until(lambda: tracer(pid) == 0, 15), "ctrl-c: gdb detached")
    check(p.poll() is None, "ctrl-c: the target still runs")
    p.stdin.write(b"\n")
    p.stdin.flush()
    touch(d, "go")
    got_out, got_rc = finish(p, out, d)
    check(got_out == ref_out and got_rc == ref_rc,
          "ctrl-c: target output and status unchanged (%r, %s)" % (got_out, got_rc))


def refusals(tmp, ref_out, ref_rc):
    """Refused before gdb: no agent build for the version, no permission."""
    d = tempfile.mkdtemp(dir=tmp)
    p, pid, out = start_target(d)
    empty = tempfile.mkdtemp(dir=tmp)
    os.mkdir(os.path.join(empty, "hotline"))
    e = dict(os.environ, HOTLINE_AGENT_PATH=empty)
    r = subprocess.run([HOTLINE, "attach", str(pid), "--memory"], env=e, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    ver = "%d.%d" % sys.version_info[:2]
    check(r.returncode == 5 and ("no agent built for Python " + ver) in r.stderr.decode(),
          "no agent build: exit 5, names the version (%s)" % r.stderr.decode().strip())
    if os.geteuid() == 0 and shutil.which("setpriv"):
        r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                            HOTLINE, "attach", str(pid), "--memory"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        check(r.returncode == 6 and "permission denied" in r.stderr.decode(),
              "another user: exit 6, the permission message (%s)" % r.stderr.decode().strip())
    touch(d, "go")
    got_out, got_rc = finish(p, out, d)
    check(got_out == ref_out and got_rc == ref_rc, "refusals: target unchanged")


def already_profiled(tmp):
    """A target under `hotline run` is left alone: the agent says so."""
    d = tempfile.mkdtemp(dir=tmp)
    p = subprocess.Popen([HOTLINE, "run", "--python", sys.executable, TARGET, d],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    pid = int(p.stderr.readline())
    out = Lines(p.stdout)
    check(out.wait_for("started", 30), "profiled: target started")
    r = subprocess.run([HOTLINE, "attach", str(pid), "--memory"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    msg = r.stderr.decode()
    check(r.returncode == 1 and "already profiled" in msg,
          "profiled: refused with a message (%d, %s)" % (r.returncode, msg.strip()[-120:]))
    touch(d, "go")
    got_out, got_rc = finish(p, out, d)
    check(got_rc == 3 and "grown 100" in got_out, "profiled: the run goes on (%s)" % got_rc)


def main():
    if not shutil.which("gdb"):
        # .ci/install-deps installs it: a machine without it is set up wrong
        print("FAIL gdb is not installed (apt-get install gdb; .ci/install-deps does)")
        return 1
    tmp = tempfile.mkdtemp(prefix="hl-attach-mem-")
    try:
        ref_out, ref_rc = reference(tmp)
        check(ref_rc == 3 and "grown 100" in ref_out, "reference run (%s)" % ref_rc)
        attached(tmp, ref_out, ref_rc)
        nogdb = tempfile.mkdtemp(dir=tmp)  # a PATH with no gdb in it
        failed(tmp, ref_out, ref_rc, "no gdb", {"PATH": nogdb}, "apt-get install gdb")
        failed(tmp, ref_out, ref_rc, "gdb fails", {"HOTLINE_GDB": "/bin/false"},
               "the target is unchanged")
        fake = os.path.join(tmp, "fake-gdb")  # says the pending call was refused
        with open(fake, "w") as f:
            f.write("#!/bin/sh\necho 'HOTLINE stopped 1 0x1'\necho 'HOTLINE rc -1 0x0'\n")
        os.chmod(fake, 0o755)
        failed(tmp, ref_out, ref_rc, "call refused", {"HOTLINE_GDB": fake},
               "refused the pending call")
        failed(tmp, ref_out, ref_rc, "no safe point", {"HOTLINE_INJECT_TIMEOUT": "2"},
               "reached no safe point", mode=("idle",))
        already_profiled(tmp)
        ctrl_c_while_waiting(tmp, ref_out, ref_rc)
        refusals(tmp, ref_out, ref_rc)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failure(s)" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
