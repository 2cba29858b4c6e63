/* agent_wire: split the agent's byte stream into lines and decode each line
 * into a checked message (see agent_wire.h, docs/agent-protocol.md).
 * Everything coming from the agent is untrusted: each known field is
 * type-checked here, once, so the profile store can trust what it gets. */
#include "agent_wire.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Keys and message types from the tables of agent_keys.h, which the agent
 * writes from too. */
#define KEY(k) agent_key_name(AGENT_KEY_##k)
#define TYPE(p) agent_place_type(AGENT_IN_##p)
#define STAT(s) agent_stat_wire(AGENT_STAT_##s)

const struct agent_stat_desc agent_stat_descs[AGENT_NSTATS] = {
#define AGENT__DESC(e, w, j, m) {w, j, m},
    AGENT_STATS(AGENT__DESC)
#undef AGENT__DESC
};

void agent_stats_derive(struct agent_stats *s)
{
    double *v = s->v;
    double t = v[AGENT_STAT_PY] + v[AGENT_STAT_NAT] + v[AGENT_STAT_SYS];
    double kept = v[AGENT_STAT_ALLOC] - v[AGENT_STAT_FREED];
    v[AGENT_STAT_KEPT] = kept > 0 ? kept : 0;
    v[AGENT_STAT_PYFRAC] =
        v[AGENT_STAT_ALLOC] > 0 ? v[AGENT_STAT_PYALLOC] / v[AGENT_STAT_ALLOC] : 0;
    if (v[AGENT_STAT_PYFRAC] > 1) v[AGENT_STAT_PYFRAC] = 1;
    v[AGENT_STAT_COPYRATE] = t > 0 ? v[AGENT_STAT_COPY] / t : 0;
    v[AGENT_STAT_GPUPCT] = t > 0 ? 100.0 * v[AGENT_STAT_GPUBUSY] / t : 0;
    if (v[AGENT_STAT_GPUPCT] > 100) v[AGENT_STAT_GPUPCT] = 100;
}

void agent_stats_merge(struct agent_stats *dst, const struct agent_stats *src)
{
    for (int i = 0; i < AGENT_NSTATS; i++) {
        if (agent_stat_descs[i].merge == AGENT_MERGE_MAX)
            dst->v[i] = src->v[i] > dst->v[i] ? src->v[i] : dst->v[i];
        else if (agent_stat_descs[i].merge == AGENT_MERGE_SUM)
            dst->v[i] += src->v[i];
    }
    agent_stats_derive(dst);
}

double agent_stats_time(const struct agent_stats *s)
{
    return s->v[AGENT_STAT_PY] + s->v[AGENT_STAT_NAT] + s->v[AGENT_STAT_SYS];
}

int agent_stats_read(struct agent_stats *out, const json_t *obj, int json_keys)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < AGENT_NSTATS; i++) {
        const char *k = json_keys ? agent_stat_descs[i].json : agent_stat_descs[i].wire;
        json_t *v = json_object_get(obj, k);
        if (!v) continue;
        if (!json_is_number(v)) return -EINVAL;
        double d = json_number_value(v);
        if (!isfinite(d) || d < 0) return -EINVAL;
        out->v[i] = d;
    }
    return 0;
}

/* ---- line reader -------------------------------------------------------- */

void agent_reader_init(struct agent_reader *r)
{
    memset(r, 0, sizeof *r);
    r->max_line = AGENT_WIRE_MAX_LINE;
}

void agent_reader_free(struct agent_reader *r)
{
    free(r->buf);
    r->buf = NULL;
    r->len = r->cap = 0;
}

size_t agent_reader_pending(const struct agent_reader *r)
{
    return r->dropping ? r->dropped : r->len;
}

