"""Ground truth for the call site (test_attach_site.py): cycles of a loop in
zlib.compress, one in sorted() and one of pure Python, each ~0.2 s, for
about the seconds in argv[1]. Its pid goes to stderr (first line)."""
import os
import random
import sys
import time
import zlib

DATA = random.Random(1).randbytes(200000) if hasattr(random.Random, "randbytes") else bytes(
    random.Random(1).getrandbits(8) for _ in range(200000))
_r = random.Random(2)
FLOATS = [_r.random() for _ in range(20000)]  # sorted() of them: ~2 ms
sys.stderr.write("%d\n" % os.getpid())  # once the data is made
sys.stderr.flush()


def compress(s):
    end = time.monotonic() + s
    while time.monotonic() < end:
        zlib.compress(DATA, 6)  # COMPRESS


def sort(s):
    end = time.monotonic() + s
    while time.monotonic() < end:
        sorted(FLOATS)  # SORTED


def pure(s):
    end = time.monotonic() + s
    n = 0
    while time.monotonic() < end:
        for i in range(2000):
            n += i * i % 7  # PURE
    return n


def main():
    total = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    end = time.monotonic() + total
    while time.monotonic() < end:
        compress(0.2)
        sort(0.2)
        pure(0.2)


main()
