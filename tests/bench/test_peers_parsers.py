#!/usr/bin/env python3
"""peers.py's readers of each tool's own output, on canned outputs those tools
wrote for tests/bench/truth.py (tests/bench/samples/, from `peers.py --keep
DIR --truth-seconds 0.3`, cut down to the truth file's rows, its path
replaced by /canned/truth.py). Canned data: no tool runs here, nothing timed.

The benchmark itself is not a test; this checks only that each reader finds
the marked lines and reads the tool's categories and amounts from them, so a
change to a reader (or a new pinned version whose format moved, once its
samples are refreshed) cannot silently turn the accuracy table into
"nothing"."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import peers  # noqa: E402

S = os.path.join(HERE, "samples")
TRUTH = "/canned/truth.py"
meta = json.load(open(os.path.join(S, "lines.json")))
L, TRUTHS = meta["lines"], meta["truth"]  # truth: per tool, of that tool's run
failures = []


def check(ok, what):
    print("%s %s" % ("ok  " if ok else "FAIL", what))
    if not ok:
        failures.append(what)


def share(rec, label):
    return rec["split"].get(label, 0.0) / rec["t"] if rec and rec["t"] else 0.0


def near(got, want, tol):
    return abs(got - want) <= tol * want


T = TRUTHS["hotline"]
hl = peers.parse_hotline(os.path.join(S, "hotline.json"), TRUTH, T)
check(share(hl.get(L["py"]), "py") > 0.9, "hotline: @py is Python")
check(share(hl.get(L["blas"]), "nat") > 0.8, "hotline: @blas is native")
check(share(hl.get(L["sleep"]), "sys") > 0.9, "hotline: @sleep is system")
check(near(hl[L["sleep"]]["t"], T["sleep"], 0.2), "hotline: @sleep seconds")
check((hl[L["leak"]]["mem"] or "").startswith("alloc 50 kept 50 MB"), "hotline: @leak kept: %r"
      % hl[L["leak"]]["mem"])
check((hl[L["churn"]]["mem"] or "").startswith("alloc 400 kept 0"), "hotline: @churn %r"
      % hl[L["churn"]]["mem"])

T = TRUTHS["scalene"]
sc = peers.parse_scalene(os.path.join(S, "scalene.json"), TRUTH, T)
check(abs(sum(r["t"] for r in sc.values()) - T["total"]) < 0.02 * T["total"],
      "scalene: its % over the file add up to the run's own wall")
check(share(sc.get(L["blas"]), "nat") > 0.5, "scalene: @blas mostly C time")
check(share(sc.get(L["sleep"]), "sys") > 0.5, "scalene: @sleep mostly system time")
check(any((r["mem"] or "").startswith("alloc ") for r in sc.values()), "scalene: MB allocated read")

rate = meta["pyspy_rate"]
T = TRUTHS["py-spy"]
ps = peers.parse_pyspy(os.path.join(S, "py-spy.txt"), TRUTH, rate)
check(share(ps.get(L["py"]), "py") > 0.9, "py-spy: @py leaf is Python")
check(share(ps.get(L["blas"]), "nat") > 0.8, "py-spy: @blas leaf is native (BLAS)")
check(near(ps[L["sleep"]]["t"], T["sleep"], 0.3), "py-spy: @sleep seconds (with --idle)")

T = TRUTHS["austin"]
au = peers.parse_austin(os.path.join(S, "austin.txt"), TRUTH)
check(share(au.get(L["py"]), "cpu") > 0.9, "austin: @py on CPU")
check(share(au.get(L["sleep"]), "idle") > 0.9, "austin: @sleep idle")
check(any((r["mem"] or "").startswith("rss +") for r in au.values()), "austin: RSS deltas read")

mr = peers.parse_memray_reports(os.path.join(S, "memray.stats.json"),
                                os.path.join(S, "memray.leaks.csv"), TRUTH)
check(mr[L["leak"]]["mem"] == "alloc 50 kept 50 MB", "memray: @leak %r" % mr[L["leak"]]["mem"])
check(mr[L["churn"]]["mem"] == "alloc 400 kept 0 MB", "memray: @churn %r" % mr[L["churn"]]["mem"])
check(mr[L["leak"]]["t"] is None, "memray: no time")

T = TRUTHS["pyinstrument"]
pi = peers.parse_pyinstrument(os.path.join(S, "pyinstrument.json"), TRUTH)
check(near(pi["sleep"]["t"], T["sleep"], 0.3), "pyinstrument: sleep() built-in seconds")
check(pi["self"]["t"] > T["py"], "pyinstrument: segments() self time covers @py and @blas")

if failures:
    sys.exit("%d failed" % len(failures))
