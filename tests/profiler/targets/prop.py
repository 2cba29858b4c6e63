"""Two pure-Python functions share the run: a() gets argv[1] of TOTAL
seconds, b() the rest. Measured times written to argv[2] as JSON."""
import json
import sys
import time

pc = time.perf_counter


def a(sec):
    end = pc() + sec
    x = 1
    while pc() < end: x = (x * 7 + 3) % 1000003  # @a
    return x


def b(sec):
    end = pc() + sec
    x = 1
    while pc() < end: x = (x * 5 + 1) % 1000033  # @b
    return x


share, total = float(sys.argv[1]), float(sys.argv[3])
t0 = pc()
a(total * share)
t1 = pc()
b(total * (1 - share))
t2 = pc()
with open(sys.argv[2], "w") as f:
    json.dump({"a": t1 - t0, "b": t2 - t1}, f)
