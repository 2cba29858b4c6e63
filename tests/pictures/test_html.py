#!/usr/bin/env python3
"""`hotline run --html`: the self-contained report in headless Chromium.

Profiles a real program (two threads, library frames, memory that grows),
writes the report with `hotline run --html` and `hotline view --html`,
checks that the page references nothing outside itself, then drives it with
html_check.js: root total = the profile's stacks, click zooms, search
highlights, one chart point per memory_timeline point. --shots DIR also
writes light and dark screenshots (docs/img/ was made so).

Pinned packages, and a failure when a tool is missing, as test_speedscope.py.
usage: test_html.py --hotline PATH --build DIR --agent DIR --python PATH [--shots DIR]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
from test_speedscope import install, skip_or_fail  # noqa: E402

PROG = """import json, threading, time
keep = []
def grow():
    for _ in range(40):
        keep.append(bytearray(256 * 1024))
        time.sleep(0.01)
def work(n):
    return sum(i * i for i in range(n))
def dumps():
    for _ in range(2000):
        json.dumps({'a': list(range(100))})
t = threading.Thread(target=work, args=(1500000,))
t.start()
grow()
work(800000)
dumps()
t.join()
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hotline", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--agent", required=True)
    ap.add_argument("--python", required=True)
    ap.add_argument("--shots")
    a = ap.parse_args()
    a.hotline, a.build, a.agent = map(os.path.abspath, (a.hotline, a.build, a.agent))
    if a.shots:
        a.shots = os.path.abspath(a.shots)
    for tool in ("node", "npm"):
        if not shutil.which(tool):
            return skip_or_fail("NOT RUN: no %s on PATH" % tool)
    if not os.access("/usr/bin/chromium", os.X_OK):
        return skip_or_fail("NOT RUN: no /usr/bin/chromium (.ci/install-deps installs it)")
    try:
        mods = install(a.build)
    except (subprocess.SubprocessError, OSError) as e:
        return skip_or_fail("NOT RUN: npm ci failed (%s)" % e)
    tmp = tempfile.mkdtemp(prefix="hotline-html-")
    try:
        d = os.path.join(tmp, "dïr with spaces")
        os.makedirs(d)
        prog = os.path.join(d, "app.py")
        with open(prog, "w") as f:
            f.write(PROG)
        pj, html = os.path.join(d, "p.json"), os.path.join(d, "report <1>.html")
        env = dict(os.environ, HOTLINE_AGENT_PATH=a.agent)
        env.pop("VIRTUAL_ENV", None)
        r = subprocess.run([a.hotline, "run", "--python", a.python, "--json", pj, "--html", html,
                            prog], capture_output=True, timeout=120, env=env, cwd=tmp)
        if r.returncode:
            print("FAIL: hotline run", r.returncode, r.stderr.decode())
            return 1
        with open(pj) as f:
            j = json.load(f)
        with open(html, encoding="utf-8") as f:
            page = f.read()
        # self-contained: no URL to fetch (the schema-less data has none either)
        refs = re.findall(r"""(?:src|href)\s*=\s*["']?[^"'\s>]+|url\(|@import|https?://""", page)
        if refs:
            print("FAIL: the page refers outside itself:", refs[:5])
            return 1
        expect = os.path.join(tmp, "expect.json")
        with open(expect, "w") as f:
            json.dump({"total_s": sum(s["seconds"] for s in j["stacks"]),
                       "timeline_points": len(j.get("memory_timeline", [])), "search": "work"}, f)
        if not j.get("memory_timeline"):
            print("FAIL: the run has no memory timeline")
            return 1
        ok = subprocess.run(["node", os.path.join(HERE, "html_check.js"), mods, html, expect]
                            + ([a.shots] if a.shots else []), timeout=120).returncode
        if ok:
            return ok
        # `view` of the saved profile gives the same report data
        html2 = os.path.join(tmp, "v.html")
        r = subprocess.run([a.hotline, "view", "--html", html2, pj], capture_output=True,
                           timeout=60)
        if r.returncode:
            print("FAIL: hotline view --html", r.stderr.decode())
            return 1
        return subprocess.run(["node", os.path.join(HERE, "html_check.js"), mods, html2, expect],
                              timeout=120).returncode
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
