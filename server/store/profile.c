/* profile: the profile store (see profile.h). Strings (paths, function
 * names) are interned once per store; files, functions and stacks are found
 * through small open-addressing hash maps keyed by strings. The file
 * format (JSON, save, load) is profile_json.c. */
#include "store/profile.h"
#include "store/memprof.h"
#include "store/profile_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- string-keyed hash map (keys owned by the map) ---------------------- */

struct smap {
    char **keys;
    void **vals;
    size_t cap, n;
};

/* a + b for counts that the agent sends (never negative on the wire, checked
 * there): a program's agent may send LLONG_MAX twice, and a signed overflow
 * is undefined behaviour in the server, so the sum stops at LLONG_MAX. */
static uint64_t hash_bytes(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static void smap_free(struct smap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->keys[i]);
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

static size_t smap_slot(const struct smap *m, const char *k)
{
    size_t i = hash_bytes(k) & (m->cap - 1);
    while (m->keys[i] && strcmp(m->keys[i], k))
        i = (i + 1) & (m->cap - 1);
    return i;
}

/* Borrowed value or NULL; *key_out (if set) receives the map's key copy. */
static void *smap_get(const struct smap *m, const char *k, const char **key_out)
{
    if (!m->cap) return NULL;
    size_t i = smap_slot(m, k);
    if (!m->keys[i]) return NULL;
    if (key_out) *key_out = m->keys[i];
    return m->vals[i];
}

static int smap_grow(struct smap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    struct smap nm = {calloc(cap, sizeof(char *)), calloc(cap, sizeof(void *)), cap, 0};
    if (!nm.keys || !nm.vals) {
        free(nm.keys);
        free(nm.vals);
        return -ENOMEM;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i]) continue;
        size_t j = smap_slot(&nm, m->keys[i]);
        nm.keys[j] = m->keys[i];
        nm.vals[j] = m->vals[i];
        nm.n++;
    }
    free(m->keys);
    free(m->vals);
    *m = nm;
    return 0;
}

/* Insert k (copied) -> v; k must not be present. Returns the key copy. */
static const char *smap_put(struct smap *m, const char *k, void *v)
{
    if ((m->n + 1) * 10 > m->cap * 7 && smap_grow(m)) return NULL;
    char *kc = strdup(k);
    if (!kc) return NULL;
    size_t i = smap_slot(m, k);
    m->keys[i] = kc;
    m->vals[i] = v;
    m->n++;
    return kc;
}

/* ---- store ----------------------------------------------------------------- */

struct prof_idx {
    struct smap strs;   /* interned strings, value unused */
    struct smap files;  /* path -> prof_file */
    struct smap funcs;  /* "file\x1f first \x1f name" -> prof_func */
    struct smap stacks; /* frame key -> prof_stack */
};

struct prof_conn {
    struct profile *p;
    const char **strs; /* conn string id -> interned */
    size_t nstrs;
    struct prof_stack **stacks; /* conn stack id -> store stack */
    size_t nstacks;
    long long pid;
    size_t proc;    /* index in p->procs + 1, 0 = none */
    double off;     /* + an agent ts = the timeline's clock (timeline_offset) */
    double last_ts; /* of the previous delta: where the next one's period starts */
    int live;       /* profile_conn_live: messages arrive as the agent sends them */
    int guess_off;  /* live, hello without mono0: off from the first delta's arrival */
    struct agent_kept_pt pts[AGENT_WIRE_MAX_KEPT_PTS]; /* one line entry's kept_pts */
};

#define IDX(p) ((struct prof_idx *)(p)->p__idx)

struct profile *profile_new(void)
{
    struct profile *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->p__idx = calloc(1, sizeof(struct prof_idx));
    p->mem = memprof_new();
    if (!p->p__idx || !p->mem) {
        free(p->p__idx);
        memprof_free(p->mem);
        free(p);
        return NULL;
    }
    p->meta.exit_status = -1;
    return p;
}

void profile_free(struct profile *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->nfiles; i++) {
        struct prof_file *f = p->files[i];
        for (size_t j = 0; j < f->nfuncs; j++)
            free(f->funcs[j]);
        free(f->funcs);
        free(f->lines);
        free(f->p__slots);
        free(f);
    }
    free(p->files);
    for (size_t i = 0; i < p->nstacks; i++) {
        free(p->stacks[i]->fr);
        free(p->stacks[i]->parts);
        free(p->stacks[i]);
    }
    free(p->stacks);
    for (size_t i = 0; i < p->nthreads; i++)
        free(p->threads[i].name);
    free(p->threads);
    for (size_t i = 0; i < p->nprocs; i++) {
        free(p->procs[i].python);
        free(p->procs[i].end_reason);
        free(p->procs[i].role);
        json_decref(p->procs[i].argv);
    }
    free(p->procs);
    free(p->meta.program);
    free(p->meta.python_version);
    free(p->meta.reason);
    json_decref(p->meta.argv);
    memprof_free(p->mem);
    timeline_free(&p->tl);
    struct prof_idx *ix = IDX(p);
    smap_free(&ix->strs);
    smap_free(&ix->files);
    smap_free(&ix->funcs);
    smap_free(&ix->stacks);
    free(ix);
    free(p);
}

