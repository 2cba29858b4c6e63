"""A target that starts children, for tests/attach/test_attach_children.py.
usage: fork_target.py DIR SECONDS MODE
Writes its pid on stderr, waits for DIR/go, runs `sleep 0.3` (a child that
is not Python), then starts one Python child that runs its CHILD line for
SECONDS and exits, writes "child PID" on stderr, and waits for it (its
WAIT line) before it exits 0 with "done" on stdout. MODE: `fork` (os.fork,
the child runs on in this interpreter) or `exec` (subprocess: a new
interpreter running this file as `child`) or `pool` (os.fork of 7
children at once, a "child PID" line each). The child writes to DIR/truth
how long it lived, from its start (/proc/self/stat, to the clock tick) to
the end of its CHILD line, and how long that line ran."""
import os
import subprocess
import sys
import time


def spin(s):
    end = time.monotonic() + s
    while time.monotonic() < end: pass  # CHILD


def child(d, s):
    t0 = time.monotonic()
    spin(s)
    spun = time.monotonic() - t0
    with open("/proc/self/stat") as f:
        start = int(f.read().rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")
    with open(os.path.join(d, "truth"), "w") as f:
        f.write("%.4f %.4f\n" % (time.clock_gettime(time.CLOCK_BOOTTIME) - start, spun))


def main():
    if sys.argv[1] == "child":
        child(sys.argv[2], float(sys.argv[3]))
        return
    d, seconds, mode = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    sys.stderr.write("%d\n" % os.getpid())
    sys.stderr.flush()
    while not os.path.exists(os.path.join(d, "go")):
        time.sleep(0.005)
    subprocess.run(["sleep", "0.3"])
    if mode == "pool":
        pids = []
        for _ in range(7):
            pid = os.fork()
            if pid == 0:
                spin(seconds)
                os._exit(0)
            pids.append(pid)
        sys.stderr.write("".join("child %d\n" % p for p in pids))
        sys.stderr.flush()
        for pid in pids:
            os.waitpid(pid, 0)  # WAIT
    elif mode == "fork":
        pid = os.fork()
        if pid == 0:
            child(d, seconds)
            os._exit(0)
        sys.stderr.write("child %d\n" % pid)
        sys.stderr.flush()
        os.waitpid(pid, 0)  # WAIT
    else:
        c = subprocess.Popen([sys.executable, os.path.abspath(__file__), "child", d, str(seconds)])
        sys.stderr.write("child %d\n" % c.pid)
        sys.stderr.flush()
        c.wait()  # WAIT
    print("done")


main()
