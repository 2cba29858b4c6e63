"""A Dask job for tests/dist/test_dist.py: a LocalCluster of two worker
processes maps burn() (defined here, so cloudpickle ships it by value) over
N tasks of S seconds each and prints one JSON line: the driver's pid, the
pids that ran tasks, the tasks' summed wall seconds and the job's wall time.
Environment: HOTLINE_TEST_PLUGIN=1 registers hotline.dask.Profile();
HOTLINE_TEST_NO_BOOT=1 starts the workers without Hotline's bootstrap, so
that the plugin has to start their agents; HOTLINE_TEST_TCP=1 has them
stream over the run's TCP gate (hotline run --listen-tcp);
HOTLINE_TEST_WORK=1 maps work() (a fixed amount) instead of burn();
HOTLINE_TEST_OUT=FILE writes the JSON line to FILE too; HOTLINE_TEST_ONE=1
runs N/2 work() tasks in this process, no cluster (the overhead
benchmark's one-process baseline)."""
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


def work(n):
    """A fixed amount of work (the overhead benchmark: burn() stops on the
    clock, so a slower worker would not take longer)."""
    t0, c0 = time.perf_counter(), time.thread_time()
    x = 0
    for i in range(n):
        x += i
    # this thread's CPU seconds, and the whole worker's so far (its sampler too)
    return os.getpid(), time.perf_counter() - t0, time.thread_time() - c0, time.process_time()


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    per = float(sys.argv[2]) if len(sys.argv) > 2 else 0.3
    if os.environ.get("HOTLINE_TEST_ONE"):
        # the overhead benchmark's baseline: one worker's share of the tasks
        # (N/2 of them) run in this one process, no cluster
        t0 = time.perf_counter()
        res = [work(int(per * 30e6)) for _ in range(n // 2)]
        print(json.dumps({"driver": os.getpid(), "workers": [os.getpid()],
                          "task_s": sum(r[1] for r in res), "job_s": time.perf_counter() - t0,
                          "task_cpu_s": sum(r[2] for r in res),
                          "worker_cpu_s": time.process_time()}), flush=True)
        return
    if os.environ.get("HOTLINE_TEST_NO_BOOT"):
        os.environ.pop("HOTLINE_BOOT", None)  # the workers' sitecustomize starts nothing
    from distributed import Client, LocalCluster
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        if os.environ.get("HOTLINE_TEST_PLUGIN"):
            import hotline.dask
            plugin = hotline.dask.Profile()
            if os.environ.get("HOTLINE_TEST_TCP"):
                # as on another host: the driver's socket is not there, so the
                # workers take the run's gate ($HOTLINE_TCP, shipped with the token)
                plugin.settings["socket"] = "/nonexistent/hotline/agent.sock"
            client.register_plugin(plugin)
        t0 = time.perf_counter()
        if os.environ.get("HOTLINE_TEST_WORK"):  # about 30 M iterations a second
            res = client.gather(client.map(work, [int(per * 30e6)] * n, pure=False))
        else:
            res = client.gather(client.map(burn, [per] * n, pure=False))
        wall = time.perf_counter() - t0
        out = {"driver": os.getpid(), "workers": sorted(set(r[0] for r in res)),
               "task_s": sum(r[1] for r in res), "job_s": wall}
        if len(res[0]) > 2:  # work(): CPU seconds of the tasks' threads, of the workers
            out["task_cpu_s"] = sum(r[2] for r in res)
            last = {}
            for r in res:
                last[r[0]] = max(last.get(r[0], 0.0), r[3])
            out["worker_cpu_s"] = sum(last.values())
        # before the cluster's close, which may time out under load
        print(json.dumps(out), flush=True)
        if os.environ.get("HOTLINE_TEST_OUT"):  # run from an editor: no stdout to read
            with open(os.environ["HOTLINE_TEST_OUT"], "w") as f:
                json.dump(out, f)


if __name__ == "__main__":
    main()
