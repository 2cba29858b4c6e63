"""Stress for crash-freedom: frames and thread states freed under the
sampler (short-lived threads, deep recursion, generators, coroutines,
exceptions, code objects created and dropped). Prints "ok" at the end."""
import asyncio
import threading
import time


def bottom():
    # ~2 ms at 400 frames deep, so that 1 ms ticks walk (and drop) deep
    # stacks every round; a bare deep(400) lasts ~50 us and a run could go
    # without one deep sample (CI: deepest stack 58 frames)
    t = time.perf_counter() + 0.002
    while time.perf_counter() < t:
        pass
    return 0


def deep(n):
    return bottom() if n == 0 else 1 + deep(n - 1)


def gen(n):
    for i in range(n):
        yield i * i


async def co(n):
    s = 0
    for i in range(n):
        await asyncio.sleep(0)
        s += i
    return s


def short():
    x = 0
    for i in range(2000):
        x += i
    return x


end = time.perf_counter() + 1.5
rounds = 0
while time.perf_counter() < end:
    ths = [threading.Thread(target=short) for _ in range(8)]
    for t in ths:
        t.start()
    deep(400)
    sum(gen(2000))
    asyncio.run(co(200))
    ns = {}
    exec(compile("def f%d(a):\n    return [a * i for i in range(50)]\n" % rounds, "<dyn>", "exec"), ns)
    ns["f%d" % rounds](3)
    try:
        raise ValueError(rounds)
    except ValueError:
        pass
    for t in ths:
        t.join()
    rounds += 1
print("ok", rounds)
