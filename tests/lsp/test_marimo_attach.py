#!/usr/bin/env python3
"""Attach to a marimo notebook that is already running, from the editor
(issue 22; docs/notebooks.md, "Attaching to a running marimo"): `marimo
edit --headless notebook.py` started with no Hotline anywhere in its
environment, a slow cell run as a browser runs it (marimo_session.py),
then over LSP:

1. hotline.listProcesses names the kernel "marimo kernel: notebook.py"
   (its main the notebook, its server's pid) before the server, "marimo
   server: notebook.py".
2. hotline.attach {pid: the server} (no `children`): a showMessage says
   the kernel is followed; hotline/executing arrives on notebook.py at the
   hot line of the cell (the temporary __marimo__cell_<id>_.py mapped from
   outside: the cell id names the cell, the line is an offset), no
   __marimo__cell_ frame left in the stack; an inlay hint on that line;
   hotline.detach.
3. hotline.attach {pid: the kernel}: the same.

The hot cell is the third (id vblA), after a cell whose signature spans
lines, and holds non-ASCII text on its hot line and in a comment.
Real marimo from PyPI, pinned, in the venv lsp.marimo makes in the build
folder; without PyPI the test is skipped (77), unless CI is set.

Usage: test_marimo_attach.py HOTLINE VENV_DIR"""
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_kernel_socket import Client, uri  # noqa: E402
import test_marimo  # noqa: E402

TIMEOUT = 60.0

NOTEBOOK = '''import marimo

__generated_with = "%s"
app = marimo.App()


@app.cell
def _():
    import os
    import time
    return os, time


@app.cell
def _(
    os,
):
    stop = os.environ["STOP_FILE"]
    return (stop,)


@app.cell(hide_code=True)
def _(os, stop):
    # café ☕: the loop waits for the test's stop file

    n = 0
    while not os.path.exists(stop):
        n += sum(i * i for i in range(2000)) + len("né ☕")  # hot ✓
    print("done", n)
    return


if __name__ == "__main__":
    app.run()
''' % test_marimo.MARIMO
LINES = NOTEBOOK.split("\n")
HOT = next(i for i, ln in enumerate(LINES) if ln.endswith("# hot ✓"))  # 0-based


def execute(c, cmd, args):
    return c.request("workspace/executeCommand", {"command": cmd, "arguments": [args]})


def marker(c, nb, t0):
    """The first hotline/executing on notebook.py's hot line: (its params,
    seconds since t0)"""
    seen = []

    def hot(m):
        if m.get("method") != "hotline/executing":
            return False
        seen[-3:] = seen[-2:] + [m["params"]]
        return m["params"].get("uri") == uri(nb) and m["params"].get("line") == HOT
    try:
        p = c.wait(hot, "hotline/executing on notebook.py's hot line", TIMEOUT)["params"]
    except AssertionError as e:
        raise AssertionError("%s\nlast hotline/executing: %r" % (e, seen))
    files = [f.get("file") or "" for f in p.get("stack") or []]
    assert not any("__marimo__cell_" in f for f in files), files
    return p, time.monotonic() - t0


