#!/usr/bin/env python3
"""A cell is a run (issue 22; docs/notebooks.md, "Cells in the editor"). A
`hotline lsp` on a temporary workspace gets notebookDocument/didOpen for a
notebook of two cells; a real ipykernel (/usr/bin/python3's, driven by
jupyter_client, its working directory the workspace) runs `%load_ext
hotline` (which connects it to the server's socket), then the second cell
three times, busy for 0.6 s, 1.5 s, then 0.9 s (the same text each time, so
ipykernel compiles it to the same file). Afterwards:

- the hot line's inlay hint (its column in UTF-16: the line holds "é" and
  "🎉") says the last execution's seconds (0.9 s), not the sum (3.0 s);
- the flame graph's stacks through that line weigh the last execution too;
- a CodeLens on the cell's first line reads "Hotline: last runs 0.90 s ·
  1.5 s · 0.60 s": the wall seconds of the three executions, newest first.

With `connect`, the kernel starts with HOTLINE_CONNECT=1 (it streams from
its start, before ipykernel exists; then `%load_ext hotline`): the same.

Nothing waits on a clock: every step waits for a message with a timeout.
Usage: test_cell_runs.py HOTLINE [connect]"""
import os
import re
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_kernel_socket import Client, agent_env, uri  # noqa: E402

TIMEOUT = 90.0  # a kernel's start on a loaded 2-core VM takes a while
RUNS = [0.6, 1.5, 0.9]  # seconds each execution of the cell is busy
TOL = 0.3  # seconds: sampling, the cell's own start and end

CELL = """import time
d = DUR.pop(0)
t = time.perf_counter()
while time.perf_counter() - t < d: s = "\u00e9t\u00e9 \U0001f389"
"""
HOT = 3  # 0-based line of the cell: the busy loop


def lenses(c, cell):
    r = c.request("textDocument/codeLens", {"textDocument": {"uri": cell}})
    return [x for x in r["result"] or [] if "last runs" in x["command"]["title"]]


def hot_hint(c, cell):
    r = c.request("textDocument/inlayHint", {
        "textDocument": {"uri": cell},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 10, "character": 0}}})
    return [x for x in r["result"] or [] if x["position"]["line"] == HOT]


def seconds(text):
    """[3.9, 4.2, ...] of "Hotline: last runs 3.9 s · 4.2 s"."""
    return [float(x) for x in re.findall(r"([\d.]+) s", text)]


CONNECT = len(sys.argv) > 2 and sys.argv[2] == "connect"


def main():
    hotline = os.path.abspath(sys.argv[1])
    try:
        from jupyter_client.manager import start_new_kernel
        import ipykernel  # noqa: F401
    except ImportError as e:
        sys.exit("FAIL: %s (run with /usr/bin/python3; install python3-ipykernel)" % e)
    with tempfile.TemporaryDirectory(prefix="hotline-runs-") as tmp:
        work = os.path.realpath(tmp)
        cells = ["%load_ext hotline", CELL]
        nb = uri(os.path.join(work, "nb.ipynb"))
        curi = ["vscode-notebook-cell:%s/nb.ipynb#W%d" % (work, i) for i in range(2)]
        c = Client(hotline, work)
        c.start(work)
        c.log_line(lambda t: t.startswith("kernels: listening on"), "listening")
        c.send({"method": "notebookDocument/didOpen", "params": {
            "notebookDocument": {"uri": nb, "notebookType": "jupyter-notebook", "version": 1,
                                 "cells": [{"kind": 2, "document": u} for u in curi]},
            "cellTextDocuments": [{"uri": u, "languageId": "python", "version": 1, "text": t}
                                  for u, t in zip(curi, cells)]}})
        env = dict(agent_env(hotline), PYDEVD_DISABLE_FILE_VALIDATION="1")
        env.pop("HOTLINE_CONNECT", None)
        if CONNECT:
            # the kernel connects at its start (sitecustomize), before
            # ipykernel made the cells' folder: the include it chose then
            # does not name it; a cell's file counts all the same
            env["HOTLINE_CONNECT"] = "1"
        env.pop("IPYKERNEL_CELL_NAME", None)
        km, kc = start_new_kernel(kernel_name="python3", cwd=work, env=env,
                                  startup_timeout=TIMEOUT)
        try:
            def run(src):
                out = []
                reply = kc.execute_interactive(src, timeout=TIMEOUT, output_hook=out.append)
                assert reply["content"]["status"] == "ok", (src, reply, out)
                return "".join(m["content"].get("text", "") for m in out)
            text = run(cells[0])
            assert "streaming this kernel to the editor" in text, text
            run("DUR = %r" % RUNS)
            for _ in RUNS:
                run(CELL)
            # the last execution's end reaches the server after its data;
            # the server asks for a refresh then
            deadline = time.monotonic() + TIMEOUT
            while True:
                ls = lenses(c, curi[1])
                if ls and len(seconds(ls[0]["command"]["title"])) == len(RUNS):
                    break
                try:
                    c.wait(lambda m: m.get("method") == "workspace/codeLens/refresh",
                           "a refresh", min(1.0, max(0.1, deadline - time.monotonic())))
                except AssertionError:
                    if time.monotonic() > deadline:
                        raise AssertionError("no lens with %d runs on %s: %r" %
                                             (len(RUNS), curi[1], ls))
            title = ls[0]["command"]["title"]
            print("lens on line %d: %s" % (ls[0]["range"]["start"]["line"], title))
            assert ls[0]["range"]["start"]["line"] == 0, ls
            assert title.startswith("Hotline: last runs "), title
            got, want = seconds(title), RUNS[::-1]
            assert all(abs(g - w) <= TOL for g, w in zip(got, want)), (got, want)
            h = hot_hint(c, curi[1])
            assert h, "no hint on the hot line %d of the cell" % HOT
            line = CELL.split("\n")[HOT]
            col = len(line.encode("utf-16-le")) // 2
            assert h[0]["position"]["character"] == col, (h, col, len(line.encode()))
            tip = h[0]["tooltip"]["value"]
            m = re.search(r"\(([\d.]+) s, ", tip)
            assert m, tip
            hot_s = float(m.group(1))
            print("hint on the cell's line %d, column %d (UTF-16): %s, %.3f s" %
                  (HOT, col, h[0]["label"], hot_s))
            assert abs(hot_s - RUNS[-1]) <= TOL, \
                "the hint has %.3f s, the last run was %.1f s (all three: %.1f s)" % (
                    hot_s, RUNS[-1], sum(RUNS))
            # the flame graph agrees: the stacks through the cell's hot line
            # weigh the last execution, not the three
            r = c.request("workspace/executeCommand", {"command": "hotline.flameGraph",
                                                       "arguments": [{"since": 0}]})
            d = r["result"]["data"]["speedscope"]
            names = [f["name"] for f in d["shared"]["frames"]]
            hot_fr = {i for i, n in enumerate(names) if n.startswith("<module> (") and
                      n.endswith(":%d)" % (HOT + 1)) and ".py:" in n}
            assert hot_fr, "no frame of the cell's line %d in %r" % (HOT + 1, names[:40])
            w = sum(wt for prof in d["profiles"] for st, wt in zip(prof["samples"], prof["weights"])
                    if hot_fr & set(st))
            print("flame graph: the cell's hot line weighs %.3f s" % w)
            assert abs(w - RUNS[-1]) <= TOL, \
                "the flame graph has %.3f s on the cell's line, the last run was %.1f s" % (
                    w, RUNS[-1])
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
            if c.p.poll() is None:
                c.stop()
    print("ok")


if __name__ == "__main__":
    main()
