"""Four threads with different known work: each line charged its own
thread's time (within 10% or 20 ms), in the right category (>= 90%), and
every thread appears in the thread table, and each worker's stacks are
sent under its own thread's id."""
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
    # stacks come per thread (delta.stacks' tid): each worker's line is in
    # the stacks of one thread only, a thread of its own, and the main
    # thread's wait in the main thread's (tid = pid); a thread's stacks hold
    # at most its seconds in the thread table and most of them (a sample
    # without a Python frame has no stack)
    owner = {}
    for name in list(EXPECT) + ["main_wait"]:
        where = [tid for tid, per in m.thread_stacks.items()
                 if any((prog, marks[name]) in {(f, l) for f, _, l in key} for key in per)]
        c.check(len(where) == 1 and where[0] != 0, "%s: stacks in threads %r" % (name, where))
        owner[name] = where[0] if where else None
    c.check(len(set(owner.values())) == len(owner), "a thread per worker: %r" % owner)
    c.check(owner["main_wait"] == m.hello["pid"], "the main thread's stacks: %r" % owner)
    for tid, t in m.threads.items():
        secs, st = t["py"] + t["nat"] + t["sys"], m.thread_stack_time.get(tid, 0.0)
        c.check(0.8 * secs - 0.01 <= st <= secs + 0.01,
                "thread %s (%d): stacks %.4f s vs thread %.4f s" % (t["name"], tid, st, secs))
    c.check(m.thread_stack_time.get(0, 0.0) == 0.0, "no stack of a thread not told apart: %r"
            % m.thread_stack_time)
    return [res]


harness.accuracy("threads", attempt)