int profile_set_str(char **slot, const char *s)
{
    char *c = NULL;
    if (s && !(c = strdup(s))) return -ENOMEM;
    free(*slot);
    *slot = c;
    return 0;
}

static const char *signame(int sig)
{
    switch (sig) {
    case SIGSEGV:
        return "SIGSEGV";
    case SIGABRT:
        return "SIGABRT";
    case SIGBUS:
        return "SIGBUS";
    case SIGFPE:
        return "SIGFPE";
    case SIGILL:
        return "SIGILL";
    case SIGKILL:
        return "SIGKILL";
    case SIGTERM:
        return "SIGTERM";
    case SIGINT:
        return "SIGINT";
    case SIGHUP:
        return "SIGHUP";
    case SIGQUIT:
        return "SIGQUIT";
    case SIGPIPE:
        return "SIGPIPE";
    case SIGALRM:
        return "SIGALRM";
    case SIGUSR1:
        return "SIGUSR1";
    case SIGUSR2:
        return "SIGUSR2";
    default:
        return NULL;
    }
}

void profile_describe_exit(int status, int sig, char *buf, size_t n)
{
    if (sig > 0) {
        const char *nm = signame(sig);
        char sb[32];
        if (!nm) {
            snprintf(sb, sizeof sb, "signal %d", sig);
            nm = sb;
        }
        const char *what = "killed";
        if (sig == SIGSEGV || sig == SIGABRT || sig == SIGBUS || sig == SIGFPE || sig == SIGILL)
            what = "crashed";
        else if (sig == SIGINT)
            what = "interrupted";
        else if (sig == SIGTERM || sig == SIGHUP)
            what = "terminated";
        snprintf(buf, n, "%s (%s)", what, nm);
    } else if (status >= 0) {
        snprintf(buf, n, "exited %d", status);
    } else {
        snprintf(buf, n, "unknown");
    }
}

const char *prof__intern(struct profile *p, const char *s)
{
    struct prof_idx *ix = IDX(p);
    const char *k;
    if (smap_get(&ix->strs, s, &k)) return k;
    return smap_put(&ix->strs, s, (void *)1);
}

struct prof_file *prof__file_get(struct profile *p, const char *path, int create)
{
    struct prof_idx *ix = IDX(p);
    struct prof_file *f = smap_get(&ix->files, path, NULL);
    if (f || !create) return f;
    if (p->nfiles >= PROFILE_MAX_FILES) return NULL;
    if (p->nfiles == p->capfiles) {
        size_t cap = p->capfiles ? p->capfiles * 2 : 16;
        void *n = realloc(p->files, cap * sizeof *p->files);
        if (!n) return NULL;
        p->files = n;
        p->capfiles = cap;
    }
    f = calloc(1, sizeof *f);
    if (!f || !(f->path = prof__intern(p, path)) || !smap_put(&ix->files, path, f)) {
        free(f);
        return NULL;
    }
    p->files[p->nfiles++] = f;
    return f;
}

/* ---- sparse lines: f->lines in first-seen order, indexed by p__slots
 * (open addressing, at most half full, lines[i] stored as i + 1) ---- */

static size_t slot_of(int line, size_t nslots)
{
    return (size_t)(((uint64_t)(unsigned)line * 0x9E3779B97F4A7C15ull) >> 32) & (nslots - 1);
}

/* Index in f->lines of line, or -1. */
static long line_find(const struct prof_file *f, int line)
{
    if (!f->p__nslots) return -1;
    for (size_t i = slot_of(line, f->p__nslots);; i = (i + 1) & (f->p__nslots - 1)) {
        uint32_t k = f->p__slots[i];
        if (!k) return -1;
        if (f->lines[k - 1].line == line) return (long)k - 1;
    }
}

static int slots_grow(struct prof_file *f)
{
    size_t n = f->p__nslots ? f->p__nslots * 2 : 4;
    uint32_t *s = calloc(n, sizeof *s);
    if (!s) return -ENOMEM;
    for (size_t i = 0; i < f->nlines; i++) {
        size_t j = slot_of(f->lines[i].line, n);
        while (s[j])
            j = (j + 1) & (n - 1);
        s[j] = (uint32_t)i + 1;
    }
    free(f->p__slots);
    f->p__slots = s;
    f->p__nslots = n;
    return 0;
}

/* The record of line in f, made (zeroed) if new; NULL over a cap or ENOMEM. */
static struct agent_stats *line_slot(struct profile *p, struct prof_file *f, int line)
{
    if (line < 0 || line > PROFILE_MAX_LINE) return NULL;
    long i = line_find(f, line);
    if (i >= 0) return &f->lines[i].st;
    if (p->nline_records >= PROFILE_MAX_LINES) return NULL;
    if ((f->nlines + 1) * 2 > f->p__nslots && slots_grow(f)) return NULL;
    if (f->nlines == f->caplines) {
        size_t cap = f->caplines ? f->caplines * 2 : 2; /* most library files: a line or two */
        struct prof_line *l = realloc(f->lines, cap * sizeof *l);
        if (!l) return NULL;
        f->lines = l;
        f->caplines = cap;
    }
    struct prof_line *l = &f->lines[f->nlines];
    memset(l, 0, sizeof *l);
    l->line = line;
    size_t j = slot_of(line, f->p__nslots);
    while (f->p__slots[j])
        j = (j + 1) & (f->p__nslots - 1);
    f->p__slots[j] = (uint32_t)++f->nlines;
    p->nline_records++;
    return &l->st;
}

