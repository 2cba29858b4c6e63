"""import hotline; hotline.start(); ...; hotline.stop() without a server."""
import time

import hotline

hotline.start(interval_ms=5)
end = time.perf_counter() + 0.4
x = 0
while time.perf_counter() < end: x += 1  # @work
hotline.stop()
print("stopped", x > 0)
