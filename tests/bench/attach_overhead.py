"""Target slowdown under `hotline attach` (docs/attach.md, "Overhead"):
whole-process wall time of a CPU-bound pure-Python workload, attached at
the default rate vs unattached, interleaved (A B A B ...) so that load
drifts hit both; prints the median ratio and attach's own CPU per sample.
A benchmark, not a test: it asserts nothing.

usage: python attach_overhead.py BUILD_DIR [rounds]"""
import os
import statistics
import subprocess
import sys
import time

WORK = ("import os,sys,time\nsys.stderr.write('%d\\n' % os.getpid()); sys.stderr.flush()\n"
        "t=time.perf_counter()\ns=0\nfor i in range(12_000_000): s += i % 7\n"
        "print(time.perf_counter()-t)\n")


def run(hotline, attached):
    p = subprocess.Popen([sys.executable, "-c", WORK], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    pid = int(p.stderr.readline())
    h = None
    if attached:
        h = subprocess.Popen([hotline, "attach", str(pid)], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
    out, _ = p.communicate()
    samples, cpu = 0, 0.0
    if h:
        err = h.stderr.read().decode()
        _, _, ru = os.wait4(h.pid, 0)
        h.returncode = 0
        cpu = ru.ru_utime + ru.ru_stime
        for line in err.splitlines():
            if "samples" in line:
                samples = int(line.split("samples")[0].split(",")[-1])
    return float(out), samples, cpu


def main():
    hotline = os.path.join(sys.argv[1], "hotline")
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    plain, att, samples, cpu = [], [], 0, 0.0
    for k in range(2 * rounds):  # A B B A A B ...: both orders equally often
        for attached in ((False, True) if k % 2 == 0 else (True, False)):
            t, n, c = run(hotline, attached)
            (att if attached else plain).append(t)
            samples += n
            cpu += c
    per = cpu / samples * 1e6 if samples else float("nan")
    print("unattached median %.3f s, attached median %.3f s, ratio %.3fx"
          % (statistics.median(plain), statistics.median(att),
             statistics.median(att) / statistics.median(plain)))
    print("attach's own CPU per sample: %.0f us (%d samples)" % (per, samples))


if __name__ == "__main__":
    main()
