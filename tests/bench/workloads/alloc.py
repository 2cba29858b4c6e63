"""Allocation-heavy (memory benchmark): builds and drops lists of small
objects and medium buffers, keeps a growing part (a slow leak), so that both
Python and native-through-Python allocators are busy and live memory moves."""
import sys


def main(scale):
    keep = []
    total = 0
    for i in range(int(400 * scale)):
        objs = [(j, str(j)) for j in range(2000)]          # small objects, freed
        bufs = [bytearray(4096) for _ in range(64)]         # 256 KiB in 4 KiB buffers, freed
        if i % 10 == 0:
            keep.append(bytearray(64 * 1024))               # kept
        total += len(objs) + len(bufs)
    return total + len(keep)


if __name__ == "__main__":
    print(main(float(sys.argv[1])))
