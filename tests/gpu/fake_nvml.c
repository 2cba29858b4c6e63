/* fake_nvml.c: a stand-in for libnvidia-ml.so.1 with scripted values, so
 * that profiler/nvml.c is tested on machines without a GPU. It exports the
 * NVML functions nvml.c looks up, with NVML's signatures and struct layouts
 * (nvmlUtilization_t, nvmlProcessInfo_t v2), one device, and
 * fake_nvml_set(util_percent, mb): the test program itself says what the
 * "GPU" does from now on (mb < 0: this process is not on the GPU). The
 * program loads this same file with ctypes; dlopen returns the instance the
 * agent opened. Global state: the scripted values (test double). */
#include <stdatomic.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct {
    unsigned int gpu, memory;
} nvmlUtilization_t;
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;

static atomic_int g_util;
static atomic_llong g_mb = -1;
static atomic_int g_inited;
static int g_dev; /* the device handle points here */

EXPORT void fake_nvml_set(int util, long long mb)
{
    atomic_store(&g_util, util);
    atomic_store(&g_mb, mb);
}

EXPORT int fake_nvml_inited(void)
{
    return atomic_load(&g_inited);
}

EXPORT int nvmlInit_v2(void)
{
    atomic_store(&g_inited, 1);
    return 0;
}

EXPORT int nvmlShutdown(void)
{
    return 0;
}

EXPORT int nvmlDeviceGetCount_v2(unsigned int *n)
{
    *n = 1;
    return 0;
}

EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **dev)
{
    if (i != 0) return 2; /* NVML_ERROR_INVALID_ARGUMENT */
    *dev = &g_dev;
    return 0;
}

EXPORT int nvmlDeviceGetUtilizationRates(void *dev, nvmlUtilization_t *u)
{
    if (dev != &g_dev) return 2;
    u->gpu = (unsigned int)atomic_load(&g_util);
    u->memory = 0;
    return 0;
}

EXPORT int nvmlDeviceGetComputeRunningProcesses_v3(void *dev, unsigned int *n,
                                                   nvmlProcessInfo_t *out)
{
    if (dev != &g_dev) return 2;
    long long mb = atomic_load(&g_mb);
    if (mb < 0) {
        *n = 0;
        return 0;
    }
    if (*n < 2) {
        *n = 2;
        return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */
    }
    out[0] = (nvmlProcessInfo_t){.pid = 1, .usedGpuMemory = 123ull << 20}; /* someone else */
    out[1] = (nvmlProcessInfo_t){.pid = (unsigned int)getpid(),
                                 .usedGpuMemory = (unsigned long long)mb << 20};
    *n = 2;
    return 0;
}
