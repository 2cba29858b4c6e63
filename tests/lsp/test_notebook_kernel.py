#!/usr/bin/env python3
"""Jupyter cells in the editor with a real kernel (issue 14; docs/notebooks.md,
"Cells in the editor"). A `hotline lsp` on a temporary workspace gets
notebookDocument/didOpen for a notebook of two cells; a real ipykernel
(/usr/bin/python3's, Debian python3-ipykernel, driven by jupyter_client, its
working directory the workspace) runs the same two cells: `%load_ext
hotline` (which connects the kernel to the server's socket) and the seed's
loop (a scikit-learn GaussianMixture.fit per pixel of a small random video,
Debian python3-sklearn) that runs until the test creates its stop file. While
it runs, hotline/executing names the cell's URI (vscode-notebook-cell:...),
the hot line within the cell and scikit-learn's frames under it; after it, an
inlay hint sits on that line of the cell (its column in UTF-16: the line
holds "é" and "🎉"); an edit to the cell takes the hints away. Twice: for
a client that opted into hotline/executing, and for one that did not,
which gets the live line as a `running` diagnostic on the cell instead.

Nothing waits on a clock: every step waits for a message with a timeout.
Usage: test_notebook_kernel.py HOTLINE"""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_kernel_socket import Client, agent_env, uri  # noqa: E402

TIMEOUT = 90.0  # a kernel's start on a loaded 2-core VM takes a while

# the seed's loop (docs/notebooks.md): a GaussianMixture fitted per pixel of
# a small random video, over and over until the stop file exists
CELL = """import os
import numpy as np
from sklearn.mixture import GaussianMixture
video = np.random.default_rng(0).random((60, 8, 8))  # frames, height, width
pixels = [(y, x) for y in range(video.shape[1]) for x in range(video.shape[2])]
n = 0
while not os.path.exists(%r):
    y, x = pixels[n %% len(pixels)]
    temp = video[:, y, x].reshape(-1, 1)
    gmm = GaussianMixture(n_components=2, random_state=0)
    gmm.fit(temp)  # hot: \u00e9t\u00e9 \U0001f389
    n += 1
print("fits", n)
"""
HOT = 10  # 0-based line of the cell: gmm.fit(temp)


def hints(c, cell):
    r = c.request("textDocument/inlayHint", {
        "textDocument": {"uri": cell},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}})
    return r["result"] or []


class FallbackClient(Client):
    """A client that did not opt into hotline/executing: the live line is an
    Information diagnostic (code `running`) instead."""

    def start(self, work):
        r = self.request("initialize", {
            "processId": None, "rootUri": uri(work),
            "capabilities": {"workspace": {"inlayHint": {"refreshSupport": True}}},
            "initializationOptions": {"hints": {"threshold": 1}}})
        assert "result" in r, r
        self.send({"method": "initialized", "params": {}})


def main():
    hotline = os.path.abspath(sys.argv[1])
    try:
        from jupyter_client.manager import start_new_kernel  # noqa: F401
        import ipykernel  # noqa: F401
        import sklearn  # noqa: F401
    except ImportError as e:
        sys.exit("FAIL: %s (run with /usr/bin/python3; install python3-ipykernel python3-sklearn)" % e)
    scenario(hotline, Client)
    scenario(hotline, FallbackClient)
    print("ok")


