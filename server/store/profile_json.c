/* profile_json: the profile store to and from its JSON file format
 * (docs/profile-format.md): writing (profile_to_json, profile_save*),
 * reading (profile_from_json*, profile_load*, profile_read_file), the
 * untrusted-input checks and caps, cancellation of a long load. Builds the
 * store through the store's own internals (profile_internal.h). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/memprof.h"
#include "store/profile.h"
#include "store/profile_internal.h"

/* ---- JSON --------------------------------------------------------------- */

static json_t *stats_json(const struct agent_stats *st)
{
    json_t *o = json_object();
    for (int i = 0; i < AGENT_NSTATS; i++) {
        double v = st->v[i];
        if (i > AGENT_STAT_N && v == 0) continue; /* memory/GPU fields: only when measured */
        if (i == AGENT_STAT_N)
            json_object_set_new(o, agent_stat_descs[i].json, json_integer((json_int_t)llround(v)));
        else
            json_object_set_new(o, agent_stat_descs[i].json, json_real(v));
    }
    return o;
}

json_t *profile_leaks_json(const struct profile *p, const char *path)
{
    struct memprof_leak l[MEMPROF_LEAKS_PER_FILE];
    size_t n = profile_leaks(p, path, l, MEMPROF_LEAKS_PER_FILE);
    if (!n) return NULL;
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_pack("{s:i,s:f,s:f,s:f}", "line", l[i].line, "likelihood",
                                           round(l[i].likelihood * 100) / 100, "rate_mb_s",
                                           l[i].rate_mb_s, "kept_mb", l[i].kept_mb));
    return a;
}

static json_t *nullable_str(const char *s)
{
    return s ? json_string(s) : json_null();
}

/* p's meta, totals and dropped count into root (its first keys). */
static void meta_json(const struct profile *p, json_t *root)
{
    const struct prof_meta *m = &p->meta;
    json_object_set_new(root, "version", json_integer(PROFILE_FORMAT_VERSION));
    json_object_set_new(root, "program", json_string(m->program ? m->program : ""));
    json_object_set_new(root, "argv", m->argv ? json_deep_copy(m->argv) : json_array());
    json_object_set_new(root, "python_version", nullable_str(m->python_version));
    json_object_set_new(root, "elapsed_s", json_real(m->elapsed_s));
    json_object_set_new(root, "interval_ms", json_real(m->interval_ms));
    json_object_set_new(root, "samples", json_integer(m->samples));
    json_object_set_new(root, "exit",
                        json_pack("{s:o,s:o,s:o}", "status",
                                  m->exit_status >= 0 ? json_integer(m->exit_status) : json_null(),
                                  "signal",
                                  m->exit_signal > 0 ? json_integer(m->exit_signal) : json_null(),
                                  "reason", nullable_str(m->reason)));
    json_object_set_new(root, "totals", stats_json(&p->total));
    json_object_set_new(root, "dropped", json_integer(p->dropped));
}

/* One file of p (new): its lines (with their memory), functions, totals, leaks. */
static json_t *file_json(const struct profile *p, const struct prof_file *f)
{
    json_t *lines = json_object();
    for (size_t j = 0; j < f->nlines; j++) {
        char k[16];
        snprintf(k, sizeof k, "%d", f->lines[j].line);
        json_t *lo = stats_json(&f->lines[j].st);
        memprof_json_line(p->mem, f->path, f->lines[j].line, lo);
        json_object_set_new(lines, k, lo);
    }
    json_t *funcs = json_array();
    for (size_t j = 0; j < f->nfuncs; j++) {
        json_t *o = stats_json(&f->funcs[j]->st);
        json_object_set_new(o, "name", json_string(f->funcs[j]->name));
        json_object_set_new(o, "first_line", json_integer(f->funcs[j]->first_line));
        json_object_set_new(o, "last_line", json_integer(f->funcs[j]->last_line));
        json_array_append_new(funcs, o);
    }
    json_t *fo = json_pack("{s:o,s:o,s:o}", "lines", lines, "functions", funcs, "totals",
                           stats_json(&f->total));
    json_t *leaks = profile_leaks_json(p, f->path);
    if (leaks) json_object_set_new(fo, "leaks", leaks);
    return fo;
}

