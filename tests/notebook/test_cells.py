#!/usr/bin/env python3
"""hotline/_cells.py's search for a marimo cell's code in the notebook's
file (docs/notebooks.md, "marimo notebooks"): the line offset that takes a
line of the cell's temporary file to the notebook's line, for the shapes
marimo writes: plain @app.cell, @app.cell(hide_code=True), a comment before
the first statement, a multi-line signature, non-ASCII text, nested
blocks, a cell identical to another (the first wins, as marimo's own
match), leading blank lines in the cell, and code that is in no cell (an
edit not saved), and the notebook named by the running cell's __file__.
The cell's code is what marimo gives compile(): the
function's body, dedented, without the final return.

With "hostile": the folder is not trusted. The mapper reads the working
directory's *.py files: a link to /dev/zero, a FIFO, a link to a notebook
out of the folder are not read (before: /dev/zero grew the program past
1.5 GB, the FIFO blocked the thread for good); each case runs in a child
with a 1 GiB address space and a deadline.

Usage: test_cells.py BUILD_PYTHON_DIR [hostile]"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, sys.argv[1])
from _hotline_agent import _cells  # noqa: E402

NB = '''import marimo

app = marimo.App(width="medium")


@app.cell
def _():
    import math
    return (math,)


@app.cell(hide_code=True)
def _(
    math,
):
    # café ☕ first, a comment
    total = 0
    for k in range(10):
        if k % 2:
            total += math.sqrt(k)
    return (total,)


@app.cell
def _(total):
    print(total)
    return


@app.function
def helper(x):
    return x + 1


@app.cell
def _(total):
    print(total)
    return


if __name__ == "__main__":
    app.run()
'''
LINES = NB.split("\n")


def line_of(text, start=0):
    """1-based line of the first line of NB equal to text, after start."""
    for i in range(start, len(LINES)):
        if LINES[i] == text:
            return i + 1
    raise AssertionError(text)


def check(path, code, first_text, first_cell_line=1, start=0):
    got = _cells.find([ln + "\n" for ln in code.split("\n")], [path])
    want = line_of(first_text, start) - first_cell_line
    assert got == (path, want), "%r: got %r, want %r" % (code[:30], got, (path, want))
    print("ok %-40r -> line + %d" % (code.split("\n")[first_cell_line - 1][:40], want))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "notebook.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(NB)
        check(path, "import math", "    import math")
        check(path, "# café ☕ first, a comment\ntotal = 0\nfor k in range(10):\n"
              "    if k % 2:\n        total += math.sqrt(k)",
              "    # café ☕ first, a comment")
        # marimo's cell code may start with blank lines: line 3 is the first
        check(path, "\n\nprint(total)", "    print(total)", first_cell_line=3)
        # two identical cells: the first
        check(path, "print(total)", "    print(total)")
        # @app.function bodies are cells too (marimo compiles them the same way)
        check(path, "return x + 1", "    return x + 1")
        # a cell edited and not saved: no mapping
        assert _cells.find(["print(total + 1)\n"], [path]) is None
        # the file changes: read again (cached by size and mtime)
        with open(path, "w", encoding="utf-8") as f:
            f.write(NB.replace("    import math\n", "    import math\n    import os\n"))
        os.utime(path, ns=(1, 1))
        got = _cells.find(["import math\n", "import os\n"], [path])
        assert got == (path, line_of("    import math") - 1), got
        print("ok a changed file is read again")
        # the running cell's __file__ names its notebook (marimo edit of a
        # folder: no command line names it)
        name = os.path.join(tmp, "marimo_1", "__marimo__cell_Ab_.py")
        seen = []
        code = compile("seen.append(running(name))\n", name, "exec")
        exec(code, {"__file__": path, "seen": seen, "running": _cells._running_file,
                    "name": name})
        assert seen == [path], seen
        assert _cells._running_file(name) is None  # no longer running
        print("ok the running cell's __file__:", os.path.basename(seen[0]))
        # notebooks(): the working directory's marimo files are candidates
        os.chdir(tmp)
        with open(os.path.join(tmp, "plain.py"), "w") as f:
            f.write("print(1)\n")
        cands = _cells.notebooks()
        assert os.path.join(tmp, "notebook.py") in cands, cands
        assert os.path.join(tmp, "plain.py") not in cands, cands
        print("ok candidates", [os.path.basename(c) for c in cands if c.startswith(tmp)])
    print("ok")


HOSTILE_CHILD = r"""
import json, os, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
sys.path.insert(0, sys.argv[1])
from _hotline_agent import _cells
os.chdir(sys.argv[2])
t = time.monotonic()
cands = _cells.notebooks()
hint = _cells.find(["import math\n"], [os.path.join(sys.argv[2], "zz.py")])
here = os.path.realpath(sys.argv[2])  # (the test's own file is on its parent's command line)
print(json.dumps({"cands": [os.path.basename(c) for c in cands
                            if os.path.dirname(c) == here], "hint": hint,
                  "s": time.monotonic() - t}))
"""


def hostile():
    with tempfile.TemporaryDirectory() as tmp:
        outside = os.path.join(tmp, "outside.py")  # a notebook out of the folder
        with open(outside, "w", encoding="utf-8") as f:
            f.write(NB)
        fails = 0
        for kind in ("zero", "fifo"):
            d = os.path.join(tmp, kind)
            os.mkdir(d)
            with open(os.path.join(d, "notebook.py"), "w", encoding="utf-8") as f:
                f.write(NB)
            if kind == "zero":
                os.symlink("/dev/zero", os.path.join(d, "zz.py"))
            else:
                os.mkfifo(os.path.join(d, "zz.py"))
            os.symlink("notebook.py", os.path.join(d, "alias.py"))  # in the folder: read
            os.symlink(outside, os.path.join(d, "link_out.py"))
            try:
                r = subprocess.run([sys.executable, "-c", HOSTILE_CHILD, sys.argv[1], d],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
            except subprocess.TimeoutExpired:
                print("FAIL %s: the mapper did not come back within 30 s" % kind)
                fails += 1
                continue
            got = json.loads(r.stdout) if r.returncode == 0 else None
            print("%s: rc %d %r %s" % (kind, r.returncode, got, r.stderr.decode()[-300:]))
            if got is None or got["cands"] != ["alias.py", "notebook.py"] or got["hint"] is not None:
                print("FAIL %s: candidates must be the folder's two regular notebooks" % kind)
                fails += 1
        if fails:
            sys.exit(1)
    print("ok")


if __name__ == "__main__":
    if sys.argv[2:] == ["hostile"]:
        hostile()
    else:
        main()
