"""A tmux server of the test's own, for the `hotline top` tests (attach_top,
attach_top_memory): start a command in a detached pane of a given size,
read the screen, wait for it to show something. The checks' verdicts
collect in FAILS."""
import os
import subprocess
import time

FAILS = []
SOCK = "hotline-top-test-%d" % os.getpid()


def check(cond, msg, extra=""):
    print(("ok   " if cond else "FAIL ") + msg)
    if not cond:
        FAILS.append(msg)
        if extra:
            print("--- screen/output:\n" + str(extra))


def tmux(*args, check_rc=True):
    p = subprocess.run(["tmux", "-L", SOCK] + list(args), capture_output=True, text=True,
                       timeout=30)
    if check_rc and p.returncode:
        raise RuntimeError("tmux %r: %s" % (args, p.stderr))
    return p.stdout


def screen(name):
    return tmux("capture-pane", "-p", "-t", name, check_rc=False)


def wait_screen(name, pred, timeout=30):
    end = time.monotonic() + timeout
    s = screen(name)
    while not pred(s) and time.monotonic() < end:
        time.sleep(0.2)
        s = screen(name)
    return s


def start(name, cmd, cwd, width=140, height=45):
    # the shell stays after hotline ends, so the pane (and EXIT=) can be read
    tmux("new-session", "-d", "-s", name, "-x", str(width), "-y", str(height), "-c", cwd,
         "%s; echo EXIT=$?; sleep 120" % cmd)
