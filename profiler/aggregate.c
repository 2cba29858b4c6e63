/* aggregate.c: what the sampler accumulates between two deltas.
 *
 * Strings and stacks are interned once per connection and defined on the
 * wire ("str", "stack") the moment they are created, so they always precede
 * their first use. Lines, funcs, threads and stacks accumulate in keyed
 * tables; rows touched since the last delta are on a dirty list and only
 * those are sent (the receiver adds). Every table has a hard row cap.
 * Stack weights are counted per (stack, thread) so that a picture can show
 * each thread apart (docs/agent-protocol.md, "delta").
 */
#include "aggregate.h"

#include "agent.h"
#include "agent_emit.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint32_t hash_bytes(const void *p, size_t n, uint32_t h)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 16777619u;
    return h;
}

static uint32_t hash_key(uint32_t k0, uint32_t k1, uint32_t k2)
{
    uint64_t h = (uint64_t)k0 * 0x9E3779B97F4A7C15ull;
    h ^= (h >> 29) ^ ((uint64_t)k1 * 0xBF58476D1CE4E5B9ull);
    h ^= (h >> 31) ^ ((uint64_t)k2 * 0x94D049BB133111EBull);
    return (uint32_t)(h ^ (h >> 32));
}

static int table_rehash(agg_table_t *t, int nslots)
{
    int *s = calloc((size_t)nslots, sizeof *s);
    if (!s) return -ENOMEM;
    for (int i = 0; i < t->nrows; i++) {
        agg_row_t *r = &t->rows[i];
        uint32_t j = hash_key(r->k[0], r->k[1], r->k[2]) & (uint32_t)(nslots - 1);
        while (s[j])
            j = (j + 1) & (uint32_t)(nslots - 1);
        s[j] = i + 1;
    }
    free(t->slots);
    t->slots = s;
    t->nslots = nslots;
    return 0;
}

/* Row index for the key (created zeroed if new), or -ENOSPC/-ENOMEM. */
int agg_get(agg_table_t *t, uint32_t k0, uint32_t k1, uint32_t k2, int *created)
{
    if (created) *created = 0;
    if (!t->slots && table_rehash(t, 1024) != 0) return -ENOMEM;
    uint32_t mask = (uint32_t)(t->nslots - 1);
    uint32_t j = hash_key(k0, k1, k2) & mask;
    while (t->slots[j]) {
        agg_row_t *r = &t->rows[t->slots[j] - 1];
        if (r->k[0] == k0 && r->k[1] == k1 && r->k[2] == k2) return t->slots[j] - 1;
        j = (j + 1) & mask;
    }
    if (t->nrows >= t->maxrows) return -ENOSPC;
    if (t->nrows == t->caprows) {
        int nc = t->caprows ? t->caprows * 2 : 256;
        agg_row_t *rows = realloc(t->rows, (size_t)nc * sizeof *rows);
        int *d = realloc(t->dirty, (size_t)nc * sizeof *d);
        if (!rows || !d) {
            if (rows) t->rows = rows;
            if (d) t->dirty = d;
            return -ENOMEM;
        }
        t->rows = rows;
        t->dirty = d;
        t->caprows = nc;
    }
    int i = t->nrows++;
    memset(&t->rows[i], 0, sizeof t->rows[i]);
    t->rows[i].k[0] = k0;
    t->rows[i].k[1] = k1;
    t->rows[i].k[2] = k2;
    t->slots[j] = i + 1;
    if (created) *created = 1;
    if (t->nrows * 2 > t->nslots)
        table_rehash(t, t->nslots * 2); /* on failure the table stays usable */
    return i;
}

void agg_mark(agg_table_t *t, int row)
{
    if (!t->rows[row].dirty) {
        t->rows[row].dirty = 1;
        t->dirty[t->ndirty++] = row;
    }
}

static void table_free(agg_table_t *t)
{
    free(t->rows);
    free(t->slots);
    free(t->dirty);
    memset(t, 0, sizeof *t);
}

