/* mem_rows.c: the sampler thread's side of memory profiling
 * (docs/memory.md): every delta, mem_emit swaps the producers' event
 * queues, resolves each event's frames to the innermost profiled line (a
 * cache, and copies of code objects that died meanwhile: memhooks.c's code
 * watcher), charges the line's row (alloc, freed, kept, peak, kept-memory
 * points) and appends the rows that changed as an extra `delta` message.
 * Sampler thread only, except the queue swap (under g_mem.mu). */
#include "mem_state.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "agent_emit.h"
#include "memhooks.h"
#include "memread.h"
#include "walk.h"

static int row_get(uint32_t file, uint32_t line)
{
    unsigned h = (unsigned)(mix(((uint64_t)file << 32) | line) & (MEM_ROWS * 2 - 1));
    for (;;) {
        int r = g_mem.row_slots[h];
        if (!r) break;
        if (g_mem.rows[r - 1].file == file && g_mem.rows[r - 1].line == line) return r - 1;
        h = (h + 1) & (MEM_ROWS * 2 - 1);
    }
    if (g_mem.nrows >= MEM_ROWS) return -1;
    mem_row_t *row = &g_mem.rows[g_mem.nrows];
    memset(row, 0, sizeof *row);
    row->file = file;
    row->line = line;
    g_mem.row_slots[h] = ++g_mem.nrows;
    return g_mem.nrows - 1;
}

static unsigned sid_slot(uint64_t sid)
{
    return (unsigned)(mix(sid) & (MEM_SIDS - 1));
}

static void sid_put(uint64_t sid, int row, double w)
{
    unsigned i = sid_slot(sid);
    while (g_mem.sid_key[i])
        i = (i + 1) & (MEM_SIDS - 1);
    g_mem.sid_key[i] = sid;
    g_mem.sid_row[i] = row;
    g_mem.sid_w[i] = (float)w;
}

/* row of a live sample id (removed) and its weight in *w, -1 unattributed,
 * -2 unknown */
static int sid_take(uint64_t sid, double *w)
{
    unsigned i = sid_slot(sid);
    while (g_mem.sid_key[i] && g_mem.sid_key[i] != sid)
        i = (i + 1) & (MEM_SIDS - 1);
    if (!g_mem.sid_key[i]) return -2;
    int row = g_mem.sid_row[i];
    *w = g_mem.sid_w[i];
    unsigned j = i;
    for (;;) {
        g_mem.sid_key[i] = 0;
        for (;;) {
            j = (j + 1) & (MEM_SIDS - 1);
            if (!g_mem.sid_key[j]) return row;
            unsigned k = sid_slot(g_mem.sid_key[j]);
            if (i <= j ? (i < k && k <= j) : (i < k || k <= j)) continue;
            break;
        }
        g_mem.sid_key[i] = g_mem.sid_key[j];
        g_mem.sid_row[i] = g_mem.sid_row[j];
        g_mem.sid_w[i] = g_mem.sid_w[j];
        i = j;
    }
}

/* (code, instruction) -> row (or -1: not profiled), sampler thread only.
 * Saves a code-object read per sampled event; emptied every second (epoch)
 * so that a code object freed and another allocated at its address are
 * confused for at most that long. */
#define MEM_RCACHE 4096
_Static_assert((MEM_RCACHE & (MEM_RCACHE - 1)) == 0, "masked: a power of two");
static struct {
    uintptr_t code;
    intptr_t instr;
    int row; /* row index, -1 not profiled, -2 unreadable */
    unsigned epoch;
} g_rcache[MEM_RCACHE];
static unsigned g_repoch = 1;

static int frame_row(agent_t *a, const mem_rawfr_t *fr)
{
    unsigned h = (unsigned)(mix(fr->code ^ ((uint64_t)fr->instr << 17)) & (MEM_RCACHE - 1));
    if (g_rcache[h].epoch == g_repoch && g_rcache[h].code == fr->code &&
        g_rcache[h].instr == fr->instr)
        return g_rcache[h].row;
    agent_frame_t f;
    int row = -2;
    if (walk_frame(a, fr->code, fr->instr, &f) == 0)
        row = f.profiled ? row_get((uint32_t)f.file_id, (uint32_t)f.line) : -1;
    if (row == -1 || row >= 0) {
        g_rcache[h].code = fr->code;
        g_rcache[h].instr = fr->instr;
        g_rcache[h].row = row;
        g_rcache[h].epoch = g_repoch;
    }
    return row;
}