int prof__file_add_line(struct profile *p, struct prof_file *f, int line,
                        const struct agent_stats *st)
{
    struct agent_stats *s = line_slot(p, f, line);
    if (!s) {
        p->dropped++;
        return -ENOMEM;
    }
    agent_stats_merge(s, st);
    agent_stats_merge(&f->total, st);
    agent_stats_merge(&p->total, st);
    return 0;
}

static int add_line(struct profile *p, const char *path, int line, const struct agent_stats *st)
{
    struct prof_file *f = prof__file_get(p, path, 1);
    if (!f) {
        p->dropped++;
        return -ENOMEM;
    }
    return prof__file_add_line(p, f, line, st);
}

int prof__add_func(struct profile *p, const char *path, const char *name, int first, int last,
                   const struct agent_stats *st)
{
    struct prof_idx *ix = IDX(p);
    struct prof_file *f = prof__file_get(p, path, 1);
    if (!f) goto drop;
    char key[64];
    snprintf(key, sizeof key, "%p\x1f%d\x1f", (void *)f, first);
    size_t kl = strlen(key), nl = strlen(name);
    char *k = malloc(kl + nl + 1);
    if (!k) goto drop;
    memcpy(k, key, kl);
    memcpy(k + kl, name, nl + 1);
    struct prof_func *fn = smap_get(&ix->funcs, k, NULL);
    if (!fn) {
        if (ix->funcs.n >= PROFILE_MAX_FUNCS || f->nfuncs == SIZE_MAX / 2) {
            free(k);
            goto drop;
        }
        if (f->nfuncs == f->capfuncs) {
            size_t cap = f->capfuncs ? f->capfuncs * 2 : 8;
            void *n = realloc(f->funcs, cap * sizeof *f->funcs);
            if (!n) {
                free(k);
                goto drop;
            }
            f->funcs = n;
            f->capfuncs = cap;
        }
        fn = calloc(1, sizeof *fn);
        if (!fn || !(fn->name = prof__intern(p, name)) || !smap_put(&ix->funcs, k, fn)) {
            free(fn);
            free(k);
            goto drop;
        }
        fn->first_line = first;
        fn->last_line = last;
        f->funcs[f->nfuncs++] = fn;
    }
    free(k);
    if (last > fn->last_line) fn->last_line = last;
    agent_stats_merge(&fn->st, st);
    return 0;
drop:
    p->dropped++;
    return -ENOMEM;
}

struct prof_stack *prof__stack_get(struct profile *p, const struct prof_frame *fr, size_t n)
{
    struct prof_idx *ix = IDX(p);
    size_t cap = n * 56 + 1, len = 0;
    char *k = malloc(cap);
    if (!k) return NULL;
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(k + len, cap - len, "%p,%p,%d;", (const void *)fr[i].file,
                                (const void *)fr[i].name, fr[i].line);
    k[len] = 0;
    struct prof_stack *s = smap_get(&ix->stacks, k, NULL);
    if (!s && p->nstacks < PROFILE_MAX_STACKS) {
        if (p->nstacks == p->capstacks) {
            size_t c = p->capstacks ? p->capstacks * 2 : 64;
            void *nn = realloc(p->stacks, c * sizeof *p->stacks);
            if (!nn) goto out;
            p->stacks = nn;
            p->capstacks = c;
        }
        s = calloc(1, sizeof *s);
        if (!s) goto out;
        s->fr = malloc((n ? n : 1) * sizeof *s->fr);
        if (!s->fr || !smap_put(&ix->stacks, k, s)) {
            free(s->fr);
            free(s);
            s = NULL;
            goto out;
        }
        memcpy(s->fr, fr, n * sizeof *fr);
        s->nfr = n;
        p->stacks[p->nstacks++] = s;
    }
out:
    free(k);
    if (!s) p->dropped++;
    return s;
}

int prof__stack_add(struct profile *p, struct prof_stack *s, long long pid, long long tid,
                    long long samples, double seconds)
{
    s->samples = prof_add_count(s->samples, samples);
    s->seconds += seconds;
    if (!tid) return 0;
    /* a linear search: a stack is run by a few threads (at most
     * PROFILE_STACK_THREADS), and the agent sends each once per delta */
    for (size_t i = 0; i < s->nparts; i++)
        if (s->parts[i].tid == tid && s->parts[i].pid == pid) {
            s->parts[i].samples = prof_add_count(s->parts[i].samples, samples);
            s->parts[i].seconds += seconds;
            return 0;
        }
    if (s->nparts >= PROFILE_STACK_THREADS || p->nstack_parts >= PROFILE_MAX_STACK_PARTS) return 0;
    struct prof_stack_part *n = realloc(s->parts, (s->nparts + 1) * sizeof *n);
    if (!n) return -ENOMEM;
    s->parts = n;
    s->parts[s->nparts++] = (struct prof_stack_part){pid, tid, samples, seconds};
    p->nstack_parts++;
    return 0;
}