def scenario(hotline, client):
    from jupyter_client.manager import start_new_kernel
    executing = client is Client
    print("%s:" % ("hotline/executing" if executing else "fallback diagnostic"))
    with tempfile.TemporaryDirectory(prefix="hotline-nbk-") as tmp:
        work = os.path.realpath(tmp)
        stop = os.path.join(work, "stop")
        cells = ["%load_ext hotline", CELL % stop]
        nb = uri(os.path.join(work, "nb.ipynb"))
        curi = ["vscode-notebook-cell:%s/nb.ipynb#W%d" % (work, i) for i in range(2)]
        c = client(hotline, work)
        c.start(work)
        c.log_line(lambda t: t.startswith("kernels: listening on"), "listening")
        c.send({"method": "notebookDocument/didOpen", "params": {
            "notebookDocument": {"uri": nb, "notebookType": "jupyter-notebook", "version": 1,
                                 "cells": [{"kind": 2, "document": u} for u in curi]},
            "cellTextDocuments": [{"uri": u, "languageId": "python", "version": 1, "text": t}
                                  for u, t in zip(curi, cells)]}})
        env = dict(agent_env(hotline), PYDEVD_DISABLE_FILE_VALIDATION="1",
                   OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
        env.pop("HOTLINE_CONNECT", None)
        env.pop("IPYKERNEL_CELL_NAME", None)
        km, kc = start_new_kernel(kernel_name="python3", cwd=work, env=env,
                                  startup_timeout=TIMEOUT)
        try:
            out = []
            reply = kc.execute_interactive(cells[0], timeout=TIMEOUT, output_hook=out.append)
            text = "".join(m["content"].get("text", "") for m in out)
            assert reply["content"]["status"] == "ok", (reply, out)
            assert "streaming this kernel to the editor" in text, text
            msg_id = kc.execute(cells[1])
            t0 = time.monotonic()

            def live(m):
                p = m.get("params", {})
                return (m.get("method") == "hotline/executing" and p.get("uri") == curi[1] and
                        p.get("line") == HOT and
                        any(f["library"] and f["name"].startswith("sklearn.mixture.")
                            for f in p.get("stack", [])))

            def running(m):
                p = m.get("params", {})
                return (m.get("method") == "textDocument/publishDiagnostics" and
                        p.get("uri") == curi[1] and
                        any(d.get("code") == "running" and d["range"]["start"]["line"] == HOT
                            for d in p["diagnostics"]))
            try:
                m = c.wait(live if executing else running, "the live line on the cell", TIMEOUT)
            except AssertionError:
                raise AssertionError("no live line on %s:%d (%s)" %
                                     (curi[1], HOT, "executing" if executing else "fallback"))
            p = m["params"]
            if executing:
                print("executing after %.1f s: %s line %d, %s" %
                      (time.monotonic() - t0, p["uri"], p["line"], p["text"]))
                print("  stack: " + " <- ".join(f["name"] for f in p["stack"]))
                user = [f["user"] for f in p["stack"]].index(True)
                assert p["stack"][user]["line"] == HOT + 1, p
            else:
                d = [d for d in p["diagnostics"] if d.get("code") == "running"][0]
                print("running diagnostic after %.1f s on %s line %d: %s" %
                      (time.monotonic() - t0, p["uri"], d["range"]["start"]["line"],
                       d["message"]))
            open(stop, "w").close()
            deadline = time.monotonic() + TIMEOUT
            while True:
                r = kc.get_shell_msg(timeout=max(1, deadline - time.monotonic()))
                if r["parent_header"].get("msg_id") == msg_id:
                    break
            assert r["content"]["status"] == "ok", r
            # the hints: the kernel is still connected; its last data reaches
            # the server within a flush, and the server asks for a refresh
            line = (CELL % stop).split("\n")[HOT]
            col = len(line.encode("utf-16-le")) // 2
            deadline = time.monotonic() + TIMEOUT
            while True:
                h = [x for x in hints(c, curi[1]) if x["position"]["line"] == HOT]
                if h:
                    break
                c.wait(lambda m: m.get("method") == "workspace/inlayHint/refresh", "a refresh",
                       max(0.1, deadline - time.monotonic()))
            assert h[0]["position"]["character"] == col, (h, col, len(line.encode()))
            print("hint on the cell's line %d, column %d (UTF-16): %s" %
                  (HOT, col, h[0]["label"]))
            c.send({"method": "notebookDocument/didChange", "params": {
                "notebookDocument": {"uri": nb, "version": 2},
                "change": {"cells": {"textContent": [{
                    "document": {"uri": curi[1], "version": 2},
                    "changes": [{"range": {"start": {"line": 3, "character": 4},
                                           "end": {"line": 3, "character": 5}},
                                 "text": "1"}]}]}}}})
            assert hints(c, curi[1]) == [], "hints left on the edited cell"
            print("edited: no hints on the cell")
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
            if c.p.poll() is None:
                c.stop()


if __name__ == "__main__":
    main()
