"""`hotline attach PID --memory` (docs/attach.md), run by the interpreter
under test against mem_target.py started as a non-child (setsid):
  - the agent is injected and connects; the 100 MiB the target keeps on its
    KEEP line after that are reported within 10%; on detach the agent
    unloads (no hotline-sampler thread, hotline.running() False) and the
    RAW, MEM and OBJ allocators in effect are the target's own again (ctypes'
    PyMem_GetAllocator in the target, after two attach/detach cycles); the
    target's stdout, stderr and exit status are those of an unattached run;
    the same unload when the target's main thread never lets the GIL go
    (a pure-Python loop: before 3.13 the unload's pending call waited for
    a GIL switch that never came);
  - 3.9-3.13 (gdb): failed injections leave the target running and
    unchanged, with a clear message and exit status 7: no gdb on PATH, gdb
    that fails (HOTLINE_GDB=/bin/false), a pending call Python refuses (a
    fake gdb that reports it), a target that reaches no safe point in time
    (blocked in a read: gdb is stopped and must take its breakpoints out);
    Ctrl-C while gdb waits for a safe point: exit 130, the target unchanged;
    as root, a target of another user (setpriv): what gdb runs is nowhere
    that user can write (it tries to rename its own file over it, and to
    add one to the socket's folder), and the attach works;
  - 3.14+ (PEP 768, no gdb: the attach runs with no gdb on PATH): a target
    with remote debugging off (-X disable-remote-debug,
    PYTHON_DISABLE_REMOTE_DEBUG) is refused, exit 7, nothing written; a
    target blocked in a C call (a read of a pipe) does not take the request
    within HOTLINE_INJECT_TIMEOUT: exit 7, the request withdrawn, and when
    it wakes it runs nothing of ours (its stderr stays empty: a request
    left pending would make it print "Exception ignored ... Can't open
    debugger script"); Ctrl-C while waiting: exit 130, withdrawn likewise;
    an audit hook in the target that refuses the script: exit 7, says so;
    as root, a target of another user (setpriv) reads the script as itself;
  - --include / --exclude reach the injected agent: with the json package
    included (and the default excludes replaced) a json.dumps loop's time
    is charged to json's lines, not the loop's; patterns too big for the
    injected code (gdb's 4 KiB page; 3.14+: our 60000-byte cap) are
    refused with exit 2, naming the limit, nothing injected;
  - the target's own `import hotline` is unchanged by an attach (its own
    hotline.py, or none);
  - the multiprocessing 'spawn' child of a program in a venv with 100
    files mapped (a marimo kernel's shape) is attached;
  - a stopped target (SIGSTOP: state T; under a debugger: state t) is
    refused at once, exit 8, saying so, nothing done;
  - a target already profiled (`hotline run`) is refused, exit status 1;
    no agent build for its version: 5; another user (as root: setpriv): 6.
Fails on 3.9-3.13 when gdb is not installed (.ci/install-deps installs it).

usage: python test_attach_memory.py  (env: HOTLINE_BUILD)"""
import contextlib
import fcntl
import json
import os
import queue
import re
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
PEP768 = sys.version_info >= (3, 14)  # sys.remote_exec's mechanism, no gdb


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


def start_target(d, *mode, flags=(), env=None, prefix=()):
    p = subprocess.Popen(list(prefix) + [sys.executable] + list(flags) + [TARGET, d] + list(mode),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True, env=env)
    pid = int(p.stderr.readline())  # the target is up (a condition, not a sleep)
    p.err = Lines(p.stderr)  # the rest of its stderr: must stay as unattached
    if "idle" in mode:
        # it says its pid before it reaches the read: a request written in
        # between is taken at its next bytecode (then the attach never
        # fails as the case expects; it hung until the 120 s timeout once
        # under load in CI's 3.14 pass)
        check(wait_until(lambda: in_read(pid), 30), "the idle target is blocked in its read")
    return p, pid, Lines(p.stdout)


READ_NR = {"x86_64": "0", "aarch64": "63"}.get(os.uname().machine)


