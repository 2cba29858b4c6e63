"""I/O: writing, syncing and reading back a file in small blocks, plus pipe round trips."""
import os
import sys
import tempfile


def main(scale):
    n = int(4000 * scale)
    total = 0
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "f")
        with open(p, "wb") as f:
            for i in range(n):
                f.write(b"x" * 4096)
                if i % 500 == 0:
                    f.flush()
                    os.fsync(f.fileno())
        with open(p, "rb") as f:
            while True:
                b = f.read(4096)
                if not b:
                    break
                total += len(b)
    r, w = os.pipe()
    for i in range(n):
        os.write(w, b"y" * 64)
        total += len(os.read(r, 64))
    os.close(r)
    os.close(w)
    return total


if __name__ == "__main__":
    print(main(float(sys.argv[1])))
