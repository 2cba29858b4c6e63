#!/usr/bin/env python3
"""A second server on the same folder takes the kernel socket over once the
first one is gone (issue 20, item 17; docs/notebooks.md).

1. server A listens on <work>/.hotline/agent.sock; server B, started on the
   same folder, is refused (another server answers there) and says it will
   take the socket over;
2. A exits (shutdown/exit: it removes its socket): within TAKEOVER_S, B
   logs that it listens there, and a program that runs hotline.connect()
   reaches B (B logs its agent);
3. server C is started and waits in turn; B is killed (SIGKILL: its socket
   stays, stale): C takes it over too, and an agent reaches C.

Before the fix B never tried again: it stayed without a socket for good.
TAKEOVER_S is a correctness bound (the servers retry every second), not a
benchmark. Usage: test_kernel_takeover.py HOTLINE
"""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_kernel_socket import SPAWNED, Client, finish, spawn  # noqa: E402

TAKEOVER_S = 15.0


def refused(c, what):
    line = c.log_line(lambda t: t.startswith("kernels: not listening"), what)
    assert "another hotline server of this workspace listens there" in line, line
    assert "taking it over once it is free" in line, line
    return line


def takes_over(hotline, c, sock, sub, name, what):
    deadline_msg = "%s takes the socket over" % what
    line = c.wait(lambda m: m.get("method") == "window/logMessage" and
                  m["params"]["message"].startswith("kernels: listening on " + sock),
                  deadline_msg, TAKEOVER_S)["params"]["message"]
    assert "taken over" in line, line
    stop = os.path.join(sub, name + ".stop")
    _, p = spawn(hotline, sub, name, stop)
    got = c.log_line(lambda t: t.startswith("kernels: agent of pid %d connected" % p.pid),
                     "the agent reaches " + what)
    finish([p], stop)
    return line, got


def main():
    hotline = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="hotline-takeover-")
    sub = os.path.join(work, "sub")
    os.mkdir(sub)
    sock = os.path.join(work, ".hotline", "agent.sock")
    clients = []
    try:
        a = Client(hotline, work)
        clients.append(a)
        a.start(work)
        a.log_line(lambda t: t == "kernels: listening on " + sock, "server A listens")
        b = Client(hotline, work)
        clients.append(b)
        b.start(work)
        print("1. B: %s" % refused(b, "server B is refused"))
        a.stop()
        clients.remove(a)
        print("2. after A exited, B: %s / %s" % takes_over(hotline, b, sock, sub, "one.py", "B"))
        c = Client(hotline, work)
        clients.append(c)
        c.start(work)
        refused(c, "server C is refused")
        b.p.kill()
        b.p.wait()
        clients.remove(b)
        print("3. after B was killed, C: %s / %s" % takes_over(hotline, c, sock, sub, "two.py",
                                                                 "C"))
        c.stop()
        clients.remove(c)
    finally:
        for c in clients:
            c.p.kill()
            c.p.wait()
        for p in SPAWNED:
            if p.poll() is None:
                p.kill()
                p.wait()
        shutil.rmtree(work, ignore_errors=True)
    print("ok")


if __name__ == "__main__":
    main()