/* Codes freed before this emit resolved their events (mem_emit owns them,
 * sorted by address, then seq). */
static mem_dead_t *g_dead;
static int g_ndead;

static int dead_cmp(const void *x, const void *y)
{
    const mem_dead_t *a = x, *b = y;
    if (a->c.addr != b->c.addr) return a->c.addr < b->c.addr ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The copy of the code an event recorded at seq saw at addr, if that code
 * has died since: the first death at addr at or after seq. */
static const mem_dead_t *dead_find(const mem_dead_t *d, int n, uintptr_t addr, uint64_t seq)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (d[mid].c.addr < addr || (d[mid].c.addr == addr && d[mid].seq < seq))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && d[lo].c.addr == addr ? &d[lo] : NULL;
}

static int dead_row(agent_t *a, const mem_dead_t *d, intptr_t instr)
{
    agent_frame_t f;
    if (walk_frame_copy(a, &d->c, instr, &f) != 0) return -2;
    return f.profiled ? row_get((uint32_t)f.file_id, (uint32_t)f.line) : -1;
}

/* A frame whose code could not be read: it may have died while this emit
 * ran (its copy is in the producers' list, not yet ours). */
static int dead_row_late(agent_t *a, const mem_rawfr_t *fr, uint64_t seq)
{
    int row = -2;
    pthread_mutex_lock(&g_mem.mu);
    for (int i = 0; i < g_mem.ndead && row == -2; i++)
        if (g_mem.dead[i].c.addr == fr->code && g_mem.dead[i].seq >= seq)
            row = dead_row(a, &g_mem.dead[i], fr->instr);
    pthread_mutex_unlock(&g_mem.mu);
    return row;
}

/* The innermost code of e, now gone, was compiled with the code of the
 * frame that called it (the same co_filename object, its first line inside
 * that code's lines): a comprehension or nested function, whose caller's
 * line is where it was written. An exec'd string or a notebook cell is
 * compiled apart: its first line is its own text's (1, or on 3.9 its first
 * statement's), outside the caller's function. */
static int nested_in_caller(agent_t *a, const mem_ev_t *e)
{
    if (!e->file0 || e->nfr < 2) return 0;
    PyCodeObject co;
    agent_frame_t f;
    if (mem_read(e->fr[1].code, &co, sizeof co) != 0 || (uintptr_t)co.co_filename != e->file0 ||
        walk_frame(a, e->fr[1].code, e->fr[1].instr, &f) != 0)
        return 0;
    return e->first0 >= f.first && e->first0 <= f.last;
}

/* Innermost profiled line of an event: row index, or -1. A frame whose
 * code is gone with no copy of it (3.9-3.11 have no code watcher; on 3.12+
 * the copies are capped) ends the search, the event lost, unless that code
 * was nested in its caller's (a module's list comprehension on 3.9-3.11).
 * Why: the dead code may well have been the program's (an exec'd string, a
 * notebook cell), and its caller's line (the `exec(...)`) did not allocate
 * that memory: a cell's 4 MB read on the exec line and 0 on the cell's own
 * lines. A line is right or has nothing. */
static int resolve(agent_t *a, const mem_ev_t *e)
{
    for (int i = 0; i < e->nfr; i++) {
        const mem_dead_t *d = g_ndead ? dead_find(g_dead, g_ndead, e->fr[i].code, e->seq) : NULL;
        int r = d ? dead_row(a, d, e->fr[i].instr) : frame_row(a, &e->fr[i]);
        if (r == -2) r = dead_row_late(a, &e->fr[i], e->seq);
        if (r >= 0) return r;
        if (r == -2 && !(i == 0 && nested_in_caller(a, e))) return -1;
    }
    return -1;
}

