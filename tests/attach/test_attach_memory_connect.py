"""`hotline attach PID --memory --connect SOCK` (docs/attach.md, "Memory",
"In the editor"): the injected agent's stream relayed to a server's agent
socket, played here by the test, against mem_target.py (setsid, a
non-child):
  1. the first line on SOCK is the agent's own hello (the target's pid,
     memory on); a `now` sent on SOCK reaches the agent (`now` lines come
     back); deltas follow; `stop` sent on SOCK ends the stream (`end`, then
     EOF), the helper exits 0, the agent unloads (no sampler thread), no
     gdb is left on the target;
  2. attached again: SIGTERM to the helper detaches the same way;
  3. attached again: the socket's end closing is a detach too;
  5. nothing listens on SOCK: exit 1 with a message, nothing injected;
  4. attached again, the target exits: `end`, EOF, the helper exits 0 and
     says "target exited"; the target's output and status are its own
     (its last line says Hotline ran in it at exit, as it did).
  6. a target `hotline run` profiles: the agent's error is relayed, exit 1.
The LSP test (tests/lsp/test_attach_memory_lsp.py) checks that after a
detach the target's output is that of a run nobody attached to.

usage: python test_attach_memory_connect.py  (env: HOTLINE_BUILD)"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_attach_memory import (FAILS, HOTLINE, TARGET, check, finish, reference,  # noqa: E402
                                sampler_threads, start_target, touch, tracer, wait_until,
                                Lines)

TIMEOUT = 60


class Server:
    """One accepted connection on SOCK, read line by line with a deadline."""

    def __init__(self, path):
        self.l = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.l.bind(path)
        self.l.listen(4)
        self.c, self.buf, self.nbytes = None, b"", 0

    def accept(self):
        self.l.settimeout(TIMEOUT)
        self.c, _ = self.l.accept()
        self.buf, self.nbytes = b"", 0

    def line(self, timeout=TIMEOUT):
        """the next message (dict), or None at EOF"""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            self.c.settimeout(max(0.01, deadline - time.monotonic()))
            d = self.c.recv(1 << 16)
            if not d:
                return None
            self.nbytes += len(d)
            self.buf += d
        l, self.buf = self.buf.split(b"\n", 1)
        return json.loads(l)

    def until(self, t):
        """messages up to the first of type t (included); None at EOF first"""
        seen = []
        while True:
            m = self.line()
            if m is None:
                return None, seen
            seen.append(m)
            if m.get("t") == t:
                return m, seen

    def send(self, m):
        self.c.sendall((json.dumps(m) + "\n").encode())


def attach(pid, sock):
    h = subprocess.Popen([HOTLINE, "attach", str(pid), "--memory", "--connect", sock],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    return h, Lines(h.stderr)


def hello_and_now(srv, pid, what):
    hello = srv.line()
    check(hello is not None and hello.get("t") == "hello" and hello.get("pid") == pid,
          "%s: the first line is the agent's hello for pid %d (%s)" % (what, pid,
                                                                       str(hello)[:160]))
    srv.send({"t": "now", "hz": 20})
    now, seen = srv.until("now")
    check(now is not None, "%s: `now` relayed to the agent, its stacks come back" % what)
    return seen


def detached(h, err, pid, srv, what):
    end, _ = srv.until("end")
    check(end is not None, "%s: the agent's `end` reaches the socket" % what)
    check(srv.line() is None, "%s: then EOF" % what)
    rc = h.wait(timeout=TIMEOUT)
    msg = err.rest()
    check(rc == 0, "%s: the helper exits 0 (%d; %s)" % (what, rc, msg.strip()[-200:]))
    check(wait_until(lambda: sampler_threads(pid) == 0, 15), "%s: the agent unloaded" % what)
    check(tracer(pid) == 0, "%s: no gdb left on the target" % what)


def already_profiled(tmp, sock):
    """6. a target under `hotline run`: the agent's error reaches the socket
    alone, the helper exits 1 and says so, the run goes on."""
    d = tempfile.mkdtemp(dir=tmp)
    p = subprocess.Popen([HOTLINE, "run", "--python", sys.executable, TARGET, d],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    pid = int(p.stderr.readline())
    p.err = Lines(p.stderr)  # finish() reads it (the run's report comes there)
    out = Lines(p.stdout)
    check(out.wait_for("started", 30), "profiled: target started")
    srv = Server(sock)
    h, err = attach(pid, sock)
    srv.accept()
    m = srv.line()
    check(m is not None and m.get("t") == "error" and "already profiled" in m.get("msg", ""),
          "profiled: the agent's error is relayed (%s)" % m)
    check(srv.line() is None, "profiled: then EOF")
    rc = h.wait(timeout=TIMEOUT)
    msg = err.rest()
    check(rc == 1 and "already profiled" in msg, "profiled: exit 1, says so (%d; %s)"
          % (rc, msg.strip().splitlines()[-1]))
    srv.l.close()
    os.unlink(sock)
    touch(d, "go")
    got_out, got_rc, _ = finish(p, out, d)
    check(got_rc == 3 and "grown 100" in got_out, "profiled: the run goes on (%s)" % got_rc)


def main():
    if not shutil.which("gdb"):
        print("FAIL gdb is not installed (apt-get install gdb; .ci/install-deps does)")
        return 1
    tmp = tempfile.mkdtemp(prefix="hl-attach-memc-")
    try:
        ref_out, ref_rc, ref_err = reference(tmp)
        d = tempfile.mkdtemp(dir=tmp)
        p, pid, out = start_target(d)
        check(out.wait_for("started", 30), "target started")
        sock = os.path.join(tmp, "server.sock")
        srv = Server(sock)

        # 1. the server's stop
        t0 = time.monotonic()
        h, err = attach(pid, sock)
        srv.accept()
        seen = hello_and_now(srv, pid, "stop")
        touch(d, "go")
        check(out.wait_for("grown", 60), "target grew by 100 MiB")
        delta, more = srv.until("delta")
        check(delta is not None, "stop: deltas relayed")
        took = time.monotonic() - t0
        srv.send({"t": "stop"})
        detached(h, err, pid, srv, "stop")
        print("relayed %d bytes in %d+ messages; first delta %.1f s after the attach"
              % (srv.nbytes, len(seen) + len(more), took))

        # 2. SIGTERM to the helper
        h, err = attach(pid, sock)
        srv.accept()
        hello_and_now(srv, pid, "sigterm")
        h.send_signal(signal.SIGTERM)
        detached(h, err, pid, srv, "sigterm")

        # 3. the server closes its end
        h, err = attach(pid, sock)
        srv.accept()
        hello_and_now(srv, pid, "server gone")
        srv.c.close()
        rc = h.wait(timeout=TIMEOUT)
        check(rc == 0, "server gone: the helper exits 0 (%d; %s)" % (rc, err.rest()[-200:]))
        check(wait_until(lambda: sampler_threads(pid) == 0, 15), "server gone: unloaded")

        # 5. nothing listens
        srv.l.close()
        os.unlink(sock)
        r = subprocess.run([HOTLINE, "attach", str(pid), "--memory", "--connect", sock],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
        check(r.returncode == 1 and "cannot connect" in r.stderr.decode(),
              "no server: exit 1, says so (%s)" % r.stderr.decode().strip()[-120:])
        check(tracer(pid) == 0 and sampler_threads(pid) == 0, "no server: nothing injected")

        # 4. the target exits while attached: its own status, the stream ends
        srv = Server(sock)
        h, err = attach(pid, sock)
        srv.accept()
        hello_and_now(srv, pid, "target exits")
        got_out, got_rc, got_err = finish(p, out, d)
        end, _ = srv.until("end")
        check(end is not None and srv.line() is None, "target exits: `end`, then EOF")
        rc = h.wait(timeout=TIMEOUT)
        msg = err.rest()
        check(rc == 0 and "target exited" in msg, "target exits: the helper exits 0 and says so "
              "(%d; %s)" % (rc, msg.strip().splitlines()[-1]))
        # what it prints while attached says so (mem_target.py); the rest is its own
        want = ref_out.replace("at exit: False", "at exit: True")
        check(got_out == want and got_rc == ref_rc and got_err == ref_err,
              "target output, stderr and status its own (%r, %r, %s)" % (got_out, got_err, got_rc))
        srv.l.close()
        os.unlink(sock)
        already_profiled(tmp, sock)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failure(s)" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