def hints(c, nb):
    """The lines with an inlay hint on notebook.py, asked again until the
    hot line has one (or TIMEOUT)."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        h = c.request("textDocument/inlayHint", {
            "textDocument": {"uri": uri(nb)},
            "range": {"start": {"line": 0, "character": 0},
                      "end": {"line": len(LINES), "character": 0}}})["result"] or []
        got = {x["position"]["line"]: x for x in h}
        if HOT in got or time.monotonic() > deadline:
            return got
        time.sleep(0.3)


def attach(c, nb, pid, server):
    """Attach to pid, the marker and the hint on the hot line, detach."""
    t0 = time.monotonic()
    r = execute(c, "hotline.attach", {"pid": pid})
    assert r.get("result", {}).get("attached") is True, r
    if server:
        m = c.wait(lambda m: m.get("method") == "window/showMessage" and
                   "marimo kernel of notebook.py" in m["params"]["message"],
                   "the kernel followed", TIMEOUT)
        print("  " + m["params"]["message"])
    p, dt = marker(c, nb, t0)
    print("  executing notebook.py line %d (0-based) %.2f s after attach: %s"
          % (p["line"], dt, p.get("text")))
    got = hints(c, nb)
    assert HOT in got, "no hint on the hot line %d: %r" % (HOT, sorted(got))
    # the hint sits at the end of the hot line, in UTF-16 units
    end16 = len(LINES[HOT].encode("utf-16-le")) // 2
    assert got[HOT]["position"]["character"] == end16, (got[HOT], end16)
    wrong = [ln for ln in got if not LINES[ln].strip() or LINES[ln].strip().startswith("#")]
    assert not wrong, "hints on blank or comment lines %r" % wrong
    print("  hints on notebook.py lines %r" % sorted(got))
    r = execute(c, "hotline.detach", {})
    assert r.get("result", {}).get("detached") is True, r
    c.wait(lambda m: m.get("method") == "hotline/runEnded", "hotline/runEnded", TIMEOUT)
    return dt


def processes(c, server_pid):
    """(kernel entry, server entry) of hotline.listProcesses, once the
    kernel is listed with its version"""
    deadline = time.monotonic() + TIMEOUT
    while True:
        procs = execute(c, "hotline.listProcesses", {})["result"]
        ks = [i for i, p in enumerate(procs) if (p.get("marimo") or {}).get("server") ==
              server_pid]
        ss = [i for i, p in enumerate(procs) if p["pid"] == server_pid]
        if ks and ss and procs[ks[0]].get("python"):
            return procs, ks[0], ss[0]
        assert time.monotonic() < deadline, "no marimo kernel listed: %r" % procs
        time.sleep(0.3)


def main():
    hotline = os.path.abspath(sys.argv[1])
    try:
        py = test_marimo.venv(os.path.abspath(sys.argv[2]))
    except SystemExit as e:
        if os.environ.get("CI"):
            raise
        print("SKIP: %s" % e)
        sys.exit(77)
    with tempfile.TemporaryDirectory(prefix="hotline-marimo-") as tmp:
        work = os.path.realpath(tmp)
        nb = os.path.join(work, "notebook.py")
        with open(nb, "w") as f:
            f.write(NOTEBOOK)
        stop = os.path.join(work, "stop")
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("HOTLINE") and k not in ("PYTHONPATH", "DEBUGPY_RUNNING")}
        env["STOP_FILE"] = stop
        port = test_marimo.free_port()
        marimo = os.path.join(os.path.dirname(py), "marimo")
        p = subprocess.Popen([marimo, "edit", "--headless", "--no-token", "-p", str(port),
                              "notebook.py"], cwd=work, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, start_new_session=True)
        session, c = None, None
        try:
            deadline = time.time() + TIMEOUT
            while True:  # until marimo's server answers
                try:
                    import urllib.request
                    urllib.request.urlopen("http://127.0.0.1:%d/" % port, timeout=2).read()
                    break
                except OSError:
                    assert p.poll() is None and time.time() < deadline, "marimo edit did not serve"
                    time.sleep(0.2)
            session = subprocess.Popen([py, os.path.join(os.path.dirname(
                os.path.abspath(__file__)), "marimo_session.py"), str(port)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            c = Client(hotline, work)
            c.start(work)
            c.send({"method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": uri(nb), "languageId": "python", "version": 1, "text": NOTEBOOK}}})
            # 1. the list
            procs, k, s = processes(c, p.pid)
            kern, serv = procs[k], procs[s]
            assert kern["label"] == "marimo kernel: notebook.py", kern
            assert serv["label"] == "marimo server: notebook.py", serv
            assert k < s, "the kernel is not listed before its server: %r" % procs
            assert kern["main"] == nb and kern["inWorkspace"] and kern["canAttach"], kern
            assert kern["marimo"] == {"role": "kernel", "notebook": nb, "server": p.pid}, kern
            print("1. listed: %d %s (before %d %s)" % (kern["pid"], kern["label"], serv["pid"],
                                                       serv["label"]))
            # 2. the server: its kernel followed
            print("2. attach to marimo's server %d" % p.pid)
            t_server = attach(c, nb, p.pid, True)
            # 3. the kernel itself
            print("3. attach to the kernel %d" % kern["pid"])
            t_kernel = attach(c, nb, kern["pid"], False)
            print("first marker after %.2f s (server), %.2f s (kernel)" % (t_server, t_kernel))
            open(stop, "w").close()
        except AssertionError:
            if session and session.poll() is None:
                session.kill()
            print("session: %s" % (session.communicate()[0][-2000:] if session else b""))
            raise
        finally:
            open(stop, "a").close()
            if session and session.poll() is None:
                session.stdin.close()
                session.wait(timeout=TIMEOUT)
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGINT)  # marimo's own Ctrl-C: it ends its kernel
                try:
                    p.wait(timeout=TIMEOUT)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
            if c and c.p.poll() is None:
                c.stop()
    print("ok")


if __name__ == "__main__":
    main()
