/* nvml.c: GPU utilisation and GPU memory of this process, per line, through
 * NVML opened with dlopen at run time (docs/memory.md, "GPU").
 *
 * Why dlopen: a machine without an NVIDIA driver must run Hotline unchanged
 * and pay nothing; the agent is not linked against NVML. The library is
 * "libnvidia-ml.so.1" (HOTLINE_NVML_LIB overrides it: tests load a stand-in
 * that exports the same functions with scripted values, tests/gpu/).
 *
 * Every delta period the sampler thread (gpu_emit) asks NVML, for every
 * device, which compute processes run there; on devices where this process
 * appears, it reads the device utilisation (%) and this process's GPU memory.
 * The period's busy time (util x seconds) is split over the lines the
 * process's threads are on at that moment (agent_thread_t pos) and
 * sent as `gpu_busy_s` / `gpu_mb` in an extra delta. A device utilisation is
 * the whole device's: on a GPU shared with other processes it over-counts.
 *
 * State: g_gpu, sampler-thread only (opened once per process, lazily, in
 * the sampler thread so that a slow nvmlInit never blocks the program).
 */
#include "nvml.h"

#include "agent.h"
#include "agent_emit.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GPU_MAX_DEVICES 64
#define GPU_MAX_PROCS 256

typedef int nvml_ret_t; /* nvmlReturn_t: 0 = NVML_SUCCESS */
typedef void *nvml_dev_t;
typedef struct {
    unsigned int gpu, memory;
} nvml_util_t;
typedef struct { /* nvmlProcessInfo_t (v2 layout, _v2/_v3 functions) */
    unsigned int pid;
    unsigned long long used;
    unsigned int gi, ci;
} nvml_proc2_t;
typedef struct { /* nvmlProcessInfo_v1_t (unsuffixed function) */
    unsigned int pid;
    unsigned long long used;
} nvml_proc1_t;

static struct {
    int tried, ok;
    void *lib;
    nvml_ret_t (*init)(void);
    nvml_ret_t (*count)(unsigned int *);
    nvml_ret_t (*handle)(unsigned int, nvml_dev_t *);
    nvml_ret_t (*util)(nvml_dev_t, nvml_util_t *);
    nvml_ret_t (*procs2)(nvml_dev_t, unsigned int *, nvml_proc2_t *);
    nvml_ret_t (*procs1)(nvml_dev_t, unsigned int *, nvml_proc1_t *);
    double last; /* ts of the previous poll */
} g_gpu;

static void *sym(const char *a, const char *b)
{
    void *p = dlsym(g_gpu.lib, a);
    return p || !b ? p : dlsym(g_gpu.lib, b);
}

static int gpu_open(void)
{
    if (g_gpu.tried) return g_gpu.ok;
    g_gpu.tried = 1;
    const char *path = getenv("HOTLINE_NVML_LIB");
    g_gpu.lib = dlopen(path && *path ? path : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!g_gpu.lib) return 0;
    g_gpu.init = (nvml_ret_t(*)(void))sym("nvmlInit_v2", "nvmlInit");
    g_gpu.count = (nvml_ret_t(*)(unsigned int *))sym("nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
    g_gpu.handle = (nvml_ret_t(*)(unsigned int, nvml_dev_t *))sym("nvmlDeviceGetHandleByIndex_v2",
                                                                  "nvmlDeviceGetHandleByIndex");
    g_gpu.util =
        (nvml_ret_t(*)(nvml_dev_t, nvml_util_t *))sym("nvmlDeviceGetUtilizationRates", NULL);
    g_gpu.procs2 = (nvml_ret_t(*)(nvml_dev_t, unsigned int *, nvml_proc2_t *))sym(
        "nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2");
    if (!g_gpu.procs2)
        g_gpu.procs1 = (nvml_ret_t(*)(nvml_dev_t, unsigned int *, nvml_proc1_t *))sym(
            "nvmlDeviceGetComputeRunningProcesses", NULL);
    if (!g_gpu.init || !g_gpu.count || !g_gpu.handle || !g_gpu.util ||
        (!g_gpu.procs2 && !g_gpu.procs1) || g_gpu.init() != 0) {
        dlclose(g_gpu.lib);
        g_gpu.lib = NULL;
        return 0;
    }
    g_gpu.ok = 1;
    return 1;
}

/* This process's GPU memory (bytes) on dev, or -1 when it is not there. */
static long long proc_mem(nvml_dev_t dev, unsigned int pid)
{
    static nvml_proc2_t p2[GPU_MAX_PROCS]; /* sampler thread only */
    static nvml_proc1_t p1[GPU_MAX_PROCS];
    unsigned int n = GPU_MAX_PROCS;
    if (g_gpu.procs2) {
        if (g_gpu.procs2(dev, &n, p2) != 0) return -1;
        for (unsigned int i = 0; i < n && i < GPU_MAX_PROCS; i++)
            if (p2[i].pid == pid) return (long long)p2[i].used;
    } else {
        if (g_gpu.procs1(dev, &n, p1) != 0) return -1;
        for (unsigned int i = 0; i < n && i < GPU_MAX_PROCS; i++)
            if (p1[i].pid == pid) return (long long)p1[i].used;
    }
    return -1;
}

int gpu_available(void)
{
    return g_gpu.ok;
}

void gpu_emit(agent_t *a, double ts)
{
    if (!a->gpu || !gpu_open()) return;
    double dt = g_gpu.last > 0 ? ts - g_gpu.last : 0;
    g_gpu.last = ts;
    unsigned int ndev = 0;
    if (g_gpu.count(&ndev) != 0) return;
    unsigned int pid = (unsigned int)getpid();
    double util = 0, mem = 0;
    int seen = 0;
    for (unsigned int d = 0; d < ndev && d < GPU_MAX_DEVICES; d++) {
        nvml_dev_t dev;
        if (g_gpu.handle(d, &dev) != 0) continue;
        long long m = proc_mem(dev, pid);
        if (m < 0) continue;
        seen = 1;
        mem += (double)m;
        nvml_util_t u;
        if (g_gpu.util(dev, &u) == 0 && u.gpu > util) util = u.gpu > 100 ? 100 : u.gpu;
    }
    if (!seen || dt <= 0) return;
    int nl = 0;
    for (int i = 0; i < a->nth; i++)
        if (a->th[i]->pos.file > 0) nl++;
    if (!nl) return;
    double busy = util / 100.0 * dt / nl, mb = mem / (1024.0 * 1024.0);
    agent_delta_t d;
    agent_delta_begin(&d, &a->out, ts, 0);
    agent_delta_part(&d, AGENT_DELTA_LINES);
    for (int i = 0; i < a->nth; i++) {
        agent_thread_t *t = a->th[i];
        if (t->pos.file <= 0) continue;
        struct agent_stat_vals st = {0};
        agent_stat_put(&st, AGENT_STAT_GPUBUSY, busy);
        agent_stat_put(&st, AGENT_STAT_GPUMB, mb);
        agent_delta_line(&d, t->pos.file, t->pos.line, &st);
    }
    agent_delta_gpu(&d, util, mb);
    agent_delta_end(&d);
}
