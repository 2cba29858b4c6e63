"""Two functions sharing a run at 10/90 ... 90/10 (by their measured time):
the reported shares must be within 3 percentage points."""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

prog = harness.target("prop.py")
marks = harness.markers(prog)


def attempt(c):
    results = []
    with tempfile.TemporaryDirectory() as d:
        for share in (0.1, 0.3, 0.5, 0.7, 0.9):
            out = os.path.join(d, "p.json")
            res = harness.run([prog, str(share), out, "1.0"])
            results.append(res)
            c.check(res.rc == 0, "rc %r: %s" % (res.rc, res.stderr[-1000:]))
            truth = json.load(open(out))
            m = res.main
            ra, rb = m.line(prog, marks["a"]), m.line(prog, marks["b"])
            ta = ra["py"] + ra["nat"] + ra["sys"]
            tb = rb["py"] + rb["nat"] + rb["sys"]
            want = truth["a"] / (truth["a"] + truth["b"])
            got = ta / (ta + tb) if ta + tb > 0 else -1
            print("share %.1f: truth %.3f reported %.3f (a %.3f s, b %.3f s)" % (share, want, got, ta, tb))
            c.check(abs(got - want) <= 0.03, "share %.1f: reported %.3f, truth %.3f" % (share, got, want))
    return results


harness.accuracy("proportions", attempt)
