"""Editor end-to-end test program: a hot pure-Python loop, then one long
line inside a library call (the live marker should sit on it)."""
import os
import sys

sys.path.insert(0, os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib")))
import slowlib  # noqa: E402


def hot(n):
    total = 0
    for i in range(n):
        total += (i * i) % 7
    return total


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2.5
    hot(4_000_000)
    slowlib.spin(seconds)
    print("done")


main()