/* One stack (new): its frames, samples, seconds and, when threads are told
 * apart, its parts by thread. */
static json_t *stack_json(const struct prof_stack *st)
{
    json_t *fr = json_array();
    for (size_t j = 0; j < st->nfr; j++)
        json_array_append_new(fr, json_pack("{s:s,s:s,s:i}", "file", st->fr[j].file, "name",
                                            st->fr[j].name, "line", st->fr[j].line));
    json_t *so = json_pack("{s:o,s:I,s:f}", "frames", fr, "samples", (json_int_t)st->samples,
                           "seconds", st->seconds);
    if (so && st->nparts) { /* absent: threads not told apart (docs/profile-format.md) */
        json_t *parts = json_array();
        for (size_t j = 0; j < st->nparts; j++) {
            const struct prof_stack_part *sp = &st->parts[j];
            json_array_append_new(parts,
                                  json_pack("{s:I,s:I,s:I,s:f}", "pid", (json_int_t)sp->pid, "tid",
                                            (json_int_t)sp->tid, "samples", (json_int_t)sp->samples,
                                            "seconds", sp->seconds));
        }
        json_object_set_new(so, "threads", parts);
    }
    return so;
}

/* p's top stacks (at most PROFILE_JSON_STACKS) and the timeline of those
 * into root. */
static void stacks_json(const struct profile *p, json_t *root)
{
    const struct prof_stack **top = malloc((p->nstacks ? p->nstacks : 1) * sizeof *top);
    size_t ns = top ? profile_top_stacks(p, NULL, 0, top, PROFILE_JSON_STACKS) : 0;
    json_t *stacks = json_array();
    for (size_t i = 0; i < ns; i++)
        json_array_append_new(stacks, stack_json(top[i]));
    json_object_set_new(root, "stacks", stacks);
    json_t *tl = timeline_json(&p->tl, top, ns);
    if (tl) json_object_set_new(root, "timeline", tl);
    free(top);
}

/* p's threads, pids and processes into root (its last keys). */
static void threads_procs_json(const struct profile *p, json_t *root)
{
    json_t *threads = json_array();
    for (size_t i = 0; i < p->nthreads; i++) {
        const struct prof_thread *t = &p->threads[i];
        json_array_append_new(threads,
                              json_pack("{s:I,s:I,s:s,s:f,s:f,s:f}", "pid", (json_int_t)t->pid,
                                        "tid", (json_int_t)t->tid, "name", t->name, "python_s",
                                        t->py, "native_s", t->nat, "system_s", t->sys));
    }
    json_object_set_new(root, "threads", threads);
    json_t *procs = json_array(), *pids = json_array();
    for (size_t i = 0; i < p->nprocs; i++) {
        const struct prof_proc *pr = &p->procs[i];
        json_array_append_new(pids, json_integer(pr->pid));
        json_t *po = json_pack("{s:I,s:I,s:o,s:o,s:o}", "pid", (json_int_t)pr->pid, "ppid",
                               (json_int_t)pr->ppid, "python", nullable_str(pr->python), "argv",
                               pr->argv ? json_deep_copy(pr->argv) : json_array(), "end",
                               nullable_str(pr->end_reason));
        if (po && pr->role) json_object_set_new(po, "role", json_string(pr->role));
        json_array_append_new(procs, po);
    }
    json_object_set_new(root, "pids", pids);
    json_object_set_new(root, "processes", procs);
}

json_t *profile_to_json(const struct profile *p)
{
    json_t *root = json_object();
    meta_json(p, root);
    json_t *files = json_object();
    for (size_t i = 0; i < p->nfiles; i++)
        json_object_set_new(files, p->files[i]->path, file_json(p, p->files[i]));
    json_object_set_new(root, "files", files);
    memprof_json_top(p->mem, root);
    stacks_json(p, root);
    threads_procs_json(p, root);
    return root;
}

static int jfail(char *err, size_t errlen, const char *what)
{
    if (err && errlen) snprintf(err, errlen, "invalid profile: %s", what);
    return -EINVAL;
}