static int reader_append(struct agent_reader *r, const char *p, size_t n)
{
    if (n == 0) return 0; /* an empty line before any buffer: no r->buf + 0 on NULL (UB) */
    if (r->len + n > r->cap) {
        size_t cap = r->cap ? r->cap : 4096;
        while (cap < r->len + n)
            cap *= 2;
        if (cap > r->max_line + 1) cap = r->max_line + 1;
        char *b = realloc(r->buf, cap);
        if (!b) return -ENOMEM;
        r->buf = b;
        r->cap = cap;
    }
    memcpy(r->buf + r->len, p, n);
    r->len += n;
    return 0;
}

int agent_reader_feed(struct agent_reader *r, const char *data, size_t n, agent_line_cb cb,
                      void *ud)
{
    while (n > 0) {
        const char *nl = memchr(data, '\n', n);
        size_t chunk = nl ? (size_t)(nl - data) : n;
        if (r->dropping) {
            r->dropped += chunk;
        } else if (r->len + chunk > r->max_line) {
            r->dropping = 1;
            r->dropped = r->len + chunk;
            r->len = 0;
            /* keep memory bounded after a flood */
            free(r->buf);
            r->buf = NULL;
            r->cap = 0;
        } else {
            int rc = reader_append(r, data, chunk);
            if (rc) return rc;
        }
        if (!nl) break;
        int rc;
        if (r->dropping) {
            rc = cb(ud, AGENT_LINE_OVERSIZE, NULL, r->dropped);
            r->dropping = 0;
            r->dropped = 0;
        } else {
            rc = cb(ud, AGENT_LINE_OK, r->buf ? r->buf : "", r->len);
        }
        r->len = 0;
        data += chunk + 1;
        n -= chunk + 1;
        if (rc) return rc;
    }
    return 0;
}

/* ---- messages ----------------------------------------------------------- */

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

/* Optional string field: absent => dflt; present but not a string => -EINVAL. */
static int opt_str(const json_t *o, const char *k, const char **out, const char *dflt)
{
    json_t *v = json_object_get(o, k);
    if (!v || json_is_null(v)) {
        *out = dflt;
        return 0;
    }
    if (!json_is_string(v)) return -EINVAL;
    *out = json_string_value(v);
    return 0;
}

static int opt_num(const json_t *o, const char *k, double *out, double dflt)
{
    json_t *v = json_object_get(o, k);
    if (!v) {
        *out = dflt;
        return 0;
    }
    if (!json_is_number(v) || !isfinite(json_number_value(v))) return -EINVAL;
    *out = json_number_value(v);
    return 0;
}

static int opt_int(const json_t *o, const char *k, long long *out, long long dflt)
{
    json_t *v = json_object_get(o, k);
    if (!v) {
        *out = dflt;
        return 0;
    }
    if (!json_is_integer(v)) return -EINVAL;
    *out = json_integer_value(v);
    return 0;
}

static int opt_arr(const json_t *o, const char *k, const json_t **out)
{
    json_t *v = json_object_get(o, k);
    if (!v || json_is_null(v)) {
        *out = NULL;
        return 0;
    }
    if (!json_is_array(v)) return -EINVAL;
    *out = v;
    return 0;
}

int agent_wire_frame(const json_t *fr, struct agent_frame *out)
{
    if (!json_is_array(fr) || json_array_size(fr) < 3) return -EINVAL;
    json_t *f = json_array_get(fr, 0), *n = json_array_get(fr, 1), *l = json_array_get(fr, 2);
    if (!json_is_integer(f) || !json_is_integer(n) || !json_is_integer(l)) return -EINVAL;
    out->file = json_integer_value(f);
    out->name = json_integer_value(n);
    long long line = json_integer_value(l);
    if (out->file < 0 || out->name < 0 || line < 0 || line > 0x7fffffff) return -EINVAL;
    out->line = (int)line;
    return 0;
}

static int entry_common(const json_t *e, struct agent_line_entry *out)
{
    memset(out, 0, sizeof *out);
    if (!json_is_object(e)) return -EINVAL;
    if (opt_int(e, KEY(F), &out->file, -1) || out->file <= 0) return -EINVAL;
    return agent_stats_read(&out->st, e, 0);
}

