"""Four threads doing different known work at the same time: a pure-Python
loop, C code without the GIL, sleep, and a blocking pipe read fed late.
Each thread times its own work; truth to argv[1]."""
import json
import os
import sys
import threading
import time

import hotline_spin

SEG = float(sys.argv[2])
pc = time.perf_counter
truth = {}


def py_worker():
    t = pc()
    end = t + SEG
    x = 1
    while pc() < end: x = (x * 7 + 3) % 1000003  # @py
    truth["py"] = pc() - t


def nogil_worker():
    t = pc()
    hotline_spin.spin_nogil(SEG)  # @nogil
    truth["nogil"] = pc() - t


def sleep_worker():
    t = pc()
    time.sleep(SEG)  # @sleep
    truth["sleep"] = pc() - t


def pipe_worker(r):
    t = pc()
    os.read(r, 1)  # @pipe
    truth["pipe"] = pc() - t


r, w = os.pipe()
ths = [threading.Thread(target=f, args=a) for f, a in
       ((py_worker, ()), (nogil_worker, ()), (sleep_worker, ()), (pipe_worker, (r,)))]
for t in ths:
    t.start()
time.sleep(SEG)  # @main_wait
os.write(w, b"x")
for t in ths:
    t.join()
with open(sys.argv[1], "w") as f:
    json.dump(truth, f)
