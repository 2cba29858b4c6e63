/* Profile text for the editor (summary.h). */
#include "store/summary.h"

#include <stdio.h>
#include <stdlib.h>

double summary_share(const struct profile *p, const struct agent_stats *st)
{
    double total = agent_stats_time(&p->total);
    return total > 0 ? 100.0 * agent_stats_time(st) / total : 0;
}

void summary_breakdown(const struct profile *p, const struct agent_stats *st, char *buf, size_t n)
{
    double t = agent_stats_time(st);
    double cpu = st->v[AGENT_STAT_CPU], busy = st->v[AGENT_STAT_PY] + st->v[AGENT_STAT_NAT];
    int k = snprintf(buf, n,
                     "%.1f%% of the run (%.3f s, %.0f samples)\n"
                     "- python %.3f s\n- native %.3f s\n- system/waiting %.3f s\n- cpu %.3f s%s",
                     summary_share(p, st), t, st->v[AGENT_STAT_N], st->v[AGENT_STAT_PY],
                     st->v[AGENT_STAT_NAT], st->v[AGENT_STAT_SYS], cpu,
                     busy > 0 && cpu > busy * 1.2 ? " (multi-core native code)" : "");
    static const struct {
        int stat;
        const char *fmt;
    } mem[] = {
        {AGENT_STAT_ALLOC, "allocated %.1f MB"}, {AGENT_STAT_FREED, "freed %.1f MB"},
        {AGENT_STAT_KEPT, "kept %.1f MB"},       {AGENT_STAT_PEAK, "peak %.1f MB"},
        {AGENT_STAT_COPY, "copied %.1f MB"},     {AGENT_STAT_COPYRATE, "copies %.1f MB/s"},
        {AGENT_STAT_GPUPCT, "GPU %.0f%%"},       {AGENT_STAT_GPUMB, "GPU memory %.1f MB"},
    };
    for (size_t i = 0; i < sizeof mem / sizeof *mem && k > 0 && (size_t)k < n; i++) {
        double v = st->v[mem[i].stat];
        if (v <= 0) continue;
        k += snprintf(buf + k, n - (size_t)k, "\n- ");
        if ((size_t)k < n) k += snprintf(buf + k, n - (size_t)k, mem[i].fmt, v);
    }
}

char *summary_text(const struct profile *p, const char *path, int line)
{
    if (!p) return NULL;
    size_t cap = 16384, n = 0;
    char *buf = malloc(cap);
    if (!buf) return NULL;
#define OUT(...)                                                                                   \
    do {                                                                                           \
        if (n < cap) n += (size_t)snprintf(buf + n, cap - n, __VA_ARGS__);                         \
    } while (0)
    const struct prof_meta *m = &p->meta;
    OUT("Hotline profile: %s\n%.2f s elapsed, %lld samples, %s\n", m->program ? m->program : "?",
        m->elapsed_s, m->samples, m->reason ? m->reason : "running");
    OUT("python %.2f s, native %.2f s, system %.2f s\n", p->total.v[AGENT_STAT_PY],
        p->total.v[AGENT_STAT_NAT], p->total.v[AGENT_STAT_SYS]);
    if (path && line > 0) {
        const struct agent_stats *st = profile_line(p, path, line);
        if (st) {
            char tmp[512];
            summary_breakdown(p, st, tmp, sizeof tmp);
            OUT("\n%s:%d\n%s\n", path, line, tmp);
        }
    }
    struct prof_func_ref fr[10];
    size_t nf = profile_top_funcs(p, fr, 10);
    OUT("\nTop functions:\n");
    for (size_t i = 0; i < nf; i++)
        OUT("  %5.1f%%  %s (%s:%d)\n", summary_share(p, &fr[i].fn->st), fr[i].fn->name,
            fr[i].file->path, fr[i].fn->first_line);
    struct prof_line_ref lr[10];
    size_t nl = profile_top_lines(p, lr, 10);
    OUT("\nTop lines:\n");
    for (size_t i = 0; i < nl; i++)
        OUT("  %5.1f%%  %s:%d\n", summary_share(p, lr[i].st), lr[i].file->path, lr[i].line);
#undef OUT
    if (n >= cap) n = cap - 1;
    buf[n] = 0;
    return buf;
}
