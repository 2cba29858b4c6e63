/* charge.c: the charging rule (charge.h). */
#include "charge.h"

#include "probe.h"

void charge_interval(const charge_in_t *in, charge_t *out)
{
    double run = in->running ? in->dw : 0;
    out->sys = in->dw - run;
    out->py = in->cat == CAT_PY ? run : 0;
    out->nat = in->cat == CAT_NAT ? run : 0;
    /* a running thread that is neither (no category yet) waits */
    if (in->running && in->cat != CAT_PY && in->cat != CAT_NAT) out->sys = in->dw;
    /* the on-CPU share of the running part: CPU over CPU + run-queue wait */
    double share = in->busy > 1e-6 && in->dc < in->busy ? in->dc / in->busy : 1;
    out->cpu = in->running ? run * share : 0;
    out->state = in->running ? in->cat : CAT_SYS;
}

int charge_frame(const int *profiled, size_t stride, int n)
{
    const char *p = (const char *)profiled;
    for (int i = 0; i < n; i++, p += stride)
        if (*(const int *)(const void *)p) return i;
    return -1;
}

double charge_pos_at(charge_pos_t *pos, long long file, int line, double now)
{
    if (file != pos->file || line != pos->line) {
        pos->file = file;
        pos->line = line;
        pos->since = now;
    }
    return pos->since > 0 ? now - pos->since : 0;
}

int charge_counts(int user, int all_threads)
{
    return user || all_threads;
}
