#!/usr/bin/env python3
"""GPU fields per line (profiler/nvml.c) against the NVML stand-in.

  scripted: the program tells the stand-in "80% busy, 1000 MB" during one
            line and "0% busy" during the next; expect gpu_percent ~80 / ~0
            and gpu_mb 1000 (not the other process's 123 MB).
  absent:   HOTLINE_NVML_LIB names a missing library: the run is unchanged
            and no gpu field appears.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

PROG = r'''
import ctypes, os, time
F = ctypes.CDLL(os.environ["FAKE_NVML"])
def main():
    F.fake_nvml_set(80, ctypes.c_longlong(1000))
    time.sleep(1.5)                                  # LGPU
    F.fake_nvml_set(0, ctypes.c_longlong(1000))
    time.sleep(1.5)                                  # LIDLE
main()
'''


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hotline", required=True)
    ap.add_argument("--python", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--case", required=True, choices=["scripted", "absent"])
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="hotline-gpu-")
    prog = os.path.join(work, "prog.py")
    with open(prog, "w") as f:
        f.write(PROG)
    lines = {l.split("# ")[-1].strip(): i for i, l in enumerate(PROG.splitlines(), 1) if "# L" in l}
    out = os.path.join(work, "out.json")
    nvml = a.lib if a.case == "scripted" else os.path.join(work, "no-such-libnvidia-ml.so.1")
    env = dict(os.environ, FAKE_NVML=a.lib, HOTLINE_NVML_LIB=nvml)
    p = subprocess.run([a.hotline, "run", "--python", a.python, "--json", out, prog], cwd=work,
                       env=env, capture_output=True, text=True, timeout=50)
    print(p.stdout[-2000:], p.stderr[-2000:])
    if p.returncode != 0:
        fail("exit %d" % p.returncode)
    with open(out) as f:
        prof = json.load(f)
    fo = prof["files"].get(os.path.realpath(prog)) or prof["files"][prog]
    g = {k: fo["lines"].get(str(v), {}) for k, v in lines.items()}
    for k, v in g.items():
        print(k, {x: y for x, y in v.items() if x.startswith("gpu") or x.endswith("_s")})
    if a.case == "absent":
        for lo in fo["lines"].values():
            if any(k.startswith("gpu") for k in lo):
                fail("gpu fields without NVML: %s" % lo)
        if g["LGPU"].get("system_s", 0) < 1.0:
            fail("the sleep line was not profiled")
    else:
        pct, mb = g["LGPU"].get("gpu_percent", 0), g["LGPU"].get("gpu_mb", 0)
        if not 65 <= pct <= 95:
            fail("LGPU gpu_percent %.1f, expected ~80" % pct)
        if abs(mb - 1000) > 1:
            fail("LGPU gpu_mb %.1f, expected 1000" % mb)
        if g["LIDLE"].get("gpu_percent", 0) > 10:
            fail("LIDLE gpu_percent %.1f, expected ~0" % g["LIDLE"].get("gpu_percent", 0))
    print("PASS", a.case)


if __name__ == "__main__":
    main()
