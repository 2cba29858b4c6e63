"""numpy-heavy allocation (memory benchmark): temporaries of a few MB
(native allocations), copies between arrays and Python lists."""
import sys

import numpy as np


def main(scale):
    acc = 0.0
    base = np.arange(200000, dtype=np.float64)
    for i in range(int(300 * scale)):
        a = base * 1.5 + i                 # temporaries (1.6 MB each)
        b = np.array(a)                    # copy
        c = np.concatenate([a, b])         # 3.2 MB
        lst = c[:20000].tolist()           # array -> Python list
        d = np.asarray(lst)                # list -> array
        acc += float(d[-1]) + float(c.sum())
    return acc


if __name__ == "__main__":
    print(main(float(sys.argv[1])))