static int strs_rehash(agg_strings_t *st, int nslots)
{
    int *s = calloc((size_t)nslots, sizeof *s);
    if (!s) return -ENOMEM;
    for (int i = 0; i < st->n; i++) {
        uint32_t j = st->hash[i] & (uint32_t)(nslots - 1);
        while (s[j])
            j = (j + 1) & (uint32_t)(nslots - 1);
        s[j] = i + 1;
    }
    free(st->slots);
    st->slots = s;
    st->nslots = nslots;
    return 0;
}

/* Id (>0) of the string, defined on the wire when new. s is borrowed. */
int agg_intern(agent_t *a, const char *s, size_t n)
{
    agg_strings_t *st = &a->strs;
    if (!st->slots && strs_rehash(st, 1024) != 0) return -ENOMEM;
    uint32_t h = hash_bytes(s, n, 2166136261u);
    uint32_t mask = (uint32_t)(st->nslots - 1);
    uint32_t j = h & mask;
    while (st->slots[j]) {
        int i = st->slots[j] - 1;
        if (st->hash[i] == h && strlen(st->s[i]) == n && memcmp(st->s[i], s, n) == 0) return i + 1;
        j = (j + 1) & mask;
    }
    if (st->n >= AGENT_MAX_STRINGS || st->bytes + n > (64u << 20)) return -ENOSPC;
    if (st->n == st->cap) {
        int nc = st->cap ? st->cap * 2 : 256;
        char **ns = realloc(st->s, (size_t)nc * sizeof *ns);
        if (ns) st->s = ns;
        uint32_t *nh = realloc(st->hash, (size_t)nc * sizeof *nh);
        if (nh) st->hash = nh;
        if (!ns || !nh) return -ENOMEM;
        st->cap = nc;
    }
    char *copy = malloc(n + 1);
    if (!copy) return -ENOMEM;
    memcpy(copy, s, n);
    copy[n] = 0;
    int i = st->n++;
    st->s[i] = copy;
    st->hash[i] = h;
    st->bytes += n;
    st->slots[j] = i + 1;
    if (st->n * 2 > st->nslots) strs_rehash(st, st->nslots * 2);
    agent_emit_str(&a->out, i + 1, copy, n);
    return i + 1;
}

const char *agg_string(agent_t *a, int id)
{
    return id > 0 && id <= a->strs.n ? a->strs.s[id - 1] : "";
}

/* Stack id (>0) for frames innermost first, defined on the wire when new.
 * Keyed by a 64-bit hash and the depth; fr is borrowed. */
int agg_stack_id(agent_t *a, const agent_frame_t *fr, int n)
{
    uint32_t h1 = 2166136261u, h2 = 0x12345678u;
    for (int i = 0; i < n; i++) {
        uint32_t v[3] = {(uint32_t)fr[i].file_id, (uint32_t)fr[i].name_id, (uint32_t)fr[i].line};
        h1 = hash_bytes(v, sizeof v, h1);
        h2 = hash_bytes(v, sizeof v, h2 * 31u + 7u);
    }
    int created;
    int row = agg_get(&a->stacks, h1, h2, (uint32_t)n, &created);
    if (row < 0) return row;
    if (created) {
        struct agent_emit_frame ef[AGENT_MAX_DEPTH];
        int m = agg_wire_frames(fr, n, ef, AGENT_MAX_DEPTH);
        agent_emit_stack(&a->out, row + 1, ef, m);
    }
    return row + 1;
}

int agg_wire_frames(const agent_frame_t *fr, int n, struct agent_emit_frame *out, int cap)
{
    int m = n < cap ? n : cap;
    for (int i = 0; i < m; i++) {
        out[i].file = fr[i].file_id;
        out[i].name = fr[i].name_id;
        out[i].line = fr[i].line;
    }
    return m;
}

/* Charges one sample of dw seconds to stack sid (agg_stack_id) in thread tid
 * (0: not told apart). A full table takes no new (stack, thread) row: the
 * sample falls back to (stack, 0), and is lost only when that row cannot
 * be made either (the stacks' own cap behaves the same). 0 or -errno. */
