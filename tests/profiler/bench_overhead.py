"""Not a test: measures the agent's overhead on a pure-Python workload
(wall time with vs without the agent, best of N alternating runs) and the
sampler's CPU cost per thread sample. Usage:
  HOTLINE_BUILD=<build> python bench_overhead.py [seconds] [runs]"""
import json
import os
import subprocess
import sys
import tempfile

BUILD = os.environ["HOTLINE_BUILD"]
SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 3

WORK = r'''
import json, sys, time
def work(n):
    x = 0
    for i in range(n):
        x = (x * 7 + i) %% 1000003
    return x
t = time.perf_counter(); c = time.thread_time()
work(%d)
wall = time.perf_counter() - t; cpu = time.thread_time() - c
st = None
if "_hotline_agent" in sys.modules:  # hotline run and hotline.start() both load it
    import _hotline_agent
    st = _hotline_agent.stats()
print(json.dumps({"wall": wall, "cpu": cpu, "stats": st}))
'''


def calibrate():
    code = WORK % 1000000
    out = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, check=True)
    return int(1000000 * SECONDS / json.loads(out.stdout)["wall"])


def one(n, agent):
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as d:
        if agent:
            env["PYTHONPATH"] = os.path.join(BUILD, "python")
            env["HOTLINE_OUT"] = os.path.join(d, "o.jsonl")
            code = "import hotline; hotline.start()\n" + WORK % n
        else:
            code = WORK % n
        out = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, env=env,
                             check=True)
    return json.loads(out.stdout)


n = calibrate()
base, prof = [], []
for _ in range(RUNS):
    base.append(one(n, False))
    prof.append(one(n, True))
b = min(r["wall"] for r in base)
p = min(r["wall"] for r in prof)
st = [r["stats"] for r in prof]
cost = sum(s["cost_s"] for s in st) / max(1, sum(s["thread_samples"] for s in st))
print(json.dumps({
    "python": "%d.%d.%d" % sys.version_info[:3],
    "plain_s": round(b, 3), "profiled_s": round(p, 3), "ratio": round(p / b, 4),
    "sampler_cpu_us_per_sample": round(cost * 1e6, 1),
    "probe_py_nat_idle": [sum(s["probe_py"] for s in st), sum(s["probe_nat"] for s in st),
                          sum(s["probe_idle"] for s in st)],
}))
