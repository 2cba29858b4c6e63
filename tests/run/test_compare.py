#!/usr/bin/env python3
"""Profiles over time: `hotline diff` and `hotline check` against the built binary.

Most cases write profiles by hand (docs/profile-format.md), so what is paired
and what is judged is known exactly; real_diff runs the real agent twice on a
program edited between the runs, from two different folders.

usage: test_compare.py --hotline PATH [--agent DIR --python PATH] CASE   (CASE from --list)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


class Failed(Exception):
    pass


def check(cond, msg, *extra):
    if not cond:
        raise Failed(msg + "".join("\n--- %s" % (e,) for e in extra))


class Ctx:
    def __init__(self, hotline):
        self.hotline = hotline
        self.tmp = tempfile.mkdtemp(prefix="hotline-compare-test-")

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def hl(self, *args, cwd=None):
        p = subprocess.run([self.hotline] + list(args), capture_output=True, timeout=60,
                           cwd=cwd or self.tmp)
        return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def st(py=0.0, nat=0.0, sys_=0.0, alloc=0.0):
    d = {"python_s": py, "native_s": nat, "system_s": sys_, "cpu_s": py + nat,
         "samples": max(1, int((py + nat + sys_) * 100))}
    if alloc:
        d["alloc_mb"] = alloc
    return d


def add(a, b):
    return {k: a.get(k, 0) + b.get(k, 0) for k in set(a) | set(b)}


def profile(files):
    """files: {path: {"lines": {n: stats}, "functions": [(name, first, last)]}}"""
    out, total = {}, {}
    for path, f in files.items():
        lines = {str(n): s for n, s in f["lines"].items()}
        ftot = {}
        for s in lines.values():
            ftot = add(ftot, s)
        funcs = []
        for name, first, last in f.get("functions", []):
            fs = {}
            for n, s in f["lines"].items():
                if first <= n <= last:
                    fs = add(fs, s)
            funcs.append(dict(name=name, first_line=first, last_line=last, **(fs or st())))
        out[path] = {"lines": lines, "functions": funcs, "totals": ftot or st()}
        total = add(total, ftot)
    return {"version": 1, "program": next(iter(files)), "argv": [], "python_version": "3.11.2",
            "elapsed_s": sum(total.get(k, 0) for k in ("python_s", "native_s", "system_s")),
            "interval_ms": 10, "samples": total.get("samples", 0),
            "exit": {"status": 0, "signal": None, "reason": "exited 0"},
            "totals": total, "files": out}


def save(c, name, prof):
    path = os.path.join(c.tmp, name)
    with open(path, "w") as f:
        json.dump(prof, f)
    return path


def rows(j, kind, **match):
    return [r for r in j[kind] if all(r.get(k) == v for k, v in match.items())]


def near(a, b, eps=1e-6):
    return abs(a - b) <= eps


def t(side):
    return side["python_s"] + side["native_s"] + side["system_s"]


@case
def diff_moved(c):
    """Two runs from different folders; between them a line went in above
    `hot` (every line of it moves down by one), `helper` is new, `old_f` is
    gone, and `hot`'s loop line got faster (python) while its call got slower
    (native)."""
    old = profile({"/ci/build/proj/app.py": {
        "lines": {12: st(py=2.0), 13: st(nat=0.5), 30: st(py=0.25)},
        "functions": [("hot", 10, 14), ("old_f", 29, 31)]}})
    new = profile({"/home/ü/proj/app.py": {
        "lines": {13: st(py=1.0), 14: st(nat=0.75), 41: st(py=0.5, alloc=12.0)},
        "functions": [("hot", 11, 15), ("helper", 40, 42)]}})
    po, pn = save(c, "old.json", old), save(c, "new.json", new)
    rc, out, err = c.hl("diff", "--json", "-", po, pn)
    check(rc == 0, "diff --json - exit %d" % rc, err)
    j = json.loads(out)
    check(j["files_paired"] == 1 and j["files_ambiguous"] == 0, "file paired", out)
    check(near(j["totals"]["change_s"], 2.25 - 2.75), "total change", j["totals"])
    hot = rows(j, "functions", name="hot")
    check(len(hot) == 1, "hot is one row (moved, not gone + new): %r" % hot)
    hot = hot[0]
    check(hot["first_line_old"] == 10 and hot["first_line_new"] == 11, "hot's lines", hot)
    check(near(t(hot["old"]), 2.5) and near(t(hot["new"]), 1.75) and near(hot["change_s"], -0.75),
          "hot's seconds", hot)
    helper, gone = rows(j, "functions", name="helper")[0], rows(j, "functions", name="old_f")[0]
    check(helper["first_line_old"] is None and helper["first_line_new"] == 40, "helper new", helper)
    check(gone["first_line_new"] is None and near(t(gone["old"]), 0.25), "old_f gone", gone)
    loop = rows(j, "lines", line_new=13)
    check(len(loop) == 1 and loop[0]["line_old"] == 12, "the loop line pairs 13 <- 12", loop)
    check(near(loop[0]["old"]["python_s"], 2.0) and near(loop[0]["new"]["python_s"], 1.0),
          "loop seconds", loop)
    call = rows(j, "lines", line_new=14)[0]
    check(call["line_old"] == 13 and near(call["new"]["native_s"] - call["old"]["native_s"], 0.25),
          "the call line pairs 14 <- 13, native +0.25", call)
    check(rows(j, "lines", line_new=41)[0]["line_old"] is None, "helper's line is new")
    check(rows(j, "lines", line_old=30)[0]["line_new"] is None, "old_f's line is gone")
    check(len(j["lines"]) == 4, "4 line rows: %r" % j["lines"])
    # largest change first
    ch = [abs(r["change_s"]) for r in j["functions"]]
    check(ch == sorted(ch, reverse=True), "functions sorted by change", ch)

    # the text report says the same
    rc, out, err = c.hl("diff", po, pn)
    check(rc == 0, "diff exit %d" % rc, err)
    print(out)
    check("total: 2.750 s -> 2.250 s, -0.500 s (-18%)" in out, "total line", out)
    check("app.py: hot (line 11, was 10)" in out and "-0.750 -30%" in out, "hot row", out)
    check("app.py:13 (was 12) in hot" in out and "-1.000" in out, "loop row", out)
    check("app.py: helper (line 40)" in out and " new " in out, "helper row", out)
    check("app.py: old_f (line 29)" in out and " gone " in out, "old_f row", out)
    check("/ci/build/proj/app.py:30 in old_f" in out, "a gone line is shown where it was", out)
    check("old MB" in out and "12.0" in out, "memory columns when there is memory", out)
    hot_at, helper_at = out.index("app.py: hot"), out.index("app.py: helper")
    check(hot_at < helper_at, "largest change first", out)
    # --json to a file plus the text; --top 1 shows one row per table
    jf = os.path.join(c.tmp, "d.json")
    rc, out, err = c.hl("diff", "--top", "1", "--json", jf, po, pn)
    check(rc == 0 and json.load(open(jf))["version"] == 1, "--json FILE", err)
    check("helper" not in out.split("Lines")[0] and "app.py: hot" in out, "--top 1", out)
    # errors: one file, a missing file, a bad --top
    check(c.hl("diff", po)[0] == 2, "one profile is a usage error")
    rc, _, err = c.hl("diff", po, os.path.join(c.tmp, "nope.json"))
    check(rc == 1 and "nope.json" in err, "a missing profile is named", err)
    check(c.hl("diff", "--top", "0", po, pn)[0] == 2, "--top 0 refused")


@case
def diff_pairing(c):
    """Files pair by their longest shared tail; a tie pairs nothing; the same
    name defined twice in a file pairs in line order; an unchanged profile
    shows no change."""
    old = profile({
        "/o/pkg/a/util.py": {"lines": {2: st(py=1.0)}, "functions": [("f", 1, 3)]},
        "/o/pkg/b/util.py": {"lines": {2: st(py=2.0)}, "functions": [("f", 1, 3)]},
        "/o/x/helpers.py": {"lines": {2: st(py=0.5)}, "functions": [("g", 1, 3)]},
        "/o/y/helpers.py": {"lines": {2: st(py=0.5)}, "functions": [("g", 1, 3)]},
        "/o/twice.py": {"lines": {2: st(py=1.0), 7: st(py=3.0)},
                        "functions": [("h", 1, 3), ("h", 6, 8)]}})
    new = profile({
        "/n/pkg/b/util.py": {"lines": {2: st(py=2.5)}, "functions": [("f", 1, 3)]},
        "/n/z/helpers.py": {"lines": {2: st(py=0.5)}, "functions": [("g", 1, 3)]},
        "/n/twice.py": {"lines": {2: st(py=1.0), 7: st(py=1.0)},
                        "functions": [("h", 1, 3), ("h", 6, 8)]}})
    po, pn = save(c, "old.json", old), save(c, "new.json", new)
    rc, out, err = c.hl("diff", "--json", "-", po, pn)
    check(rc == 0, "exit %d" % rc, err)
    j = json.loads(out)
    f = rows(j, "functions", name="f", file_new="/n/pkg/b/util.py")
    check(len(f) == 1 and f[0]["file_old"] == "/o/pkg/b/util.py", "b/util.py pairs b/util.py", f)
    check(near(f[0]["change_s"], 0.5), "its change", f)
    check(j["files_paired"] == 2 and j["files_ambiguous"] == 1, "helpers.py fits two: unpaired", j)
    g_new = rows(j, "functions", name="g", file_new="/n/z/helpers.py")
    check(len(g_new) == 1 and g_new[0]["file_old"] is None, "unpaired g is new", g_new)
    h = sorted(rows(j, "functions", name="h"), key=lambda r: r["first_line_new"])
    check([(r["first_line_old"], r["first_line_new"]) for r in h] == [(1, 1), (6, 6)],
          "two h's pair in line order", h)
    check(near(h[1]["change_s"], -2.0) and near(h[0]["change_s"], 0.0), "their changes", h)
    # the same profile against itself: no change anywhere
    rc, out, err = c.hl("diff", pn, pn)
    check(rc == 0 and out.count("(no change)") == 2, "no change", out)


@case
def diff_escapes(c):
    """Names and paths from a profile reach the terminal escaped."""
    bad = "/p/e\x1b]0;owned\x07.py"
    prof = profile({bad: {"lines": {2: st(py=1.0)}, "functions": [("f\x1b[2J", 1, 3)]}})
    old = profile({bad: {"lines": {2: st(py=2.0)}, "functions": [("f\x1b[2J", 1, 3)]}})
    rc, out, err = c.hl("diff", save(c, "o.json", old), save(c, "n.json", prof))
    check(rc == 0, "exit %d" % rc, err)
    check("\x1b" not in out and "\x07" not in out, "no control character printed", repr(out))
    check("\\x1b" in out, "shown escaped", out)
    rc, out, err = c.hl("check", save(c, "n2.json", prof), "--budget", "total<=0.5s")
    check(rc == 1 and "\x1b" not in out + err, "check output escaped", repr(out + err))


@case
def check_budgets(c):
    prof = profile({
        "/w/proj/pkg/mod.py": {"lines": {5: st(py=0.3, nat=0.4), 6: st(sys_=0.1, alloc=150.0)},
                               "functions": [("func", 4, 7)]},
        "/w/proj/pkg/__init__.py": {"lines": {3: st(py=0.05)}, "functions": [("init", 2, 4)]},
        "/w/proj/app.py": {"lines": {42: st(py=1.0, alloc=80.0)}, "functions": [("main", 40, 50)]},
        "/w/other/app.py": {"lines": {1: st(py=0.01)}}})
    p = save(c, "p.json", prof)

    def run(*budgets, cwd=None):
        args = ["check", p]
        for b in budgets:
            args += ["--budget", b]
        return c.hl(*args, cwd=cwd)

    rc, out, err = run("pkg.mod:func<=0.9s", "proj/app.py:42<=100MB", "total<=5s")
    print(out)
    check(rc == 0, "all within: exit %d" % rc, out, err)
    check(out.count("  ok  ") == 3 and "3 budgets, 0 over" in out, "three ok lines", out)
    rc, out, err = run("pkg.mod:func<=0.5s", "proj/app.py:42<=100MB")
    check(rc == 1, "one over: exit %d" % rc, out)
    check("OVER  pkg.mod:func" in out and "0.800 s >  0.5 s  (+60%)" in out, "the over line", out)
    check("2 budgets, 1 over" in out, "summary", out)
    # units, stats, strict comparison
    cases = [
        ("pkg.mod:5<=700ms", 0), ("pkg.mod:5<=699ms", 1),
        ("pkg.mod:6<=0.15GB", 0), ("pkg.mod:6<=153600KB", 0), ("pkg.mod:6<=149MB", 1),
        ("pkg.mod:5[native_s]<=0.4", 0), ("pkg.mod:5[native_s]<0.4", 1),
        ("pkg.mod:5[python_s]<=0.3s", 0), ("pkg/mod.py:6[system_s]<=0.05s", 1),
        ("total[alloc_mb]<=230MB", 0), ("total[alloc_mb]<=229MB", 1),
        ("pkg:init<=0.05s", 0),                       # a package is its __init__.py
        ("pkg.mod:Cls.meth<=0s", 0),                  # not sampled: 0, said so
        ("pkg.mod:99<=0s", 0),
    ]
    for spec, want in cases:
        rc, out, err = run(spec)
        check(rc == want, "%s: exit %d, wanted %d" % (spec, rc, want), out, err)
    rc, out, _ = run("pkg.mod:Cls.meth<=0s")
    check("the function has no samples" in out, "says why it is 0", out)
    # unusable budgets: exit 2 with the reason, never a pass
    bad = [
        ("app.py:42<=1s", "fits 2 files"),            # /w/proj/app.py and /w/other/app.py
        ("nope.py:1<=1s", "no file of the profile"),
        ("pkg.mod:func<=1", "say s or MB"),
        ("pkg.mod:func<=1h", "unknown unit"),
        ("pkg.mod:func[bogus]<=1", "unknown stat"),
        ("pkg.mod:func[alloc_mb]<=1s", "does not fit"),
        ("pkg.mod:func=1s", "no '<='"),
        ("pkg.mod<=1s", "FILE:LINE or FILE:FUNCTION"),
        ("total<=-1s", "not a number >= 0"),
    ]
    for spec, why in bad:
        rc, out, err = run(spec)
        check(rc == 2 and why in err, "%s: exit %d, wanted 2 and %r" % (spec, rc, why), err)
    rc, out, err = run("total<=5s", "nope.py:1<=1s")
    check(rc == 2 and "nope.py" in err, "one bad budget fails the check", err)
    check(c.hl("check", p)[0] == 2, "no budgets at all is an error")


@case
def check_sources(c):
    """Budgets from --budgets FILE and from pyproject.toml's [tool.hotline]."""
    prof = profile({"/w/proj/app.py": {"lines": {42: st(py=1.0)}, "functions": [("main", 40, 50)]}})
    p = save(c, "p.json", prof)
    bf = c.write("budgets.txt", "# the CI gate\napp.py:main<=2s   # generous\n\napp.py:42<=0.5s\n")
    rc, out, err = c.hl("check", "--budgets", bf, p)
    check(rc == 1 and "2 budgets, 1 over" in out and "OVER  app.py:42" in out, "--budgets", out, err)
    proj = os.path.join(c.tmp, "proj")
    os.makedirs(proj)
    with open(os.path.join(proj, "pyproject.toml"), "w") as f:
        f.write('[project]\nname = "x"\nbudgets = ["total<=0s"]\n\n'
                '[tool.hotline]\n# budgets for CI\nbudgets = [\n'
                '  "app.py:main<=2s",  # the entry point\n'
                "  'app.py:42<=1.5s',\n"
                '  "total<=1.5s"\n]\n\n[tool.other]\nbudgets = ["total<=0s"]\n')
    rc, out, err = c.hl("check", p, cwd=proj)
    check(rc == 0 and "3 budgets, 0 over" in out, "pyproject budgets (only [tool.hotline]'s)",
          out, err)
    with open(os.path.join(proj, "pyproject.toml"), "a") as f:
        f.write('\n[tool.hotline]\nbudgets = ["app.py:42<=0.1s"]\n')
    rc, out, err = c.hl("check", p, cwd=proj)
    check(rc == 1 and "4 budgets, 1 over" in out, "a second [tool.hotline] table adds", out, err)
    # --budget given: pyproject is not read
    rc, out, err = c.hl("check", "--budget", "total<=9s", p, cwd=proj)
    check(rc == 0 and "1 budget, 0 over" in out, "--budget wins over pyproject", out, err)
    with open(os.path.join(proj, "pyproject.toml"), "w") as f:
        f.write('[tool.hotline]\nbudgets = [ "total<=1s",\n')
    rc, out, err = c.hl("check", p, cwd=proj)
    check(rc == 2, "an unclosed array is an error, exit %d" % rc, out, err)
    with open(os.path.join(proj, "pyproject.toml"), "w") as f:
        f.write('[tool.hotline]\nbudgets = "total<=1s"\n')
    rc, out, err = c.hl("check", p, cwd=proj)
    check(rc == 2 and "array of strings" in err, "a string is not an array", err)
    empty = c.write("empty.txt", "# nothing yet\n")
    rc, out, err = c.hl("check", "--budgets", empty, p, cwd=proj)
    check(rc == 2 and "no budgets" in err, "an empty budgets file is an error, not a pass", err)
    rc, out, err = c.hl("check", "--budgets", os.path.join(c.tmp, "none.txt"), p)
    check(rc == 2 and "none.txt" in err, "a missing budgets file is named", err)


