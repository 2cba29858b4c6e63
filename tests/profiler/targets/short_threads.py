"""Thread-per-task work (docs/sampling.md, "New threads"): N threads started
and joined one after another, each burning ~MS ms of Python CPU; then N
such tasks on a ThreadPoolExecutor; then N/2 short-lived executors of one
task each. Each task times its own CPU and wall time; truth to argv[1]."""
import json
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

N = int(sys.argv[2])
MS = float(sys.argv[3]) / 1000.0
tt, pc = time.thread_time, time.perf_counter
truth = {"seq": [0.0, 0.0], "pool": [0.0, 0.0], "once": [0.0, 0.0]}  # [cpu, wall]
lock = threading.Lock()


def done(kind, dc, dw):
    # the clocks are read on the caller's line, before this call: a wait
    # for the GIL or the lock in here is not the task's (two pool workers
    # in step hand the GIL over at this call)
    with lock:
        truth[kind][0] += dc
        truth[kind][1] += dw


def seq_task():
    w, c, x = pc(), tt(), 1
    while tt() < c + MS: x = (x * 7 + 3) % 1000003  # @seq
    done("seq", tt() - c, pc() - w)


def pool_task():
    w, c, x = pc(), tt(), 1
    while tt() < c + MS: x = (x * 7 + 3) % 1000003  # @pool
    done("pool", tt() - c, pc() - w)


def once_task():
    w, c, x = pc(), tt(), 1
    while tt() < c + MS: x = (x * 7 + 3) % 1000003  # @once
    done("once", tt() - c, pc() - w)


for _ in range(N):
    t = threading.Thread(target=seq_task)
    t.start()  # @seq_start
    t.join()  # @seq_join
with ThreadPoolExecutor(max_workers=2) as ex:
    for f in [ex.submit(pool_task) for _ in range(N)]:
        f.result()  # @pool_result
for _ in range(N // 2):
    with ThreadPoolExecutor(max_workers=1) as ex:
        ex.submit(once_task).result()  # @once_result
with open(sys.argv[1], "w") as f:
    json.dump(truth, f)
