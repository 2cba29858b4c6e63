#!/usr/bin/env python3
"""Kernels stream into the editor (issue 14, second part; docs/notebooks.md).

A real `hotline lsp` on a temporary workspace listens on
<workspace>/.hotline/agent.sock. Programs the server did not start (plain
`python3` processes, as a Jupyter kernel would be) run `import hotline;
hotline.connect()` from a subdirectory and stream to it:

1. one process: the server sends hotline/executing for its file at its hot
   line while it runs; after it ends, an inlay hint and code lenses sit on
   that line; the socket is 0600 in a 0700 folder.
2. two processes at once: hotline/executing names both files, and both
   have hints afterwards (the profile accumulates while they are connected);
   the first case's file has none any more: agents that connect after all
   the previous ones left start a fresh profile (a restarted kernel never
   adds into the last one's, issue 22).
   One of them does not import hotline at all: HOTLINE_CONNECT=1 connects
   it through the bootstrap sitecustomize.py.
3. an IPython shell (/usr/bin/python3's, as the notebook tests use)
   where `%load_ext hotline` connects by itself: the live line and the
   hint land in the module its cell calls.
4. hotline.run while a kernel streams: the run's profile replaces the
   kernels' one, the server closes the kernel's connection (a log line
   says so) and the kernel goes on running, unprofiled.
   Then hotline.clear while a kernel streams: its connection is closed
   too, and the next kernel is taken again (not refused as if a run went on).
5. the server exits while a kernel is connected: it exits cleanly, removes
   the socket, and the kernel runs on.
6. a workspace whose .hotline/agent.sock is a symbolic link: the server
   refuses it with a log line naming it, leaves the link alone, and
   connect() there finds no socket (returns None).
7. a stale socket (its server was killed) is replaced; a second server on
   the same folder leaves the first one's socket alone and says so.

Each process loops until the test creates its stop file, so nothing here
waits on a clock. Usage: test_kernel_socket.py HOTLINE
"""
import json
import os
import select
import stat
import subprocess
import sys
import tempfile
import time
import urllib.parse

TIMEOUT = 30.0

PROG = """import os, sys
import hotline
if not hotline.connect():
    sys.exit("no hotline server socket found from " + os.getcwd())
stop = sys.argv[1]
def hot():
    n = 0
    while not os.path.exists(stop):
        for i in range(20000): n += i  # hot
hot()
"""
HOT_LINE = 8  # 0-based: the `for` line


def frame(obj):
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def uri(path):
    return "file://" + urllib.parse.quote(path)


