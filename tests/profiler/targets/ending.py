"""Works 0.6 s on a marked line, then ends as argv[1] says: exit7, _exit,
segv, kill."""
import os
import sys
import time

end = time.perf_counter() + 0.6
x = 0
while time.perf_counter() < end: x += 1  # @work
how = sys.argv[1]
if how == "exit7":
    sys.exit(7)
if how == "_exit":
    os._exit(3)
if how == "segv":
    import ctypes
    ctypes.string_at(0)
if how == "kill":
    import signal
    os.kill(os.getpid(), signal.SIGKILL)