static int line_no(const json_t *e, const char *k, int *out)
{
    long long v;
    if (opt_int(e, k, &v, -1) || v < 0 || v > 0x7fffffff) return -EINVAL;
    *out = (int)v;
    return 0;
}

int agent_wire_line_entry(const json_t *e, struct agent_line_entry *out)
{
    if (entry_common(e, out) || line_no(e, KEY(L), &out->line)) return -EINVAL;
    return 0;
}

int agent_wire_func_entry(const json_t *e, struct agent_line_entry *out)
{
    if (entry_common(e, out)) return -EINVAL;
    if (opt_int(e, KEY(FN), &out->fn, -1) || out->fn <= 0) return -EINVAL;
    if (line_no(e, KEY(FIRST), &out->line) || line_no(e, KEY(LAST), &out->last)) return -EINVAL;
    if (out->last < out->line) out->last = out->line;
    return 0;
}

int agent_wire_stack_entry(const json_t *e, struct agent_stack_entry *out)
{
    if (!json_is_array(e) || json_array_size(e) < 3) return -EINVAL;
    json_t *id = json_array_get(e, 0), *n = json_array_get(e, 1), *s = json_array_get(e, 2);
    if (!json_is_integer(id) || !json_is_integer(n) || !json_is_number(s)) return -EINVAL;
    out->id = json_integer_value(id);
    out->samples = json_integer_value(n);
    out->seconds = json_number_value(s);
    out->tid = 0;
    if (json_array_size(e) > 3) { /* elements past the fourth: a newer agent's, ignored */
        json_t *tid = json_array_get(e, 3);
        if (!json_is_integer(tid) || json_integer_value(tid) < 0) return -EINVAL;
        out->tid = json_integer_value(tid);
    }
    if (out->id <= 0 || out->samples < 0 || !isfinite(out->seconds) || out->seconds < 0)
        return -EINVAL;
    return 0;
}

int agent_wire_thread_entry(const json_t *e, struct agent_thread_entry *out)
{
    memset(out, 0, sizeof *out);
    if (!json_is_object(e)) return -EINVAL;
    if (opt_int(e, KEY(TID), &out->tid, 0) || opt_str(e, KEY(NAME), &out->name, "")) return -EINVAL;
    if (opt_num(e, STAT(PY), &out->py, 0) || opt_num(e, STAT(NAT), &out->nat, 0) ||
        opt_num(e, STAT(SYS), &out->sys, 0))
        return -EINVAL;
    return 0;
}

static int parse_hello(const json_t *o, struct agent_msg *m, char *err, size_t errlen)
{
    long long v;
    if (opt_int(o, KEY(V), &v, 0)) return fail(err, errlen, "hello: 'v' is not an integer");
    m->u.hello.v = (int)v;
    if (opt_int(o, KEY(PID), &m->u.hello.pid, 0) || opt_int(o, KEY(PPID), &m->u.hello.ppid, 0))
        return fail(err, errlen, "hello: 'pid'/'ppid' is not an integer");
    if (opt_str(o, KEY(PYTHON), &m->u.hello.python, NULL) ||
        opt_str(o, KEY(EXECUTABLE), &m->u.hello.executable, NULL) ||
        opt_str(o, KEY(CWD), &m->u.hello.cwd, NULL) ||
        opt_str(o, KEY(MAIN), &m->u.hello.main, NULL) ||
        opt_str(o, KEY(CLOCK), &m->u.hello.clock, NULL))
        return fail(err, errlen, "hello: a string field has the wrong type");
    if (opt_arr(o, KEY(ARGV), &m->u.hello.argv))
        return fail(err, errlen, "hello: 'argv' is not an array");
    for (size_t i = 0; m->u.hello.argv && i < json_array_size(m->u.hello.argv); i++)
        if (!json_is_string(json_array_get(m->u.hello.argv, i)))
            return fail(err, errlen, "hello: 'argv' holds a non-string");
    if (opt_num(o, KEY(INTERVAL_MS), &m->u.hello.interval_ms, 0))
        return fail(err, errlen, "hello: 'interval_ms' is not a number");
    if (opt_num(o, KEY(MONO0), &m->u.hello.mono0, 0))
        return fail(err, errlen, "hello: 'mono0' is not a number");
    return 0;
}