class Client:
    def __init__(self, hotline, work):
        self.err = tempfile.TemporaryFile()  # a file: never fills, read at the end
        self.p = subprocess.Popen([hotline, "lsp"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.err, cwd=work)
        self.fd = self.p.stdout.fileno()
        os.set_blocking(self.fd, False)
        self.buf = b""
        self.ids = 100
        self.logs = []

    def send(self, obj):
        obj["jsonrpc"] = "2.0"
        self.p.stdin.write(frame(obj))
        self.p.stdin.flush()

    def next(self, deadline):
        while True:
            sep = self.buf.find(b"\r\n\r\n")
            if sep >= 0:
                n = int(self.buf[:sep].split(b":")[1])
                if len(self.buf) >= sep + 4 + n:
                    msg = json.loads(self.buf[sep + 4: sep + 4 + n])
                    self.buf = self.buf[sep + 4 + n:]
                    if "method" in msg and "id" in msg:  # a request to the client
                        self.send({"id": msg["id"], "result": None})
                    if msg.get("method") == "window/logMessage":
                        self.logs.append(msg["params"]["message"])
                    return msg
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("timed out; server log:\n  " + "\n  ".join(self.logs))
            r, _, _ = select.select([self.fd], [], [], left)
            if r:
                chunk = os.read(self.fd, 1 << 20)
                if not chunk:
                    raise AssertionError("server closed its output")
                self.buf += chunk

    def wait(self, pred, what, timeout=TIMEOUT):
        deadline = time.monotonic() + timeout
        while True:
            m = self.next(deadline)
            if pred(m):
                return m

    def request(self, method, params):
        self.ids += 1
        i = self.ids
        self.send({"id": i, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == i and "method" not in m, method)

    def wait_request(self, method, timeout, params=None):
        """The answer to one request, waited for at most timeout seconds."""
        self.ids += 1
        i = self.ids
        self.send({"id": i, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == i and "method" not in m, method, timeout)

    def start(self, work):
        r = self.request("initialize", {
            "processId": None, "rootUri": uri(work),
            "capabilities": {"experimental": {"hotlineExecuting": True},
                             "workspace": {"inlayHint": {"refreshSupport": True},
                                           "codeLens": {"refreshSupport": True}}},
            "initializationOptions": {"hints": {"threshold": 1}}})
        assert "result" in r, r
        self.send({"method": "initialized", "params": {}})

    def log_line(self, pred, what):
        """A window/logMessage matching pred, seen already or to come."""
        for t in self.logs:
            if pred(t):
                return t
        m = self.wait(lambda m: m.get("method") == "window/logMessage" and
                      pred(m["params"]["message"]), what)
        return m["params"]["message"]

    def stop(self):
        self.request("shutdown", None)
        self.send({"method": "exit"})
        rc = self.p.wait(timeout=TIMEOUT)
        self.err.seek(0)
        err = self.err.read().decode(errors="replace")
        # the ASan/UBSan build (tests/run-all.sh) runs this too
        for bad in ("Sanitizer", "runtime error:"):
            assert bad not in err, "server stderr:\n" + err
        assert rc == 0, "server exit status %d; stderr:\n%s" % (rc, err)


def agent_env(hotline):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(os.path.dirname(os.path.abspath(hotline)), "python")
    for k in ("HOTLINE_SOCKET", "HOTLINE_CONFIG", "HOTLINE_BOOT"):
        env.pop(k, None)
    return env


PLAIN = PROG.replace("import hotline\nif not hotline.connect():\n", "pass  # no import\nif 0:\n")


# every program started here, killed at the end if a failed check left it
# running (each waits for its stop file, which a failure never writes)
SPAWNED = []


def spawn(hotline, sub, name, stop, text=PROG, env=None):
    path = os.path.join(sub, name)
    with open(path, "w") as f:
        f.write(text)
    # not started by the server: its own process, its own working directory
    p = subprocess.Popen([sys.executable, name, stop], cwd=sub, env=env or agent_env(hotline),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    SPAWNED.append(p)
    return path, p


def query(c, u):
    hints = c.request("textDocument/inlayHint", {
        "textDocument": {"uri": u},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}})
    lenses = c.request("textDocument/codeLens", {"textDocument": {"uri": u}})
    return ([h["position"]["line"] for h in hints["result"] or []],
            [l["range"]["start"]["line"] for l in lenses["result"] or []])


def hints_at(c, path, text, want=None):
    """(hint lines, lens lines) of path opened with text. With want, asked
    again until a hint is on that line (or TIMEOUT): the marker clears as
    soon as no thread runs the user's code, and the process's last delta,
    with the lines' final seconds, comes when it exits, a little later."""
    u = uri(path)
    c.send({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": u, "languageId": "python", "version": 1, "text": text}}})
    got = query(c, u)
    deadline = time.monotonic() + TIMEOUT
    while want is not None and want not in got[0] and time.monotonic() < deadline:
        time.sleep(0.2)
        got = query(c, u)
    return got


def finish(procs, stop):
    open(stop, "w").close()
    for p in procs:
        out, _ = p.communicate(timeout=TIMEOUT)
        assert p.returncode == 0, "program failed: %r" % out


def is_exec(m, u=None):
    if m.get("method") != "hotline/executing":
        return False
    return u is None or (m["params"].get("uri") == u and m["params"].get("line") == HOT_LINE)


def one_process(hotline, work, c):
    sub = os.path.join(work, "sub", "deeper")
    os.makedirs(sub)
    sock = os.path.join(work, ".hotline", "agent.sock")
    st, dst = os.lstat(sock), os.lstat(os.path.dirname(sock))
    assert stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600, oct(st.st_mode)
    assert stat.S_IMODE(dst.st_mode) == 0o700, oct(dst.st_mode)
    stop = os.path.join(work, "stop1")
    path, p = spawn(hotline, sub, "busy.py", stop)
    # the hot line calls no library: its samples name busy.py innermost. (A
    # sample read while `os.path.exists` of the line above is being called
    # can pair that callee with the hot line: the frame chain is read
    # without stopping the program, docs/sampling.md, Limits; seen once.)
    m = c.wait(lambda m: is_exec(m, uri(path)) and m["params"]["stack"][0]["user"],
               "hotline/executing for busy.py with busy.py innermost")
    print("1. executing: %s" % m["params"]["text"])
    finish([p], stop)
    c.wait(lambda m: is_exec(m) and m["params"].get("uri") is None, "executing cleared")
    hints, lenses = hints_at(c, path, PROG, HOT_LINE)
    assert HOT_LINE in hints, "no hint on the hot line: %r" % hints
    assert 5 in lenses, "no lens over hot(): %r" % lenses
    print("1. hints on lines %r, lenses on %r" % (hints, lenses))
    FIRST.append(path)


FIRST = []  # one_process's program, whose profile the next agents must not add to


def two_processes(hotline, work, c):
    sub = os.path.join(work, "two")
    os.makedirs(sub)
    stop = os.path.join(work, "stop2")
    pa, a = spawn(hotline, sub, "a.py", stop)
    assert "import hotline" not in PLAIN and PLAIN.count("\n") == PROG.count("\n")
    pb, b = spawn(hotline, sub, "b.py", stop, PLAIN, dict(agent_env(hotline), HOTLINE_CONNECT="1"))
    want = {uri(pa), uri(pb)}
    seen = set()
    deadline = time.monotonic() + TIMEOUT
    while seen != want:
        m = c.next(deadline)
        if is_exec(m) and m["params"].get("uri") in want:
            seen.add(m["params"]["uri"])
    print("2. executing seen for both: %s" % sorted(os.path.basename(u) for u in seen))
    finish([a, b], stop)
    c.wait(lambda m: is_exec(m) and m["params"].get("uri") is None, "executing cleared")
    for path, text in ((pa, PROG), (pb, PLAIN)):
        hints, _ = hints_at(c, path, text, HOT_LINE)
        assert HOT_LINE in hints, "%s: no hint on the hot line: %r" % (path, hints)
    print("2. both files have their hint")
    old, _ = query(c, uri(FIRST[0]))
    assert HOT_LINE not in old, "case 1's busy.py still has hints: its profile was added to"
    print("2. case 1's file has no hint: a fresh profile")


SHELL = r"""import io, contextlib, sys
from IPython.core.interactiveshell import InteractiveShell
import hotline
sh = InteractiveShell.instance()
out = io.StringIO()
with contextlib.redirect_stdout(out):
    sh.run_line_magic("load_ext", "hotline")
assert "streaming this kernel to the editor" in out.getvalue(), out.getvalue()
assert hotline.connected(), "the extension did not connect"
r = sh.run_cell("import busy_lib\nbusy_lib.hot(%r)" % sys.argv[1])
assert r.success, r
"""
LIB = PROG[PROG.index("def hot"):PROG.index("hot()\n")].replace("def hot():", "def hot(stop):")
LIB = "import os\n\n\n" + LIB
LIB_HOT = 6  # 0-based: the `for` line of LIB


def ipython_shell(hotline, work, c):
    sub = os.path.join(work, "nb")
    os.makedirs(sub)
    lib = os.path.join(sub, "busy_lib.py")
    with open(lib, "w") as f:
        f.write(LIB)
    stop = os.path.join(work, "stop3")
    # IPython is there as for tests/notebook (python3-ipykernel); without it this fails
    p = subprocess.Popen(["/usr/bin/python3", "-c", SHELL, stop], cwd=sub,
                         env=agent_env(hotline), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    SPAWNED.append(p)
    try:
        m = c.wait(lambda m: m.get("method") == "hotline/executing" and
                   m["params"].get("uri") == uri(lib), "hotline/executing for busy_lib.py")
    except AssertionError:
        p.kill()
        raise AssertionError("the shell said: %r" % p.communicate()[0])
    assert m["params"]["line"] == LIB_HOT, m
    print("3. IPython: executing %s:%d" % (os.path.basename(lib), m["params"]["line"]))
    finish([p], stop)
    c.wait(lambda m: is_exec(m) and m["params"].get("uri") is None, "executing cleared")
    hints, _ = hints_at(c, lib, LIB, LIB_HOT)
    assert LIB_HOT in hints, "no hint on the hot line: %r" % hints


def run_replaces(hotline, work, c):
    sub = os.path.join(work, "four")
    os.makedirs(sub)
    stop = os.path.join(work, "stop4")
    path, p = spawn(hotline, sub, "kernel.py", stop)
    c.wait(lambda m: is_exec(m, uri(path)), "hotline/executing for kernel.py")
    prog = os.path.join(work, "prog.py")
    with open(prog, "w") as f:
        f.write("print(sum(range(1000)))\n")
    r = c.request("workspace/executeCommand", {"command": "hotline.run",
                                               "arguments": [{"uri": uri(prog)}]})
    assert r.get("result", {}).get("started"), r
    line = c.log_line(lambda t: "disconnected" in t, "the kernel let go")
    assert line.startswith("kernels: 1 agent(s) disconnected: the profile was replaced"), line
    c.wait(lambda m: m.get("method") == "window/showMessage" and
           "prog.py exited 0" in m["params"]["message"], "the run's end")
    assert p.poll() is None, "the kernel died with its connection"
    finish([p], stop)
    print("4. a run replaced the kernels' profile; the kernel ran on")
    stop = os.path.join(work, "stop4b")
    path, p = spawn(hotline, sub, "cleared.py", stop)
    c.wait(lambda m: is_exec(m, uri(path)), "hotline/executing for cleared.py")
    r = c.request("workspace/executeCommand", {"command": "hotline.clear", "arguments": []})
    assert r.get("result", {}).get("cleared"), r
    path2, p2 = spawn(hotline, sub, "after.py", stop)
    c.wait(lambda m: is_exec(m, uri(path2)), "hotline/executing after hotline.clear")
    assert p.poll() is None, "the cleared kernel died"
    finish([p, p2], stop)
    print("4. hotline.clear let go of a kernel; the next one streams")


def symlinked(hotline, work):
    os.makedirs(os.path.join(work, ".hotline"), mode=0o700)
    sock = os.path.join(work, ".hotline", "agent.sock")
    target = os.path.join(work, "elsewhere")
    os.symlink(target, sock)
    c = Client(hotline, work)
    c.start(work)
    line = c.log_line(lambda t: "agent.sock" in t and "kernels" in t, "the refusal")
    assert "symbolic link" in line and sock in line, line
    print("6. refused: %s" % line)
    assert os.path.islink(sock) and os.readlink(sock) == target and not os.path.exists(target)
    out = subprocess.run([sys.executable, "-c", "import hotline; print(hotline.connect())"],
                         cwd=work, env=agent_env(hotline), capture_output=True, text=True,
                         timeout=TIMEOUT)
    assert out.stdout.strip() == "None", out
    c.stop()


def stale_and_second(hotline, work):
    import socket
    os.makedirs(os.path.join(work, ".hotline"), mode=0o700)
    sock = os.path.join(work, ".hotline", "agent.sock")
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(sock)  # closed without unlink: what a killed server leaves
    dead.close()
    a = Client(hotline, work)
    a.start(work)
    a.log_line(lambda t: t == "kernels: listening on " + sock, "the stale socket replaced")
    b = Client(hotline, work)
    b.start(work)
    line = b.log_line(lambda t: t.startswith("kernels: not listening"), "the second server")
    assert "another hotline server of this workspace listens there" in line, line
    b.stop()
    assert stat.S_ISSOCK(os.lstat(sock).st_mode), "the second server removed the first's socket"
    a.stop()
    print("7. stale socket replaced; second server: %s" % line)


def main():
    try:
        checks(os.path.abspath(sys.argv[1]))
    finally:
        for p in SPAWNED:
            if p.poll() is None:
                print("killing pid %d, left running by a failed check" % p.pid)
                p.kill()
                p.wait()


def checks(hotline):
    with tempfile.TemporaryDirectory(prefix="hotline-kernel-") as tmp:
        work = os.path.realpath(os.path.join(tmp, "ws"))
        os.makedirs(work)
        c = Client(hotline, work)
        c.start(work)
        c.log_line(lambda t: t.startswith("kernels: listening on"), "listening")
        try:
            one_process(hotline, work, c)
            two_processes(hotline, work, c)
            ipython_shell(hotline, work, c)
            run_replaces(hotline, work, c)
            stop = os.path.join(work, "stop5")
            path, p = spawn(hotline, os.path.join(work, "four"), "last.py", stop)
            c.wait(lambda m: is_exec(m, uri(path)), "hotline/executing for last.py")
        finally:
            if c.p.poll() is None:
                c.stop()
        assert not os.path.exists(os.path.join(work, ".hotline", "agent.sock")), \
            "the socket outlived the server"
        assert p.poll() is None, "the kernel died with the server"
        finish([p], stop)
        print("5. the server exited with a kernel connected; the kernel ran on")
        w2 = os.path.join(tmp, "ws2")
        os.makedirs(w2)
        symlinked(hotline, w2)
        w3 = os.path.join(tmp, "ws3")
        os.makedirs(w3)
        stale_and_second(hotline, w3)
    print("ok")


if __name__ == "__main__":
    main()
