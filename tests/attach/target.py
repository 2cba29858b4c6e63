"""Ground truth for tests/attach: cycles of a busy Python line, a sleeping
line and a native line (hotline_spin, GIL held, when importable), each
~0.25 s, for about the seconds given in argv[1]. Its pid goes to stderr
(first line); stdout is deterministic, so an attached run's stdout must be
byte-identical to an unattached one. Exits with status 7."""
import os
import sys
import time

sys.stderr.write("%d\n" % os.getpid())
sys.stderr.flush()
try:
    import hotline_spin
except ImportError:
    hotline_spin = None


def busy(s):
    end = time.monotonic() + s
    n = 0
    while time.monotonic() < end: n += 1  # BUSY (one line: the loop test and body)
    return n


def nap(s):
    time.sleep(s)  # SLEEP


def native(s):
    hotline_spin.spin(s)  # NATIVE


def main():
    total = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    end = time.monotonic() + total
    cycles = 0
    while time.monotonic() < end:
        busy(0.25)
        nap(0.25)
        if hotline_spin:
            native(0.25)
        cycles += 1
    print("done")
    sys.stdout.flush()
    sys.exit(7)


main()
