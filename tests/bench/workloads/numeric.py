"""numpy: matrix products and elementwise work (native code, may use threads)."""
import sys

import numpy as np


def main(scale):
    rng = np.random.default_rng(1)
    a = rng.random((300, 300))
    acc = 0.0
    for _ in range(max(1, int(40 * scale))):
        b = a @ a
        acc += float(np.sqrt(b).sum())
    return acc


if __name__ == "__main__":
    print(round(main(float(sys.argv[1])), 3))
