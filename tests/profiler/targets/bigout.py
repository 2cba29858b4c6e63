"""Writes a few megabytes of deterministic text and bytes to stdout."""
import sys
import time

for i in range(60000):
    print("line %d %s" % (i, "x" * (i % 50)))
sys.stdout.flush()
sys.stdout.buffer.write(bytes(range(256)) * 4096)
sys.stdout.buffer.flush()
end = time.perf_counter() + 0.2
while time.perf_counter() < end: pass  # @spin
print("done")
