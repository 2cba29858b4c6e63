"""A Ray job for tests/dist/test_dist.py (case ray_hook): a local Ray
instance with 2 CPUs runs burn() (defined here, so Ray's cloudpickle ships
it by value) as 8 tasks of 0.3 s and prints one JSON line like
dask_job.py's. HOTLINE_TEST_PLUGIN=1 passes hotline.ray.setup_hook() as
the runtime_env's worker_process_setup_hook; HOTLINE_TEST_OUT=FILE writes
the JSON line to FILE too."""
import json
import os
import sys
import time


def burn(seconds):
    t0 = time.perf_counter()
    x = 0
    while time.perf_counter() - t0 < seconds:
        x += 1  # hot: ½ naïve ✓ (non-ASCII: the editor's columns are UTF-16)
    return os.getpid(), time.perf_counter() - t0


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    per = float(sys.argv[2]) if len(sys.argv) > 2 else 0.3
    import ray
    rt = {}
    if os.environ.get("HOTLINE_TEST_PLUGIN"):
        import hotline.ray
        rt["worker_process_setup_hook"] = hotline.ray.setup_hook()
    ray.init(num_cpus=2, include_dashboard=False, runtime_env=rt, log_to_driver=False)
    f = ray.remote(burn)
    t0 = time.perf_counter()
    res = ray.get([f.remote(per) for _ in range(n)])
    wall = time.perf_counter() - t0
    ray.shutdown()
    out = {"driver": os.getpid(), "workers": sorted(set(p for p, _ in res)),
           "task_s": sum(s for _, s in res), "job_s": wall}
    print(json.dumps(out))
    if os.environ.get("HOTLINE_TEST_OUT"):  # run from an editor: no stdout to read
        with open(os.environ["HOTLINE_TEST_OUT"], "w") as f:
            json.dump(out, f)


if __name__ == "__main__":
    main()
