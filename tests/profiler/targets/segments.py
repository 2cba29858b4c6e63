"""Ground truth for the python / native / system split: 40 ms segments of
pure Python, C work (zlib.compress, sorted(), numpy's `a @ b` where numpy is
there) and time.sleep, in turn, each line timed by the program itself
(perf_counter); truth written as JSON to argv[1], argv[2] cycles.
Expected: py=python, compress/sorted/matmul=native, sleep=system. The
boundaries between kinds are what a decision that keeps a thread's last
category gets wrong (issue 23)."""
import json
import os
import sys
import time
import zlib

try:
    import numpy
except ImportError:
    numpy = None

pc = time.perf_counter
SEG = 0.040
CYCLES = int(sys.argv[2]) if len(sys.argv) > 2 else 25

buf = os.urandom(1 << 16)  # 64 KiB: a few ms a compress
big = [((i * 7919) % 100003) * 0.5 for i in range(20000)]  # a few ms a sort
if numpy is not None:
    a = numpy.random.default_rng(1).random((160, 160))
    b = numpy.random.default_rng(2).random((160, 160))


def cycle(truth):
    t = pc()
    end = t + SEG
    x = 1
    while pc() < end: x = (x * 7 + 3) % 1000003  # @py
    t2 = pc()
    truth["py"] += t2 - t
    end = t2 + SEG
    while pc() < end: zlib.compress(buf, 6)  # @compress
    t3 = pc()
    truth["compress"] += t3 - t2
    end = t3 + SEG
    while pc() < end: sorted(big)  # @sorted
    t4 = pc()
    truth["sorted"] += t4 - t3
    if numpy is not None:
        end = t4 + SEG
        while pc() < end: c = a @ b  # @matmul
        t5 = pc()
        truth["matmul"] += t5 - t4
        t4 = t5
    time.sleep(SEG)  # @sleep
    truth["sleep"] += pc() - t4
    return x


truth = {"py": 0.0, "compress": 0.0, "sorted": 0.0, "sleep": 0.0}
if numpy is not None:
    truth["matmul"] = 0.0
for _ in range(CYCLES):
    cycle(truth)
with open(sys.argv[1], "w") as f:
    json.dump(truth, f)
