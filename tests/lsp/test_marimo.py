#!/usr/bin/env python3
"""marimo notebooks in the editor (docs/notebooks.md, "marimo"): the live
line and the hints land on the notebook's own .py file at the cell's lines,
for each way marimo runs cells in a process Hotline profiles. Real marimo
from PyPI, pinned, in a venv this test makes (once, in the build folder)
from /usr/bin/python3.

1. `python notebook.py` (marimo's script mode, App.run) started by
   hotline.run: marimo compiles each cell under notebook.py's name at the
   cell's lines, nothing to map.
2. `marimo export html notebook.py` (cells run in a kernel process of its
   own) streaming to the server's socket (HOTLINE_CONNECT=1) with no
   include: marimo compiles each cell as <tmp>/marimo_<pid>/
   __marimo__cell_<id>_.py, a file only in linecache, and the agent maps
   it back to notebook.py (profiler/cells.h, hotline/_cells.py). The first
   cell prints the name marimo compiled it under, so the test knows the
   mapping was needed (a marimo that stops doing so fails here, and the
   docs must change).
3. The same with DEBUGPY_RUNNING=1, marimo's switch for debuggers that
   makes it compile cells under notebook.py's name and lines.
4. `marimo edit --headless` of the workspace folder, the notebook (in a
   subfolder) opened as the browser does (marimo_session.py): the kernel is
   a process of its own, the cells compile to temp files, mapped like 2,
   the notebook found from the running cell's __file__ (no command line
   names it).

The hot cell is `@app.cell(hide_code=True)` and starts with a comment
holding non-ASCII text (the cell's code starts at the comment).

Usage: test_marimo.py HOTLINE VENV_DIR"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import marimo_venv  # noqa: E402
from test_kernel_socket import Client, agent_env, uri  # noqa: E402

MARIMO = marimo_venv.MARIMO  # marimo-requirements.txt
TIMEOUT = 60.0

NOTEBOOK = '''import marimo

__generated_with = "%s"
app = marimo.App()


@app.cell
def _():
    import os
    import sys
    import time
    print("cell file:", sys._getframe().f_code.co_filename, flush=True)
    return os, time


@app.cell(hide_code=True)
def _(os, time):
    # café ☕: the loop waits for the test's stop file
    stop = os.environ["STOP_FILE"]
    n = 0
    while not os.path.exists(stop):
        n += sum(i * i for i in range(2000))  # hot
    print("done", n)
    return


if __name__ == "__main__":
    app.run()
''' % MARIMO
HOT = NOTEBOOK.split("\n").index("        n += sum(i * i for i in range(2000))  # hot")


def venv(path):
    """BUILD/marimo-venv with the pins of marimo-requirements.txt
    (marimo_venv.py, shared with lsp.marimo_attach and notebook_marimo_page)."""
    try:
        return marimo_venv.venv(path)
    except subprocess.CalledProcessError as e:
        sys.exit("FAIL: pip install -r %s (PyPI needed): %s" % (
            marimo_venv.REQUIREMENTS, (e.stderr or "")[-2000:]))
    except subprocess.TimeoutExpired as e:
        sys.exit("FAIL: making the marimo venv timed out (%s)" % e)


def hints_on(c, nb):
    """The lines with inlay hints on notebook.py, once the hot line has one
    (asked again until then: the last data may still be on its way)."""
    if not getattr(c, "opened", False):
        c.opened = True
        c.send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri(nb), "languageId": "python", "version": 1, "text": NOTEBOOK}}})
    deadline = time.time() + TIMEOUT
    while True:
        h = c.request("textDocument/inlayHint", {
            "textDocument": {"uri": uri(nb)},
            "range": {"start": {"line": 0, "character": 0},
                      "end": {"line": 100, "character": 0}}})["result"] or []
        lines = [x["position"]["line"] for x in h]
        if HOT in lines or time.time() > deadline:
            return lines
        time.sleep(0.3)


def live_on(c, nb):
    m = c.wait(lambda m: m.get("method") == "hotline/executing" and
               m["params"].get("uri") == uri(nb) and m["params"].get("line") == HOT,
               "hotline/executing on the notebook's cell line", TIMEOUT)
    p = m["params"]
    print("executing %s line %d (0-based): %s" % (os.path.basename(p["uri"]), p["line"],
                                                  p["text"]))
    files = {f["file"] for f in p["stack"]}
    assert not any("__marimo__cell_" in f for f in files), files
    print("  stack: " + " <- ".join("%s (%s:%d)" % (f["name"], os.path.basename(
        f["file"]), f["line"]) for f in p["stack"][:4]))


def notebook_in(tmp, sub=""):
    """(workspace, its notebook.py (in the folder sub of it), the stop file
    the notebook waits for)"""
    work = os.path.realpath(tmp)
    os.makedirs(os.path.join(work, sub), exist_ok=True)
    nb = os.path.join(work, sub, "notebook.py")
    with open(nb, "w") as f:
        f.write(NOTEBOOK)
    return work, nb, os.path.join(work, "stop")


def export(hotline, py, debugpy):
    """marimo export html streaming to the socket. debugpy: with
    DEBUGPY_RUNNING=1 (marimo names notebook.py itself) and the workspace in
    `include`; without: marimo names its temporary cell files and the agent
    maps them (profiler/cells.h), with no include at all."""
    with tempfile.TemporaryDirectory(prefix="hotline-marimo-") as tmp:
        work, nb, stop = notebook_in(tmp)
        c = Client(hotline, work)
        c.start(work)
        c.log_line(lambda t: t.startswith("kernels: listening on"), "listening")
        env = agent_env(hotline)
        env.update(HOTLINE_CONNECT="1", STOP_FILE=stop)
        env.pop("DEBUGPY_RUNNING", None)
        if debugpy:
            env.update(DEBUGPY_RUNNING="1", HOTLINE_CONFIG=json.dumps({"include": [work]}))
        marimo = os.path.join(os.path.dirname(py), "marimo")
        p = subprocess.Popen([marimo, "export", "html", "notebook.py", "-o", "out.html"],
                             cwd=work, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT)
        try:
            try:
                live_on(c, nb)
            except AssertionError:
                p.kill()
                raise AssertionError("export: %s" % p.communicate()[0][-3000:])
            hints_on(c, nb)  # samples on the hot line before it stops
            open(stop, "w").close()
            out = p.communicate(timeout=TIMEOUT)[0].decode("utf-8", "replace")
            assert p.returncode == 0, out
            # what marimo itself named the cell's code: the mapping is ours
            # only without DEBUGPY_RUNNING
            named = [ln.split(": ", 1)[1] for ln in out.splitlines()
                     if ln.startswith("cell file: ")]
            assert named, out
            assert ("__marimo__cell_" in named[0]) != debugpy, named
            print("export%s: marimo compiled the cell as %s" % (
                " (DEBUGPY_RUNNING=1)" if debugpy else "", named[0]))
            c.wait(lambda m: m.get("method") == "hotline/executing" and
                   m["params"].get("uri") is None, "the export's end", TIMEOUT)
            lines = hints_on(c, nb)
            assert HOT in lines, "no hint on the cell's hot line %d: %r" % (HOT, lines)
            print("  hints on notebook.py lines %r" % lines)
        finally:
            if p.poll() is None:
                p.kill()
            if c.p.poll() is None:
                c.stop()


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def edit(hotline, py):
    """marimo edit of the workspace folder (headless; the notebook opened
    from its file browser as a browser would: marimo_session.py) streaming
    to the socket. The kernel is a process of its own; cells compile to
    temp files; the notebook is in a subfolder, so no command line names
    it: the running cell's __file__ names it (and marimo runs the kernel in
    the notebook's folder, where the folder scan finds it too)."""
    with tempfile.TemporaryDirectory(prefix="hotline-marimo-") as tmp:
        work, nb, stop = notebook_in(tmp, "nbs")
        c = Client(hotline, work)
        c.start(work)
        c.log_line(lambda t: t.startswith("kernels: listening on"), "listening")
        env = agent_env(hotline)
        env.update(HOTLINE_CONNECT="1", STOP_FILE=stop)
        env.pop("DEBUGPY_RUNNING", None)
        port = free_port()
        marimo = os.path.join(os.path.dirname(py), "marimo")
        p = subprocess.Popen([marimo, "edit", "--headless", "--no-token", "-p", str(port)],
                             cwd=work, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, start_new_session=True)
        session = None
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
                os.path.abspath(__file__)), "marimo_session.py"), str(port), "nbs/notebook.py"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            live_on(c, nb)
            # the hint while the cell still runs (the kernel streams as it
            # goes; it lives on after the cell, so there is no end to wait
            # for, and a cell stopped at once may hold no sample yet)
            lines = hints_on(c, nb)
            open(stop, "w").close()
            assert HOT in lines, "no hint on the cell's hot line %d: %r" % (HOT, lines)
            print("edit: hints on notebook.py lines %r while the cell runs" % lines)
        except AssertionError:
            if session and session.poll() is None:
                session.kill()
            print("session: %s" % (session.communicate()[0][-2000:] if session else b""))
            raise
        finally:
            if session and session.poll() is None:
                session.stdin.close()
                session.wait(timeout=TIMEOUT)
            if p.poll() is None:
                os.killpg(p.pid, 2)  # marimo's own Ctrl-C: it ends its kernel
                try:
                    p.wait(timeout=TIMEOUT)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, 9)
            if c.p.poll() is None:
                c.stop()


