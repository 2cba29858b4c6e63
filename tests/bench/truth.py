"""Ground truth for tests/bench/peers.py (not a test): known work on marked
lines, each time segment timed by the program itself with perf_counter,
each memory segment a known number of bytes; truth written as JSON to
argv[1]. argv[2] is the length of one time segment in seconds.

  @py     pure-Python loop                    -> all Python time
  @blas   numpy matrix products (OpenBLAS)    -> native time
  @sleep  time.sleep                          -> waiting (system) time
  @leak   kept 256 KiB buffers, steadily      -> kept / leaked bytes
  @churn  2 MiB buffers allocated and dropped -> allocated bytes, none kept
  @pace   pure-Python pacing of the memory loop (spreads it over a segment)

The memory loop interleaves the leaking and the churning line, as a real
leak sits next to harmless churn: a tool must tell the two lines apart.
Lines are found by their `# @name` marker, so edits do not break peers.py."""
import time; T0 = time.perf_counter()  # noqa: E702  (the run's own wall: "total")
import json
import sys

try:
    import numpy as np
except ImportError:  # e.g. a fresh python3.15 build: no @blas segment then
    np = None

SEG = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
LEAK_CHUNK = 256 * 1024
CHURN_CHUNK = 2 * 1024 * 1024
ROUNDS = 200
pc = time.perf_counter
kept = []
a = np.random.default_rng(1).random((400, 400)) if np else None  # not in a segment


def segments(truth):
    t = pc()
    end = t + SEG
    x = 1
    while pc() < end:
        for _ in range(2000): x = (x * 7 + 3) % 1000003  # @py
    truth["py"] = pc() - t
    b = [[0]]
    if np:
        t = pc()
        end = t + SEG
        while pc() < end: b = a @ a  # @blas
        truth["blas"] = pc() - t
    t = pc()
    time.sleep(SEG)  # @sleep
    truth["sleep"] = pc() - t
    t = pc()
    step = SEG / ROUNDS
    for i in range(ROUNDS):
        kept.append(bytearray(LEAK_CHUNK))  # @leak
        tmp = bytearray(CHURN_CHUNK); del tmp  # @churn
        end = t + (i + 1) * step
        while pc() < end:
            for _ in range(200): x = (x * 5 + 1) % 1000003  # @pace
    truth["memory_s"] = pc() - t
    truth["leak_mb"] = ROUNDS * LEAK_CHUNK / 2**20
    truth["churn_mb"] = ROUNDS * CHURN_CHUNK / 2**20
    return x + int(b[0][0])


truth = {}
segments(truth)
truth["total"] = pc() - T0
with open(sys.argv[1], "w") as f:
    json.dump(truth, f)