struct prof_thread *prof__thread_get(struct profile *p, long long pid, long long tid,
                                     const char *name)
{
    for (size_t i = 0; i < p->nthreads; i++)
        if (p->threads[i].pid == pid && p->threads[i].tid == tid) return &p->threads[i];
    if (p->nthreads >= PROFILE_MAX_THREADS) return NULL;
    void *n = realloc(p->threads, (p->nthreads + 1) * sizeof *p->threads);
    if (!n) return NULL;
    p->threads = n;
    struct prof_thread *t = &p->threads[p->nthreads];
    memset(t, 0, sizeof *t);
    t->pid = pid;
    t->tid = tid;
    if (!(t->name = strdup(name ? name : ""))) return NULL;
    p->nthreads++;
    return t;
}

struct prof_proc *prof__proc_new(struct profile *p, long long pid)
{
    if (p->nprocs >= PROFILE_MAX_PROCS) return NULL;
    void *n = realloc(p->procs, (p->nprocs + 1) * sizeof *p->procs);
    if (!n) return NULL;
    p->procs = n;
    struct prof_proc *pr = &p->procs[p->nprocs++];
    memset(pr, 0, sizeof *pr);
    pr->pid = pid;
    return pr;
}

/* ---- connections ------------------------------------------------------- */

struct prof_conn *profile_conn_new(struct profile *p)
{
    struct prof_conn *c = calloc(1, sizeof *c);
    if (c) c->p = p;
    return c;
}

void profile_conn_live(struct prof_conn *c)
{
    if (c) c->live = 1;
}

void profile_conn_free(struct prof_conn *c)
{
    if (!c) return;
    free(c->strs);
    free(c->stacks);
    free(c);
}

long long profile_conn_pid(const struct prof_conn *c)
{
    return c->pid;
}

/* Grow a per-connection id table so that id fits. */
static int id_slot(void **arr, size_t *n, long long id, size_t elem)
{
    if (id <= 0 || id >= PROFILE_MAX_CONN_IDS) return -EPROTO;
    if ((size_t)id >= *n) {
        size_t nn = *n ? *n : 256;
        while (nn <= (size_t)id)
            nn *= 2;
        char *a = realloc(*arr, nn * elem);
        if (!a) return -ENOMEM;
        memset(a + *n * elem, 0, (nn - *n) * elem);
        *arr = a;
        *n = nn;
    }
    return 0;
}

static const char *conn_str(const struct prof_conn *c, long long id)
{
    if (id <= 0 || (size_t)id >= c->nstrs) return NULL;
    return c->strs[id];
}

static int apply_hello(struct prof_conn *c, const struct agent_msg *m)
{
    struct profile *p = c->p;
    c->pid = m->u.hello.pid;
    struct prof_proc *pr = prof__proc_new(p, m->u.hello.pid);
    if (!pr) return -ENOMEM;
    c->proc = p->nprocs;
    pr->ppid = m->u.hello.ppid;
    if (profile_set_str(&pr->python, m->u.hello.python)) return -ENOMEM;
    if (m->u.hello.argv) pr->argv = json_deep_copy(m->u.hello.argv);
    if (!p->meta.python_version && m->u.hello.python &&
        profile_set_str(&p->meta.python_version, m->u.hello.python))
        return -ENOMEM;
    if (p->meta.interval_ms <= 0) p->meta.interval_ms = m->u.hello.interval_ms;
    c->off = timeline_offset(&p->tl, m->u.hello.mono0);
    /* An agent of another host (over TCP: its CLOCK_MONOTONIC means nothing
     * here, so its forwarder drops mono0): its ts 0 is placed by when its
     * first delta arrives, below. A saved stream read later has no such
     * clue: its times stay its own. */
    c->guess_off = c->live && !(m->u.hello.mono0 > 0);
    return 0;
}

static int apply_stack(struct prof_conn *c, const struct agent_msg *m)
{
    size_t n = agent_msg_nframes(m);
    struct prof_frame *fr = malloc((n ? n : 1) * sizeof *fr);
    if (!fr) return -ENOMEM;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        struct agent_frame af;
        agent_msg_frame(m, i, &af); /* checked by the parser */
        fr[i].file = conn_str(c, af.file);
        fr[i].name = conn_str(c, af.name);
        fr[i].line = af.line;
        if (!fr[i].file || !fr[i].name) {
            free(fr);
            return -EPROTO;
        }
    }
    struct prof_stack *s = prof__stack_get(c->p, fr, n);
    free(fr);
    if ((rc = id_slot((void **)&c->stacks, &c->nstacks, m->u.stack.id, sizeof *c->stacks)))
        return rc;
    c->stacks[m->u.stack.id] = s; /* NULL if the cap was hit: its samples are dropped */
    return 0;
}

