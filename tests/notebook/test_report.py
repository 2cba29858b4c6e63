"""_report.py without IPython or an agent: the leak rule against the same
timelines as tests/memory/test_memprof.c (the server's memprof_analyse),
and a hand-written stream (docs/agent-protocol.md) added up as the server
adds it. usage: test_report.py PYTHON_PACKAGE_DIR (build/python)"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.abspath(sys.argv[1]))
from _hotline_agent import _report  # noqa: E402

fails = 0


def check(cond, what):
    global fails
    if not cond:
        fails += 1
        print("FAIL: %s" % what)


def analyse(f, end):
    tl = []
    for i in range(50):
        t = 0.1 * (i + 1)
        _report._tl_add(tl, t, f(t))
    return _report.leak(tl, end)


l = analyse(lambda t: 10 * t, 5.0)
check(l and abs(l[1] - 10) < 1 and abs(l[2] - 50) < 0.01 and l[0] > 0.9, "10 MB/s leak: %r" % (l,))
l = analyse(lambda t: math.floor(t * 2), 5.0)
check(l and abs(l[1] - 2) < 0.5, "steps of 2 MB/s: %r" % (l,))
for name, f in (("churn", lambda t: math.fmod(t * 37, 3.0)),
                ("cache", lambda t: 10 * t if t < 2 else 20),
                ("freed", lambda t: 10 * t if t < 4.9 else 0),
                ("burst", lambda t: 0 if t < 0.3 else 30),
                ("tiny", lambda t: 0.1 * t)):
    check(analyse(f, 5.0) is None, "%s is not a leak" % name)
check(analyse(lambda t: 10 * t, 20.0) is None, "a leak that stopped long before the end")

# a stream: strings, a time delta, memory deltas with kept_pts, garbage
p = _report.Profile()
lines = [
    {"t": "hello", "v": 1},
    {"t": "str", "id": 1, "s": "/x/cell.py"},
    {"t": "delta", "ts": 0.1, "samples": 10,
     "lines": [{"f": 1, "l": 3, "py": 0.05, "nat": 0.01, "sys": 0.04, "cpu": 0.06, "n": 10}]},
    "not json",
    {"t": "delta", "ts": 0.1, "samples": 0,
     "lines": [{"f": 1, "l": 4, "alloc_mb": 6.0, "freed_mb": 1.0, "peak_mb": 5.5,
                "kept_pts": [[0.05, 2.0], [0.08, 4.0], [0.2, 9.0]]}],
     "mem": {"live_mb": 5.0, "peak_mb": 5.5, "peak_f": 1, "peak_l": 4}},
    {"t": "delta", "ts": 0.2, "samples": 5,
     "lines": [{"f": 1, "l": 3, "py": 0.05, "nat": 0, "sys": 0, "cpu": 0.05, "n": 5},
               {"f": 1, "l": 4, "alloc_mb": 1.0, "freed_mb": 0.0, "kept_pts": [[0.15, 0.5]]}]},
    {"t": "end", "ts": 0.25, "reason": "stop"},
]
for m in lines:
    p.feed(m if isinstance(m, str) else json.dumps(m))
a, b = p.lines[("/x/cell.py", 3)], p.lines[("/x/cell.py", 4)]
check(abs(a.py - 0.10) < 1e-9 and abs(a.sys - 0.04) < 1e-9 and a.n == 15, "time adds up")
check(abs(b.alloc - 7) < 1e-9 and abs(b.kept - 6) < 1e-9, "alloc 7, kept 6: %r" % b.kept)
# points relative to the kept MB at the previous memory delta; one after
# its delta's ts is dropped
check(b.tl == [(0.05, 2.0), (0.08, 4.0), (0.1, 5.0), (0.15, 5.5), (0.2, 6.0)], "timeline %r" % b.tl)
check(p.samples == 15 and p.ended and p.peak_mb == 5.5 and p.peak_at == ("/x/cell.py", 4),
      "totals")
rep = _report.format_report(p, {"/x/cell.py": _report.Source(
    "In [1] (this cell)", lines=["a", "b", "c", "d"], whole=True)}, 0.25, "cell In [1]")
rows = [r for r in rep.splitlines() if r.startswith("      3") or r.startswith("      4")]
check(len(rows) == 2 and "100.0%" in rows[0] and "7.0" in rows[1] and "6.0" in rows[1],
      "report rows:\n" + rep)
print(rep)
sys.exit(1 if fails else 0)
