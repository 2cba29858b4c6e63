"""Editor end-to-end test program: a hot pure-Python loop, a sleep (its
hint says "waiting"), then one long line inside a library call (the live
marker should sit on it) that calls back remember() ten times a second: a
1 MB-per-call leak (the leak warning should sit on its append line)."""
import os
import sys
import time

sys.path.insert(0, os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib")))
import slowlib  # noqa: E402

kept = []


def hot(n):
    total = 0
    for i in range(n):
        total += (i * i) % 7
    return total


def remember():
    kept.append(bytearray(1 << 20))  # never freed: grows 10 MB/s while spin runs


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2.5
    hot(4_000_000)
    time.sleep(0.4)
    slowlib.spin(seconds, remember)
    print("done")


main()
