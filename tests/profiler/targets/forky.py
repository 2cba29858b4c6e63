"""fork and multiprocessing under the agent: the child is profiled on its
own connection, Pool results are right, nothing hangs."""
import multiprocessing
import os
import sys
import time

pc = time.perf_counter


def burn(sec):
    end = pc() + sec
    x = 0
    while pc() < end: x += 1  # @burn
    return x


def child_work():
    end = pc() + 0.4
    x = 0
    while pc() < end: x += 1  # @child
    return x


def square(v):
    burn(0.05)
    return v * v


if __name__ == "__main__":
    burn(0.2)
    pid = os.fork()
    if pid == 0:
        child_work()
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2) as pool:
        res = pool.map(square, range(8))
    print("child", os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status)
    print("pool", res)
    sys.stdout.flush()