static int apply_delta(struct prof_conn *c, const struct agent_msg *m)
{
    struct profile *p = c->p;
    int rc = 0;
    p->meta.samples = prof_add_count(p->meta.samples, m->u.delta.samples);
    if (c->guess_off && m->u.delta.ts > 0) {
        /* arrival - ts: the agent's ts 0 on this host's clock, late by the
         * network and the queue (milliseconds; deltas come every ~0.1 s) */
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double mono = (double)now.tv_sec + now.tv_nsec * 1e-9;
        if (mono > m->u.delta.ts) c->off = timeline_offset(&p->tl, mono - m->u.delta.ts);
        c->guess_off = 0;
    }
    if (c->proc) p->procs[c->proc - 1].last_ts = m->u.delta.ts;
    memprof_touch(p->mem, m->u.delta.ts);
    struct agent_line_entry e;
    size_t n = agent_msg_count(m, AGENT_ARR_LINES);
    for (size_t i = 0; i < n; i++) {
        const char *path;
        if (agent_msg_line(m, i, &e) || !(path = conn_str(c, e.file))) {
            p->dropped++;
            rc = -EPROTO;
            continue;
        }
        /* kept-MB points inside the period (the agent samples a line's
         * timeline by volume too, docs/memory.md), relative to its kept now */
        size_t np = agent_msg_kept_pts(m, i, c->pts, AGENT_WIRE_MAX_KEPT_PTS);
        if (np) {
            const struct agent_stats *ls = profile_line(p, path, e.line);
            memprof_line_points(p->mem, path, e.line, c->pts, np, ls ? ls->v[AGENT_STAT_KEPT] : 0,
                                m->u.delta.ts);
        }
        add_line(p, path, e.line, &e.st);
        if (e.st.v[AGENT_STAT_ALLOC] > 0 || e.st.v[AGENT_STAT_FREED] > 0) {
            const struct agent_stats *ls = profile_line(p, path, e.line);
            if (ls) memprof_line_point(p->mem, path, e.line, m->u.delta.ts, ls->v[AGENT_STAT_KEPT]);
        }
    }
    struct agent_msg_mem mem;
    if (!agent_msg_mem(m, &mem))
        memprof_footprint(p->mem, m->u.delta.ts, mem.live_mb, mem.peak_mb,
                          conn_str(c, mem.peak_file), mem.peak_line);
    n = agent_msg_count(m, AGENT_ARR_FUNCS);
    for (size_t i = 0; i < n; i++) {
        const char *path, *name;
        if (agent_msg_func(m, i, &e) || !(path = conn_str(c, e.file)) ||
            !(name = conn_str(c, e.fn))) {
            p->dropped++;
            rc = -EPROTO;
            continue;
        }
        prof__add_func(p, path, name, e.line, e.last, &e.st);
    }
    n = agent_msg_count(m, AGENT_ARR_STACKS);
    for (size_t i = 0; i < n; i++) {
        struct agent_stack_entry se;
        if (agent_msg_stack(m, i, &se) || (size_t)se.id >= c->nstacks) {
            p->dropped++;
            rc = -EPROTO;
            continue;
        }
        struct prof_stack *s = c->stacks[se.id];
        if (!s) {
            p->dropped++;
            continue;
        }
        if (prof__stack_add(p, s, c->pid, se.tid, se.samples, se.seconds) ||
            timeline_add(&p->tl, s, c->pid, se.tid, c->last_ts + c->off, m->u.delta.ts + c->off,
                         se.samples, se.seconds))
            rc = -ENOMEM;
    }
    if (m->u.delta.ts > c->last_ts) c->last_ts = m->u.delta.ts;
    n = agent_msg_count(m, AGENT_ARR_THREADS);
    for (size_t i = 0; i < n; i++) {
        struct agent_thread_entry te;
        struct prof_thread *t;
        if (agent_msg_thread(m, i, &te) || !(t = prof__thread_get(p, c->pid, te.tid, te.name))) {
            p->dropped++;
            continue;
        }
        if (te.name[0] && strcmp(te.name, t->name)) {
            char *nn = strdup(te.name);
            if (nn) {
                free(t->name);
                t->name = nn;
            }
        }
        t->py += te.py;
        t->nat += te.nat;
        t->sys += te.sys;
    }
    return rc;
}