/* Row r's live bytes changed at t (seconds of the run): a point when they
 * moved far enough since its last one. Why: one point per delta period
 * (0.1 s) is 3 points for a line that keeps 500 MB in 0.35 s, too few for
 * the leak rule (server/memprof.c); by volume a steep line gets ~100. */
static void row_point(int r, double t)
{
    mem_row_t *row = &g_mem.rows[r];
    double step = row->peak * MEM_PT_FRAC;
    if (step < MEM_PT_MIN) step = MEM_PT_MIN;
    if (fabs(row->live - row->pt_live) < step) return;
    row->pt_live = row->live;
    mem_pt_t *last = row->pt_last ? &g_mem.pts[row->pt_last - 1] : NULL;
    if (last && t - last->t < MEM_PT_GAP) {
        last->live = row->live;
        return;
    }
    if (g_mem.npts >= MEM_PTS) return; /* the period's own point (at emit) still comes */
    mem_pt_t *pt = &g_mem.pts[g_mem.npts++];
    pt->next = 0;
    pt->t = t;
    pt->live = row->live;
    if (last)
        last->next = g_mem.npts;
    else
        row->pt_first = g_mem.npts;
    row->pt_last = g_mem.npts;
}

static void apply_alloc(agent_t *a, const mem_ev_t *e, double t)
{
    int r = resolve(a, e);
    if (e->kind == EV_COPY) {
        if (r >= 0) {
            g_mem.rows[r].copy += e->w;
            g_mem.rows[r].dirty = 1;
        }
        return;
    }
    /* a windowed sample stands for the whole time around its window */
    double w = e->win ? e->w * g_mem.win_scale[e->win % MEM_WIN_RING] : e->w;
    sid_put(e->seq, r, w);
    g_mem.total_live += w;
    if (r >= 0) {
        mem_row_t *row = &g_mem.rows[r];
        row->alloc += w;
        if (e->origin == ORIGIN_PY) row->pyalloc += w;
        row->live += w;
        if (row->live > row->peak) row->peak = row->live;
        row->dirty = 1;
        row_point(r, t);
    }
    if (g_mem.total_live > g_mem.total_peak) {
        g_mem.total_peak = g_mem.total_live;
        g_mem.peak_file = r >= 0 ? (int)g_mem.rows[r].file : 0;
        g_mem.peak_line = r >= 0 ? (int)g_mem.rows[r].line : 0;
    }
    g_mem.changed = 1;
}

static void apply_free(const mem_free_t *f, double t)
{
    double w;
    int r = sid_take(f->sid, &w);
    if (r == -2) return; /* sampled before this agent started (fork) */
    g_mem.total_live -= w;
    if (g_mem.total_live < 0) g_mem.total_live = 0;
    if (r >= 0) {
        mem_row_t *row = &g_mem.rows[r];
        row->freed += w;
        row->live -= w;
        row->dirty = 1;
        row_point(r, t);
    }
    g_mem.changed = 1;
}

#define MB (1024.0 * 1024.0)

