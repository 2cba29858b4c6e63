"""`hotline attach` against ground truth (target.py), run by the
interpreter under test: the busy line is mostly python time, the sleep line
system, the hotline_spin line running (python or native: its native share
is printed, see docs/attach.md); the report has `hotline run`'s form; the
target's stdout and exit status are unchanged; a target that exits ends the
attach normally; a two-thread target's --speedscope has a profile per
thread; a dead pid, a zombie, a non-Python process and a reader
without permission each get their message and exit status. On 3.9/3.10
(no Py_Version) a library whose name disagrees with its version text is
refused.

usage: python test_attach.py  (env: HOTLINE_BUILD, HOTLINE_SPIN_DIR)"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

BUILD = os.environ["HOTLINE_BUILD"]
HOTLINE = os.path.join(BUILD, "hotline")
HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = os.path.join(HERE, "target.py")
FAILS = []


def check(cond, msg):
    print(("ok   " if cond else "FAIL ") + msg)
    if not cond:
        FAILS.append(msg)


def marker_line(tag):
    with open(TARGET) as f:
        for i, l in enumerate(f, 1):
            if "# " + tag in l:
                return i
    raise AssertionError(tag)


def start_target(seconds):
    env = dict(os.environ)
    spin = os.environ.get("HOTLINE_SPIN_DIR")
    if spin:
        env["PYTHONPATH"] = spin
    p = subprocess.Popen([sys.executable, TARGET, str(seconds)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env)
    pid = int(p.stderr.readline())  # waits for the target to be up (a condition, not a sleep)
    return p, env


def script_target(tmp, name, text):
    """Writes tmp/name, runs it; it writes its pid on stderr once ready
    (text says where). (path, process, pid)"""
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    p = subprocess.Popen([sys.executable, path], stderr=subprocess.PIPE)
    return path, p, int(p.stderr.readline())  # a condition, not a sleep


def attach(pid, *args, user=None):
    cmd = [HOTLINE, "attach", str(pid)] + list(args)
    if user:
        cmd = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user, "--clear-groups"] + cmd
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    return r.returncode, r.stderr.decode()


def line_stats(prof, line):
    return prof["files"].get(TARGET, {}).get("lines", {}).get(str(line), {})


def table_headers(report):
    return [l.strip() for l in report.splitlines() if re.match(r"\s+time%", l)]


def accuracy(tmp, ref_out, ref_rc, have_spin):
    p, _ = start_target(3.0)
    out_json = os.path.join(tmp, "attach.json")
    rc, err = attach(p.pid, "--duration", "2", "--json", out_json)
    out, _ = p.communicate(timeout=30)
    print(err)
    check(rc == 0, "attach exits 0 (got %d)" % rc)
    check(out == ref_out, "target stdout byte-identical to an unattached run")
    check(p.returncode == ref_rc, "target exit status unchanged (%s)" % p.returncode)
    with open(out_json) as f:
        prof = json.load(f)
    # one sample per --interval (10 ms by default): 2 s -> ~200, never far more
    check(100 <= prof.get("samples", 0) <= 230,
          "sampling rate follows the interval (%s samples in 2 s)" % prof.get("samples"))
    busy = line_stats(prof, marker_line("BUSY"))
    nap = line_stats(prof, marker_line("SLEEP"))
    tot = lambda s: s.get("python_s", 0) + s.get("native_s", 0) + s.get("system_s", 0)
    print("busy", busy, "\nsleep", nap)
    check(tot(busy) > 0.2 and busy.get("python_s", 0) > 0.7 * tot(busy),
          "busy line: mostly python (%.3f of %.3f s)" % (busy.get("python_s", 0), tot(busy)))
    check(tot(nap) > 0.2 and nap.get("system_s", 0) > 0.8 * tot(nap),
          "sleep line: mostly system (%.3f of %.3f s)" % (nap.get("system_s", 0), tot(nap)))
    if have_spin:
        nat = line_stats(prof, marker_line("NATIVE"))
        print("native", nat)
        # running, never waiting; mostly native where attach has exact
        # thread clocks (perf task clock); from /proc a running thread's CPU
        # moves only at scheduler ticks (docs/attach.md, "Limits"), so the
        # native share is then printed, not asserted
        run = nat.get("native_s", 0) + nat.get("python_s", 0)
        if "perf task clocks (exact)" in err:
            check(nat.get("native_s", 0) > 0.6 * tot(nat),
                  "native line: mostly native with exact clocks (%.3f of %.3f s)"
                  % (nat.get("native_s", 0), tot(nat)))
        check(tot(nat) > 0.2 and run > 0.8 * tot(nat),
              "native line: running, not waiting (%.3f of %.3f s; native %.3f)"
              % (run, tot(nat), nat.get("native_s", 0)))
    else:
        print("note: hotline_spin not built for this Python: no native line")
    check(("Python %d.%d." % sys.version_info[:2]) in err, "attach names the target's Python")

    return err


def main():
    tmp = tempfile.mkdtemp(prefix="hotline-attach-")
    have_spin = True
    try:
        __import__("hotline_spin")
    except ImportError:
        sys.path.insert(0, os.environ.get("HOTLINE_SPIN_DIR", ""))
        try:
            __import__("hotline_spin")
        except ImportError:
            have_spin = False

    # unattached reference run: its stdout and status
    ref, _ = start_target(1.0)
    ref_out, _ = ref.communicate(timeout=30)
    ref_rc = ref.returncode
    check(ref_rc == 7, "unattached target exits 7 (got %s)" % ref_rc)

    # 1. attach for 2 s to a 3 s target; accuracy is wall-clock work: the best
    # of 3 attempts, every attempt printed (as the profiler's truth tests)
    for attempt in range(3):
        print("--- attempt %d" % (attempt + 1))
        mark = len(FAILS)
        err = accuracy(tmp, ref_out, ref_rc, have_spin)
        if len(FAILS) == mark:
            break
        if attempt < 2:
            del FAILS[mark:]

    # the report has `hotline run`'s form (same table headers)
    small = os.path.join(tmp, "small.py")
    with open(small, "w") as f:
        f.write("import time\nend = time.monotonic() + 0.3\nwhile time.monotonic() < end: pass\n")
    r = subprocess.run([HOTLINE, "run", "--no-memory", "--python", sys.executable, small],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    run_h, att_h = table_headers(r.stderr.decode()), table_headers(err)
    check(len(att_h) == 2 and att_h == run_h,
          "report tables as `hotline run`'s: %r vs %r" % (att_h, run_h))
    check("hottest lines" in err and "detached (duration)" in err, "report header and end reason")

    # 2. the target exits while attached: a normal end with what was collected
    p, _ = start_target(0.6)
    rc, err2 = attach(p.pid)
    p.communicate(timeout=30)
    check(rc == 0 and "target exited" in err2 and "hottest lines" in err2,
          "target exiting ends the attach with a report (rc %d)" % rc)

    # 3. a second libpython (ctypes loads a copy): the initialised runtime wins
    import sysconfig
    lib = os.path.join(sysconfig.get_config_var("LIBDIR") or "",
                       sysconfig.get_config_var("INSTSONAME") or "")
    if sysconfig.get_config_var("Py_ENABLE_SHARED") and os.path.exists(lib):
        copy = os.path.join(tmp, "copy-" + os.path.basename(lib))
        shutil.copy(lib, copy)
        two = os.path.join(tmp, "two.py")
        with open(two, "w") as f:
            f.write("import ctypes, os, sys, time\nctypes.CDLL(%r)\n"
                    "sys.stderr.write('%%d\\n' %% os.getpid()); sys.stderr.flush()\n"
                    "end = time.monotonic() + 1.5\n"
                    "while time.monotonic() < end: pass  # TWO\n" % copy)
        p = subprocess.Popen([sys.executable, two], stderr=subprocess.PIPE)
        pid = int(p.stderr.readline())
        with open("/proc/%d/maps" % pid) as f:
            both = f.read().count(os.path.basename(lib)) > 0 and copy in open(
                "/proc/%d/maps" % pid).read()
        rc, e = attach(pid, "--duration", "0.5")
        p.wait(timeout=30)
        check(both and rc == 0 and "two.py:5" in e and "copy-" not in e.split("\n")[0],
              "two libpython mappings: attach reads the initialised one (rc %d)" % rc)

    # 3b. 3.9/3.10 (no Py_Version): the version is the text Py_GetVersion
    # left in the library's data, and a file name that says another version
    # is a reason to refuse, not to guess (docs/attach.md, "Method"): the
    # library preloaded under the other minor's name (ld.so takes it for
    # the one the executable needs by its soname)
    if (sys.version_info < (3, 11) and sysconfig.get_config_var("Py_ENABLE_SHARED")
            and os.path.exists(lib)):
        fake = os.path.join(tmp, "libpython3.%d.so.1.0" % (10 if sys.version_info[1] == 9 else 9))
        shutil.copy(lib, fake)
        p = subprocess.Popen([sys.executable, "-c", "import os, sys, time\n"
                              "sys.stderr.write('%d\\n' % os.getpid()); sys.stderr.flush()\n"
                              "time.sleep(60)\n"],
                             stderr=subprocess.PIPE, env=dict(os.environ, LD_PRELOAD=fake))
        pid = int(p.stderr.readline())
        with open("/proc/%d/maps" % pid) as f:
            mapped = fake in f.read()
        rc, e = attach(pid, "--duration", "0.2")
        p.kill()
        p.wait()
        check(mapped and rc == 5 and "not sure which Python" in e,
              "3.9/3.10 library named for another version: rc 5, refused (%d: %s)"
              % (rc, e.strip()))

    # 4. a user's own process, without root: exact clocks still (user-space
    # task clock under perf_event_paranoid 2), the spin line native
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    runs_as_nobody = os.geteuid() == 0 and shutil.which("setpriv") and subprocess.run(
        nobody + [sys.executable, "-c", "pass"], stderr=subprocess.DEVNULL).returncode == 0
    if not runs_as_nobody:
        print("note: this interpreter cannot run as uid 65534 here (e.g. under /root): "
              "the plain-user case runs with the others")
    if runs_as_nobody and have_spin:
        os.chmod(tmp, 0o755)
        mine = os.path.join(tmp, "mine.py")
        shutil.copy(TARGET, mine)
        os.chmod(mine, 0o644)
        # the spin module goes along: the build folder may be unreadable to
        # uid 65534 (a clone under a 0700 mktemp folder): the target would
        # then run without its native line
        spin_dir = os.environ.get("HOTLINE_SPIN_DIR", "")
        for f in os.listdir(spin_dir) if os.path.isdir(spin_dir) else ():
            if f.startswith("hotline_spin") and f.endswith(sysconfig.get_config_var("EXT_SUFFIX")):
                shutil.copy(os.path.join(spin_dir, f), os.path.join(tmp, f))
                os.chmod(os.path.join(tmp, f), 0o755)
        env = dict(os.environ, PYTHONPATH=tmp)
        p = subprocess.Popen(nobody + [sys.executable, mine, "3"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env)
        pid = int(p.stderr.readline())
        r = subprocess.run(nobody + [HOTLINE, "attach", str(pid), "--duration", "2"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        p.communicate(timeout=30)
        e = r.stderr.decode()
        m = re.search(r"\s([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s.*mine\.py:\d+\s+hotline_spin", e)
        print(e)
        check(r.returncode == 0 and "perf task clocks (exact)" in e and m
              and float(m.group(2)) > 0.6 * sum(float(x) for x in m.groups()),
              "as a plain user: exact clocks, spin line mostly native")

    # 5. two threads: --speedscope has a profile per thread, named after it,
    # weighing that thread's seconds in the thread table (docs/pictures.md)
    _, p, pid = script_target(tmp, "threads.py",
                              "import os, sys, threading, time\n"
                              "def spin(s):\n"
                              "    end = time.monotonic() + s\n"
                              "    while time.monotonic() < end: pass\n"
                              "t = threading.Thread(target=spin, args=(3,), name='worker')\n"
                              "t.start()\n"
                              "sys.stderr.write('%d\\n' % os.getpid()); sys.stderr.flush()\n"
                              "spin(3)\n"
                              "t.join()\n")
    pj, ss = os.path.join(tmp, "threads.json"), os.path.join(tmp, "threads.ss.json")
    rc, e = attach(pid, "--duration", "1", "--json", pj, "--speedscope", ss)
    p.kill()
    p.wait()
    check(rc == 0, "two threads: attach rc %d%s" % (rc, "" if rc == 0 else ": " + e.strip()))
    if rc == 0:
        with open(pj) as f:
            j = json.load(f)
        with open(ss) as f:
            weights = {pr["name"]: sum(pr["weights"]) for pr in json.load(f)["profiles"]}
        check(len(j["threads"]) == 2 and len(weights) >= 2,
              "two threads, a speedscope profile each: %r" % weights)
        for t in j["threads"]:
            name = "%s (tid %d)" % (t["name"], t["tid"])
            secs = t["python_s"] + t["native_s"] + t["system_s"]
            w = weights.get(name, -1)
            check(abs(w - secs) <= 0.02 * secs + 0.01,
                  "thread %s: profile %.4f s vs thread %.4f s" % (name, w, secs))

    # 5b. --include / --exclude: the agent's rule (protocol/agent_paths.h).
    # A loop over json.dumps: by default its own line is charged; with the
    # json package included and the defaults' excludes replaced, the json
    # encoder's lines are
    js, p, pid = script_target(tmp, "jsonloop.py",
                               "import json, os, sys, time\n"
                               "d = {'k%d' % i: list(range(30)) for i in range(400)}\n"
                               "sys.stderr.write('%d\\n' % os.getpid()); sys.stderr.flush()\n"
                               "end = time.monotonic() + 4\n"
                               "while time.monotonic() < end:\n"
                               "    json.dumps(d)  # JSONLOOP\n")
    try:
        pd, pi = os.path.join(tmp, "json-default.json"), os.path.join(tmp, "json-include.json")
        rc1, e1 = attach(pid, "--duration", "0.8", "--json", pd)
        rc2, e2 = attach(pid, "--duration", "0.8", "--json", pi, "--include", "*/json/*",
                         "--exclude", "/nonexistent")
    finally:
        p.kill()
        p.wait()
    check(rc1 == 0 and rc2 == 0, "json loop: attach rc %d / %d %s%s" % (rc1, rc2, e1[-300:], e2[-300:]))
    if rc1 == 0 and rc2 == 0:
        jd, ji = json.load(open(pd)), json.load(open(pi))

        def secs(prof, pred):
            return sum(st.get("python_s", 0) + st.get("native_s", 0) + st.get("system_s", 0)
                       for path, fo in prof["files"].items() if pred(path)
                       for st in fo.get("lines", {}).values())
        in_json = lambda path: "/json/" in path  # noqa: E731
        loop = lambda path: path == js  # noqa: E731
        print("json loop: default: loop %.3f s, json %.3f s; --include */json/*: loop %.3f s, "
              "json %.3f s" % (secs(jd, loop), secs(jd, in_json), secs(ji, loop), secs(ji, in_json)))
        check(secs(jd, loop) > 0.3 and secs(jd, in_json) == 0,
              "default: the loop's line is charged, not json's")
        # (a tick between two calls has no json frame: the innermost, the
        # loop's line, is charged then, as the agent does; 400 keys make a
        # call ~0.3 ms, so that is ~1%: with 40 keys it read 6.3% once on
        # 3.12.1 under CI load, above the 5% bound)
        check(secs(ji, in_json) > 0.3 and secs(ji, loop) < 0.05 * secs(ji, in_json),
              "--include */json/*: json's lines are charged, the loop's only between calls")

    # 6. errors
    dead = subprocess.Popen(["true"])
    dead.wait()
    rc, e = attach(dead.pid)
    check(rc == 3 and "no such process" in e, "dead pid: rc 3, says so (%d: %s)" % (rc, e.strip()))
    zombie = subprocess.Popen(["true"])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # until it is a zombie (not reaped: no wait())
        with open("/proc/%d/stat" % zombie.pid) as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                break
    rc, e = attach(zombie.pid)
    zombie.wait()
    check(rc == 3 and "exited" in e, "zombie: rc 3, says so (%d: %s)" % (rc, e.strip()))
    sl = subprocess.Popen(["sleep", "30"])
    rc, e = attach(sl.pid)
    check(rc == 4 and "not a Python process" in e,
          "non-Python pid: rc 4, says so (%d: %s)" % (rc, e.strip()))
    if os.geteuid() == 0 and shutil.which("setpriv"):
        rc, e = attach(sl.pid, user=65534)
        check(rc == 6 and "permission denied" in e,
              "other uid: rc 6, permission message (%d: %s)" % (rc, e.strip()))
    sl.kill()
    sl.wait()
    rc, e = attach("abc")
    check(rc == 2, "bad pid argument: usage error 2")
    shutil.rmtree(tmp, ignore_errors=True)
    print("%d failures" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