int profile_conn_apply(struct prof_conn *c, const struct agent_msg *m)
{
    switch (m->type) {
    case AGENT_MSG_HELLO:
        return apply_hello(c, m);
    case AGENT_MSG_STR: {
        int rc = id_slot((void **)&c->strs, &c->nstrs, m->u.str.id, sizeof *c->strs);
        if (rc) return rc;
        const char *s = prof__intern(c->p, m->u.str.s);
        if (!s) return -ENOMEM;
        c->strs[m->u.str.id] = s;
        return 0;
    }
    case AGENT_MSG_STACK:
        return apply_stack(c, m);
    case AGENT_MSG_DELTA:
        return apply_delta(c, m);
    case AGENT_MSG_END:
        if (c->proc) {
            struct prof_proc *pr = &c->p->procs[c->proc - 1];
            pr->last_ts = m->u.end.ts;
            memprof_touch(c->p->mem, m->u.end.ts);
            return profile_set_str(&pr->end_reason, m->u.end.reason);
        }
        return 0;
    case AGENT_MSG_ROLE:
        if (c->proc) {
            struct prof_proc *pr = &c->p->procs[c->proc - 1];
            char role[PROFILE_ROLE_MAX];
            size_t n = strlen(m->u.role.name); /* bounded: a label; cut on a UTF-8 boundary */
            if (n >= sizeof role) {
                n = sizeof role - 1;
                while (n && ((unsigned char)m->u.role.name[n] & 0xC0) == 0x80)
                    n--;
            }
            memcpy(role, m->u.role.name, n);
            role[n] = 0;
            return profile_set_str(&pr->role, role);
        }
        return 0;
    default:
        return 0;
    }
}

json_t *profile_conn_resolve_now(struct prof_conn *c, const struct agent_msg *m)
{
    json_t *threads = json_array();
    size_t n = agent_msg_count(m, AGENT_ARR_THREADS);
    for (size_t i = 0; i < n; i++) {
        struct agent_now_entry t;
        if (agent_msg_now_thread(m, i, &t)) continue;
        json_t *frames = json_array();
        for (size_t j = 0; j < t.nframes; j++) {
            struct agent_frame af;
            if (agent_msg_now_frame(m, i, j, &af)) continue;
            const char *file = conn_str(c, af.file), *name = conn_str(c, af.name);
            json_array_append_new(frames, json_pack("{s:s,s:s,s:i}", "file", file ? file : "?",
                                                    "name", name ? name : "?", "line", af.line));
        }
        /* keys of the resolved form (profile.h), not of the wire */
        json_t *o = json_pack("{s:o}", "frames", frames);
        if (t.has_tid) json_object_set_new(o, "tid", json_integer(t.tid));
        if (t.name) json_object_set_new(o, "name", json_string(t.name));
        if (t.state) json_object_set_new(o, "state", json_string(t.state));
        if (t.has_since) json_object_set_new(o, "since_s", json_real(t.since_s));
        json_array_append_new(threads, o);
    }
    return json_pack("{s:f,s:I,s:o}", "ts", m->u.now.ts, "pid", (json_int_t)c->pid, "threads",
                     threads);
}

/* ---- queries ------------------------------------------------------------ */

const struct prof_file *profile_file(const struct profile *p, const char *path)
{
    return smap_get(&IDX(p)->files, path, NULL);
}

static int stack_through(const struct prof_stack *s, const struct prof_file *f)
{
    for (size_t j = 0; j < s->nfr; j++)
        if (s->fr[j].file == f->path) return 1; /* interned */
    return 0;
}

static int stack_empty(const struct prof_stack *s, void *ud)
{
    (void)ud;
    return s->samples <= 0 && s->seconds <= 0;
}

int profile_reset_file(struct profile *p, const char *path)
{
    struct prof_file *f = smap_get(&IDX(p)->files, path, NULL);
    if (!f) return -ENOENT;
    for (size_t i = 0; i < f->nlines; i++)
        memset(&f->lines[i].st, 0, sizeof f->lines[i].st);
    for (size_t i = 0; i < f->nfuncs; i++)
        memset(&f->funcs[i]->st, 0, sizeof f->funcs[i]->st);
    memset(&f->total, 0, sizeof f->total);
    /* the totals are merges (sums and maxima): made again from the files' */
    memset(&p->total, 0, sizeof p->total);
    for (size_t i = 0; i < p->nfiles; i++)
        agent_stats_merge(&p->total, &p->files[i]->total);
    /* the stacks through the file are that execution's too: emptied (not
     * freed: connections map their ids onto them), so that the hover's
     * stacks and the flame graph's root agree with the lines again, and
     * their ticks leave the timeline */
    for (size_t i = 0; i < p->nstacks; i++) {
        struct prof_stack *s = p->stacks[i];
        if (!stack_through(s, f)) continue;
        s->samples = 0;
        s->seconds = 0;
        for (size_t j = 0; j < s->nparts; j++) {
            s->parts[j].samples = 0;
            s->parts[j].seconds = 0;
        }
    }
    timeline_forget(&p->tl, stack_empty, NULL);
    return 0;
}

const struct agent_stats *profile_file_line(const struct prof_file *f, int line)
{
    long i = f ? line_find(f, line) : -1;
    return i >= 0 ? &f->lines[i].st : NULL;
}

const struct agent_stats *profile_line(const struct profile *p, const char *path, int line)
{
    return profile_file_line(profile_file(p, path), line);
}

static void add_line_memory(struct agent_stats *out, const struct agent_stats *l)
{
    static const int sum[] = {AGENT_STAT_ALLOC, AGENT_STAT_FREED, AGENT_STAT_PYALLOC,
                              AGENT_STAT_COPY};
    for (size_t k = 0; k < sizeof sum / sizeof sum[0]; k++)
        out->v[sum[k]] += l->v[sum[k]];
    if (l->v[AGENT_STAT_PEAK] > out->v[AGENT_STAT_PEAK])
        out->v[AGENT_STAT_PEAK] = l->v[AGENT_STAT_PEAK];
}

