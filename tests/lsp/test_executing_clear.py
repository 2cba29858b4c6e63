#!/usr/bin/env python3
"""The live marker clears when the user's code is done but the process
lives on (the notebook issue, defect 1; docs/lsp.md, "Live line").

A kernel (ipykernel, marimo) or an attached process keeps running after
the cell or the call ended, in library code only. The program here has
that shape: it runs a hot function for ~1 s, writes the wall time at which
the function returned to a file, then ends its own code while a thread
started with a library target (`time.sleep`) keeps the process alive for
3 s more. From then on no thread has a frame of the user's code (the main
thread is in `threading._shutdown`, the other one in threading.py), so
the marker must go: `hotline/executing` with `{"uri": null}`, within
0.5 s of the return, while the process still runs (before its
`hotline/runEnded`, before the 3 s are over). Before the fix the marker
stayed on the hot line until the process ended.

Two ways in: hotline.run (the run provider) and an agent that connects
on its own to the workspace socket (`hotline.connect()`, as
`%load_ext hotline` in a kernel does: the kernel provider). A client
without hotline/executing gets the fallback diagnostic (code `running`),
which is removed at the same moment (checked through hotline.run).

Usage: test_executing_clear.py HOTLINE
"""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_kernel_socket import Client, agent_env, uri, TIMEOUT  # noqa: E402

PROG = """import os, sys, threading, time
{connect}
stamp = sys.argv[1]
def hot():
    t = time.perf_counter()
    while time.perf_counter() - t < 1.0: pass  # hot
hot()
with open(stamp + ".tmp", "w") as f:
    f.write(repr(time.time()))
os.rename(stamp + ".tmp", stamp)
threading.Thread(target=time.sleep, args=(3.0,)).start()
"""
HOT_LINE = 5  # 0-based
BOUND_S = 0.5


def stamp_time(stamp, deadline):
    while not os.path.exists(stamp):
        if time.monotonic() > deadline:
            raise AssertionError("the program never wrote " + stamp)
        time.sleep(0.01)
    return float(open(stamp).read())


def watch(c, path, stamp, fallback=False):
    """Waits for the marker on the hot line, then for its clear; returns
    the latency (s) of the clear after the hot function returned."""
    u = uri(path)
    deadline = time.monotonic() + TIMEOUT
    shown = False
    while True:
        m = c.next(deadline)
        now = time.time()
        meth, p = m.get("method"), m.get("params") or {}
        if meth == "hotline/runEnded":
            raise AssertionError("the run ended before the marker cleared")
        if not fallback and meth == "hotline/executing":
            if p.get("uri") == u and p.get("line") == HOT_LINE:
                shown = True
            elif shown and p.get("uri") is None:
                break
        if fallback and meth == "textDocument/publishDiagnostics" and p.get("uri") == u:
            running = [d for d in p["diagnostics"] if d.get("code") == "running"]
            if running and running[0]["range"]["start"]["line"] == HOT_LINE:
                shown = True
            elif shown and not running:
                break
    t_ret = stamp_time(stamp, deadline)
    lat = now - t_ret
    assert lat <= BOUND_S, "the marker cleared %.3f s after the hot code returned" % lat
    return lat


def via_run(hotline, work, fallback):
    c = Client(hotline, work)
    caps = {} if fallback else {"experimental": {"hotlineExecuting": True}}
    r = c.request("initialize", {"processId": None, "rootUri": uri(work), "capabilities": caps,
                                 "initializationOptions": {"kernelSocket": False}})
    assert "result" in r, r
    c.send({"method": "initialized", "params": {}})
    path = os.path.join(work, "prog.py")
    with open(path, "w") as f:
        f.write(PROG.format(connect=""))
    stamp = os.path.join(work, "returned.%d" % fallback)
    r = c.request("workspace/executeCommand", {"command": "hotline.run", "arguments": [
        {"uri": uri(path), "args": [stamp]}]})
    assert r.get("result", {}).get("started"), r
    lat = watch(c, path, stamp, fallback)
    t0 = time.monotonic()
    c.wait(lambda m: m.get("method") == "window/showMessage" and
           "exited 0" in m["params"]["message"], "the run's end")
    left = time.monotonic() - t0
    assert left > 1.5, "the program ended %.2f s after the clear: not idle" % left
    c.stop()
    return lat, left


def via_kernel_socket(hotline, work):
    import subprocess
    c = Client(hotline, work)
    c.start(work)
    c.log_line(lambda t: t.startswith("kernels: listening on"), "listening")
    sub = os.path.join(work, "kernel")
    os.makedirs(sub)
    path = os.path.join(sub, "k.py")
    with open(path, "w") as f:
        f.write(PROG.format(connect="import hotline; assert hotline.connect()"))
    stamp = os.path.join(work, "returned.k")
    p = subprocess.Popen([sys.executable, "k.py", stamp], cwd=sub, env=agent_env(hotline),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        lat = watch(c, path, stamp)
        assert p.poll() is None, "the process ended before the marker cleared"
        out, _ = p.communicate(timeout=TIMEOUT)
        assert p.returncode == 0, out
    finally:
        if p.poll() is None:
            p.kill()
    c.stop()
    return lat


def main():
    hotline = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        for fallback in (False, True):
            work = os.path.join(tmp, "run%d" % fallback)
            os.makedirs(work)
            lat, left = via_run(hotline, work, fallback)
            print("run (%s): cleared %.3f s after the hot code returned; the process ran %.2f s "
                  "more" % ("fallback diagnostic" if fallback else "hotline/executing", lat, left))
        work = os.path.join(tmp, "ks")
        os.makedirs(work)
        lat = via_kernel_socket(hotline, work)
        print("kernel socket: cleared %.3f s after the hot code returned" % lat)
    print("ok")


if __name__ == "__main__":
    main()