static int parse_body(const json_t *o, const char *t, struct agent_msg *m, char *err, size_t errlen)
{
    if (!strcmp(t, TYPE(HELLO))) {
        m->type = AGENT_MSG_HELLO;
        return parse_hello(o, m, err, errlen);
    }
    if (!strcmp(t, TYPE(STR))) {
        m->type = AGENT_MSG_STR;
        json_t *s = json_object_get(o, KEY(S));
        if (opt_int(o, KEY(ID), &m->u.str.id, -1) || m->u.str.id <= 0)
            return fail(err, errlen, "str: 'id' must be a positive integer");
        if (!json_is_string(s)) return fail(err, errlen, "str: 's' must be a string");
        m->u.str.s = json_string_value(s);
        return 0;
    }
    if (!strcmp(t, TYPE(STACK))) {
        m->type = AGENT_MSG_STACK;
        if (opt_int(o, KEY(ID), &m->u.stack.id, -1) || m->u.stack.id <= 0)
            return fail(err, errlen, "stack: 'id' must be a positive integer");
        if (opt_arr(o, KEY(FR), &m->u.stack.fr) || !m->u.stack.fr)
            return fail(err, errlen, "stack: 'fr' must be an array");
        struct agent_frame f;
        for (size_t i = 0; i < json_array_size(m->u.stack.fr); i++)
            if (agent_wire_frame(json_array_get(m->u.stack.fr, i), &f))
                return fail(err, errlen, "stack: frame %zu is not [file,name,line]", i);
        return 0;
    }
    if (!strcmp(t, TYPE(DELTA))) {
        m->type = AGENT_MSG_DELTA;
        if (opt_num(o, KEY(TS), &m->u.delta.ts, 0) ||
            opt_int(o, KEY(SAMPLES), &m->u.delta.samples, 0) || m->u.delta.samples < 0)
            return fail(err, errlen, "delta: bad 'ts' or 'samples'");
        if (opt_arr(o, KEY(LINES), &m->u.delta.lines) ||
            opt_arr(o, KEY(FUNCS), &m->u.delta.funcs) ||
            opt_arr(o, KEY(STACKS), &m->u.delta.stacks) ||
            opt_arr(o, KEY(THREADS), &m->u.delta.threads))
            return fail(err, errlen, "delta: 'lines'/'funcs'/'stacks'/'threads' not an array");
        return 0;
    }
    if (!strcmp(t, TYPE(NOW))) {
        m->type = AGENT_MSG_NOW;
        if (opt_num(o, KEY(TS), &m->u.now.ts, 0) || opt_arr(o, KEY(THREADS), &m->u.now.threads))
            return fail(err, errlen, "now: bad 'ts' or 'threads'");
        return 0;
    }
    if (!strcmp(t, TYPE(END))) {
        m->type = AGENT_MSG_END;
        if (opt_num(o, KEY(TS), &m->u.end.ts, 0) || opt_str(o, KEY(REASON), &m->u.end.reason, ""))
            return fail(err, errlen, "end: bad 'ts' or 'reason'");
        return 0;
    }
    if (!strcmp(t, TYPE(ERROR)) || !strcmp(t, TYPE(LOG))) {
        m->type = t[0] == 'e' ? AGENT_MSG_ERROR : AGENT_MSG_LOG;
        if (opt_str(o, KEY(MSG), &m->u.text.msg, "") ||
            opt_str(o, KEY(LEVEL), &m->u.text.level, "info"))
            return fail(err, errlen, "%s: bad 'msg' or 'level'", t);
        return 0;
    }
    if (!strcmp(t, TYPE(ROLE))) {
        m->type = AGENT_MSG_ROLE;
        if (opt_str(o, KEY(NAME), &m->u.role.name, "") || !m->u.role.name[0])
            return fail(err, errlen, "role: 'name' is not a non-empty string");
        return 0;
    }
    if (!strcmp(t, TYPE(CELL))) {
        m->type = AGENT_MSG_CELL;
        const char *ev;
        if (opt_str(o, KEY(EV), &ev, "") || (strcmp(ev, "begin") && strcmp(ev, "end")))
            return fail(err, errlen, "cell: 'ev' must be \"begin\" or \"end\"");
        m->u.cell.begin = ev[0] == 'b';
        if (opt_str(o, KEY(FILE), &m->u.cell.file, "") || !*m->u.cell.file)
            return fail(err, errlen, "cell: 'file' must be a non-empty string");
        if (opt_num(o, KEY(WALL_S), &m->u.cell.wall_s, 0) || m->u.cell.wall_s < 0)
            return fail(err, errlen, "cell: 'wall_s' must be a number >= 0");
        return 0;
    }
    m->type = AGENT_MSG_UNKNOWN;
    return 0;
}

