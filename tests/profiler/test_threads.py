"""Four threads with different known work: each line charged its own
thread's time (within 10% or 20 ms), in the right category (>= 90%), and
every thread appears in the thread table."""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

EXPECT = {"py": "py", "nogil": "nat", "sleep": "sys", "pipe": "sys"}
prog = harness.target("threads.py")
marks = harness.markers(prog)


def attempt(c):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "t.json")
        res = harness.run([prog, out, "0.6"])
        c.check(res.rc == 0, "rc %r: %s" % (res.rc, res.stderr[-1000:]))
        truth = json.load(open(out))
    m = res.main
    for name, want in EXPECT.items():
        r = m.line(prog, marks[name])
        tot = r["py"] + r["nat"] + r["sys"]
        cat, share = harness.dominant(r)
        print("%-6s truth %.3f got %.3f py %.3f nat %.3f sys %.3f -> %s %.0f%%"
              % (name, truth[name], tot, r["py"], r["nat"], r["sys"], cat, share * 100))
        c.check(abs(tot - truth[name]) <= max(0.1 * truth[name], 0.02),
                "%s: %.3f s reported, truth %.3f" % (name, tot, truth[name]))
        c.check(cat == want and share >= 0.9, "%s: %s %.0f%%, want %s" % (name, cat, share * 100, want),
                steal=True)
    c.check(len(m.threads) >= 5, "threads seen: %r" % m.threads)
    c.check(any(t["name"] == "MainThread" for t in m.threads.values()), "no MainThread")
    return [res]


harness.accuracy("threads", attempt)
