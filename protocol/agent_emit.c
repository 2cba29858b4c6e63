/* agent_emit.c: one builder per message of the agent wire format (see
 * agent_emit.h). Every key comes from agent_keys.h's tables through KEY,
 * STAT and TYPE; a message is taken back whole when the buffer refuses a
 * part of it. */
#include "agent_emit.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#define KEY(k) agent_key_name(AGENT_KEY_##k)
#define TYPE(p) agent_place_type(AGENT_IN_##p)
#define STAT(s) agent_stat_wire(AGENT_STAT_##s)

/* One message being written: b from start; rc the first error. */
struct msg {
    agent_buf_t *b;
    size_t start;
    int rc;
};

static struct msg msg_begin(agent_buf_t *b)
{
    struct msg m = {b, b->len, 0};
    return m;
}

static void put(struct msg *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct msg *m, const char *fmt, ...)
{
    if (m->rc) return;
    va_list ap;
    va_start(ap, fmt);
    m->rc = agent_buf_vprintf(m->b, fmt, ap);
    va_end(ap);
}

static void put_str(struct msg *m, const char *s)
{
    if (!m->rc) m->rc = agent_buf_json_str(m->b, s ? s : "", s ? strlen(s) : 0);
}

/* ,"key":"s" (nothing when s is NULL) */
static void put_kstr(struct msg *m, const char *key, const char *s)
{
    if (!s) return;
    put(m, ",\"%s\":", key);
    put_str(m, s);
}

/* JSON has no NaN or infinity */
static double num(double v)
{
    return isfinite(v) ? v : 0;
}

static void put_frames(struct msg *m, const struct agent_emit_frame *fr, int n)
{
    for (int i = 0; i < n; i++)
        put(m, "%s[%lld,%lld,%d]", i ? "," : "", fr[i].file, fr[i].name, fr[i].line);
}

/* Ends the line; on an error takes the whole message back. */
static int msg_end(struct msg *m)
{
    put(m, "}\n");
    if (m->rc) m->b->len = m->start;
    return m->rc;
}

/* ---- hello, str, stack, end, log, error ------------------------------- */

int agent_emit_hello(agent_buf_t *b, const struct agent_hello *h)
{
    struct msg m = msg_begin(b);
    put(&m, "{\"%s\":\"%s\",\"%s\":%d,\"%s\":%lld,\"%s\":%lld", KEY(T), TYPE(HELLO), KEY(V),
        AGENT_WIRE_VERSION, KEY(PID), h->pid, KEY(PPID), h->ppid);
    put_kstr(&m, KEY(PYTHON), h->python);
    put_kstr(&m, KEY(EXECUTABLE), h->executable);
    put(&m, ",\"%s\":[", KEY(ARGV));
    for (int i = 0; i < h->argc; i++) {
        if (i) put(&m, ",");
        put_str(&m, h->argv[i]);
    }
    put(&m, "]");
    put_kstr(&m, KEY(CWD), h->cwd);
    put_kstr(&m, KEY(MAIN), h->main);
    put(&m, ",\"%s\":%.6f", KEY(INTERVAL_MS), num(h->interval_ms));
    put_kstr(&m, KEY(CLOCK), h->clock);
    if (h->mono0 > 0) put(&m, ",\"%s\":%.6f", KEY(MONO0), num(h->mono0));
    return msg_end(&m);
}

int agent_emit_str(agent_buf_t *b, long long id, const char *s, size_t n)
{
    struct msg m = msg_begin(b);
    put(&m, "{\"%s\":\"%s\",\"%s\":%lld,\"%s\":", KEY(T), TYPE(STR), KEY(ID), id, KEY(S));
    if (!m.rc) m.rc = agent_buf_json_str(b, s, n);
    return msg_end(&m);
}

int agent_emit_stack(agent_buf_t *b, long long id, const struct agent_emit_frame *fr, int n)
{
    struct msg m = msg_begin(b);
    put(&m, "{\"%s\":\"%s\",\"%s\":%lld,\"%s\":[", KEY(T), TYPE(STACK), KEY(ID), id, KEY(FR));
    put_frames(&m, fr, n);
    put(&m, "]");
    return msg_end(&m);
}

int agent_emit_end(agent_buf_t *b, const struct agent_end *e)
{
    struct msg m = msg_begin(b);
    put(&m, "{\"%s\":\"%s\",\"%s\":%.6f", KEY(T), TYPE(END), KEY(TS), num(e->ts));
    put_kstr(&m, KEY(REASON), e->reason);
    if (e->stats)
        put(&m, ",\"%s\":%llu,\"%s\":%.3f,\"%s\":%.3f", KEY(SAMPLES), e->samples, KEY(COST_US),
            num(e->cost_us), KEY(LATE_MAX_MS), num(e->late_max_ms));
    return msg_end(&m);
}