static int msg_from_json(json_t *o, struct agent_msg *m, char *err, size_t errlen);

int agent_msg_parse(const char *line, size_t len, struct agent_msg *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    json_error_t je;
    json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
    if (!o) return fail(err, errlen, "bad JSON: %s (column %d)", je.text, je.column);
    return msg_from_json(o, m, err, errlen);
}

/* The message in o (stolen: m owns it on success, it is freed on failure). */
static int msg_from_json(json_t *o, struct agent_msg *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    if (!json_is_object(o)) {
        json_decref(o);
        return fail(err, errlen, "not a JSON object");
    }
    json_t *t = json_object_get(o, KEY(T));
    if (!json_is_string(t)) {
        json_decref(o);
        return fail(err, errlen, "no message type 't'");
    }
    int rc = parse_body(o, json_string_value(t), m, err, errlen);
    if (rc) {
        json_decref(o);
        memset(m, 0, sizeof *m);
        return rc;
    }
    m->json = o;
    return 0;
}

void agent_msg_clear(struct agent_msg *m)
{
    json_decref(m->json);
    memset(m, 0, sizeof *m);
}

/* ---- a checked message read typed --------------------------------------- */

static const json_t *msg_array(const struct agent_msg *m, enum agent_msg_array arr)
{
    if (m->type == AGENT_MSG_NOW) return arr == AGENT_ARR_THREADS ? m->u.now.threads : NULL;
    if (m->type != AGENT_MSG_DELTA) return NULL;
    switch (arr) {
    case AGENT_ARR_LINES:
        return m->u.delta.lines;
    case AGENT_ARR_FUNCS:
        return m->u.delta.funcs;
    case AGENT_ARR_STACKS:
        return m->u.delta.stacks;
    case AGENT_ARR_THREADS:
        return m->u.delta.threads;
    }
    return NULL;
}

size_t agent_msg_count(const struct agent_msg *m, enum agent_msg_array arr)
{
    return json_array_size(msg_array(m, arr));
}

/* Entry i of arr, or NULL past its end: the per-entry checks above answer
 * -EINVAL for NULL. */
static const json_t *msg_entry(const struct agent_msg *m, enum agent_msg_array arr, size_t i)
{
    return json_array_get(msg_array(m, arr), i);
}

int agent_msg_line(const struct agent_msg *m, size_t i, struct agent_line_entry *out)
{
    return agent_wire_line_entry(msg_entry(m, AGENT_ARR_LINES, i), out);
}

int agent_msg_func(const struct agent_msg *m, size_t i, struct agent_line_entry *out)
{
    return agent_wire_func_entry(msg_entry(m, AGENT_ARR_FUNCS, i), out);
}

int agent_msg_stack(const struct agent_msg *m, size_t i, struct agent_stack_entry *out)
{
    return agent_wire_stack_entry(msg_entry(m, AGENT_ARR_STACKS, i), out);
}