static int load_meta(struct profile *p, const json_t *root, char *err, size_t errlen)
{
    struct prof_meta *m = &p->meta;
    json_t *v = json_object_get(root, "version");
    if (!json_is_integer(v))
        return jfail(err, errlen, "no integer 'version' (is this a Hotline profile?)");
    if (json_integer_value(v) != PROFILE_FORMAT_VERSION) {
        if (err && errlen)
            snprintf(err, errlen, "unsupported profile version %lld (this hotline reads %d)",
                     (long long)json_integer_value(v), PROFILE_FORMAT_VERSION);
        return -EINVAL;
    }
    v = json_object_get(root, "program");
    if (v && !json_is_string(v)) return jfail(err, errlen, "'program' is not a string");
    if (profile_set_str(&m->program, v ? json_string_value(v) : NULL)) return -ENOMEM;
    v = json_object_get(root, "python_version");
    if (v && !json_is_null(v) && !json_is_string(v))
        return jfail(err, errlen, "'python_version' is not a string");
    if (json_is_string(v) && profile_set_str(&m->python_version, json_string_value(v)))
        return -ENOMEM;
    v = json_object_get(root, "argv");
    if (v && !json_is_array(v)) return jfail(err, errlen, "'argv' is not an array");
    if (v) m->argv = json_deep_copy(v);
    const char *nums[] = {"elapsed_s", "interval_ms", "samples"};
    for (int i = 0; i < 3; i++) {
        v = json_object_get(root, nums[i]);
        if (v && !json_is_number(v))
            return jfail(err, errlen, "'elapsed_s'/'interval_ms'/'samples' is not a number");
    }
    m->elapsed_s = json_number_value(json_object_get(root, "elapsed_s"));
    m->interval_ms = json_number_value(json_object_get(root, "interval_ms"));
    m->samples = (long long)json_number_value(json_object_get(root, "samples"));
    json_t *ex = json_object_get(root, "exit");
    if (ex && !json_is_object(ex)) return jfail(err, errlen, "'exit' is not an object");
    if (ex) {
        json_t *st = json_object_get(ex, "status"), *sg = json_object_get(ex, "signal"),
               *rs = json_object_get(ex, "reason");
        if ((st && !json_is_null(st) && !json_is_integer(st)) ||
            (sg && !json_is_null(sg) && !json_is_integer(sg)) ||
            (rs && !json_is_null(rs) && !json_is_string(rs)))
            return jfail(err, errlen, "'exit' has a field of the wrong type");
        m->exit_status = json_is_integer(st) ? (int)json_integer_value(st) : -1;
        m->exit_signal = json_is_integer(sg) ? (int)json_integer_value(sg) : 0;
        if (json_is_string(rs) && profile_set_str(&m->reason, json_string_value(rs)))
            return -ENOMEM;
    }
    return 0;
}

/* Cancellation of a load: checked every PROFILE_CANCEL_EVERY records, so
 * that a relaxed atomic load stays off the per-record cost. */
struct load_cancel {
    const atomic_int *flag; /* borrowed, may be NULL */
    size_t n;               /* records seen */
};

static int load_cancelled(struct load_cancel *c)
{
    return c->flag && ++c->n % PROFILE_CANCEL_EVERY == 0 &&
           atomic_load_explicit(c->flag, memory_order_relaxed);
}

