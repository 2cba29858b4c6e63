"""Benchmark (not a test): what `%hotline live` costs a CPU-bound cell.

Runs a real ipykernel (jupyter_client, /usr/bin/python3 with
python3-ipykernel) with the built agent on PYTHONPATH; the same fixed
amount of pure-Python work is timed inside the cell, alternately with the
live view off and on; prints each time and the ratio of the medians.

usage: python3 tests/bench/bench_notebook_live.py [--agent build/python]
           [--reps 7] [--work 40000000]
Run it with the Python whose kernel you measure (it starts `python3`'s
kernel spec, which ipykernel resolves to this interpreter)."""
import argparse
import os
import re
import statistics
import tempfile

CELL = """import time
def work(n):
    s = 0
    for i in range(n):
        s ^= i * i
    return s
t0 = time.perf_counter()
work(%d)
print("elapsed %%.6f" %% (time.perf_counter() - t0))"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--agent", default=os.path.join(os.path.dirname(__file__), "..", "..",
                                                    "build", "python"))
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--work", type=int, default=40000000)
    args = ap.parse_args()
    from jupyter_client.manager import start_new_kernel
    env = dict(os.environ, PYTHONPATH=os.path.abspath(args.agent),
               PYDEVD_DISABLE_FILE_VALIDATION="1")
    env.pop("HOTLINE_SOCKET", None)
    times = {"off": [], "live": []}
    updates = []
    with tempfile.TemporaryDirectory() as cwd:
        km, kc = start_new_kernel(kernel_name="python3", cwd=cwd, env=env)
        try:
            kc.execute_interactive("%load_ext hotline", timeout=60)
            cell = CELL % args.work
            kc.execute_interactive(cell, timeout=600)  # warm up
            for _ in range(args.reps):
                for mode in ("off", "live"):
                    kc.execute_interactive("%%hotline %s" % ("live" if mode == "live"
                                                             else "live off"), timeout=60)
                    msgs = []
                    kc.execute_interactive(cell, timeout=600, output_hook=msgs.append)
                    text = "".join(m["content"].get("text", "") for m in msgs
                                   if m["msg_type"] == "stream")
                    times[mode].append(float(re.search(r"elapsed ([\d.]+)", text).group(1)))
                    if mode == "live":
                        updates.append(sum(m["msg_type"] in ("display_data", "update_display_data")
                                           for m in msgs))
            msgs = []
            kc.execute_interactive("import _hotline_agent._ipython as h; print('cost %r %d' % "
                                   "(h._ext.live_cost_s, h._ext.live_ticks))",
                                   timeout=60, output_hook=msgs.append)
            text = "".join(m["content"].get("text", "") for m in msgs
                           if m["msg_type"] == "stream")
            cost_s, ticks = re.search(r"cost (\S+) (\d+)", text).groups()
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
    off, live = statistics.median(times["off"]), statistics.median(times["live"])
    print("cell times off:  %s" % " ".join("%.3f" % t for t in times["off"]))
    print("cell times live: %s" % " ".join("%.3f" % t for t in times["live"]))
    print("display messages per live cell: %s" % updates)
    print("live thread: %.4f CPU s in %s ticks over %.1f s of live cells (%.3f%%)" % (
        float(cost_s), ticks, sum(times["live"]), 100 * float(cost_s) / sum(times["live"])))
    print("median off %.3f s, live %.3f s: ratio live/off %.3f" % (off, live, live / off))


if __name__ == "__main__":
    main()
