"""pytest --hotline: a profile per test, and the slowest tests' hot lines.

Registered through the `pytest11` entry point of the hotline-profiler
package (so `pip install hotline-profiler` makes `pytest --hotline` work);
from a build folder: `pytest -p hotline.pytest_plugin --hotline`. Without
--hotline it only adds its options: nothing is imported or started.

Each test's call phase (not its fixtures' setup and teardown) runs under its
own agent, as a %%hotline cell does: hotline.start(out=FILE) before,
hotline.stop() after. FILE is <dir>/<test id made a file name>.jsonl (dir:
--hotline-dir, default .hotline/tests under pytest's rootdir), a wire
stream that `hotline view`, `hotline diff` and `hotline check` read;
<dir>/index.json lists every test with its file, wall seconds and outcome.
At the end of the session the slowest tests are listed with their hottest
lines (docs/cli.md, "pytest")."""
import json
import os
import re
import time

import pytest

_KEY = "_hotline_plugin"


def pytest_addoption(parser):
    g = parser.getgroup("hotline", "Hotline profiler")
    g.addoption("--hotline", action="store_true", default=False,
                help="profile each test (its call phase) with Hotline: a profile per test id "
                     "and the slowest tests' hot lines at the end")
    g.addoption("--hotline-dir", default=None, metavar="DIR",
                help="where the per-test profiles go (default: .hotline/tests in the rootdir)")
    g.addoption("--hotline-top", type=int, default=5, metavar="N",
                help="slowest tests listed at the end (default 5; 0: none)")
    g.addoption("--hotline-no-memory", action="store_true", default=False,
                help="time only (lower overhead)")


def pytest_configure(config):
    if not config.getoption("--hotline"):
        return
    config.pluginmanager.register(_Plugin(config), _KEY)


def file_name(nodeid):
    """A test id as a file name: readable, and never two ids alike."""
    import hashlib
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", nodeid).strip("._")[:120] or "test"
    return "%s-%s" % (safe, hashlib.sha1(nodeid.encode("utf-8", "replace")).hexdigest()[:8])


class _Plugin:
    def __init__(self, config):
        self.config = config
        d = config.getoption("--hotline-dir")
        self.dir = os.path.abspath(d) if d else os.path.join(str(config.rootpath), ".hotline",
                                                             "tests")
        self.top = max(0, config.getoption("--hotline-top"))
        self.memory = not config.getoption("--hotline-no-memory")
        self.tests = {}  # nodeid -> {"file", "wall_s", "outcome"}
        self.off = None  # why nothing is profiled, or None
        try:
            import _hotline_agent as agent
        except ImportError as e:
            self.off = "the agent cannot be imported (%s)" % e
            return
        self.agent = agent
        if agent.running():
            self.off = ("this process is profiled already (hotline run or hotline.start()): "
                        "that profile covers the whole session")
            return
        os.makedirs(self.dir, exist_ok=True)
        for name in os.listdir(self.dir):  # the previous session's, ours only
            if name.endswith(".jsonl") or name == "index.json":
                try:
                    os.unlink(os.path.join(self.dir, name))
                except OSError:
                    pass

    def pytest_report_header(self, config):
        if self.off:
            return "hotline: not profiling tests: %s" % self.off
        return "hotline: a profile per test in %s" % self.dir

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        if self.off:
            yield
            return
        out = os.path.join(self.dir, file_name(item.nodeid) + ".jsonl")
        started = False
        try:  # the project's code: the rootdir, libraries (site-packages) left out
            self.agent.start(out=out, memory=self.memory, main=str(item.path),
                             include=[str(self.config.rootpath)])
            started = True
        except Exception as e:  # never fail a test because of the profiler
            item.warn(pytest.PytestWarning("hotline: not profiled: %s" % e))
        t0 = time.perf_counter()
        try:
            yield
        finally:
            wall = time.perf_counter() - t0
            if started:
                self.agent.stop()
                self.tests[item.nodeid] = {"file": out, "wall_s": wall, "outcome": None}

    def pytest_runtest_logreport(self, report):
        t = self.tests.get(report.nodeid)
        if t is not None and report.when == "call":
            t["outcome"] = report.outcome

    def pytest_sessionfinish(self, session):
        if self.off or not self.tests:
            return
        index = [dict(nodeid=k, **v) for k, v in self.tests.items()]
        tmp = os.path.join(self.dir, "index.json.tmp")
        with open(tmp, "w") as f:
            json.dump({"version": 1, "tests": index}, f, indent=1)
        os.replace(tmp, os.path.join(self.dir, "index.json"))

    def pytest_terminal_summary(self, terminalreporter):
        if self.off:
            terminalreporter.write_line("hotline: not profiling tests: %s" % self.off)
            return
        if not self.tests or not self.top:
            return
        from _hotline_agent import _report
        tr = terminalreporter
        tr.section("hotline: slowest tests and their hot lines")
        slow = sorted(self.tests.items(), key=lambda kv: -kv[1]["wall_s"])[:self.top]
        root = str(self.config.rootpath)
        for nodeid, t in slow:
            tr.write_line("%.3f s  %s  (%s)" % (t["wall_s"], nodeid, t["outcome"] or "?"))
            try:
                prof = _report.read(t["file"])
            except OSError as e:
                tr.write_line("    (profile not readable: %s)" % e)
                continue
            total = prof.total_wall()
            lines = sorted(prof.lines.items(), key=lambda kv: -kv[1].wall)[:3]
            for (path, ln), e in lines:
                if e.wall <= 0:
                    continue
                shown = os.path.relpath(path, root) if path and path.startswith(root + os.sep) \
                    else path
                text = _source(path, ln)
                tr.write_line("    %6.3f s %3.0f%%  py %.3f nat %.3f sys %.3f  %s:%d  %s" % (
                    e.wall, 100.0 * e.wall / total if total else 0, e.py, e.nat, e.sys,
                    _safe(shown), ln, _safe(text)))
        tr.write_line("profiles: %s (hotline view FILE for the whole report)" % self.dir)


def _source(path, line):
    import linecache
    return linecache.getline(path or "", line).strip()[:60]


def _safe(s):
    """No control character from a path or a source line reaches the terminal."""
    return "".join(c if c.isprintable() else "\\x%02x" % ord(c) if ord(c) < 256 else
                   "\\u%04x" % ord(c) for c in str(s))