void profile_func_stats(const struct prof_file *f, const struct prof_func *fn,
                        struct agent_stats *out)
{
    *out = fn->st;
    long lo = fn->first_line > 0 ? fn->first_line : 0, hi = fn->last_line;
    /* whichever is shorter: the function's range, or the file's lines */
    if (hi >= lo && (size_t)(hi - lo) < f->nlines) {
        for (long l = lo; l <= hi; l++) {
            const struct agent_stats *st = profile_file_line(f, (int)l);
            if (st) add_line_memory(out, st);
        }
    } else {
        for (size_t i = 0; i < f->nlines; i++)
            if (f->lines[i].line >= lo && f->lines[i].line <= hi)
                add_line_memory(out, &f->lines[i].st);
    }
    agent_stats_derive(out);
}

size_t profile_leaks(const struct profile *p, const char *path, struct memprof_leak *out, size_t n)
{
    const struct prof_file *f = n ? profile_file(p, path) : NULL;
    if (!f) return 0;
    /* through the file's own lines (a timeline exists only for a line with
     * data), so that every file of a profile costs its lines, not the
     * whole table: linear over a profile of 30,000 files */
    size_t k = 0;
    for (size_t i = 0; i < f->nlines && k < n; i++)
        k += (size_t)memprof_line_leak(p->mem, f->path, f->lines[i].line, &out[k]);
    memprof_leaks_sort(out, k);
    return k;
}

struct memprof_leak_set *profile_leak_set_new(const struct profile *p)
{
    struct memprof_leak_set *ls = NULL;
    struct memprof_leak_file one;
    for (size_t i = 0; p && i < p->nfiles; i++) {
        one.path = p->files[i]->path;
        one.n = profile_leaks(p, one.path, one.l, MEMPROF_LEAKS_PER_FILE);
        if (!one.n) continue;
        if (!ls && !(ls = calloc(1, sizeof *ls))) return NULL;
        struct memprof_leak_file *nf = realloc(ls->files, (ls->n + 1) * sizeof *nf);
        if (!nf) {
            memprof_leak_set_free(ls);
            return NULL;
        }
        ls->files = nf;
        ls->files[ls->n++] = one;
    }
    return ls;
}

static int cmp_line_ref(const void *a, const void *b)
{
    const struct prof_line_ref *x = a, *y = b;
    double tx = agent_stats_time(x->st), ty = agent_stats_time(y->st);
    if (tx != ty) return tx > ty ? -1 : 1;
    int c = strcmp(x->file->path, y->file->path);
    return c ? c : x->line - y->line;
}

size_t profile_top_lines(const struct profile *p, struct prof_line_ref *out, size_t n)
{
    size_t total = p->nline_records;
    if (!total || !n) return 0;
    struct prof_line_ref *all = malloc(total * sizeof *all);
    if (!all) return 0;
    size_t k = 0;
    for (size_t i = 0; i < p->nfiles; i++)
        for (size_t j = 0; j < p->files[i]->nlines; j++) {
            const struct prof_line *l = &p->files[i]->lines[j];
            all[k++] = (struct prof_line_ref){p->files[i], l->line, &l->st};
        }
    qsort(all, k, sizeof *all, cmp_line_ref);
    if (n > k) n = k;
    memcpy(out, all, n * sizeof *out);
    free(all);
    return n;
}

/* a function with its sort key (the statistic asked for) */
struct func_key {
    double key;
    struct prof_func_ref r;
};

static int cmp_func_key(const void *a, const void *b)
{
    const struct func_key *x = a, *y = b;
    if (x->key != y->key) return x->key > y->key ? -1 : 1;
    double tx = agent_stats_time(&x->r.fn->st), ty = agent_stats_time(&y->r.fn->st);
    if (tx != ty) return tx > ty ? -1 : 1;
    int c = strcmp(x->r.file->path, y->r.file->path);
    return c ? c : x->r.fn->first_line - y->r.fn->first_line;
}

size_t profile_top_funcs_by(const struct profile *p, int stat, struct prof_func_ref *out, size_t n)
{
    size_t total = 0;
    for (size_t i = 0; i < p->nfiles; i++)
        total += p->files[i]->nfuncs;
    if (!total || !n) return 0;
    struct func_key *all = malloc(total * sizeof *all);
    if (!all) return 0;
    size_t k = 0;
    for (size_t i = 0; i < p->nfiles; i++)
        for (size_t j = 0; j < p->files[i]->nfuncs; j++) {
            const struct prof_func *fn = p->files[i]->funcs[j];
            struct agent_stats st; /* memory is its lines' (profile_func_stats) */
            if (stat >= 0) profile_func_stats(p->files[i], fn, &st);
            all[k++] = (struct func_key){stat < 0 ? agent_stats_time(&fn->st) : st.v[stat],
                                         {p->files[i], fn}};
        }
    qsort(all, k, sizeof *all, cmp_func_key);
    if (n > k) n = k;
    for (size_t i = 0; i < n; i++)
        out[i] = all[i].r;
    free(all);
    return n;
}

