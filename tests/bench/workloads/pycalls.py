"""Pure-Python function calls and arithmetic (the interpreter's hot path)."""
import sys


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def main(scale):
    total = 0
    for _ in range(max(1, int(20 * scale))):
        total += fib(20)
    return total


if __name__ == "__main__":
    print(main(float(sys.argv[1])))
