"""Ground truth: known work on marked lines, each segment timed with
perf_counter by the program itself; truth written as JSON to argv[1].
Expected categories: py=python, spin/nogil=native, sleep/pipe=system."""
import json
import os
import sys
import threading
import time

import hotline_spin

SEG = float(sys.argv[2]) if len(sys.argv) > 2 else 0.5
pc = time.perf_counter


def feeder(w, delay):
    time.sleep(delay)  # @feeder
    os.write(w, b"x")


def segments(truth):
    t = pc()
    end = t + SEG
    x = 1
    while pc() < end: x = (x * 7 + 3) % 1000003  # @py
    truth["py"] = pc() - t
    t = pc()
    hotline_spin.spin(SEG)  # @spin
    truth["spin"] = pc() - t
    t = pc()
    hotline_spin.spin_nogil(SEG)  # @nogil
    truth["nogil"] = pc() - t
    t = pc()
    time.sleep(SEG)  # @sleep
    truth["sleep"] = pc() - t
    r, w = os.pipe()
    th = threading.Thread(target=feeder, args=(w, SEG))
    t = pc()
    th.start()
    os.read(r, 1)  # @pipe
    truth["pipe"] = pc() - t
    th.join()
    return x


truth = {}
segments(truth)
with open(sys.argv[1], "w") as f:
    json.dump(truth, f)