size_t profile_top_funcs(const struct profile *p, struct prof_func_ref *out, size_t n)
{
    return profile_top_funcs_by(p, -1, out, n);
}

static int cmp_stack(const void *a, const void *b)
{
    const struct prof_stack *x = *(const struct prof_stack *const *)a;
    const struct prof_stack *y = *(const struct prof_stack *const *)b;
    if (x->seconds != y->seconds) return x->seconds > y->seconds ? -1 : 1;
    return (x->samples < y->samples) - (x->samples > y->samples);
}

size_t profile_top_stacks(const struct profile *p, const char *path, int line,
                          const struct prof_stack **out, size_t n)
{
    if (!p->nstacks || !n) return 0;
    const struct prof_stack **all = malloc(p->nstacks * sizeof *all);
    if (!all) return 0;
    size_t k = 0;
    const struct prof_file *f = path ? profile_file(p, path) : NULL;
    if (path && !f) {
        free(all);
        return 0;
    }
    for (size_t i = 0; i < p->nstacks; i++) {
        const struct prof_stack *s = p->stacks[i];
        int keep = !path;
        for (size_t j = 0; !keep && j < s->nfr; j++)
            keep = s->fr[j].file == f->path && s->fr[j].line == line; /* interned */
        if (keep && !stack_empty(s, NULL)) all[k++] = s; /* empty: profile_reset_file */
    }
    qsort(all, k, sizeof *all, cmp_stack);
    if (n > k) n = k;
    memcpy(out, all, n * sizeof *out);
    free(all);
    return n;
}

/* ---- processes ---- */

void profile_proc_label(const struct profile *p, long long pid, char *buf, size_t n)
{
    /* a pid that exec'd has an entry per program (Ray's setup_worker.py,
     * then default_worker.py): the one with a role, else the latest */
    const struct prof_proc *pr = NULL;
    for (size_t i = 0; i < p->nprocs; i++)
        if (p->procs[i].pid == pid && (!pr || !pr->role)) pr = &p->procs[i];
    const char *a0 = pr ? json_string_value(json_array_get(pr->argv, 0)) : NULL;
    const char *a1 = pr ? json_string_value(json_array_get(pr->argv, 1)) : NULL;
    if (pr && pr->role) {
        snprintf(buf, n, "%s (pid %lld)", pr->role, pid);
    } else if (a0 && (!strcmp(a0, "-c") || !strcmp(a0, "-m"))) {
        /* multiprocessing's children are `python -c ... --multiprocessing-fork` */
        int mp = a1 && !strcmp(a1, "--multiprocessing-fork");
        snprintf(buf, n, "%s (pid %lld)",
                 mp                        ? "multiprocessing child"
                 : !strcmp(a0, "-m") && a1 ? a1
                                           : "python -c",
                 pid);
    } else if (a0 && a0[0]) {
        const char *base = strrchr(a0, '/');
        snprintf(buf, n, "%s (pid %lld)", base && base[1] ? base + 1 : a0, pid);
    } else {
        snprintf(buf, n, "pid %lld", pid);
    }
    for (char *c = buf; *c; c++) /* one line, whatever the program named it */
        if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = ' ';
    /* cut by n: no half UTF-8 sequence at the end (the label goes into JSON) */
    size_t len = strlen(buf), i = len;
    while (i > 0 && ((unsigned char)buf[i - 1] & 0xC0) == 0x80)
        i--;
    if (i > 0) {
        unsigned char c = (unsigned char)buf[i - 1];
        size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        if (len - (i - 1) < need) buf[i - 1] = 0;
    }
}

size_t profile_line_by_process(const struct profile *p, const char *path, int line,
                               struct prof_pid_seconds *out, size_t n, double *untold)
{
    size_t k = 0;
    if (untold) *untold = 0;
    const struct prof_file *f = path ? profile_file(p, path) : NULL;
    if (!f || !n) return 0;
    for (size_t i = 0; i < p->nstacks; i++) {
        const struct prof_stack *s = p->stacks[i];
        int through = 0;
        for (size_t j = 0; !through && j < s->nfr; j++)
            through = s->fr[j].file == f->path && s->fr[j].line == line; /* interned */
        if (!through) continue;
        double told = 0;
        for (size_t j = 0; j < s->nparts; j++) {
            const struct prof_stack_part *pt = &s->parts[j];
            told += pt->seconds;
            size_t m = 0;
            while (m < k && out[m].pid != pt->pid)
                m++;
            if (m == k) {
                if (k == n) { /* more processes than room: the rest not told apart */
                    if (untold) *untold += pt->seconds;
                    continue;
                }
                out[k++] = (struct prof_pid_seconds){pt->pid, 0};
            }
            out[m].seconds += pt->seconds;
        }
        if (untold && s->seconds - told > 1e-9) *untold += s->seconds - told;
    }
    for (size_t i = 1; i < k; i++) /* heaviest first (insertion: k is small) */
        for (size_t j = i; j > 0 && out[j].seconds > out[j - 1].seconds; j--) {
            struct prof_pid_seconds t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return k;
}
