#!/usr/bin/env python3
"""pytest --hotline (profiler/python/hotline/pytest_plugin.py) with a real
pytest: the interpreter's own (Debian's python3-pytest here; the pip
install test, tests/pkg/pip-install.sh, runs it through the package's
entry point in a venv with PyPI's pytest).

usage: test_pytest_plugin.py --hotline PATH --agent DIR --python PATH
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

TESTS = '''import time
import pytest


def slow_sum(n):
    s = 0
    for i in range(n):
        s += i * i  # HOT
    return s


def test_slow():
    assert slow_sum(3_000_000) > 0


def test_sleepy():
    time.sleep(0.3)  # WAIT


def test_fast():
    assert 1 + 1 == 2


def test_fails():
    slow_sum(100_000)
    assert False


@pytest.mark.parametrize("name", ["a/b", "\u00fcber \\x1b[2J"])
def test_odd_ids(name):
    assert name
'''


class Failed(Exception):
    pass


def check(cond, msg, *extra):
    if not cond:
        raise Failed(msg + "".join("\n--- %s" % (e,) for e in extra))


def main():
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    hotline, agent, py = (os.path.abspath(args["--hotline"]), os.path.abspath(args["--agent"]),
                          args["--python"])
    if subprocess.run([py, "-c", "import pytest"], capture_output=True).returncode:
        print("FAIL: %s has no pytest (.ci/install-deps installs python3-pytest)" % py)
        return 1
    tmp = tempfile.mkdtemp(prefix="hotline-pytest-")
    try:
        run(tmp, hotline, agent, py)
    except Failed as e:
        print("FAIL:", e)
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("ok")
    return 0


def run(tmp, hotline, agent, py):
    proj = os.path.join(tmp, "proj")
    os.makedirs(os.path.join(proj, "tests"))
    with open(os.path.join(proj, "tests", "test_x.py"), "w") as f:
        f.write(TESTS)
    env = dict(os.environ, PYTHONPATH=agent, PYTHONDONTWRITEBYTECODE="1")
    env.pop("HOTLINE_CONFIG", None)

    def pytest(*a, runner=()):
        p = subprocess.run(list(runner) + [py, "-m", "pytest", "-p", "hotline.pytest_plugin",
                                           "-q", "-p", "no:cacheprovider"] + list(a),
                           capture_output=True, timeout=300, cwd=proj, env=env)
        return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode()

    # without --hotline: nothing written, nothing said
    rc, out, err = pytest()
    check(rc == 1 and "5 passed" in out and "1 failed" in out, "plain pytest run", out, err)
    check(not os.path.exists(os.path.join(proj, ".hotline")) and "hotline" not in out,
          "inert without --hotline", out)

    rc, out, err = pytest("--hotline")
    print(out)
    check(rc == 1 and "5 passed" in out and "1 failed" in out,
          "the tests' outcomes are unchanged under --hotline", out, err)
    check("hotline: slowest tests and their hot lines" in out, "the summary section", out)
    sec = out.split("hotline: slowest tests")[1]
    first = [l for l in sec.splitlines() if "::" in l]
    check(first and ("test_sleepy" in first[0] or "test_slow" in first[0]),
          "the slowest test first", sec)
    check("tests/test_x.py:8  s += i * i  # HOT" in sec, "test_slow's hot line named", sec)
    check("tests/test_x.py:17  time.sleep(0.3)  # WAIT" in sec and "sys 0." in sec,
          "test_sleepy's line, system time", sec)
    check("\x1b" not in out, "no escape from a test id reaches the terminal", repr(out))
    d = os.path.join(proj, ".hotline", "tests")
    index = json.load(open(os.path.join(d, "index.json")))["tests"]
    ids = {t["nodeid"]: t for t in index}
    check(len(index) == 6, "six tests in the index: %r" % sorted(ids))
    check(ids["tests/test_x.py::test_fails"]["outcome"] == "failed" and
          ids["tests/test_x.py::test_fast"]["outcome"] == "passed", "outcomes", index)
    files = [t["file"] for t in index]
    check(len(set(files)) == 6 and all(os.path.dirname(f) == d for f in files) and
          all(os.path.exists(f) for f in files), "one file per test id, in the folder", files)
    check(all(os.path.basename(f).isascii() and "/" not in os.path.basename(f) and
              "\x1b" not in f for f in files), "file names made safe", files)

    # a test's profile is a stream hotline reads
    slow = ids["tests/test_x.py::test_slow"]["file"]
    p = subprocess.run([hotline, "view", slow], capture_output=True, timeout=60, cwd=proj)
    vo = p.stdout.decode()
    check(p.returncode == 0 and "test_x.py:8" in vo, "hotline view of test_slow's profile", vo,
          p.stderr.decode())
    p = subprocess.run([hotline, "check", slow, "--budget", "tests/test_x.py:slow_sum<=0.001s"],
                       capture_output=True, timeout=60, cwd=proj)
    check(p.returncode == 1 and "OVER" in p.stdout.decode(), "hotline check on it",
          p.stdout.decode(), p.stderr.decode())

    # --hotline-dir, --hotline-top 0, --hotline-no-memory
    other = os.path.join(tmp, "profiles")
    rc, out, err = pytest("--hotline", "--hotline-dir", other, "--hotline-top", "0",
                          "--hotline-no-memory", "-k", "slow")
    check(rc == 0 and "slowest tests" not in out, "--hotline-top 0: no summary", out, err)
    got = sorted(os.listdir(other))
    check(len(got) == 2 and "index.json" in got, "--hotline-dir: %r" % got)
    # a second session replaces the first one's files
    rc, out, err = pytest("--hotline", "-k", "fast")
    check(sorted(os.listdir(d)) == ["index.json", os.path.basename(
        ids["tests/test_x.py::test_fast"]["file"])], "the previous session's profiles go",
        os.listdir(d))

    # under `hotline run -m pytest`: the run's profile covers the session.
    # hotline run takes its agent folder off sys.path again (a program's own
    # `hotline` stays its own), so the public package comes from elsewhere,
    # as it does from site-packages after pip install
    pub = os.path.join(tmp, "pub")
    os.makedirs(pub)
    os.symlink(os.path.join(agent, "hotline"), os.path.join(pub, "hotline"))
    env["PYTHONPATH"] = pub
    env["HOTLINE_AGENT_PATH"] = agent
    p = subprocess.run([hotline, "run", "--python", py, "-m", "pytest", "-p",
                        "hotline.pytest_plugin", "-q", "-p", "no:cacheprovider", "--hotline",
                        "-k", "slow"], capture_output=True, timeout=300, cwd=proj, env=env)
    out = p.stdout.decode()
    check(p.returncode == 0 and "not profiling tests: this process is profiled already" in out,
          "says why under hotline run", out, p.stderr.decode())


if __name__ == "__main__":
    sys.exit(main())