static int load_files(struct profile *p, const json_t *files, struct load_cancel *cn, char *err,
                      size_t errlen)
{
    if (!json_is_object(files)) return jfail(err, errlen, "'files' is not an object");
    const char *path;
    json_t *fo;
    json_object_foreach((json_t *)files, path, fo)
    {
        if (load_cancelled(cn)) return -ECANCELED;
        if (!json_is_object(fo)) return jfail(err, errlen, "a 'files' entry is not an object");
        struct prof_file *f = prof__file_get(p, path, 1);
        if (!f) { /* over PROFILE_MAX_FILES (or out of memory): the rest is dropped */
            p->dropped++;
            continue;
        }
        json_t *lines = json_object_get(fo, "lines"), *funcs = json_object_get(fo, "functions");
        if ((lines && !json_is_object(lines)) || (funcs && !json_is_array(funcs)))
            return jfail(err, errlen, "'lines' must be an object and 'functions' a list");
        const char *lk;
        json_t *lo;
        json_object_foreach(lines, lk, lo)
        {
            if (load_cancelled(cn)) return -ECANCELED;
            char *end;
            errno = 0;
            long l = strtol(lk, &end, 10);
            struct agent_stats st;
            if (*end || end == lk || l < 0)
                return jfail(err, errlen, "a line key is not a line number");
            if (!json_is_object(lo) || agent_stats_read(&st, lo, 1))
                return jfail(err, errlen, "a line entry has a field of the wrong type");
            /* past PROFILE_MAX_LINE or a cap: counted in dropped, never stored */
            if (l > PROFILE_MAX_LINE || errno) {
                p->dropped++;
                continue;
            }
            if (!prof__file_add_line(p, f, (int)l, &st))
                memprof_load_line(p->mem, f->path, (int)l, lo);
        }
        for (size_t i = 0; i < json_array_size(funcs); i++) {
            if (load_cancelled(cn)) return -ECANCELED;
            json_t *o = json_array_get(funcs, i);
            struct agent_stats st;
            json_t *nm = json_object_get(o, "name"), *fl = json_object_get(o, "first_line"),
                   *ll = json_object_get(o, "last_line");
            if (!json_is_object(o) || !json_is_string(nm) || !json_is_integer(fl) ||
                (ll && !json_is_integer(ll)) || agent_stats_read(&st, o, 1))
                return jfail(err, errlen, "a function entry has a field of the wrong type");
            int first = (int)json_integer_value(fl);
            int last = ll ? (int)json_integer_value(ll) : first;
            prof__add_func(p, path, json_string_value(nm), first, last, &st);
        }
    }
    return 0;
}

/* Adds a saved stack's samples and seconds to s, with its optional
 * per-thread parts (so, borrowed). The parts go through prof__stack_add
 * first, then what they leave of the totals (never below zero) is added as
 * threads not told apart, so a stack's totals are the file's whatever its
 * parts say. 0, or -EINVAL for a part of the wrong type. */
static int load_stack_threads(struct profile *p, struct prof_stack *s, const json_t *so,
                              long long samples, double seconds)
{
    const json_t *parts = json_object_get(so, "threads");
    if (parts && !json_is_array(parts)) return -EINVAL;
    long long n_left = samples;
    double s_left = seconds;
    for (size_t i = 0; i < json_array_size(parts); i++) {
        const json_t *o = json_array_get(parts, i), *pid = json_object_get(o, "pid"),
                     *tid = json_object_get(o, "tid"), *pn = json_object_get(o, "samples"),
                     *ps = json_object_get(o, "seconds");
        if (!json_is_integer(pid) || !json_is_integer(tid) || !json_is_integer(pn) ||
            !json_is_number(ps))
            return -EINVAL;
        long long k = json_integer_value(pn);
        double sec = json_number_value(ps);
        if (k < 0 || !(sec >= 0)) return -EINVAL; /* !(>=) rejects NaN too */
        if (k > n_left) k = n_left;
        if (sec > s_left) sec = s_left;
        prof__stack_add(p, s, json_integer_value(pid), json_integer_value(tid), k, sec);
        n_left -= k;
        s_left -= sec;
    }
    prof__stack_add(p, s, 0, 0, n_left, s_left);
    return 0;
}

static int load_stacks(struct profile *p, const json_t *stacks, const struct prof_stack **made,
                       struct load_cancel *cn, char *err, size_t errlen);
static int load_threads_procs(struct profile *p, const json_t *root);

static int load_rest(struct profile *p, const json_t *root, struct load_cancel *cn, char *err,
                     size_t errlen)
{
    json_t *stacks = json_object_get(root, "stacks");
    if (stacks && !json_is_array(stacks)) return jfail(err, errlen, "'stacks' is not a list");
    /* the store stack of each entry, for the timeline's ticks */
    const struct prof_stack **made = calloc(json_array_size(stacks) + 1, sizeof *made);
    if (!made) return -ENOMEM;
    int rc = load_stacks(p, stacks, made, cn, err, errlen);
    if (!rc)
        rc = timeline_load(&p->tl, json_object_get(root, "timeline"), made, json_array_size(stacks),
                           err, errlen);
    free(made);
    if (rc) return rc;
    return load_threads_procs(p, root);
}

