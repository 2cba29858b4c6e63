"""A stand-in for a library: lives outside the program's folder, so hotline
counts its frames as library frames (the executing marker names spin)."""
import time


def spin(seconds, tick=None, period=0.1):
    """Busy-wait for seconds, calling tick() (if given) every period seconds."""
    start = next_tick = time.monotonic()
    while time.monotonic() - start < seconds:
        if tick is not None and time.monotonic() >= next_tick:
            next_tick += period
            tick()
