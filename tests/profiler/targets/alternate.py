"""Ground truth for attribution across lines: each iteration burns ~3 ms of
Python on one line, then sleeps ~7 ms on the next, much shorter than a
sampling interval apart. Seconds of each, measured by the program itself,
written as JSON to argv[1]; argv[2] is the total run time."""
import json
import sys
import time

pc = time.perf_counter
TOTAL = float(sys.argv[2]) if len(sys.argv) > 2 else 2.0


def loop(truth):
    stop = pc() + TOTAL
    while pc() < stop:
        t = pc()
        end = t + 0.003
        while pc() < end: pass  # @busy
        t2 = pc()
        time.sleep(0.007)  # @sleep
        t3 = pc()
        truth["busy"] += t2 - t
        truth["sleep"] += t3 - t2


truth = {"busy": 0.0, "sleep": 0.0}
loop(truth)
with open(sys.argv[1], "w") as f:
    json.dump(truth, f)