/* The profile's "stacks" into p, made[i] the store stack of entry i. */
static int load_stacks(struct profile *p, const json_t *stacks, const struct prof_stack **made,
                       struct load_cancel *cn, char *err, size_t errlen)
{
    for (size_t i = 0; i < json_array_size(stacks); i++) {
        if (load_cancelled(cn)) return -ECANCELED;
        json_t *so = json_array_get(stacks, i), *fr = json_object_get(so, "frames");
        json_t *ns = json_object_get(so, "samples"), *sec = json_object_get(so, "seconds");
        if (!json_is_array(fr) || !json_is_integer(ns) || !json_is_number(sec))
            return jfail(err, errlen, "a stack entry has a field of the wrong type");
        /* negative totals would pass into its thread parts, which a load
         * refuses: the profile would not load once saved (fuzz_profile_load) */
        if (json_integer_value(ns) < 0 || !(json_number_value(sec) >= 0))
            return jfail(err, errlen, "a stack entry has negative samples or seconds");
        size_t n = json_array_size(fr);
        struct prof_frame *f = calloc(n ? n : 1, sizeof *f);
        if (!f) return -ENOMEM;
        for (size_t j = 0; j < n; j++) {
            json_t *o = json_array_get(fr, j), *fi = json_object_get(o, "file"),
                   *nm = json_object_get(o, "name"), *ln = json_object_get(o, "line");
            if (!json_is_string(fi) || !json_is_string(nm) || !json_is_integer(ln)) {
                free(f);
                return jfail(err, errlen, "a stack frame has a field of the wrong type");
            }
            f[j].file = prof__intern(p, json_string_value(fi));
            f[j].name = prof__intern(p, json_string_value(nm));
            f[j].line = (int)json_integer_value(ln);
        }
        struct prof_stack *s = prof__stack_get(p, f, n);
        free(f);
        if (s && load_stack_threads(p, s, so, json_integer_value(ns), json_number_value(sec)))
            return jfail(err, errlen, "a stack's thread entry has a field of the wrong type");
        made[i] = s;
    }
    return 0;
}

/* The profile's threads, processes, dropped count and memory top into p. */
static int load_threads_procs(struct profile *p, const json_t *root)
{
    json_t *threads = json_object_get(root, "threads");
    for (size_t i = 0; json_is_array(threads) && i < json_array_size(threads); i++) {
        json_t *o = json_array_get(threads, i), *nm = json_object_get(o, "name");
        struct prof_thread *t = prof__thread_get(p, json_integer_value(json_object_get(o, "pid")),
                                                 json_integer_value(json_object_get(o, "tid")),
                                                 json_is_string(nm) ? json_string_value(nm) : "");
        if (!t) continue;
        t->py += json_number_value(json_object_get(o, "python_s"));
        t->nat += json_number_value(json_object_get(o, "native_s"));
        t->sys += json_number_value(json_object_get(o, "system_s"));
    }
    json_t *procs = json_object_get(root, "processes");
    for (size_t i = 0; json_is_array(procs) && i < json_array_size(procs); i++) {
        json_t *o = json_array_get(procs, i);
        struct prof_proc *pr = prof__proc_new(p, json_integer_value(json_object_get(o, "pid")));
        if (!pr) return -ENOMEM;
        pr->ppid = json_integer_value(json_object_get(o, "ppid"));
        json_t *py = json_object_get(o, "python"), *en = json_object_get(o, "end"),
               *av = json_object_get(o, "argv");
        if (json_is_string(py)) profile_set_str(&pr->python, json_string_value(py));
        if (json_is_string(en)) profile_set_str(&pr->end_reason, json_string_value(en));
        if (json_is_array(av)) pr->argv = json_deep_copy(av);
        json_t *ro = json_object_get(o, "role");
        if (json_is_string(ro) && json_string_length(ro) < PROFILE_ROLE_MAX)
            profile_set_str(&pr->role, json_string_value(ro));
    }
    json_t *d = json_object_get(root, "dropped");
    if (json_is_integer(d)) p->dropped = json_integer_value(d);
    memprof_load_top(p->mem, root);
    return 0;
}

/* -ERANGE when a number anywhere in v (borrowed) is past PROFILE_MAX_NUMBER
 * (its value in *bad), -ECANCELED, or 0. Recursion is bounded by jansson's
 * parser depth (2048). */