int agg_stack_add(agent_t *a, int sid, uint32_t tid, double dw)
{
    int r = agg_get(&a->stack_w, (uint32_t)sid, tid, 0, NULL);
    if (r < 0 && tid) r = agg_get(&a->stack_w, (uint32_t)sid, 0, 0, NULL);
    if (r < 0) return r;
    agg_row_t *row = &a->stack_w.rows[r];
    row->n++;
    row->w += dw;
    agg_mark(&a->stack_w, r);
    return 0;
}

/* py, nat, sys, cpu and n of a line or function row */
static struct agent_stat_vals row_stats(const agg_row_t *r)
{
    struct agent_stat_vals st = {0};
    agent_stat_put(&st, AGENT_STAT_PY, r->py);
    agent_stat_put(&st, AGENT_STAT_NAT, r->nat);
    agent_stat_put(&st, AGENT_STAT_SYS, r->sys);
    agent_stat_put(&st, AGENT_STAT_CPU, r->cpu);
    agent_stat_put(&st, AGENT_STAT_N, r->n);
    return st;
}

static void clear_dirty(agg_table_t *t)
{
    for (int i = 0; i < t->ndirty; i++) {
        agg_row_t *r = &t->rows[t->dirty[i]];
        r->py = r->nat = r->sys = r->cpu = r->w = 0;
        r->n = 0;
        r->dirty = 0;
    }
    t->ndirty = 0;
}

/* Appends one delta with every dirty row, then clears them. */
int agg_emit_delta(agent_t *a, double ts)
{
    agent_delta_t d;
    agent_delta_begin(&d, &a->out, ts, a->samples_delta);
    agent_delta_part(&d, AGENT_DELTA_LINES); /* every array, empty ones too */
    for (int i = 0; i < a->lines.ndirty; i++) {
        agg_row_t *r = &a->lines.rows[a->lines.dirty[i]];
        struct agent_stat_vals st = row_stats(r);
        agent_delta_line(&d, r->k[0], (int)r->k[1], &st);
    }
    agent_delta_part(&d, AGENT_DELTA_FUNCS);
    for (int i = 0; i < a->funcs.ndirty; i++) {
        agg_row_t *r = &a->funcs.rows[a->funcs.dirty[i]];
        struct agent_stat_vals st = row_stats(r);
        agent_delta_func(&d, r->k[0], r->k[1], (int)r->k[2], (int)r->extra, &st);
    }
    agent_delta_part(&d, AGENT_DELTA_STACKS);
    for (int i = 0; i < a->stack_w.ndirty; i++) {
        agg_row_t *r = &a->stack_w.rows[a->stack_w.dirty[i]];
        agent_delta_stack(&d, r->k[0], r->n, r->w, r->k[1]);
    }
    agent_delta_part(&d, AGENT_DELTA_THREADS);
    for (int i = 0; i < a->threads.ndirty; i++) {
        agg_row_t *r = &a->threads.rows[a->threads.dirty[i]];
        agent_delta_thread(&d, r->k[0], agg_string(a, (int)r->extra), r->py, r->nat, r->sys);
    }
    int rc = agent_delta_end(&d);
    clear_dirty(&a->lines);
    clear_dirty(&a->funcs);
    clear_dirty(&a->stack_w);
    clear_dirty(&a->threads);
    a->samples_delta = 0;
    return rc;
}

void agg_free(agent_t *a)
{
    for (int i = 0; i < a->strs.n; i++)
        free(a->strs.s[i]);
    free(a->strs.s);
    free(a->strs.hash);
    free(a->strs.slots);
    memset(&a->strs, 0, sizeof a->strs);
    table_free(&a->lines);
    table_free(&a->funcs);
    table_free(&a->threads);
    table_free(&a->stacks);
    table_free(&a->stack_w);
    free(a->file_flag);
    a->file_flag = NULL;
}
