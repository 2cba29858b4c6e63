"""C callees named in the stacks: a loop of zlib.compress, sorted() and
list.sort(), each on its own marked line; argv[1] seconds."""
import os
import sys
import time
import zlib

pc = time.perf_counter
buf = os.urandom(1 << 16)
big = [((i * 7919) % 100003) * 0.5 for i in range(20000)]
end = pc() + float(sys.argv[1] if len(sys.argv) > 1 else 1.0)
while pc() < end:
    zlib.compress(buf, 6)  # @compress
    sorted(big)  # @sorted
    big.sort(key=None)  # @sort
