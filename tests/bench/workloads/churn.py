"""Allocation churn: many short-lived lists, dicts and strings."""
import sys


def main(scale):
    kept = 0
    for i in range(int(200000 * scale)):
        d = {"k%d" % (i % 97): [i, i + 1, i + 2], "s": str(i) * 3}
        kept += len(d["s"]) + len(d)
    return kept


if __name__ == "__main__":
    print(main(float(sys.argv[1])))