static int numbers_in_range(const json_t *v, struct load_cancel *cn, double *bad)
{
    if (json_is_number(v)) {
        double x = json_number_value(v);
        if (x >= -PROFILE_MAX_NUMBER && x <= PROFILE_MAX_NUMBER) return 0;
        *bad = x;
        return -ERANGE;
    }
    if (load_cancelled(cn)) return -ECANCELED;
    int rc = 0;
    if (json_is_array(v)) {
        for (size_t i = 0; !rc && i < json_array_size(v); i++)
            rc = numbers_in_range(json_array_get(v, i), cn, bad);
    } else if (json_is_object(v)) {
        const char *k;
        json_t *e;
        json_object_foreach((json_t *)v, k, e)
        {
            if ((rc = numbers_in_range(e, cn, bad))) break;
        }
    }
    return rc;
}

struct profile *profile_from_json(const json_t *root, char *err, size_t errlen)
{
    return profile_from_json_cancellable(root, NULL, err, errlen);
}

struct profile *profile_from_json_cancellable(const json_t *root, const atomic_int *cancel,
                                              char *err, size_t errlen)
{
    if (!json_is_object(root)) {
        jfail(err, errlen, "not a JSON object");
        return NULL;
    }
    struct profile *p = profile_new();
    if (!p) {
        jfail(err, errlen, "out of memory");
        return NULL;
    }
    struct load_cancel cn = {cancel, 0};
    double bad = 0;
    int rc = load_meta(p, root, err, errlen); /* first: a wrong version says so */
    if (!rc && (rc = numbers_in_range(root, &cn, &bad)) == -ERANGE && err && errlen)
        snprintf(err, errlen,
                 "invalid profile: a number out of range (%g; a profile's are within "
                 "+-%g, so that no sum overflows)",
                 bad, PROFILE_MAX_NUMBER);
    if (!rc) {
        json_t *files = json_object_get(root, "files");
        rc = files ? load_files(p, files, &cn, err, errlen) : 0;
    }
    if (!rc) rc = load_rest(p, root, &cn, err, errlen);
    if (rc) {
        if (rc == -ENOMEM) jfail(err, errlen, "out of memory");
        if (rc == -ECANCELED && err && errlen) snprintf(err, errlen, "cancelled");
        profile_free(p);
        return NULL;
    }
    return p;
}

struct json_fill {
    const json_t *root;
    size_t flags;
};

static int fill_json(FILE *f, void *ud)
{
    const struct json_fill *j = ud;
    errno = 0;
    if (json_dumpf(j->root, f, j->flags) || fputc('\n', f) == EOF) return errno ? -errno : -EIO;
    return 0;
}

int profile_save_json(const json_t *root, const char *path, size_t flags)
{
    return profile_write_json(root, path, flags, 0);
}

int profile_write_json(const json_t *root, const char *path, size_t flags, int wflags)
{
    struct json_fill j = {root, flags};
    return profile_write(path, wflags, fill_json, &j);
}

int profile_save_with(const char *path, int (*fill)(FILE *f, void *ud), void *ud)
{
    return profile_write(path, 0, fill, ud);
}

/* A new file beside path, renamed over it: a reader never sees half of it. */
static int write_atomic(const char *path, int (*fill)(FILE *f, void *ud), void *ud)
{
    size_t n = strlen(path);
    char *tmp = malloc(n + 16);
    if (!tmp) return -ENOMEM;
    /* mkostemp creates with O_EXCL (mode 0600): a name someone placed
     * beforehand, a symlink included, is never opened; and rename replaces
     * a symlink at path itself, not what it points to */
    snprintf(tmp, n + 16, "%s.tmp.XXXXXX", path);
    int rc = 0;
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        rc = -errno;
        free(tmp);
        return rc;
    }
    /* buffered: json_dumpfd writes token by token (one syscall each) */
    FILE *f = fdopen(fd, "w");
    if (!f) {
        rc = -errno;
        close(fd);
        unlink(tmp);
        free(tmp);
        return rc;
    }
    rc = fill(f, ud);
    errno = 0;
    if (!rc && fflush(f)) rc = errno ? -errno : -EIO;
    if (!rc && fsync(fd)) rc = -errno;
    if (fclose(f) && !rc) rc = -errno;
    if (!rc && rename(tmp, path)) rc = -errno;
    if (rc) unlink(tmp);
    free(tmp);
    return rc;
}