int agent_msg_thread(const struct agent_msg *m, size_t i, struct agent_thread_entry *out)
{
    return agent_wire_thread_entry(msg_entry(m, AGENT_ARR_THREADS, i), out);
}

size_t agent_msg_kept_pts(const struct agent_msg *m, size_t i, struct agent_kept_pt *out, size_t n)
{
    const json_t *pts = json_object_get(msg_entry(m, AGENT_ARR_LINES, i), KEY(KEPT_PTS));
    size_t len = json_array_size(pts), k = 0;
    if (len > AGENT_WIRE_MAX_KEPT_PTS) len = AGENT_WIRE_MAX_KEPT_PTS;
    for (size_t j = 0; j < len && k < n; j++) {
        const json_t *pt = json_array_get(pts, j);
        const json_t *t = json_array_get(pt, 0), *v = json_array_get(pt, 1);
        if (json_array_size(pt) != 2 || !json_is_number(t) || !json_is_number(v)) continue;
        out[k].ts = json_number_value(t);
        out[k].mb = json_number_value(v);
        if (isfinite(out[k].ts) && isfinite(out[k].mb)) k++;
    }
    return k;
}

int agent_msg_mem(const struct agent_msg *m, struct agent_msg_mem *out)
{
    memset(out, 0, sizeof *out);
    const json_t *mem = m->type == AGENT_MSG_DELTA ? json_object_get(m->json, KEY(MEM)) : NULL;
    const json_t *live = json_object_get(mem, KEY(LIVE_MB)),
                 *pk = json_object_get(mem, KEY(PEAK_MB));
    if (!json_is_object(mem) || !json_is_number(live) || !json_is_number(pk)) return -ENOENT;
    out->live_mb = json_number_value(live);
    out->peak_mb = json_number_value(pk);
    long long f, l;
    if (!opt_int(mem, KEY(PEAK_F), &f, 0) && f > 0) out->peak_file = f;
    if (!opt_int(mem, KEY(PEAK_L), &l, 0) && l > 0 && l <= 0x7fffffff) out->peak_line = (int)l;
    return 0;
}

size_t agent_msg_nframes(const struct agent_msg *m)
{
    return m->type == AGENT_MSG_STACK ? json_array_size(m->u.stack.fr) : 0;
}

int agent_msg_frame(const struct agent_msg *m, size_t i, struct agent_frame *out)
{
    if (m->type != AGENT_MSG_STACK) return -EINVAL;
    return agent_wire_frame(json_array_get(m->u.stack.fr, i), out);
}

/* Thread i of a `now`, or NULL. */
static const json_t *now_thread(const struct agent_msg *m, size_t i)
{
    const json_t *t = m->type == AGENT_MSG_NOW ? json_array_get(m->u.now.threads, i) : NULL;
    return json_is_object(t) ? t : NULL;
}

int agent_msg_now_thread(const struct agent_msg *m, size_t i, struct agent_now_entry *out)
{
    memset(out, 0, sizeof *out);
    const json_t *t = now_thread(m, i);
    if (!t) return -EINVAL;
    const json_t *tid = json_object_get(t, KEY(TID)), *since = json_object_get(t, KEY(SINCE_S));
    const json_t *name = json_object_get(t, KEY(NAME)), *state = json_object_get(t, KEY(STATE));
    if ((out->has_tid = json_is_integer(tid))) out->tid = json_integer_value(tid);
    if ((out->has_since = json_is_number(since))) out->since_s = json_number_value(since);
    out->name = json_string_value(name); /* NULL unless a string */
    out->state = json_string_value(state);
    out->nframes = json_array_size(json_object_get(t, KEY(FR)));
    return 0;
}

int agent_msg_now_frame(const struct agent_msg *m, size_t i, size_t j, struct agent_frame *out)
{
    return agent_wire_frame(json_array_get(json_object_get(now_thread(m, i), KEY(FR)), j), out);
}
