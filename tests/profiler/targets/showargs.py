"""Prints argv and the program's sys.path as JSON, works 0.3 s."""
import json
import sys
import time

end = time.perf_counter() + 0.3
x = 0
while time.perf_counter() < end: x += 1  # @work
print(json.dumps({"argv": sys.argv, "path": sys.path,
                  "hotline_loaded": "hotline" in sys.modules}))
