/* nvml.h: GPU through NVML opened with dlopen (nvml.c); sampler thread only. */
#ifndef HOTLINE_NVML_H
#define HOTLINE_NVML_H

typedef struct agent agent_t;

void gpu_emit(agent_t *a, double ts);
int gpu_available(void);

#endif