void mem_emit(agent_t *a, double ts)
{
    static double epoch_ts;
    if (!g_mem.rows || !atomic_load(&g_mem.on)) return;
    if (ts - epoch_ts >= 1.0 || ts < epoch_ts) {
        epoch_ts = ts;
        g_repoch++;
    }
    pthread_mutex_lock(&g_mem.mu);
    int b = g_mem.cur, nev = g_mem.nev, nfr = g_mem.nfr;
    g_mem.cur ^= 1;
    g_mem.nev = g_mem.nfr = 0;
    g_dead = g_mem.dead;
    g_ndead = g_mem.ndead;
    g_mem.dead = NULL;
    g_mem.ndead = g_mem.capdead = 0;
    mem__filter_rebuild_if_stale();
    pthread_mutex_unlock(&g_mem.mu);
    /* in sequence order, so that peaks see allocs and frees interleaved;
     * event times in seconds of the run, not after this emit's ts (an event
     * recorded between the caller's clock read and the swap) */
    if (g_ndead) {
        qsort(g_dead, (size_t)g_ndead, sizeof *g_dead, dead_cmp);
        g_repoch++;                       /* a cached (code, instr) may be a dead code's */
        for (int k = 0; k < g_ndead; k++) /* and so may a cached code (walk_frame's trust) */
            walk_code_forget(a, g_dead[k].c.addr);
    }
    int i = 0, j = 0;
    g_mem.npts = 0;
    while (i < nev || j < nfr) {
        if (j >= nfr || (i < nev && g_mem.ev[b][i].seq < g_mem.fr[b][j].seq)) {
            const mem_ev_t *e = &g_mem.ev[b][i++];
            apply_alloc(a, e, fmin(e->t - a->t0, ts));
        } else {
            const mem_free_t *f = &g_mem.fr[b][j++];
            apply_free(f, fmin(f->t - a->t0, ts));
        }
    }
    pthread_mutex_lock(&g_mem.mu);
    memset(g_mem.codebits[b], 0, sizeof g_mem.codebits[b]); /* ev[b] is resolved */
    pthread_mutex_unlock(&g_mem.mu);
    for (int k = 0; k < g_ndead; k++)
        walk_code_copy_free(&g_dead[k].c);
    free(g_dead);
    g_dead = NULL;
    g_ndead = 0;
    if (!g_mem.changed && !nev) return;
    g_mem.changed = 0;
    agent_delta_t d;
    agent_delta_begin(&d, &a->out, ts, 0);
    agent_delta_part(&d, AGENT_DELTA_LINES);
    for (int r = 0; r < g_mem.nrows; r++) {
        mem_row_t *row = &g_mem.rows[r];
        if (!row->dirty) continue;
        struct agent_stat_vals st = {0};
        agent_stat_put(&st, AGENT_STAT_ALLOC, row->alloc / MB);
        agent_stat_put(&st, AGENT_STAT_FREED, row->freed / MB);
        agent_stat_put(&st, AGENT_STAT_PYALLOC, row->pyalloc / MB);
        agent_stat_put(&st, AGENT_STAT_COPY, row->copy / MB);
        agent_stat_put(&st, AGENT_STAT_PEAK, row->peak / MB);
        agent_delta_line(&d, row->file, (int)row->line, &st);
        /* kept MB inside the period, relative to the last emit (the server
         * adds its own kept: a forked child's rows start at 0) */
        for (int k = row->pt_first; k; k = g_mem.pts[k - 1].next)
            agent_delta_kept_pt(&d, g_mem.pts[k - 1].t, (g_mem.pts[k - 1].live - row->base) / MB);
        row->alloc = row->freed = row->pyalloc = row->copy = 0;
        row->base = row->live;
        row->pt_first = row->pt_last = 0;
        row->dirty = 0;
    }
    struct agent_mem_totals mt = {g_mem.total_live / MB, g_mem.total_peak / MB, g_mem.peak_file,
                                  g_mem.peak_line, (unsigned long long)g_mem.dropped};
    agent_delta_mem(&d, &mt);
    agent_delta_end(&d);
}

void mem_populate_tables(mem_pop_t *q)
{
    if (!g_mem.sid_key) return;
    mem_pop_add(q, g_mem.sid_key, MEM_SIDS * sizeof *g_mem.sid_key);
    mem_pop_add(q, g_mem.row_slots, MEM_ROWS * 2 * sizeof *g_mem.row_slots);
    mem_pop_add(q, g_mem.live, MEM_LIVE_CAP * sizeof *g_mem.live);
    mem_pop_add(q, g_rcache, sizeof g_rcache);
}

void mem__rows_reset(int zeroed)
{
    g_repoch++; /* row indices of the resolve cache are gone */
    if (!zeroed) {
        memset(g_mem.sid_key, 0, MEM_SIDS * sizeof *g_mem.sid_key);
        memset(g_mem.row_slots, 0, MEM_ROWS * 2 * sizeof *g_mem.row_slots);
    }
    g_mem.nrows = 0;
    g_mem.total_live = g_mem.total_peak = 0;
    g_mem.peak_file = g_mem.peak_line = 0;
    g_mem.changed = 0;
}
