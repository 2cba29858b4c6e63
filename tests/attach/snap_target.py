"""A Python that holds still for test_attach_snapshot.py: the main thread
sleeps in outer() -> inner(), a second thread in worker_loop(). It prints
"ready" and the lines they sleep on (the ground truth), then sleeps until
killed; the test reads it a moment after "ready"."""
import sys
import threading
import time

LINES = {}


def inner():
    LINES["inner"] = sys._getframe().f_lineno + 3
    print("ready", " ".join("%s=%d" % kv for kv in sorted(LINES.items())), flush=True)
    # the main thread's innermost Python frame:
    time.sleep(3600)


def outer():
    LINES["outer"] = sys._getframe().f_lineno + 1
    inner()


def worker_loop(ev):
    LINES["worker_loop"] = sys._getframe().f_lineno + 2
    ev.set()
    time.sleep(3600)  # the worker's innermost Python frame


def main():
    ev = threading.Event()
    threading.Thread(target=worker_loop, args=(ev,), daemon=True, name="worker").start()
    ev.wait()
    outer()


if __name__ == "__main__":
    main()