int agent_emit_log(agent_buf_t *b, const char *level, const char *msg)
{
    struct msg m = msg_begin(b);
    put(&m, "{\"%s\":\"%s\"", KEY(T), TYPE(LOG));
    put_kstr(&m, KEY(LEVEL), level);
    put_kstr(&m, KEY(MSG), msg ? msg : "");
    return msg_end(&m);
}

int agent_emit_error(agent_buf_t *b, const char *msg)
{
    struct msg m = msg_begin(b);
    put(&m, "{\"%s\":\"%s\"", KEY(T), TYPE(ERROR));
    put_kstr(&m, KEY(MSG), msg ? msg : "");
    return msg_end(&m);
}

int agent_emit_role(agent_buf_t *b, const char *name)
{
    struct msg m = msg_begin(b);
    put(&m, "{\"%s\":\"%s\"", KEY(T), TYPE(ROLE));
    put_kstr(&m, KEY(NAME), name ? name : "");
    return msg_end(&m);
}

/* ---- delta -------------------------------------------------------------- */

static void dput(agent_delta_t *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void dput(agent_delta_t *d, const char *fmt, ...)
{
    if (d->rc) return;
    va_list ap;
    va_start(ap, fmt);
    d->rc = agent_buf_vprintf(d->b, fmt, ap);
    va_end(ap);
}

static const char *part_key(int part)
{
    switch (part) {
    case AGENT_DELTA_LINES:
        return KEY(LINES);
    case AGENT_DELTA_FUNCS:
        return KEY(FUNCS);
    case AGENT_DELTA_STACKS:
        return KEY(STACKS);
    default:
        return KEY(THREADS);
    }
}

static void close_entry(agent_delta_t *d)
{
    if (!d->entry) return;
    dput(d, "%s}", d->pts ? "]" : "");
    d->entry = d->pts = 0;
}

/* Moves to part (closing the open entry and array) and writes the
 * separator of a new entry when entry is set. 0, or the error kept. */
static int to_part(agent_delta_t *d, int part, int entry)
{
    if (d->rc) return d->rc;
    if (part < d->part) return d->rc = -EINVAL; /* arrays are written in order */
    close_entry(d);
    if (part != d->part) {
        if (d->part > AGENT_DELTA_NONE && d->part < AGENT_DELTA_TOTALS) dput(d, "]");
        d->part = part;
        d->n = 0;
        if (part < AGENT_DELTA_TOTALS) dput(d, ",\"%s\":[", part_key(part));
    }
    if (entry && part < AGENT_DELTA_TOTALS && d->n++) dput(d, ",");
    return d->rc;
}

static void put_stats(agent_delta_t *d, const struct agent_stat_vals *st)
{
    for (int k = 0; k < AGENT_NSTATS && st; k++) {
        if (!(st->has & (1u << k))) continue;
        if (k == AGENT_STAT_N)
            dput(d, ",\"%s\":%.0f", agent_stat_wire(k), num(st->v[k]));
        else
            dput(d, ",\"%s\":%.6f", agent_stat_wire(k), num(st->v[k]));
    }
}

void agent_delta_begin(agent_delta_t *d, agent_buf_t *b, double ts, unsigned long long samples)
{
    memset(d, 0, sizeof *d);
    d->b = b;
    d->start = b->len;
    dput(d, "{\"%s\":\"%s\",\"%s\":%.6f,\"%s\":%llu", KEY(T), TYPE(DELTA), KEY(TS), num(ts),
         KEY(SAMPLES), samples);
}

void agent_delta_part(agent_delta_t *d, enum agent_delta_part part)
{
    to_part(d, part, 0);
}

void agent_delta_line(agent_delta_t *d, long long file, int line, const struct agent_stat_vals *st)
{
    if (to_part(d, AGENT_DELTA_LINES, 1)) return;
    dput(d, "{\"%s\":%lld,\"%s\":%d", KEY(F), file, KEY(L), line);
    put_stats(d, st);
    d->entry = 1; /* closed by the next call: kept_pts may follow */
}

void agent_delta_kept_pt(agent_delta_t *d, double ts, double mb)
{
    if (d->rc) return;
    if (!d->entry || d->part != AGENT_DELTA_LINES) {
        d->rc = -EINVAL; /* a point belongs to the line entry just written */
        return;
    }
    if (d->pts++)
        dput(d, ",");
    else
        dput(d, ",\"%s\":[", KEY(KEPT_PTS));
    dput(d, "[%.6f,%.6f]", num(ts), num(mb));
}

void agent_delta_func(agent_delta_t *d, long long file, long long fn, int first, int last,
                      const struct agent_stat_vals *st)
{
    if (to_part(d, AGENT_DELTA_FUNCS, 1)) return;
    dput(d, "{\"%s\":%lld,\"%s\":%lld,\"%s\":%d,\"%s\":%d", KEY(F), file, KEY(FN), fn, KEY(FIRST),
         first, KEY(LAST), last);
    put_stats(d, st);
    dput(d, "}");
}

void agent_delta_stack(agent_delta_t *d, long long id, unsigned long long samples, double seconds,
                       long long tid)
{
    if (to_part(d, AGENT_DELTA_STACKS, 1)) return;
    dput(d, "[%lld,%llu,%.6f,%lld]", id, samples, num(seconds), tid);
}

void agent_delta_thread(agent_delta_t *d, long long tid, const char *name, double py, double nat,
                        double sys)
{
    if (to_part(d, AGENT_DELTA_THREADS, 1)) return;
    dput(d, "{\"%s\":%lld,\"%s\":", KEY(TID), tid, KEY(NAME));
    if (!d->rc) d->rc = agent_buf_json_str(d->b, name ? name : "", name ? strlen(name) : 0);
    dput(d, ",\"%s\":%.6f,\"%s\":%.6f,\"%s\":%.6f}", STAT(PY), num(py), STAT(NAT), num(nat),
         STAT(SYS), num(sys));
}

void agent_delta_mem(agent_delta_t *d, const struct agent_mem_totals *m)
{
    if (to_part(d, AGENT_DELTA_TOTALS, 0)) return;
    dput(d, ",\"%s\":{\"%s\":%.6f,\"%s\":%.6f,\"%s\":%lld,\"%s\":%d,\"%s\":%llu}", KEY(MEM),
         KEY(LIVE_MB), num(m->live_mb), KEY(PEAK_MB), num(m->peak_mb), KEY(PEAK_F), m->peak_f,
         KEY(PEAK_L), m->peak_l, KEY(DROPPED), m->dropped);
}

void agent_delta_gpu(agent_delta_t *d, double util, double mb)
{
    if (to_part(d, AGENT_DELTA_TOTALS, 0)) return;
    dput(d, ",\"%s\":{\"%s\":%.1f,\"%s\":%.3f}", KEY(GPU), KEY(UTIL), num(util), KEY(MB), num(mb));
}

int agent_delta_end(agent_delta_t *d)
{
    to_part(d, AGENT_DELTA_TOTALS, 0);
    struct msg m = {d->b, d->start, d->rc};
    return d->rc = msg_end(&m);
}

/* ---- now ---------------------------------------------------------------- */

static const char *const state_names[] = {"system", "python", "native"};
_Static_assert(sizeof state_names / sizeof *state_names == AGENT_NSTATES,
               "one name per enum agent_state");

const char *agent_state_name(int state)
{
    return state >= 0 && state < AGENT_NSTATES ? state_names[state] : state_names[0];
}

void agent_now_begin(agent_now_t *w, agent_buf_t *b, double ts)
{
    memset(w, 0, sizeof *w);
    w->b = b;
    w->start = b->len;
    struct msg m = {b, w->start, 0};
    put(&m, "{\"%s\":\"%s\",\"%s\":%.6f,\"%s\":[", KEY(T), TYPE(NOW), KEY(TS), num(ts),
        KEY(THREADS));
    w->rc = m.rc;
}

void agent_now_thread(agent_now_t *w, long long tid, const char *name, int state, double since_s,
                      const struct agent_emit_frame *fr, int nfr)
{
    struct msg m = {w->b, w->start, w->rc};
    put(&m, "%s{\"%s\":%lld,\"%s\":", w->n++ ? "," : "", KEY(TID), tid, KEY(NAME));
    put_str(&m, name);
    put(&m, ",\"%s\":\"%s\",\"%s\":%.6f,\"%s\":[", KEY(STATE), agent_state_name(state),
        KEY(SINCE_S), num(since_s), KEY(FR));
    put_frames(&m, fr, nfr);
    put(&m, "]}");
    w->rc = m.rc;
}

int agent_now_end(agent_now_t *w)
{
    struct msg m = {w->b, w->start, w->rc};
    put(&m, "]");
    return w->rc = msg_end(&m);
}
