"""A stand-in for a library: lives outside the program's folder, so hotline
counts its frames as library frames (the executing marker names spin)."""
import time


def spin(seconds):
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        pass
