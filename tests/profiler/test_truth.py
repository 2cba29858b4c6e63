"""Each marked line of targets/truth.py must get its measured wall time
(within 10% or 20 ms) and at least 90% of it in the right category."""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

EXPECT = {"py": "py", "spin": "nat", "nogil": "nat", "sleep": "sys", "pipe": "sys"}

prog = harness.target("truth.py")
marks = harness.markers(prog)


def attempt(c):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "truth.json")
        res = harness.run([prog, out, "0.5"])
        c.check(res.rc == 0, "rc %r stderr %s" % (res.rc, res.stderr[-2000:]))
        truth = json.load(open(out))
    m = res.main
    c.check(m.end is not None and m.end.get("reason") == "exit", "no end/exit: %r" % m.end)
    for name, want in EXPECT.items():
        r = m.line(prog, marks[name])
        tot = r["py"] + r["nat"] + r["sys"]
        err = abs(tot - truth[name])
        cat, share = harness.dominant(r)
        print("%-6s truth %.3f got %.3f (err %+.1f ms) py %.3f nat %.3f sys %.3f n %d -> %s %.0f%%"
              % (name, truth[name], tot, (tot - truth[name]) * 1e3, r["py"], r["nat"], r["sys"],
                 r["n"], cat, share * 100))
        c.check(err <= max(0.10 * truth[name], 0.020),
                "%s: %.3f s reported, truth %.3f s" % (name, tot, truth[name]))
        c.check(cat == want and share >= 0.90,
                "%s: dominant %s %.0f%%, want %s >= 90%%" % (name, cat, share * 100, want), steal=True)
    # the feeder thread's sleep is charged to its own line, as system time
    fr = m.line(prog, marks["feeder"])
    c.check(fr["sys"] > 0.8 * truth["pipe"], "feeder sleep line: %r" % fr)
    # function table: segments() with its first/last line
    f = m.funcs.get((prog, "segments"))
    c.check(f is not None and f["first"] < marks["py"] < marks["pipe"] <= f["last"],
            "funcs entry for segments: %r" % f)
    return [res]


harness.accuracy("truth", attempt)