def with_stacks(root, shift, venv):
    """app.py under root (its lines moved down by shift), calling json.dumps
    from a venv's site-packages and the standard library."""
    app = root + "/app.py"
    prof = profile({app: {"lines": {12 + shift: st(py=0.4), 13 + shift: st(nat=0.2)},
                          "functions": [("work", 10 + shift, 14 + shift)]}})
    prof["program"] = app

    def fr(file, name, line):
        return {"file": file, "name": name, "line": line}
    mod = fr(app, "<module>", 20 + shift)
    lib = fr(venv + "/lib/python3.11/site-packages/simplejson/encoder.py", "encode", 290)
    std = fr("/usr/lib/python3.11/json/encoder.py", "iterencode", 255)
    prof["stacks"] = [
        {"frames": [fr(app, "work", 12 + shift), mod], "samples": 40, "seconds": 0.4},
        {"frames": [lib, fr(app, "work", 13 + shift), mod], "samples": 15, "seconds": 0.15},
        {"frames": [std, fr(app, "work", 13 + shift), mod], "samples": 5, "seconds": 0.05},
    ]
    prof["samples"] = 60
    return prof


@case
def collapsed_compare(c):
    """--collapsed-by function and --collapsed-paths relative: two runs from
    different folders and venvs, with lines moved, fold to the same text, so
    that difffolded.pl pairs every stack; the lines of a function merge."""
    a = save(c, "a.json", with_stacks("/ci/a/proj", 0, "/ci/a/.venv"))
    b = save(c, "b.json", with_stacks("/home/u/proj", 3, "/home/u/.venvs/p"))
    outs = []
    for k, path in enumerate((a, b)):
        f = os.path.join(c.tmp, "f%d.txt" % k)
        rc, out, err = c.hl("view", "--collapsed", f, "--collapsed-by", "function",
                            "--collapsed-paths", "relative", path)
        check(rc == 0, "view --collapsed-by function: exit %d" % rc, err)
        outs.append(open(f).read())
    print(outs[0])
    check(outs[0] == outs[1], "the two runs fold the same", *outs)
    lines = outs[0].splitlines()
    check(lines[0] == "<module> (app.py);work (app.py) 40", "the program's frames, relative", lines)
    check("<module> (app.py);work (app.py);encode (simplejson/encoder.py) 15" in lines,
          "a package's own path", lines)
    check("<module> (app.py);work (app.py);iterencode (json/encoder.py) 5" in lines,
          "the standard library's own path", lines)
    # by function merges a function's lines: one stack of 40 + others
    f = os.path.join(c.tmp, "merged.txt")
    prof = with_stacks("/p", 0, "/v")
    prof["stacks"][2]["frames"] = prof["stacks"][0]["frames"][:1] + prof["stacks"][0]["frames"][1:]
    prof["stacks"][2]["frames"][0] = {"file": "/p/app.py", "name": "work", "line": 13}
    rc, out, err = c.hl("view", "--collapsed", f, "--collapsed-by", "function",
                        save(c, "m.json", prof))
    got = open(f).read().splitlines()
    check(rc == 0 and got[0] == "<module> (/p/app.py);work (/p/app.py) 45", "lines 12 and 13 of "
          "work summed; paths stay absolute without --collapsed-paths", got, err)
    # the default is unchanged: a frame per line, absolute paths
    rc, out, err = c.hl("view", "--collapsed", f, a)
    got = open(f).read().splitlines()
    check(got[0] == "<module> (/ci/a/proj/app.py:20);work (/ci/a/proj/app.py:12) 40",
          "default folded line", got)
    # bad values and the options without --collapsed
    for args, why in ((["--collapsed", f, "--collapsed-by", "file"], "line or function"),
                      (["--collapsed", f, "--collapsed-paths", "short"], "absolute or relative"),
                      (["--collapsed-by", "function"], "go with --collapsed")):
        rc, out, err = c.hl("view", *(args + [a]))
        check(rc == 2 and why in err, "%r: exit %d" % (args, rc), err)
    rc, out, err = c.hl("run", "--collapsed-by", "nope", "x.py")
    check(rc == 2 and "line or function" in err, "run checks it before running", err)


