#!/usr/bin/env python3
"""marimo notebooks in the editor, for the way marimo runs a notebook that
names the notebook's own lines (docs/notebooks.md, "marimo"): `python
notebook.py` (marimo's script mode, App.run) started by hotline.run. marimo
compiles each cell under notebook.py's name at the cell's lines in the file,
so hotline/executing, inlay hints and lenses land on notebook.py's lines of
the cell with no mapping. Real marimo from PyPI, pinned, in a venv this
test makes (once, in the build folder) from /usr/bin/python3.

Also checked: the frames really are named so (not marimo_<pid>/
__marimo__cell_<id>_.py, the names of `marimo edit` and `marimo export`,
which are not mapped yet), so a marimo that changes this fails here.

Second case: `marimo export html notebook.py` (which runs the cells in its
own process, under the temp cell names) with DEBUGPY_RUNNING=1, marimo's
switch for debuggers that makes it compile the cells under notebook.py's
name and lines, and HOTLINE_CONNECT=1 with the workspace in `include`: the
export streams to the server's socket and the live line and hints land on
notebook.py's lines the same way.

Usage: test_marimo.py HOTLINE VENV_DIR"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_kernel_socket import Client, agent_env, uri  # noqa: E402

MARIMO = "0.25.2"
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
def _(os, time):
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
    py = os.path.join(path, "bin", "python")
    stamp = os.path.join(path, "marimo-" + MARIMO)
    if os.path.exists(stamp):
        return py
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--clear", path], check=True,
                   timeout=300)
    r = subprocess.run([py, "-m", "pip", "install", "-q", "marimo==" + MARIMO],
                       capture_output=True, text=True, timeout=600)
    if r.returncode:
        sys.exit("FAIL: pip install marimo==%s (PyPI needed): %s" % (MARIMO, r.stderr[-2000:]))
    open(stamp, "w").close()
    return py


def hints_on(c, nb):
    c.send({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri(nb), "languageId": "python", "version": 1, "text": NOTEBOOK}}})
    h = c.request("textDocument/inlayHint", {
        "textDocument": {"uri": uri(nb)},
        "range": {"start": {"line": 0, "character": 0},
                  "end": {"line": 100, "character": 0}}})["result"] or []
    return [x["position"]["line"] for x in h]


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


def notebook_in(tmp):
    """(workspace, its notebook.py, the stop file the notebook waits for)"""
    work = os.path.realpath(tmp)
    nb = os.path.join(work, "notebook.py")
    with open(nb, "w") as f:
        f.write(NOTEBOOK)
    return work, nb, os.path.join(work, "stop")


def export(hotline, py):
    """marimo export html, DEBUGPY_RUNNING=1, streaming to the socket."""
    with tempfile.TemporaryDirectory(prefix="hotline-marimo-") as tmp:
        work, nb, stop = notebook_in(tmp)
        c = Client(hotline, work)
        c.start(work)
        c.log_line(lambda t: t.startswith("kernels: listening on"), "listening")
        env = agent_env(hotline)
        env.update(HOTLINE_CONNECT="1", DEBUGPY_RUNNING="1", STOP_FILE=stop,
                   HOTLINE_CONFIG=json.dumps({"include": [work]}))
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
            open(stop, "w").close()
            out = p.communicate(timeout=TIMEOUT)[0]
            assert p.returncode == 0, out
            c.wait(lambda m: m.get("method") == "hotline/executing" and
                   m["params"].get("uri") is None, "the export's end", TIMEOUT)
            lines = hints_on(c, nb)
            assert HOT in lines, "no hint on the cell's hot line %d: %r" % (HOT, lines)
            print("export: hints on notebook.py lines %r" % lines)
        finally:
            if p.poll() is None:
                p.kill()
            if c.p.poll() is None:
                c.stop()


def main():
    hotline = os.path.abspath(sys.argv[1])
    py = venv(os.path.abspath(sys.argv[2]))
    got = subprocess.run([py, "-c", "import marimo; print(marimo.__version__)"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert got == MARIMO, got
    script(hotline, py)
    export(hotline, py)
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