def main():
    hotline = os.path.abspath(sys.argv[1])
    py = venv(os.path.abspath(sys.argv[2]))
    got = subprocess.run([py, "-c", "import marimo; print(marimo.__version__)"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert got == MARIMO, got
    script(hotline, py)
    export(hotline, py, debugpy=False)
    export(hotline, py, debugpy=True)
    edit(hotline, py)
    print("ok")


def script(hotline, py):
    """python notebook.py, started by hotline.run."""
    with tempfile.TemporaryDirectory(prefix="hotline-marimo-") as tmp:
        work, nb, stop = notebook_in(tmp)
        os.environ["STOP_FILE"] = stop  # the run inherits the server's environment
        c = Client(hotline, work)
        c.start(work)
        try:
            r = c.request("workspace/executeCommand", {"command": "hotline.run", "arguments": [
                {"uri": uri(nb), "python": py}]})
            assert r.get("result", {}).get("started"), r
            live_on(c, nb)
            hints_on(c, nb)  # samples on the hot line before it stops
            open(stop, "w").close()
            end = c.wait(lambda m: m.get("method") == "hotline/runEnded", "the run's end",
                         TIMEOUT)
            assert end["params"]["outcome"] == "done", end
            lines = hints_on(c, nb)
            assert HOT in lines, "no hint on the cell's hot line %d: %r" % (HOT, lines)
            print("hints on notebook.py lines %r" % lines)
        finally:
            if c.p.poll() is None:
                c.stop()


if __name__ == "__main__":
    main()
