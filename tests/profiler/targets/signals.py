"""The program's own SIGALRM/setitimer keeps working under the agent, and
blocking reads never see EINTR from the profiler. Prints a JSON summary."""
import ctypes
import ctypes.util
import json
import os
import signal
import threading
import time

alarms = [0]


def on_alarm(signum, frame):
    alarms[0] += 1


signal.signal(signal.SIGALRM, on_alarm)
signal.setitimer(signal.ITIMER_REAL, 0.005, 0.005)
end = time.perf_counter() + 0.5
x = 0
while time.perf_counter() < end: x += 1  # @busy
signal.setitimer(signal.ITIMER_REAL, 0, 0)

libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
r, w = os.pipe()
N = 300


def feeder():
    for _ in range(N):
        time.sleep(0.001)
        os.write(w, b"x")


th = threading.Thread(target=feeder)
th.start()
buf = ctypes.create_string_buffer(1)
eintr = errors = got = 0
while got < N:
    n = libc.read(r, buf, 1)  # @read
    if n == 1:
        got += 1
    elif ctypes.get_errno() == 4:
        eintr += 1
    else:
        errors += 1
        break
th.join()
print(json.dumps({"alarms": alarms[0], "eintr": eintr, "errors": errors, "reads": got}))
