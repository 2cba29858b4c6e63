#!/usr/bin/env python3
"""Profiles over time: `hotline diff` and `hotline check` against the built binary.

Most cases write profiles by hand (docs/profile-format.md), so what is paired
and what is judged is known exactly; real_diff runs the real agent twice on a
program edited between the runs, from two different folders.

usage: test_compare.py --hotline PATH [--agent DIR --python PATH] CASE   (CASE from --list)
"""
import html.parser
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


class Page(html.parser.HTMLParser):
    """The --html page's flame-graph boxes, its tags and its tables' rows as text."""

    def __init__(self):
        super().__init__()
        self.boxes, self.tags, self.tables = [], [], {}
        self.table = self.text = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if tag == "div" and a.get("class") == "fr":
            style = dict(kv.split(":", 1) for kv in a["style"].split(";"))
            a["left"], a["width"] = float(style["left"][:-1]), float(style["width"][:-1])
            a["background"] = style["background"]
            self.boxes.append(a)
        elif tag == "table":
            self.table = a.get("id")
            self.tables[self.table] = []
        elif tag == "tr" and self.table:
            self.tables[self.table].append("")

    def handle_endtag(self, tag):
        if tag == "table":
            self.table = None

    def handle_data(self, data):
        if self.table and self.tables[self.table]:
            self.tables[self.table][-1] += data + " "


def flame_profile(root, shift, secs):
    """app.py under root (every line moved down by shift) and lib/util.py:
    <module> -> main -> each function of secs (name: seconds; helper is
    called from slow, from the other file)."""
    app, util = root + "/app.py", root + "/lib/util.py"
    names = list(secs)
    funcs = [(n, 10 * k + 10 + shift, 10 * k + 15 + shift) for k, n in enumerate(names)]
    lines = {10 * k + 12 + shift: st(py=secs[n]) for k, n in enumerate(names) if secs[n]}
    prof = profile({app: {"lines": lines, "functions": funcs + [("main", 1 + shift, 5 + shift)]},
                    util: {"lines": {3: st(nat=secs.get("helper", 0) or 0.001)},
                           "functions": [("helper", 2, 4)]}})
    prof["program"] = app

    def fr(file, name, line):
        return {"file": file, "name": name, "line": line}
    top = [fr(app, "main", 3 + shift), fr(app, "<module>", 900 + shift)]
    prof["stacks"] = []
    for k, n in enumerate(names):
        if n == "helper" or not secs[n]:
            continue
        frames = [fr(app, n, 10 * k + 12 + shift)] + top
        prof["stacks"].append({"frames": frames, "samples": int(secs[n] * 1e4),
                               "seconds": secs[n]})
    if secs.get("helper"):  # slow -> helper, in the other file
        k = names.index("slow")
        prof["stacks"].append({"frames": [fr(util, "helper", 3), fr(app, "slow", 10 * k + 13 + shift)]
                               + top, "samples": int(secs["helper"] * 1e4),
                               "seconds": secs["helper"]})
    prof["samples"] = sum(s["samples"] for s in prof["stacks"])
    return prof


HOSTILE = "<script>alert(1)</script>"


