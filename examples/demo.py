"""Hotline demo: a few seconds of three kinds of work, each on its own lines,
so the report shows all three columns.

  python  - a pure-Python loop (the interpreter runs bytecode)
  native  - zlib and hashlib on big buffers, sorted() of a big list
            (C code called from Python)
  system  - waiting: time.sleep and a blocking read from a pipe

Run it with:  ./build/hotline run examples/demo.py
"""
import hashlib
import os
import random
import threading
import time
import zlib


def python_work(n):
    total = 0
    for i in range(n):
        total += (i * i) % 7
    return total


def native_work(mb):
    data = os.urandom(1 << 20) * mb
    packed = zlib.compress(data, 1)
    digest = hashlib.sha256(data).hexdigest()
    numbers = [random.random() for _ in range(300_000)]
    ordered = sorted(numbers)
    return len(packed), digest[:8], ordered[0]


def waiting(seconds):
    time.sleep(seconds / 2)
    r, w = os.pipe()
    threading.Timer(seconds / 2, os.write, (w, b"x")).start()
    os.read(r, 1)  # blocks until the timer thread writes
    os.close(r)
    os.close(w)


def main():
    for _ in range(2):
        python_work(3_000_000)
        native_work(8)
        waiting(0.5)
    print("demo done")


if __name__ == "__main__":
    main()