REAL_V1 = '''import time


def hot(n):
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


def main():
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 1.0:
        hot(20000)


main()
'''
# v2: two lines in above hot (a docstring and an import), and the loop half as long
REAL_V2 = REAL_V1.replace("import time\n", '"""v2."""\nimport os\nimport time\n').replace(
    "< 1.0", "< 0.5")


@case
def real_diff(c):
    """The real agent, two runs of a program from two folders, edited between
    them: hot's lines moved down by two; diff pairs them and sees the loop
    take about half the time; check gates on the new profile."""
    env = dict(os.environ, HOTLINE_AGENT_PATH=c.agent)
    env.pop("VIRTUAL_ENV", None)
    profs = []
    for k, text in ((1, REAL_V1), (2, REAL_V2)):
        prog = c.write("v%d/app.py" % k, text)
        out = os.path.join(c.tmp, "v%d.json" % k)
        p = subprocess.run([c.hotline, "run", "--python", c.python, "--json", out, prog],
                           capture_output=True, timeout=120, env=env, cwd=os.path.dirname(prog))
        check(p.returncode == 0, "run %d: exit %d" % (k, p.returncode), p.stderr.decode())
        profs.append(out)
    rc, out, err = c.hl("diff", "--json", "-", *profs)
    check(rc == 0, "diff exit %d" % rc, err)
    j = json.loads(out)
    check(j["files_paired"] == 1, "app.py paired across folders", j["files_paired"])
    hot = rows(j, "functions", name="hot")
    check(len(hot) == 1 and hot[0]["first_line_old"] == 4 and hot[0]["first_line_new"] == 6,
          "hot moved 4 -> 6, one row", hot)
    o, n = t(hot[0]["old"]), t(hot[0]["new"])
    print("hot: %.3f s -> %.3f s" % (o, n))
    check(o > 0.5 and 0.3 < n / o < 0.75, "hot about halved: %.3f -> %.3f" % (o, n))
    loop = [r for r in j["lines"] if r["line_new"] == 9]  # total += i * i % 7 in v2
    check(len(loop) == 1 and loop[0]["line_old"] == 7, "the loop line pairs 9 <- 7", loop)
    rc, text, err = c.hl("diff", *profs)
    check(rc == 0 and "app.py: hot (line 6, was 4)" in text and "total += i * i % 7" in text,
          "text names the moved function and shows the line's source", text)
    budget = "app.py:hot<=%.3fs" % (o * 0.75)
    rc, out, err = c.hl("check", profs[1], "--budget", budget)
    check(rc == 0, "new run within 75%% of the old hot: %s" % budget, out, err)
    rc, out, err = c.hl("check", profs[0], "--budget", budget)
    check(rc == 1 and "OVER" in out, "old run over it", out, err)


def main():
    args = sys.argv[1:]
    if args == ["--list"]:
        print("\n".join(CASES))
        return 0
    opts = {}
    while len(args) > 1 and args[0] in ("--hotline", "--agent", "--python"):
        opts[args[0][2:]] = args[1]
        args = args[2:]
    if len(args) != 1 or "hotline" not in opts or args[0] not in CASES or (
            args[0].startswith("real_") and not ("agent" in opts and "python" in opts)):
        print(__doc__, file=sys.stderr)
        return 2
    c = Ctx(os.path.abspath(opts["hotline"]))
    c.agent = opts.get("agent") and os.path.abspath(opts["agent"])
    c.python = opts.get("python")
    try:
        CASES[args[0]](c)
    except Failed as e:
        print("FAIL %s: %s" % (args[0], e), file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(c.tmp, ignore_errors=True)
    print("ok", args[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