/* Into what is at path, opened as it is (a terminal, /dev/null, a FIFO
 * someone reads): never created, never truncated (a device or a FIFO has
 * nothing to truncate), never fsynced (a FIFO refuses it). */
static int write_in_place(const char *path, int (*fill)(FILE *f, void *ud), void *ud)
{
    int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return -errno;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        int rc = -errno;
        close(fd);
        return rc;
    }
    int rc = fill(f, ud);
    errno = 0;
    if (!rc && fflush(f)) rc = errno ? -errno : -EIO;
    if (fclose(f) && !rc) rc = -errno;
    return rc;
}

int profile_write(const char *path, int wflags, int (*fill)(FILE *f, void *ud), void *ud)
{
    if (wflags & PROFILE_WRITE_REPLACE) return write_atomic(path, fill, ud);
    struct stat st, lst;
    if (stat(path, &st)) return write_atomic(path, fill, ud); /* missing, or a dangling link */
    if (!S_ISREG(st.st_mode)) return write_in_place(path, fill, ud);
    if (lstat(path, &lst) || !S_ISLNK(lst.st_mode)) return write_atomic(path, fill, ud);
    /* a symlink to a regular file: the file it names is replaced, the link
     * stays (as a shell's `>` would keep it) */
    char *real = realpath(path, NULL);
    if (!real) return -errno;
    int rc = write_atomic(real, fill, ud);
    free(real);
    return rc;
}

int profile_save(const struct profile *p, const char *path)
{
    json_t *root = profile_to_json(p);
    if (!root) return -ENOMEM;
    int rc = profile_save_json(root, path, PROFILE_SAVE_FLAGS);
    json_decref(root);
    return rc;
}

int profile_read_file(const char *path, size_t max, int flags, char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    int oflags = O_RDONLY | O_CLOEXEC;
    if (flags & PROFILE_READ_NOFOLLOW) oflags |= O_NOFOLLOW;
    if (flags & PROFILE_READ_REGULAR) oflags |= O_NONBLOCK; /* a FIFO must not block the open */
    int fd = open(path, oflags);
    if (fd < 0) return -errno;
    struct stat st;
    if (fstat(fd, &st)) {
        int e = -errno;
        close(fd);
        return e;
    }
    if ((flags & PROFILE_READ_REGULAR) && !S_ISREG(st.st_mode)) {
        close(fd);
        return -EINVAL;
    }
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > max) {
        close(fd);
        return -EFBIG;
    }
    /* sized by what is read, not by st_size: the file may grow meanwhile,
     * and a pipe or device has none */
    size_t cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1 : 65536, n = 0;
    if (cap > max + 1) cap = max + 1;
    char *buf = malloc(cap + 1);
    int rc = buf ? 0 : -ENOMEM;
    while (!rc) {
        if (n == cap) {
            if (cap > max) {
                rc = -EFBIG;
                break;
            }
            size_t nc = cap * 2 > max + 1 ? max + 1 : cap * 2;
            char *nb = realloc(buf, nc + 1);
            if (!nb) {
                rc = -ENOMEM;
                break;
            }
            buf = nb;
            cap = nc;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) rc = -errno;
        if (r <= 0) break;
        n += (size_t)r;
    }
    close(fd);
    if (!rc && n > max) rc = -EFBIG;
    if (rc) {
        free(buf);
        return rc;
    }
    buf[n] = 0;
    *out = buf;
    *len = n;
    return 0;
}

/* ---- reading: bounded by what the text builds ----------------------------- */

/* What jansson 2.14 takes per value on glibc x86-64, measured with `hotline
 * view` of 4 million of each (peak RSS over the text): an object 226 B, an
 * array 133 B, a string 88 B + its bytes, a number 40 B; a key costs what a
 * string does. Rounded up: the estimate must not be below the truth. */
#define COST_OBJECT 240
#define COST_ARRAY 144
#define COST_STRING 96
#define COST_SCALAR 48

