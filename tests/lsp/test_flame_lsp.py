#!/usr/bin/env python3
"""The editor's flame-graph view (VS Code "Hotline: Show flame graph";
docs/pictures.md, "In VS Code"), against a real `hotline lsp`:

1. hotline.flameGraph with no profile: an error that says to run first.
2. during a run: {page: true} is the HTML report (one page, the data block
   inline, its own CSP) with running true; polling {since: version} brings
   new data while the program runs (more samples, a newer version), and the
   stacks name the program's hot function under its caller;
3. after hotline/runEnded: the last data says running false; asking again
   with that version answers "unchanged" (no data sent for nothing);
4. a new run replaces the profile: the same version asked again gets data.

Usage: test_flame_lsp.py HOTLINE
"""
import json
import os
import re
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_kernel_socket import Client, TIMEOUT, uri  # noqa: E402

PROG = """import json, sys, time
def inner(d):
    return json.dumps(d)  # hot
def outer(seconds):
    d = {"k%d" % i: list(range(20)) for i in range(50)}
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        inner(d)
outer(float(sys.argv[1]) if len(sys.argv) > 1 else 3.0)
"""


def flame(c, arg):
    return c.request("workspace/executeCommand", {"command": "hotline.flameGraph", "arguments": [arg]})


def page_data(page):
    m = re.search(r'<script id="data" type="application/json">(.*?)</script>', page, re.S)
    assert m, "no data block in the page"
    return json.loads(m.group(1))


def frames(d):
    ss = d["speedscope"]
    fr = ss["shared"]["frames"]
    out = set()
    for p in ss["profiles"]:
        for st in p["samples"]:
            out.add(tuple(fr[k]["name"] for k in st))
    return out


def weight(d):
    return sum(sum(p["weights"]) for p in d["speedscope"]["profiles"])


def main():
    hotline = sys.argv[1]
    fails = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            fails.append(what)

    with tempfile.TemporaryDirectory() as work:
        prog = os.path.join(work, "app.py")
        with open(prog, "w") as f:
            f.write(PROG)
        c = Client(hotline, work)
        r = c.request("initialize", {
            "processId": None, "rootUri": uri(work),
            "capabilities": {"experimental": {"hotlineExecuting": True, "hotlineRunEnded": True}}})
        assert "result" in r, r
        c.send({"method": "initialized", "params": {}})
        cmds = r["result"]["capabilities"]["executeCommandProvider"]["commands"]
        check("hotline.flameGraph" in cmds, "hotline.flameGraph is an announced command")

        r = flame(c, {"page": True})
        check("error" in r and "no profile yet" in r["error"]["message"],
              "no profile: %r" % r.get("error", r))

        r = c.request("workspace/executeCommand", {"command": "hotline.run", "arguments": [
            {"uri": uri(prog), "args": ["3"]}]})
        check(r.get("result", {}).get("started") is True, "run started: %r" % r)
        c.wait(lambda m: m.get("method") == "hotline/executing" and m["params"].get("uri"),
               "the live line")
        r = flame(c, {"page": True})["result"]
        page = r["page"]
        check(page.startswith("<!DOCTYPE html>") and "Content-Security-Policy" in page
              and "://" not in page, "the page: one HTML document, its CSP, no URL in it")
        check(r["running"] is True, "running while the program runs")
        d0, v0 = page_data(page), r["version"]
        # while it runs, polling with the version held brings newer data
        deadline = time.monotonic() + TIMEOUT
        d1 = None
        while time.monotonic() < deadline:
            r = flame(c, {"since": v0})["result"]
            if "data" in r and r["data"]["samples"] > d0["samples"]:
                d1, v1 = r["data"], r["version"]
                break
            time.sleep(0.2)
        check(d1 is not None and v1 > v0 and r["running"] is True,
              "live: new data during the run (samples %s -> %s, version %s -> %s)"
              % (d0["samples"], d1 and d1["samples"], v0, d1 and v1))
        check(d1 is not None and weight(d1) > weight(d0), "live: the flame graph's total grew")
        if d1 is not None:
            # speedscope stacks are root first: "outer (app.py:8)" then "inner (app.py:3)"
            want = ["outer (%s:8)" % prog, "inner (%s:3)" % prog]
            check(any(list(st[i:i + 2]) == want for st in frames(d1) for i in range(len(st))),
                  "the stacks hold inner (line 3) right under outer (line 8)")

        c.wait(lambda m: m.get("method") == "hotline/runEnded", "the run's end", 20)
        r = flame(c, {"since": v0})["result"]
        check("data" in r and r["running"] is False, "after the end: data, running false")
        vend = r["version"]
        r = flame(c, {"since": vend})["result"]
        check(r.get("unchanged") is True and "data" not in r, "the same version again: unchanged")

        # a new run replaces the profile: the old version gets the new data
        r = c.request("workspace/executeCommand", {"command": "hotline.run", "arguments": [
            {"uri": uri(prog), "args": ["0.5"]}]})
        c.wait(lambda m: m.get("method") == "hotline/runEnded", "the second run's end", 20)
        r = flame(c, {"since": vend})["result"]
        check("data" in r and r["version"] > vend, "a new run: new data for the old version")
        c.stop()
    if fails:
        print("FAILED: %d" % len(fails))
        sys.exit(1)
    print("flame graph view: all checks passed")


if __name__ == "__main__":
    main()