def in_read(pid):
    """The process's thread blocked in read(2) now (/proc/PID/syscall)."""
    try:
        with open("/proc/%d/syscall" % pid) as f:
            nr = f.read().split()[0]
    except (OSError, IndexError):
        return False
    return nr == READ_NR if READ_NR else nr not in ("running", "-1")


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
    """(stdout, exit status, stderr after the pid line)"""
    touch(d, "exit")
    rc = p.wait(timeout=60)
    return out.rest(), rc, p.err.rest()


def no_gdb_env(tmp):
    """3.14+ needs no gdb: attach runs with none on PATH"""
    return dict(os.environ, PATH=tempfile.mkdtemp(dir=tmp)) if PEP768 else None


def reference(tmp):
    d = tempfile.mkdtemp(dir=tmp)
    touch(d, "go")
    touch(d, "exit")
    p, _, out = start_target(d)
    return finish(p, out, d)


def attached(tmp, ref_out, ref_rc):
    d = tempfile.mkdtemp(dir=tmp)
    p, pid, out = start_target(d, "allocators")
    check(out.wait_for("started", 30), "target started")
    js = os.path.join(tmp, "mem.json")
    t0 = time.monotonic()
    h = subprocess.Popen([HOTLINE, "attach", str(pid), "--memory", "--json", js],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=no_gdb_env(tmp))
    err = Lines(h.stderr)
    connected = err.wait_for("agent connected", 60)
    print("attach to agent connected: %.3f s" % (time.monotonic() - t0))
    check(connected, "the agent connected back")
    says = "--memory: PEP 768" if PEP768 else "--memory: gdb"
    check(err.all and says in err.all[0], "stderr's first line says what it does to the target "
          "(%r)" % says)
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
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60,
                       env=no_gdb_env(tmp))
    took, msg = time.monotonic() - t0, r.stderr.decode()
    check(r.returncode == 0 and "detached (duration)" in msg and took < 15,
          "a second attach ends after --duration (%d, %.1f s)" % (r.returncode, took))
    check(wait_until(lambda: sampler_threads(pid) == 0, 15), "and unloads again")
    got_out, got_rc, got_err = finish(p, out, d)
    # after both detaches the runtime calls the allocators it had before the
    # first attach, not wrappers that forward to them (issue 20: 27% slower)
    check("python allocators as at start: True" in got_out,
          "after detach the RAW, MEM and OBJ allocators are the target's own again")
    got_out = got_out.replace("python allocators as at start: True\n", "")
    check(got_out == ref_out, "target stdout unchanged (%r)" % got_out)
    check(got_rc == ref_rc, "target exit status unchanged (%s)" % got_rc)
    check(got_err == "", "target stderr unchanged (%r)" % got_err)


JSON_LOOP = ("import json, os, sys, time\n"
             "d = {'k%d' % i: list(range(30)) for i in range(40)}\n"
             "sys.stderr.write('%d\\n' % os.getpid()); sys.stderr.flush()\n"
             "end = time.monotonic() + 120\n"
             "while time.monotonic() < end:\n"
             "    json.dumps(d)  # JSONLOOP\n")


