"""`hotline attach` to a target whose interpreter was deleted or replaced
since it started (a package upgrade: /proc/PID/maps says "... (deleted)"),
run by the interpreter under test: a copy of it (and of its libpython when
it is built shared) runs the target, the copies are deleted, and attach
must still read it (the mapped image through /proc/PID/map_files or
/proc/PID/exe); then a FIFO is made where maps names the image
("<path> (deleted)") and attach must neither block on it nor fail.

usage: python test_attach_replaced.py  (env: HOTLINE_BUILD)"""
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile

BUILD = os.environ["HOTLINE_BUILD"]
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


def copy_interpreter(tmp):
    """A copy of this interpreter (and of its shared libpython) in tmp:
    (argv0, env, [files copied])"""
    exe = os.path.realpath(sys.executable)
    bindir = os.path.join(tmp, "bin")
    os.makedirs(bindir)
    copy = os.path.join(bindir, "python%d.%d" % sys.version_info[:2])
    shutil.copy2(exe, copy)
    files = [copy]
    env = dict(os.environ, PYTHONHOME=sys.base_prefix)
    soname = sysconfig.get_config_var("INSTSONAME") or ""
    with open("/proc/self/maps") as f:  # Debian's says shared, its python3 is not
        shared = soname.startswith("libpython") and any(l.rstrip().endswith("/" + soname)
                                                        for l in f)
    if shared:
        lib = os.path.join(sysconfig.get_config_var("LIBDIR"),
                           sysconfig.get_config_var("INSTSONAME"))
        libdir = os.path.join(tmp, "lib")
        os.makedirs(libdir)
        shutil.copy2(lib, libdir)
        files.append(os.path.join(libdir, os.path.basename(lib)))
        env["LD_LIBRARY_PATH"] = libdir
    return copy, env, files


def mapped(pid, path):
    with open("/proc/%d/maps" % pid) as f:
        return any(l.rstrip("\n").endswith(path) for l in f)


def attach(pid, out_json):
    cmd = [HOTLINE, "attach", str(pid), "--duration", "1", "--json", out_json]
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    except subprocess.TimeoutExpired:
        return None, "(attach did not end within 30 s)"
    return r.returncode, r.stderr.decode()


def busy_seconds(out_json, script):
    with open(out_json) as f:
        prof = json.load(f)
    with open(script) as f:
        line = next(i for i, l in enumerate(f, 1) if "# BUSY" in l)
    s = prof["files"].get(script, {}).get("lines", {}).get(str(line), {})
    return s.get("python_s", 0) + s.get("native_s", 0) + s.get("system_s", 0)


def main():
    tmp = tempfile.mkdtemp(prefix="hotline-attach-replaced-")
    p = None
    try:
        copy, env, files = copy_interpreter(tmp)
        script = os.path.join(tmp, "target.py")
        with open(script, "w") as f:
            f.write(TARGET)
        p = subprocess.Popen([copy, script, "30"], stderr=subprocess.PIPE, env=env)
        pid = int(p.stderr.readline())  # up (a condition, not a sleep)
        for f in files:
            os.unlink(f)
        check(all(mapped(pid, f + " (deleted)") for f in files),
              "maps name the copies deleted: %s" % ", ".join(os.path.basename(f) for f in files))

        out = os.path.join(tmp, "a.json")
        rc, err = attach(pid, out)
        print(err)
        check(rc == 0, "attach to a deleted interpreter exits 0 (got %s)" % rc)
        if rc == 0:
            s = busy_seconds(out, script)
            check(s > 0.5, "the busy line is read (%.2f s of 1 s)" % s)

        # a FIFO where maps names each image: never opened blocking
        for f in files:
            os.mkfifo(f + " (deleted)")
        out = os.path.join(tmp, "b.json")
        rc, err = attach(pid, out)
        print(err)
        check(rc is not None, "attach does not block on a FIFO named like the image")
        check(rc == 0, "attach with FIFOs at the images' names exits 0 (got %s)" % rc)
        if rc == 0:
            s = busy_seconds(out, script)
            check(s > 0.5, "the busy line is read (%.2f s of 1 s)" % s)
    finally:
        if p:
            p.kill()
            p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        sys.exit(1)
    print("all checks passed")


main()