@case
def diff_html(c):
    """--html: the differential flame graph colours by change a frame paired
    by file tail and function name (its lines moved, another folder), lists
    the frames gone, merges tiny ones into [other], escapes every name, and
    carries the text diff's tables."""
    tiny = {"tiny%d" % k: 0.0004 for k in range(20)}  # 0.01% each, 0.19% together
    old = flame_profile("/ci/build/proj", 0, dict(
        slow=1.0, helper=0.2, fast=2.0, same=1.0, gone=0.5, **{HOSTILE: 0.3}, **tiny))
    new = flame_profile("/home/u/proj", 3, dict(
        slow=2.0, helper=0.4, fast=0.5, same=1.02, fresh=0.4, **{HOSTILE: 0.6}, **tiny))
    po, pn = save(c, "old.json", old), save(c, "new.json", new)
    out_html = os.path.join(c.tmp, "d.html")
    rc, out, err = c.hl("diff", "--html", out_html, po, pn)
    check(rc == 0, "diff --html exit %d" % rc, err)
    check("app.py: slow" in out, "the text report still printed", out)
    text = open(out_html, encoding="utf-8").read()
    page = Page()
    page.feed(text)
    by = {}
    for b in page.boxes:
        by.setdefault(b["data-name"], []).append(b)
    print(sorted((n, [b["data-change"] for b in bs]) for n, bs in by.items()))

    def one(name):
        check(len(by.get(name, [])) == 1, "one box for %r" % name, sorted(by))
        return by[name][0]
    slow, fast, same, fresh, helper = map(one, ("slow", "fast", "same", "fresh", "helper"))
    check(slow["data-change"] == "slower" and slow["background"].startswith("hsl(0,"),
          "slow is red", slow)
    check(near(float(slow["data-old"]), 1.0 + 0.2) and near(float(slow["data-new"]), 2.0 + 0.4),
          "slow's seconds with its callee's, old -> new (lines moved by 3: paired by name)", slow)
    check(fast["data-change"] == "faster" and fast["background"].startswith("hsl(215,"),
          "fast is blue", fast)
    check(same["data-change"] == "same", "same within 5%", same)
    check(fresh["data-change"] == "new" and near(float(fresh["data-old"]), 0), "fresh is new", fresh)
    check(helper["data-change"] == "slower" and near(float(helper["data-old"]), 0.2) and
          helper["data-file"] == "/home/u/proj/lib/util.py",
          "lib/util.py from another folder pairs: helper 0.2 -> 0.4", helper)
    check("gone" not in by, "a frame only the old profile has takes no width", by.get("gone"))
    gone = page.tables.get("gone", [])[1:]
    check(len(gone) == 1 and "0.500 gone" in gone[0] and "main" in gone[0],
          "gone is the gone table's row, with its old seconds and caller", gone)
    # escaping: the hostile name is a box's text, never a tag
    h = one(HOSTILE)
    check(h["data-change"] == "slower", "the hostile frame is paired too", h)
    check("script" not in page.tags, "no <script> tag in the page", page.tags)
    check("&#60;script&#62;alert(1)&#60;/script&#62;" in text, "shown escaped")
    check(any(HOSTILE in row for row in page.tables["functions"]), "in the functions table",
          page.tables["functions"])
    # bounded: the tiny frames are one [other] box; widths nest and sum
    check(not any(n.startswith("tiny") for n in by), "no box under 0.1%", sorted(by))
    other = one("[other]")
    check(near(float(other["data-new"]), 20 * 0.0004) and other["data-change"] == "same",
          "the tiny frames merged", other)
    root = one("all")
    total = float(root["data-new"])
    check(root["left"] == 0 and near(root["width"], 100, 1e-3), "the root is the whole", root)
    for b in page.boxes:
        check(near(b["width"], 100 * float(b["data-new"]) / total, 1e-3), "width is new share", b)
        d = int(b["data-depth"])
        if d:
            parents = [p for p in page.boxes if int(p["data-depth"]) == d - 1 and
                       p["left"] - 1e-3 <= b["left"] and
                       b["left"] + b["width"] <= p["left"] + p["width"] + 1e-3]
            check(len(parents) == 1, "box inside one box above it", b)
    for d in {int(b["data-depth"]) for b in page.boxes}:
        row = sorted((b["left"], b["width"]) for b in page.boxes if int(b["data-depth"]) == d)
        check(all(x + w <= nx + 1e-3 for (x, w), (nx, _) in zip(row, row[1:])), "no overlap", row)
    # the tables of the text diff: slow's row old -> new, memory-less
    fn = [r for r in page.tables["functions"] if "app.py: slow" in r]
    check(len(fn) == 1 and "1.000" in fn[0] and "2.000" in fn[0] and "+100%" in fn[0] and
          "was 10" in fn[0], "slow's function row", page.tables["functions"])
    check(any("app.py:15 (was 12) in slow" in r for r in page.tables["lines"]),
          "slow's line row, moved", page.tables["lines"])
    # a page that cannot be written, and --html without a value
    rc, _, err = c.hl("diff", "--html", os.path.join(c.tmp, "no/such/dir/d.html"), po, pn)
    check(rc == 1 and "cannot write" in err, "unwritable --html: exit %d" % rc, err)
    check(c.hl("diff", po, pn, "--html")[0] == 2, "--html needs a value")


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