def busy_detach(tmp, ref_out, ref_rc):
    """Detach from a target whose main thread never lets the GIL go: the
    agent still unloads and the allocators are the target's own again.
    The unload is a pending call, and before 3.13 one added from the
    sampler thread waited for the main thread's next GIL switch: a
    pure-Python loop never ran it (issue 20 item 8: it kept the hooks)."""
    d = tempfile.mkdtemp(dir=tmp)
    p, pid, out = start_target(d, "busy")
    check(out.wait_for("started", 30), "busy: target started")
    h = subprocess.Popen([HOTLINE, "attach", str(pid), "--memory"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=no_gdb_env(tmp))
    err = Lines(h.stderr)
    check(err.wait_for("agent connected", 60), "busy: the agent connected back")
    touch(d, "go")
    check(out.wait_for("grown", 60), "busy: target grew, now in its loop")
    h.send_signal(signal.SIGINT)
    rc = h.wait(timeout=60)
    err.rest()
    check(rc == 0, "busy: attach --memory exits 0 on Ctrl-C (got %d)" % rc)
    check(wait_until(lambda: sampler_threads(pid) == 0, 15), "busy: the sampler thread is gone")
    # the unload runs at once with the fix; give a slow machine a moment
    time.sleep(1.0)
    with open(os.path.join(d, "flag"), "r+b") as f:
        f.write(b"1")
    got_out, got_rc, _ = finish(p, out, d)
    check("python allocators as at start: True" in got_out,
          "busy: after detach, with the GIL never let go, the allocators are the target's own"
          " again (%r)" % got_out[-200:])
    check(got_rc == ref_rc, "busy: target exit status unchanged (%s)" % got_rc)


def include_patterns(tmp):
    js = os.path.join(tmp, "jsonloop.py")
    with open(js, "w") as f:
        f.write(JSON_LOOP)
    p = subprocess.Popen([sys.executable, js], stderr=subprocess.PIPE, start_new_session=True)
    pid = int(p.stderr.readline())  # up (a condition, not a sleep)
    try:
        out = os.path.join(tmp, "include.json")
        r = subprocess.run([HOTLINE, "attach", str(pid), "--memory", "--duration", "1.5",
                            "--json", out, "--include", "*/json/*", "--exclude", "/nonexistent"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120,
                           env=no_gdb_env(tmp))
        msg = r.stderr.decode()
        check(r.returncode == 0 and "agent connected" in msg,
              "--include: attach --memory runs (%d, %s)" % (r.returncode, msg.strip()[-300:]))
        check(wait_until(lambda: sampler_threads(pid) == 0, 15), "--include: unloaded after")
        if r.returncode == 0 and os.path.exists(out):
            with open(out) as f:
                prof = json.load(f)

            def secs(pred):
                return sum(st.get("python_s", 0) + st.get("native_s", 0) + st.get("system_s", 0)
                           for path, fo in prof["files"].items() if pred(path)
                           for st in fo.get("lines", {}).values())
            in_json, loop = secs(lambda f: "/json/" in f), secs(lambda f: f == js)
            print("--include */json/* with --memory: json's lines %.3f s, the loop's %.3f s"
                  % (in_json, loop))
            # (a sample between two calls has no json frame: the loop's line)
            check(in_json > 0.3 and loop < 0.1 * in_json,
                  "--include */json/*: the injected agent charges json's lines (%.3f s), the "
                  "loop's only between calls (%.3f s)" % (in_json, loop))
        # too big for the injected code: refused before anything is done
        big = []
        for i in range(64):
            big += ["--include", "/%02d/%s/*" % (i, "x" * 500)]
        r = subprocess.run([HOTLINE, "attach", str(pid), "--memory"] + big,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120,
                           env=no_gdb_env(tmp))
        msg = r.stderr.decode()
        limit = "at most %d" % (60000 if PEP768 else 4000)
        check(r.returncode == 2 and "do not fit" in msg and limit in msg and "--memory:" not in msg,
              "patterns too big: exit 2 before anything is done, names the limit (%d, %s)" % (r.returncode,
                                                                     msg.strip()[-300:]))
        check(sampler_threads(pid) == 0 and p.poll() is None,
              "patterns too big: nothing injected, the target runs on")
    finally:
        p.kill()
        p.wait()


SPAWN_CHILD = ("import mmap, multiprocessing, os, sys, time\n"
               "def child(d):\n"
               "    maps = []  # a kernel's many extension modules: mapped files\n"
               "    for i in range(100):\n"
               "        path = os.path.join(d, 'f%d' % i)\n"
               "        with open(path, 'wb') as f:\n"
               "            f.write(b'x' * 4096)\n"
               "        with open(path, 'rb') as f:\n"
               "            maps.append(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ))\n"
               "    sys.stderr.write('%d\\n' % os.getpid()); sys.stderr.flush()\n"
               "    while not os.path.exists(os.path.join(d, 'exit')):\n"
               "        junk = bytearray(4096); time.sleep(0.002)\n"
               "if __name__ == '__main__':\n"
               "    multiprocessing.set_start_method('spawn')\n"
               "    p = multiprocessing.Process(target=child, args=(sys.argv[1],))\n"
               "    p.start(); p.join(); sys.exit(p.exitcode)\n")


def spawn_child(tmp):
    """What a `marimo edit` kernel is (issue 20): the multiprocessing
    'spawn' child of a program in a venv, with many mapped files (here 100
    mmapped ones; the kernel's extension modules). They sit below libc in
    the address space: inject_find read the first 64 mapped files only and
    said "no mmap found in its C library". Attach must work."""
    with open(sys.executable, "rb") as f:
        elf = f.read(4) == b"\x7fELF"
    if elf:
        venv = os.path.join(tmp, "venv")
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True,
                       timeout=120)
        py = os.path.join(venv, "bin", "python")
    else:
        # tests/py-sid.sh's stand-in is a script running the sid tree's
        # loader: a venv of it would run the tree's binary with the host's
        # loader (GLIBC_2.38 not found). The mappings are what matters here.
        print("spawn child: %s is not an ELF binary (py-sid's wrapper): no venv" % sys.executable)
        py = sys.executable
    script = os.path.join(tmp, "spawner.py")
    with open(script, "w") as f:
        f.write(SPAWN_CHILD)
    d = tempfile.mkdtemp(dir=tmp)
    p = subprocess.Popen([py, script, d],
                         stderr=subprocess.PIPE, start_new_session=True)
    try:
        pid = int(p.stderr.readline())  # the child is up, its files mapped
        r = subprocess.run([HOTLINE, "attach", str(pid), "--memory", "--duration", "1"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120,
                           env=no_gdb_env(tmp))
        msg = r.stderr.decode()
        check(r.returncode == 0 and "agent connected" in msg,
              "spawn child in a venv, 100 files mapped: attach --memory works (%d, %s)"
              % (r.returncode, msg.strip()[-200:]))
        check(wait_until(lambda: sampler_threads(pid) == 0, 15), "spawn child: unloaded after")
        touch(d, "exit")
        check(p.wait(timeout=60) == 0, "spawn child: the program ends as it would")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def failed(tmp, ref_out, ref_rc, what, env, expect, mode=(), flags=(), target_env=None,
           status=7, within=None, target_err=""):
    d = tempfile.mkdtemp(dir=tmp)
    p, pid, out = start_target(d, *mode, flags=flags, env=target_env)
    e = dict(os.environ)
    e.update(env)
    t0 = time.monotonic()
    r = subprocess.run([HOTLINE, "attach", str(pid), "--memory"], env=e, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    took, msg = time.monotonic() - t0, r.stderr.decode()
    print("%s: %.1f s, %s" % (what, took, msg.strip()))
    check(r.returncode == status, "%s: exit status %d (got %d)" % (what, status, r.returncode))
    check(expect in msg, "%s: the message says %r" % (what, expect))
    if within is not None:
        check(took < within, "%s: gave up in %.1f s (< %d)" % (what, took, within))
    check(p.poll() is None, "%s: the target still runs" % what)
    if mode:
        p.stdin.write(b"\n")  # wake it: its next malloc would trap on a breakpoint left
        p.stdin.flush()
    check(out.wait_for("started", 30), "%s: the target goes on" % what)
    touch(d, "go")
    got_out, got_rc, got_err = finish(p, out, d)
    err_ok = got_err == "" if not target_err else target_err in got_err
    check(got_out == ref_out and got_rc == ref_rc and err_ok,
          "%s: target output, stderr and status unchanged (%r, %r, %s)"
          % (what, got_out, got_err, got_rc))


def proc_state(pid):
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def ptrace(req, pid):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    return libc.ptrace(req, pid, None, None)


def stopped(tmp, ref_out, ref_rc):
    """A target stopped by SIGSTOP (state T), then one stopped under a
    debugger (state t: this test ptrace-attaches it): refused at once, exit
    8, the message says so, nothing done (no tracer left, no agent); once
    continued it runs on unchanged. Before, attach waited its whole timeout
    (gdb attached) and then blamed the target."""
    d = tempfile.mkdtemp(dir=tmp)
    p, pid, out = start_target(d)
    check(out.wait_for("started", 30), "stopped: target started")
    env = dict(os.environ, HOTLINE_INJECT_TIMEOUT="5")
    if PEP768:
        env["PATH"] = tempfile.mkdtemp(dir=tmp)
    os.kill(pid, signal.SIGSTOP)
    check(wait_until(lambda: proc_state(pid) == "T", 15), "stopped: the target is in state T")
    for what in ("SIGSTOP", "debugger"):
        if what == "debugger":
            os.kill(pid, signal.SIGCONT)
            check(ptrace(16, pid) == 0, "stopped: PTRACE_ATTACH")  # it stops: state t
            os.waitpid(pid, 0x40000000)  # __WALL: the stop of the attach
            check(proc_state(pid) == "t", "stopped: the target is in state t")
        t0 = time.monotonic()
        r = subprocess.run([HOTLINE, "attach", str(pid), "--memory"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        took, msg = time.monotonic() - t0, r.stderr.decode()
        print("stopped (%s): %.1f s, %d, %s" % (what, took, r.returncode, msg.strip()))
        says = "is stopped (state T" if what == "SIGSTOP" else "stopped under a debugger"
        check(r.returncode == 8 and says in msg and "--memory:" not in msg and took < 4,
              "stopped (%s): exit 8 at once, says %r, nothing done (%d, %.1f s)"
              % (what, says, r.returncode, took))
        check(sampler_threads(pid) == 0 and tracer(pid) == (os.getpid() if what == "debugger"
                                                             else 0),
              "stopped (%s): no gdb or agent left in it" % what)
    check(ptrace(17, pid) == 0, "stopped: PTRACE_DETACH")  # and it runs on
    check(wait_until(lambda: proc_state(pid) != "t", 15), "stopped: the target runs again")
    touch(d, "go")
    got_out, got_rc, got_err = finish(p, out, d)
    check(got_out == ref_out and got_rc == ref_rc and got_err == "",
          "stopped: target output, stderr and status unchanged (%r, %r, %s)"
          % (got_out, got_err, got_rc))


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
    got_out, got_rc, got_err = finish(p, out, d)
    check(got_out == ref_out and got_rc == ref_rc and got_err == "",
          "ctrl-c: target output, stderr and status unchanged (%r, %r, %s)"
          % (got_out, got_err, got_rc))


def ctrl_c_while_requested(tmp, ref_out, ref_rc):
    """3.14+: Ctrl-C while the request waits in a target blocked in a read:
    exit 130, the request withdrawn (the target, woken, runs nothing)."""
    d = tempfile.mkdtemp(dir=tmp)
    p, pid, out = start_target(d, "idle")
    h = subprocess.Popen([HOTLINE, "attach", str(pid), "--memory"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True, env=no_gdb_env(tmp))
    err = Lines(h.stderr)
    # the line comes right before the writes; signals are handled only after
    check(err.wait_for("--memory: PEP 768", 30), "ctrl-c: the request is being written")
    os.killpg(h.pid, signal.SIGINT)
    rc = h.wait(timeout=60)
    msg = err.rest()
    check(rc == 130 and "interrupted" in msg and "Withdrawn" in msg,
          "ctrl-c: exit 130, says it withdrew the request (%d, %s)" % (rc, msg.strip()[-200:]))
    check(p.poll() is None, "ctrl-c: the target still runs")
    p.stdin.write(b"\n")
    p.stdin.flush()
    touch(d, "go")
    got_out, got_rc, got_err = finish(p, out, d)
    check(got_out == ref_out and got_rc == ref_rc and got_err == "",
          "ctrl-c: target output, stderr and status unchanged (%r, %r, %s)"
          % (got_out, got_err, got_rc))


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
    got_out, got_rc, got_err = finish(p, out, d)
    check(got_out == ref_out and got_rc == ref_rc and got_err == "", "refusals: target unchanged")


def already_profiled(tmp):
    """A target under `hotline run` is left alone: the agent says so."""
    d = tempfile.mkdtemp(dir=tmp)
    p = subprocess.Popen([HOTLINE, "run", "--python", sys.executable, TARGET, d],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    pid = int(p.stderr.readline())
    p.err = Lines(p.stderr)
    out = Lines(p.stdout)
    check(out.wait_for("started", 30), "profiled: target started")
    r = subprocess.run([HOTLINE, "attach", str(pid), "--memory"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120, env=no_gdb_env(tmp))
    msg = r.stderr.decode()
    check(r.returncode == 1 and "already profiled" in msg,
          "profiled: refused with a message (%d, %s)" % (r.returncode, msg.strip()[-120:]))
    touch(d, "go")
    got_out, got_rc, _ = finish(p, out, d)  # stderr: hotline run's report
    check(got_rc == 3 and "grown 100" in got_out, "profiled: the run goes on (%s)" % got_rc)


OWN_TARGET = """import os, sys, time
d = sys.argv[1]
sys.stderr.write("%d\\n" % os.getpid()); sys.stderr.flush()
def imported():
    try:
        import hotline
        return repr(getattr(hotline, "X", "a hotline without X: " + hotline.__file__))
    except ImportError:
        return "none"
before = imported()
print("started", flush=True)
while not os.path.exists(os.path.join(d, "go")):
    junk = bytearray(4096)  # an allocator call: a safe point for gdb
    time.sleep(0.002)
print("before", before, "after", imported(), flush=True)
"""


def own_module(tmp):
    """The target's `import hotline` gets what it got before the attach:
    its own hotline.py (imported before and after), or nothing when it has
    none. Before, the injected code imported `hotline`: the program's own
    module (no _attach there: nothing attached), or the profiler's package,
    which then stayed in sys.modules for the program to find."""
    for own in (True, False):
        d = tempfile.mkdtemp(dir=tmp)
        prog = os.path.join(d, "prog.py")
        with open(prog, "w") as f:
            f.write(OWN_TARGET)
        if own:
            with open(os.path.join(d, "hotline.py"), "w") as f:
                f.write("X = 1\n")
        p = subprocess.Popen([sys.executable, prog, d], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, start_new_session=True)
        pid = int(p.stderr.readline())
        p.err, out = Lines(p.stderr), Lines(p.stdout)
        check(out.wait_for("started", 30), "own module (%s): target started" % own)
        r = subprocess.run([HOTLINE, "attach", str(pid), "--memory", "--duration", "1"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120,
                           env=no_gdb_env(tmp))
        msg = r.stderr.decode()
        check(r.returncode == 0 and "agent connected" in msg and "detached (duration)" in msg,
              "own module (%s): attached, then detached (%d, %s)"
              % (own, r.returncode, msg.strip()[-200:]))
        check(wait_until(lambda: sampler_threads(pid) == 0, 15),
              "own module (%s): the agent unloaded" % own)
        touch(d, "go")
        got_out, got_rc, got_err = finish(p, out, d)
        want = "before 1 after 1\n" if own else "before none after none\n"
        check(got_out == "started\n" + want and got_rc == 0 and got_err == "",
              "own module (%s): the program's import unchanged (%r, %s, %r)"
              % (own, got_out, got_rc, got_err))


def pep768_failures(tmp, ref_out, ref_rc):
    """3.14+: remote debugging off, a target blocked in a C call, Ctrl-C"""
    nogdb = {"PATH": tempfile.mkdtemp(dir=tmp)}
    # CPython reads the hyphenated -X option only (`-X disable_remote_debug`,
    # spelt as its docs spell it, is ignored by 3.14.10 and 3.15.2)
    failed(tmp, ref_out, ref_rc, "-X disable-remote-debug", nogdb, "remote debugging turned off",
           flags=("-X", "disable-remote-debug"))
    failed(tmp, ref_out, ref_rc, "PYTHON_DISABLE_REMOTE_DEBUG", nogdb,
           "remote debugging turned off",
           target_env=dict(os.environ, PYTHON_DISABLE_REMOTE_DEBUG="1"))
    failed(tmp, ref_out, ref_rc, "blocked in a read", dict(nogdb, HOTLINE_INJECT_TIMEOUT="2"),
           "Withdrawn (debugger_pending_call cleared)", mode=("idle",), within=15)
    # the target's own policy refuses: CPython says so on its stderr, we on ours
    failed(tmp, ref_out, ref_rc, "audit hook refuses", dict(nogdb, HOTLINE_INJECT_TIMEOUT="2"),
           "took the request but its agent did not connect", mode=("audit",), within=15,
           target_err="Audit hook failed for remote debugger script")
    ctrl_c_while_requested(tmp, ref_out, ref_rc)
    other_user(tmp, ref_out, ref_rc)


def other_user(tmp, ref_out, ref_rc):
    """3.14+, as root: a target of another user reads the script as itself
    (handed over like the socket, or it could not open it)"""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        print("not run: the other-user attach needs root and setpriv")
        return
    d = tempfile.mkdtemp(dir=tmp)
    os.chmod(tmp, 0o755)  # the target, as nobody, looks for go/exit here
    os.chmod(d, 0o755)
    # nobody must reach the interpreter, the target script and the agent
    # build: a checkout in a 0700 folder (mktemp -d) is opened for the
    # test (search only, o+x) and closed again after it
    with opened_to_others([sys.executable, TARGET, os.path.join(BUILD, "python"), d]):
        other_user_attach(tmp, d, ref_out, ref_rc)


@contextlib.contextmanager
def opened_to_others(paths):
    """paths reachable by other users while the block runs. The folders are
    shared by this test's runs for every interpreter (ctest -j2): one run
    putting a folder's mode back while another's target (as nobody) starts
    made that target's interpreter fail with EACCES on its script (seen in a
    checkout under a 0700 mktemp -d). So the block holds a lock that every
    run takes, in the build folder."""
    with open(os.path.join(BUILD, ".attach-memory-others.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        opened = open_to_others(paths)
        try:
            yield
        finally:
            for path, mode in reversed(opened):
                os.chmod(path, mode)


def open_to_others(paths):
    """o+x on every folder above paths that lacks it: [(folder, old mode)]"""
    import stat
    changed = []
    for path in paths:
        parent = os.path.dirname(os.path.abspath(path))
        chain = []
        while parent and parent not in chain:
            chain.append(parent)
            parent = os.path.dirname(parent) if parent != "/" else None
        for folder in reversed(chain):
            mode = stat.S_IMODE(os.stat(folder).st_mode)
            if not mode & stat.S_IXOTH and folder not in [c[0] for c in changed]:
                os.chmod(folder, mode | stat.S_IXOTH)
                changed.append((folder, mode))
    return changed


def other_user_attach(tmp, d, ref_out, ref_rc):
    p, pid, out = start_target(d, prefix=("setpriv", "--reuid=65534", "--regid=65534",
                                          "--clear-groups"))
    check(out.wait_for("started", 30), "other user: target started")
    r = subprocess.run([HOTLINE, "attach", str(pid), "--memory", "--duration", "1"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60,
                       env=no_gdb_env(tmp))
    msg = r.stderr.decode()
    check(r.returncode == 0 and "agent connected" in msg,
          "other user: root attaches, the agent connects (%d, %s)" % (r.returncode,
                                                                      msg.strip()[-200:]))
    touch(d, "go")
    got_out, got_rc, got_err = finish(p, out, d)
    check(got_out == ref_out and got_rc == ref_rc and got_err == "",
          "other user: target output, stderr and status unchanged (%r, %r, %s)"
          % (got_out, got_err, got_rc))


def as_nobody(*argv):
    """argv run as the target's user of the other-user cases: its status"""
    return subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
                          + list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          timeout=60).returncode


def other_user_gdb(tmp, ref_out, ref_rc):
    """3.9-3.13, as root: a target of another user. Nothing root's gdb reads
    may be where that user can write: while gdb waits (the target blocked
    in a read), the user tries to rename its own file over gdb's script (the
    file after -x, or what gdb's descriptor names) and to add a file to the
    folder of the socket; both must fail, the socket is the user's (it must
    connect), and once woken the target connects and runs on unchanged.
    Before the fix the folder (gdb's script in it) was handed to the user:
    the rename worked, and won before gdb read it, gdb ran it as root."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        print("not run: the other-user attach needs root and setpriv")
        return
    d = tempfile.mkdtemp(dir=tmp)
    os.chmod(tmp, 0o755)  # the target, as nobody, looks for go/exit here
    os.chmod(d, 0o755)
    tmpdir = tempfile.mkdtemp(dir=tmp)  # attach's TMPDIR: its folder is the one there
    os.chmod(tmpdir, 0o755)
    evil_dir = tempfile.mkdtemp(dir=tmp)  # the user's own file, to put over gdb's
    marker = os.path.join(evil_dir, "ran-as-root")
    evil = os.path.join(evil_dir, "evil.gdb")
    with open(evil, "w") as f:
        f.write("shell touch %s\nquit\n" % marker)
    os.chown(evil_dir, 65534, 65534)
    os.chown(evil, 65534, 65534)
    others = contextlib.ExitStack()
    others.enter_context(opened_to_others([sys.executable, TARGET, os.path.join(BUILD, "python"),
                                           d]))
    try:
        p, pid, out = start_target(d, "idle", prefix=("setpriv", "--reuid=65534",
                                                     "--regid=65534", "--clear-groups"))
        h = subprocess.Popen([HOTLINE, "attach", str(pid), "--memory", "--duration", "1"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=dict(os.environ, TMPDIR=tmpdir, HOTLINE_INJECT_TIMEOUT="30"))
        err = Lines(h.stderr)
        check(wait_until(lambda: tracer(pid) != 0, 30), "other user, gdb: gdb is attached")
        gdb = tracer(pid)
        try:
            with open("/proc/%d/cmdline" % gdb, "rb") as f:
                argv = f.read().decode(errors="replace").split("\0")
            script = argv[argv.index("-x") + 1]
            fd = re.match(r"/(?:proc/self|dev)/fd/(\d+)$", script)
            where = os.readlink("/proc/%d/fd/%s" % (gdb, fd.group(1))) if fd else script
        except (OSError, ValueError) as e:
            script = where = "(not found: %s)" % e
        print("other user, gdb: gdb -x %s, that is %s" % (script, where))
        if where.startswith("/memfd:"):
            replaced = False  # in no folder at all
        else:
            replaced = as_nobody(sys.executable, "-c", "import os, sys; os.rename(*sys.argv[1:])",
                                 evil, where) == 0
        check(not replaced and where.startswith("/"),
              "other user, gdb: the user cannot put its own file over gdb's script (%s)" % where)
        folders = [os.path.join(tmpdir, n) for n in os.listdir(tmpdir)]
        check(len(folders) == 1, "other user, gdb: attach made one folder in TMPDIR (%s)" % folders)
        for folder in folders:
            st = os.stat(folder)
            added = as_nobody(sys.executable, "-c", "open(__import__('sys').argv[1], 'x')",
                              os.path.join(folder, "x")) == 0
            check(st.st_uid == 0 and not st.st_mode & 0o022 and not added,
                  "other user, gdb: the socket's folder is root's, the user cannot add to it "
                  "(owner %d, mode %o, added: %s)" % (st.st_uid, st.st_mode & 0o777, added))
            sock = os.path.join(folder, "agent.sock")
            check(os.path.exists(sock) and os.stat(sock).st_uid == 65534,
                  "other user, gdb: the socket is handed to the target's user")
        p.stdin.write(b"\n")  # wake it: gdb finds its safe point, the agent connects
        p.stdin.flush()
        rc = h.wait(timeout=60)
        msg = err.rest()
        check(rc == 0 and "agent connected" in msg,
              "other user, gdb: root attaches, the agent connects (%d, %s)"
              % (rc, msg.strip()[-200:]))
        check(not os.path.exists(marker), "other user, gdb: nothing of the user's ran as root")
        check(out.wait_for("started", 30), "other user, gdb: the target goes on")
        touch(d, "go")
        got_out, got_rc, got_err = finish(p, out, d)
        check(got_out == ref_out and got_rc == ref_rc and got_err == "",
              "other user, gdb: target output, stderr and status unchanged (%r, %r, %s)"
              % (got_out, got_err, got_rc))
    finally:
        others.close()


def gdb_failures(tmp, ref_out, ref_rc):
    """3.9-3.13: every way the gdb injection can fail"""
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
    ctrl_c_while_waiting(tmp, ref_out, ref_rc)
    other_user_gdb(tmp, ref_out, ref_rc)


def main():
    if not PEP768 and not shutil.which("gdb"):
        # .ci/install-deps installs it: a machine without it is set up wrong
        print("FAIL gdb is not installed (apt-get install gdb; .ci/install-deps does)")
        return 1
    tmp = tempfile.mkdtemp(prefix="hl-attach-mem-")
    try:
        ref_out, ref_rc, ref_err = reference(tmp)
        check(ref_rc == 3 and "grown 100" in ref_out and ref_err == "",
              "reference run (%s, %r)" % (ref_rc, ref_err))
        attached(tmp, ref_out, ref_rc)
        busy_detach(tmp, ref_out, ref_rc)
        include_patterns(tmp)
        stopped(tmp, ref_out, ref_rc)
        spawn_child(tmp)
        if PEP768:
            pep768_failures(tmp, ref_out, ref_rc)
        else:
            gdb_failures(tmp, ref_out, ref_rc)
        already_profiled(tmp)
        own_module(tmp)
        refusals(tmp, ref_out, ref_rc)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failure(s)" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
