"""Four threads of pure-Python work contending for the GIL."""
import sys
import threading


def work(n, out, i):
    s = 0
    for k in range(n):
        s += k * k % 7
    out[i] = s


def main(scale):
    out = [0] * 4
    ts = [threading.Thread(target=work, args=(int(500000 * scale), out, i)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return sum(out)


if __name__ == "__main__":
    print(main(float(sys.argv[1])))