int profile_json_precheck(const char *text, size_t len, char *err, size_t errlen)
{
    size_t cost = 0;
    for (size_t i = 0; i < len; i++) { /* to the end: the message says how much */
        char c = text[i];
        if (c == '{') {
            cost += COST_OBJECT;
        } else if (c == '[') {
            cost += COST_ARRAY;
        } else if (c == '"') { /* a key or a string: skip to its closing quote */
            size_t st = ++i;
            while (i < len && text[i] != '"')
                i += text[i] == '\\' ? 2 : 1;
            cost += COST_STRING + (i - st);
        } else if (c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n') {
            /* a number, true, false or null: one value, however long */
            cost += COST_SCALAR;
            while (i + 1 < len && strchr(",]} \t\r\n\"", text[i + 1]) == NULL)
                i++;
        }
    }
    if (cost <= PROFILE_MAX_JSON_TREE) return 0;
    if (err && errlen)
        snprintf(err, errlen,
                 "holds too many JSON values to load (their tree would take about %zu MB; at most "
                 "%zu MB)",
                 cost >> 20, PROFILE_MAX_JSON_TREE >> 20);
    return -E2BIG;
}

/* json_load_callback's source: the text in jansson's chunks (1 KiB), none
 * once the load is cancelled, which jansson takes for the end of its input:
 * the parse fails at once and frees what it built. */
struct parse_src {
    const char *text;
    size_t len, off;
    const atomic_int *cancel; /* borrowed, may be NULL */
};

static size_t parse_chunk(void *buf, size_t n, void *arg)
{
    struct parse_src *src = arg;
    if (src->cancel && atomic_load_explicit(src->cancel, memory_order_relaxed)) return (size_t)-1;
    if (n > src->len - src->off) n = src->len - src->off;
    memcpy(buf, src->text + src->off, n);
    src->off += n;
    return n;
}

json_t *profile_json_parse(const char *text, size_t len, const atomic_int *cancel, char *err,
                           size_t errlen)
{
    if (profile_json_precheck(text, len, err, errlen)) return NULL;
    json_error_t je;
    struct parse_src src = {text, len, 0, cancel};
    json_t *root = json_load_callback(parse_chunk, &src, 0, &je);
    if (!root && err && errlen) {
        if (cancel && atomic_load(cancel))
            snprintf(err, errlen, "cancelled");
        else
            snprintf(err, errlen, "%s", je.text);
    }
    return root;
}

struct profile *profile_load_text(const char *text, size_t len, const atomic_int *cancel, char *err,
                                  size_t errlen)
{
    json_t *root = profile_json_parse(text, len, cancel, err, errlen);
    if (!root) return NULL;
    struct profile *p = profile_from_json_cancellable(root, cancel, err, errlen);
    json_decref(root);
    return p;
}

struct profile *profile_load(const char *path, int flags, char *err, size_t errlen)
{
    return profile_load_cancellable(path, flags, NULL, err, errlen);
}

struct profile *profile_load_cancellable(const char *path, int flags, const atomic_int *cancel,
                                         char *err, size_t errlen)
{
    char *text;
    size_t len;
    int rc = profile_read_file(path, PROFILE_MAX_JSON_BYTES, flags, &text, &len);
    if (rc) {
        const char *why = rc == -ELOOP    ? "is a symbolic link: not followed"
                          : rc == -EINVAL ? "is not a regular file"
                          : rc == -EFBIG  ? "is bigger than a profile may be"
                                          : strerror(-rc);
        if (err && errlen) {
            if (rc == -EFBIG)
                snprintf(err, errlen, "%s: %s (%zu MB)", path, why, PROFILE_MAX_JSON_BYTES >> 20);
            else
                snprintf(err, errlen, "%s: %s", path, why);
        }
        return NULL;
    }
    char why[512] = "";
    json_t *root = profile_json_parse(text, len, cancel, why, sizeof why);
    free(text);
    if (!root) { /* the text's own faults name the file; a cancel does not */
        if (err && errlen) {
            if (cancel && atomic_load(cancel))
                snprintf(err, errlen, "cancelled");
            else
                snprintf(err, errlen, "%s: %s", path, why);
        }
        return NULL;
    }
    struct profile *p = profile_from_json_cancellable(root, cancel, err, errlen);
    json_decref(root);
    return p;
}
