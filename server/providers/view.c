/* Showing the profile: code lenses over functions and the module, inlay hints
 * at the end of hot lines, hovers with the full breakdown and the call stacks
 * that reached a line.
 * The diagnostics are their own provider (providers/diagnostics.c). Everything is
 * computed on request from the core's profile view (lsp_pview.h): nothing
 * is cached, so what is shown is always the latest data. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/lsp_call.h"
#include "core/lsp_out.h"
#include "core/lsp_provider.h"
#include "core/lsp_pview.h"
#include "jsonrpc.h"
#include "store/compare.h"
#include "store/memprof.h"
#include "store/summary.h"
#include "core/uri.h"

#define VIEW_HOVER_STACKS 3
#define VIEW_HOVER_CALLERS 5      /* rows of "who calls this line" */
#define VIEW_CALLERS_DISTINCT 256 /* caller-tree nodes counted; the rest are "other" */
#define VIEW_CALLER_DEPTH 3       /* calls out from the line in "who calls this line" */
#define VIEW_MAX_HINTS 5000       /* hints in one answer (editors ask for the visible range) */
#define VIEW_MAX_CLASSES 256      /* class lenses per file */
#define VIEW_CLASS_SCAN 5000      /* lines searched upwards for `class X` */

/* The document of params.textDocument as the profile sees it; 0 or -ENOENT
 * (nothing to show). */
static int view_open(struct lsp_facilities *s, json_t *params, struct lsp_docview *v)
{
    const char *uri =
        json_string_value(json_object_get(json_object_get(params, "textDocument"), "uri"));
    return lsp_docview_open(s, uri ? doc_find(&s->docs, uri) : NULL, v);
}

static int profiled_line(const struct lsp_docview *v, uint32_t cur)
{
    return lsp_docview_line(v, cur);
}

/* Document line (0-based) where profiled line `line` (1-based) is now, or -1. */
/* inv (may be NULL): profiled line (0-based) -> document line, -1 if gone;
 * built once per request by invert() so that many lookups stay linear. */
static long current_line_inv(const struct lsp_docview *v, const int32_t *inv, int line)
{
    if (line < 1 || (size_t)line > v->snap->nlines || inv[line - 1] < 0) return -1;
    return profiled_line(v, (uint32_t)inv[line - 1]) == line ? inv[line - 1] : -1;
}

/* New array of snap->nlines entries (caller frees), or NULL. */
static int32_t *invert(const struct lsp_docview *v)
{
    int32_t *inv = malloc((v->snap->nlines ? v->snap->nlines : 1) * sizeof *inv);
    if (!inv) return NULL;
    for (size_t i = 0; i < v->snap->nlines; i++)
        inv[i] = -1;
    for (size_t i = 0; i < v->a->n; i++)
        if (v->a->map[i] >= 0 && (size_t)v->a->map[i] < v->snap->nlines)
            inv[v->a->map[i]] = (int32_t)i;
    return inv;
}

static long current_line(const struct lsp_docview *v, int line)
{
    return lsp_docview_find(v, line);
}

static const struct agent_stats *line_stats(const struct prof_file *pf, int line)
{
    return line > 0 ? profile_file_line(pf, line) : NULL;
}

/* ---- code lenses ---- */

/* The lens answer is written straight into a text buffer (struct lsp_buf,
 * which the core joins): a file with thousands of functions gives thousands
 * of lenses (~200 bytes each), and building and dumping them as a jansson
 * tree cost ~25 ms per request. */

#define LB_LIT(b, lit) lsp_buf_put((b), (lit), sizeof(lit) - 1)

static void lb_long(struct lsp_buf *b, long v)
{
    char tmp[24];
    char *e = tmp + sizeof tmp, *q = e;
    unsigned long u = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;
    do
        *--q = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0) *--q = '-';
    lsp_buf_put(b, q, (size_t)(e - q));
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t k;
    unsigned cp;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf)
        k = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        k = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        k = 4, cp = c & 0x07;
    else
        return 0;
    if (n < k) return 0;
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if ((k == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
        (k == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    return k;
}

/* s as a JSON string, quotes included; invalid UTF-8 becomes U+FFFD. */
static void lb_str(struct lsp_buf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = strlen(s);
    /* worst case: every byte as \u00XX */
    char *w = lsp_buf_room(b, 6 * n + 2), *w0 = w;
    if (!w) return;
    const unsigned char *q = (const unsigned char *)s, *e = q + n;
    *w++ = '"';
    while (q < e) {
        unsigned c = *q;
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            *w++ = (char)c;
            q++;
        } else if (c == '"' || c == '\\') {
            *w++ = '\\', *w++ = (char)c, q++;
        } else if (c < 0x20) {
            *w++ = '\\', *w++ = 'u', *w++ = '0', *w++ = '0';
            *w++ = hex[c >> 4], *w++ = hex[c & 15];
            q++;
        } else {
            size_t k = utf8_len(q, (size_t)(e - q));
            if (k) {
                memcpy(w, q, k), w += k, q += k;
            } else {
                memcpy(w, "\\ufffd", 6), w += 6, q++;
            }
        }
    }
    *w++ = '"';
    b->n += (size_t)(w - w0);
}

/* "%.0f" of x without printf (the lens titles have four numbers each):
 * nearbyint rounds half to even like printf does. */
static void lb_pct(struct lsp_buf *b, double x)
{
    if (!(x >= 0 && x < 1e15)) { /* negative, huge, NaN: printf decides */
        char tmp[64];
        int k = snprintf(tmp, sizeof tmp, "%.0f", x);
        if (k > 0) lsp_buf_put(b, tmp, (size_t)k < sizeof tmp ? (size_t)k : sizeof tmp - 1);
        return;
    }
    lb_long(b, (long)nearbyint(x));
}

/* The change against the previous run (setting compareWithPrevious;
 * docs/lsp.md, "Against the previous run"): after a run of the same
 * program, hints and function lenses add how their time, and memory, moved
 * since the run before: "42% python ▼0.45 s · 12 MB kept ▼30 MB". A change is said only when it is
 * at least VIEW_CHANGE_REL of what it was and at least VIEW_CHANGE_SAMPLES samples' worth of time
 * (VIEW_CHANGE_MB of memory): below either, two runs of the same code differ that much by chance,
 * and every line would carry a number. */
#define VIEW_CHANGE_REL 0.05
#define VIEW_CHANGE_SAMPLES 2
#define VIEW_CHANGE_MB 1.0

static int view_compare_on(struct lsp_facilities *s)
{
    return lsp_setting_bool(s, "compareWithPrevious", 0);
}

static int changed(double was, double now, double floor)
{
    double d = fabs(now - was);
    return d >= VIEW_CHANGE_REL * was && d >= floor;
}

/* The memory stat a change is said in: kept when either run kept some,
 * else allocated (as lb_memory words it). */
static int change_mem_stat(const struct cmp_row *r)
{
    return r->old.v[AGENT_STAT_KEPT] >= 0.5 || r->cur.v[AGENT_STAT_KEPT] >= 0.5 ? AGENT_STAT_KEPT
                                                                                : AGENT_STAT_ALLOC;
}

/* Time: " ▼0.45 s", " ▲0.30 s", " new" (absent from the run before, its
 * file not), or nothing; r may be NULL. */
static void lb_time_change(struct lsp_buf *b, const struct profile *p, const struct cmp_row *r)
{
    if (!r || !r->file_old) return; /* not compared, or its file was not in the run before */
    if (!r->has_old) {
        LB_LIT(b, " new");
        return;
    }
    double sample = p->meta.interval_ms > 0 ? p->meta.interval_ms / 1000 : 0.01;
    double was = cmp_time(&r->old), now = cmp_time(&r->cur);
    char tmp[48];
    int n = changed(was, now, VIEW_CHANGE_SAMPLES * sample)
                ? snprintf(tmp, sizeof tmp, " %s%.2f s", now < was ? "\u25bc" : "\u25b2",
                           fabs(now - was))
                : 0;
    if (n > 0) lsp_buf_put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* Memory: " ▼192 MB" right after lb_memory's words when they name the
 * same stat (shown: AGENT_STAT_KEPT / _ALLOC, or -1 for none), else with
 * its own, " · ▲12 MB kept"; nothing within noise or without r. */
static void lb_mem_change(struct lsp_buf *b, const struct cmp_row *r, int shown)
{
    if (!r || !r->has_old || !r->has_new) return;
    int k = change_mem_stat(r);
    double was = r->old.v[k], now = r->cur.v[k];
    if (!changed(was, now, VIEW_CHANGE_MB)) return;
    char tmp[64];
    int n = snprintf(tmp, sizeof tmp, "%s%s%.0f MB%s", k == shown ? " " : " \u00b7 ",
                     now < was ? "\u25bc" : "\u25b2", fabs(now - was),
                     k == shown             ? ""
                     : k == AGENT_STAT_KEPT ? " kept"
                                            : " alloc");
    if (n > 0) lsp_buf_put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* " · +120 MB kept" / " · 243 MB alloc" suffix of the lens title, without
 * printf (no "+" on memory only allocated: it would read as kept), then
 * its change (lb_mem_change, chg may be NULL) */
static void lb_memory(struct lsp_buf *b, const struct agent_stats *st, const struct cmp_row *chg)
{
    double kept = st->v[AGENT_STAT_KEPT], alloc = st->v[AGENT_STAT_ALLOC];
    double v = kept >= 0.5 ? kept : alloc >= 0.5 ? alloc : -1;
    int shown = kept >= 0.5 ? AGENT_STAT_KEPT : v >= 0 ? AGENT_STAT_ALLOC : -1;
    if (v >= 0) {
        if (kept >= 0.5)
            LB_LIT(b, " \u00b7 +");
        else
            LB_LIT(b, " \u00b7 ");
        lb_pct(b, v);
        if (kept >= 0.5)
            LB_LIT(b, " MB kept");
        else
            LB_LIT(b, " MB alloc");
    }
    lb_mem_change(b, chg, shown);
}

/* What a share of time is made of, in words (docs/lsp.md, "Lenses,
 * hints, hover"): the kinds (python, native, waiting) that hold at least
 * VIEW_KIND_MIN of the code's time, or VIEW_KIND_RUN percent of the run
 * (a module that slept 5% of the run is not "100% python"), and round to
 * 1% or more of the run.
 * One such kind (or none): its word after the share, "42% waiting",
 * "33% native", "19% python". Several: each one's share of the run,
 * "19% · 15 py · 4 native". Why: "py/nat 0/0" on a sleeping line hid the
 * 42% it waited, and "py/nat 17/1" needed a legend. 20%, not 10%: a 6%
 * sleep line read "6% · 1 py · 4 waiting" in the VS Code e2e (1% python
 * around the sleep on a loaded machine). Then the time's change (chg,
 * may be NULL: lb_time_change), the memory suffix and its change. Shared
 * by lenses and hints so that both read the same. */
#define VIEW_KIND_MIN 0.20
#define VIEW_KIND_RUN 5.0

static void lb_share(struct lsp_buf *b, const struct profile *p, const struct agent_stats *st,
                     const struct cmp_row *chg)
{
    static const struct {
        int stat;
        const char *word, *abbr; /* alone, among others */
    } kinds[] = {{AGENT_STAT_PY, "python", "py"},
                 {AGENT_STAT_NAT, "native", "native"},
                 {AGENT_STAT_SYS, "waiting", "waiting"}};
    double total = agent_stats_time(&p->total), t = agent_stats_time(st);
    double k = total > 0 ? 100.0 / total : 0;
    int shown[3], nshown = 0, top = 0;
    for (int i = 0; i < 3; i++) {
        double v = st->v[kinds[i].stat];
        if (v > st->v[kinds[top].stat]) top = i;
        /* rounded as shown: a sleep line's hint that reads 5% makes its
         * function's lens say "5 waiting" too */
        double pct = nearbyint(v * k);
        if (t > 0 && (v >= VIEW_KIND_MIN * t || pct >= VIEW_KIND_RUN) && pct >= 1)
            shown[nshown++] = i;
    }
    lb_pct(b, summary_share(p, st));
    LB_LIT(b, "%");
    if (t <= 0) {
        /* no time: only memory to say */
    } else if (nshown <= 1) {
        LB_LIT(b, " ");
        lsp_buf_put(b, kinds[top].word, strlen(kinds[top].word));
    } else {
        for (int j = 0; j < nshown; j++) {
            LB_LIT(b, " \u00b7 ");
            lb_pct(b, st->v[kinds[shown[j]].stat] * k);
            LB_LIT(b, " ");
            lsp_buf_put(b, kinds[shown[j]].abbr, strlen(kinds[shown[j]].abbr));
        }
    }
    lb_time_change(b, p, chg);
    lb_memory(b, st, chg);
}

/* The title of a lens, "⏱ 12% · 10 py · 2 native · +120 MB kept" (see
 * lb_share; chg: its change, may be NULL), as a JSON string (its
 * characters need no escaping). */
static void lb_title(struct lsp_buf *b, const struct profile *p, const struct agent_stats *st,
                     const struct cmp_row *chg)
{
    LB_LIT(b, "\"\u23f1 ");
    lb_share(b, p, st, chg);
    LB_LIT(b, "\"");
}

/* One lens (with a leading comma unless it is the first of the array):
 * {"range":..,"command":{"title":..,"command":"hotline.showProfile",
 *  "arguments":[{"uri":..,"line":..,"function":..}]}}. title: NULL for the
 * profile title of st (and its change chg, may be NULL); juri: the
 * document URI already as a JSON string. */
static void lb_lens(struct lsp_buf *b, long line, const char *title, const struct profile *p,
                    const struct agent_stats *st, const struct cmp_row *chg, const char *juri,
                    size_t njuri, int pline, const char *fn)
{
    lsp_buf_sep(b);
    LB_LIT(b, "{\"range\":{\"start\":{\"line\":");
    lb_long(b, line);
    LB_LIT(b, ",\"character\":0},\"end\":{\"line\":");
    lb_long(b, line);
    LB_LIT(b, ",\"character\":0}},\"command\":{\"title\":");
    if (title)
        lb_str(b, title);
    else
        lb_title(b, p, st, chg);
    LB_LIT(b, ",\"command\":\"hotline.showProfile\",\"arguments\":[{\"uri\":");
    lsp_buf_put(b, juri, njuri);
    LB_LIT(b, ",\"line\":");
    lb_long(b, pline > 0 ? pline - 1 : 0);
    if (fn) {
        LB_LIT(b, ",\"function\":");
        lb_str(b, fn);
    }
    LB_LIT(b, "}]}}");
}

/* Is document line `cur` `class <name>` (name = last component of a dotted
 * qualified name prefix)? */
static int is_class_line(const struct lsp_docview *v, long cur, const char *name, size_t n)
{
    size_t len;
    const char *t = doc_line(v->d, (uint32_t)cur, &len), *e;
    if (!t || cur >= (long)v->a->n || v->a->map[cur] < 0) return 0;
    e = t + len;
    while (t < e && (*t == ' ' || *t == '\t'))
        t++;
    if (e - t < 6 || strncmp(t, "class", 5) || (t[5] != ' ' && t[5] != '\t')) return 0;
    t += 6;
    while (t < e && (*t == ' ' || *t == '\t'))
        t++;
    return (size_t)(e - t) > n && !strncmp(t, name, n) &&
           (t[n] == '(' || t[n] == ':' || t[n] == ' ');
}

/* One lens per class: the sum of its methods (qualified names "Class.method"),
 * over the nearest `class Class` line above the first method. */
static void class_lenses(const struct lsp_docview *v, const struct profile *p, const int32_t *inv,
                         struct lsp_buf *out, const char *juri, size_t njuri)
{
    struct cls {
        const char *qual; /* borrowed from a func name */
        size_t qlen;
        long line;
        struct agent_stats st;
    } cls[VIEW_MAX_CLASSES];
    size_t ncls = 0;
    for (size_t i = 0; i < v->pf->nfuncs; i++) {
        const struct prof_func *fn = v->pf->funcs[i];
        const char *dot = strrchr(fn->name, '.');
        if (!dot || strstr(fn->name, "<locals>") || dot == fn->name) continue;
        size_t qlen = (size_t)(dot - fn->name), k;
        for (k = 0; k < ncls; k++)
            if (cls[k].qlen == qlen && !strncmp(cls[k].qual, fn->name, qlen)) break;
        long cur = inv ? current_line_inv(v, inv, fn->first_line) : current_line(v, fn->first_line);
        if (k == ncls) {
            if (ncls == VIEW_MAX_CLASSES || cur < 0) continue;
            cls[k] = (struct cls){.qual = fn->name, .qlen = qlen, .line = -1};
            ncls++;
        }
        agent_stats_merge(&cls[k].st, &fn->st);
        if (cur < 0) continue;
        const char *last = cls[k].qual;
        for (const char *q = cls[k].qual; q < cls[k].qual + qlen; q++)
            if (*q == '.') last = q + 1;
        size_t n = (size_t)(cls[k].qual + qlen - last);
        for (long l = cur - 1; l >= 0 && l > cur - VIEW_CLASS_SCAN; l--)
            if (is_class_line(v, l, last, n)) {
                if (cls[k].line < 0 || l < cls[k].line) cls[k].line = l;
                break;
            }
    }
    char name[256];
    for (size_t k = 0; k < ncls; k++) {
        if (cls[k].line < 0) continue;
        snprintf(name, sizeof name, "%.*s", (int)cls[k].qlen, cls[k].qual);
        lb_lens(out, cls[k].line, NULL, p, &cls[k].st, NULL, juri, njuri, 0, name);
    }
}

/* The profile lenses of the view, appended to b. */
static void view_lenses(struct lsp_facilities *s, struct lsp_docview *v, struct lsp_buf *b)
{
    const struct profile *p = lsp_pview_profile(s);
    /* ~220 bytes a lens: one allocation instead of a chain of reallocs */
    if (!lsp_buf_room(b, (v->pf->nfuncs + 8) * 256)) return;
    struct lsp_buf ju = {0};
    lb_str(&ju, v->d->uri);
    if (ju.oom) {
        b->oom = 1;
        return;
    }
    if (!v->cell && anchor_snap_stale(v->snap)) /* a cell's name is its staleness check */
        lb_lens(b, 0, "\u26a0 profile is stale \u2014 re-run", p, NULL, NULL, ju.p, ju.n, 0, NULL);
    lb_lens(b, 0, NULL, p, &v->pf->total, NULL, ju.p, ju.n, 0, "<module>");
    int cmp_on = view_compare_on(s);
    int32_t *inv = invert(v);
    for (size_t i = 0; i < v->pf->nfuncs; i++) {
        const struct prof_func *fn = v->pf->funcs[i];
        if (!strcmp(fn->name, "<module>")) continue;
        long cur = inv ? current_line_inv(v, inv, fn->first_line) : current_line(v, fn->first_line);
        if (cur < 0) continue;
        struct agent_stats st;
        profile_func_stats(v->pf, fn, &st);
        const struct cmp_row *chg =
            cmp_on ? lsp_pview_func_change(s, v->path, fn->first_line, fn->name) : NULL;
        lb_lens(b, cur, NULL, p, &st, chg, ju.p, ju.n, fn->first_line, fn->name);
    }
    class_lenses(v, p, inv, b, ju.p, ju.n);
    free(inv);
    free(ju.p);
}

/* textDocument/codeLens, joined by the core: the profile lenses of
 * params.textDocument appended to out. */
static void view_code_lens(struct lsp_facilities *s, void *self, json_t *params,
                           struct lsp_buf *out)
{
    (void)self;
    struct lsp_docview v;
    if (lsp_setting_bool(s, "lenses.enabled", 1) && !view_open(s, params, &v))
        view_lenses(s, &v, out);
}

/* ---- inlay hints ---- */

static const char *bar(double pct)
{
    static const char *b[] = {"\u258f", "\u258e", "\u258d", "\u258c",
                              "\u258b", "\u258a", "\u2589", "\u2588"};
    int i = (int)(pct / 12.5);
    return b[i < 0 ? 0 : i > 7 ? 7 : i];
}

/* The hint's tooltip (markdown in tip) gets the previous run's line in
 * full, even a change within noise, when chg (may be NULL) has it. */
static void tip_change(const struct cmp_row *chg, char *tip, size_t n)
{
    size_t k = strlen(tip);
    if (!chg || !chg->file_old || k >= n - 1) return;
    double was = cmp_time(&chg->old), now = cmp_time(&chg->cur);
    if (!chg->has_old)
        snprintf(tip + k, n - k, "\n\n**Previous run:** not run (new)");
    else
        snprintf(tip + k, n - k, "\n\n**Previous run:** %.3f s (line %d), now %.3f s (%+.3f s)",
                 was, chg->line_old, now, now - was);
}

static void view_inlay_hint(struct lsp_facilities *s, void *self, json_t *id, json_t *params)
{
    (void)self;
    struct lsp_docview v = {0};
    json_t *out = json_array();
    int on = lsp_setting_bool(s, "hints.enabled", 1);
    if (!on || view_open(s, params, &v)) {
        lsp_reply(s, id, out);
        return;
    }
    /* the range's shape was checked at the door */
    json_t *range = json_object_get(params, "range");
    json_t *end = json_object_get(range, "end");
    json_int_t l0 = json_integer_value(json_object_get(json_object_get(range, "start"), "line"));
    json_int_t l1 = json_integer_value(json_object_get(end, "line"));
    json_int_t c1 = json_integer_value(json_object_get(end, "character"));
    if (c1 == 0 && l1 > l0)
        l1--; /* the range ends at the start of line l1: its end-of-line hint is outside */
    if (l0 < 0) l0 = 0;
    if (l1 >= (json_int_t)v.d->nlines) l1 = (json_int_t)v.d->nlines - 1;
    double threshold = lsp_setting_num(s, "hints.threshold", 1.0);
    int cmp_on = view_compare_on(s);
    const struct profile *p = lsp_pview_profile(s);
    struct lsp_buf lb = {0};
    for (json_int_t cur = l0; cur <= l1 && json_array_size(out) < VIEW_MAX_HINTS; cur++) {
        int pl = profiled_line(&v, (uint32_t)cur);
        const struct agent_stats *st = pl ? line_stats(v.pf, pl) : NULL;
        if (!st) continue;
        double share = summary_share(p, st);
        if (share < threshold) continue;
        size_t len;
        const char *text = doc_line(v.d, (uint32_t)cur, &len);
        while (len && text[len - 1] == '\r')
            len--;
        char tip[768];
        const struct cmp_row *chg = cmp_on ? lsp_pview_line_change(s, v.path, pl) : NULL;
        /* "▌42% waiting · +5 MB kept ▼0.45 s": the bar, the lens wording */
        lb.n = 0;
        lsp_buf_put(&lb, bar(share), strlen(bar(share)));
        lb_share(&lb, p, st, chg);
        lsp_buf_put(&lb, "", 1);
        if (lb.oom) break;
        summary_breakdown(p, st, tip, sizeof tip);
        tip_change(chg, tip, sizeof tip);
        json_array_append_new(out, json_pack("{s:{s:I, s:i}, s:s, s:b, s:{s:s, s:s}, s:{s:i, s:f}}",
                                             "position", "line", cur, "character",
                                             (int)pos_line_units(text, len, s->out->enc), "label",
                                             lb.p, "paddingLeft", 1, "tooltip", "kind", "markdown",
                                             "value", tip, "data", "line", pl, "share", share));
    }
    free(lb.p);
    lsp_reply(s, id, out);
}

/* ---- hover ---- */

#define VIEW_SPARK_COLS 32 /* characters in the hover's memory sparkline */

/* The line's kept-MB timeline (memprof, docs/memory.md) as a markdown
 * paragraph: a sparkline of at most VIEW_SPARK_COLS eighth-blocks between
 * the timeline's min and max, then the min/max in MB and the time span.
 * Writes "" when the line has no timeline (memory off, < 2 points). */
static void spark(const struct profile *p, const struct prof_file *pf, int line, char *buf,
                  size_t n)
{
    static const char *const blk[] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                      "\u2585", "\u2586", "\u2587", "\u2588"};
    buf[0] = 0;
    const double *t, *v;
    int np = memprof_line_timeline(p->mem, pf->path, line, &t, &v);
    if (np < 2) return;
    size_t m = (size_t)np;
    double t0 = t[0], t1 = t[m - 1], lo_mb = v[0], hi_mb = v[0];
    for (size_t i = 1; i < m; i++) {
        if (v[i] < lo_mb) lo_mb = v[i];
        if (v[i] > hi_mb) hi_mb = v[i];
    }
    size_t cols = m < VIEW_SPARK_COLS ? m : VIEW_SPARK_COLS;
    int k = snprintf(buf, n, "\n**Memory kept over the run** `");
    for (size_t c = 0; c < cols && k > 0 && (size_t)k < n; c++) {
        double x = v[c * m / cols];
        int b = hi_mb - lo_mb > 1e-9 ? (int)((x - lo_mb) / (hi_mb - lo_mb) * 7 + 0.5) : 0;
        k += snprintf(buf + k, n - (size_t)k, "%s", blk[b < 0 ? 0 : b > 7 ? 7 : b]);
    }
    if (k > 0 && (size_t)k < n)
        snprintf(buf + k, n - (size_t)k, "` min %.1f MB, max %.1f MB, over %.1f s\n", lo_mb, hi_mb,
                 t1 - t0);
}

/* A node of the caller tree: the frame (borrowed; NULL: the line is the
 * stack's root) `depth` calls outside the line's own, under `parent`. */
struct caller {
    const struct prof_frame *fr;
    int parent; /* index, -1 for the first level */
    int depth;
    double seconds;
};

static int same_frame(const struct prof_frame *a, const struct prof_frame *b)
{
    return a == b || (a && b && a->file == b->file && a->name == b->name && a->line == b->line);
}

/* Appends the children of `parent` (heaviest first, at most
 * view_caller_rows[depth] of them), each followed by its own callers. */
static const int view_caller_rows[VIEW_CALLER_DEPTH] = {VIEW_HOVER_CALLERS, 3, 2};
static void callers_md(const struct caller *c, size_t nc, int parent, int depth, double total,
                       char *md, size_t *n, size_t cap)
{
    unsigned char done[VIEW_CALLERS_DISTINCT] = {0};
    for (int row = 0; row < view_caller_rows[depth] && *n < cap - 1; row++) {
        size_t best = nc;
        for (size_t j = 0; j < nc; j++)
            if (!done[j] && c[j].parent == parent && (best == nc || c[j].seconds > c[best].seconds))
                best = j;
        if (best == nc) return;
        done[best] = 1;
        char bar[64] = "";
        int w = (int)(10 * c[best].seconds / total + 0.5);
        for (int b = 0; b < 10; b++)
            strcat(bar, b < w ? "\u2588" : "\u2591");
        const struct prof_frame *fr = c[best].fr;
        const char *base = fr ? strrchr(fr->file, '/') : NULL;
        if (fr)
            *n += (size_t)snprintf(md + *n, cap - *n, "    %s %3.0f%%  %*s%s (%s:%d)\n", bar,
                                   100 * c[best].seconds / total, 2 * depth, "", fr->name,
                                   base ? base + 1 : fr->file, fr->line);
        else
            *n += (size_t)snprintf(md + *n, cap - *n, "    %s %3.0f%%  (no caller)\n", bar,
                                   100 * c[best].seconds / total);
        if (fr && depth + 1 < VIEW_CALLER_DEPTH)
            callers_md(c, nc, (int)best, depth + 1, total, md, n, cap);
    }
}

/* "By process": when the profile has several processes (a Dask or Ray
 * job's workers, forked children), the seconds of the stacks through the
 * line per process, heaviest first (docs/distributed.md). */
#define VIEW_HOVER_PROCS 8
static void hover_procs(const struct profile *p, const char *path, int line, char *md, size_t *n,
                        size_t cap)
{
    if (p->nprocs < 2) return;
    struct prof_pid_seconds ps[VIEW_HOVER_PROCS];
    double untold = 0, total = 0;
    size_t k = profile_line_by_process(p, path, line, ps, VIEW_HOVER_PROCS, &untold);
    for (size_t i = 0; i < k; i++)
        total += ps[i].seconds;
    total += untold;
    if (!k || total <= 0) return;
    *n += (size_t)snprintf(md + *n, cap - *n,
                           "\n**By process** (%.3f s of stacks, %zu of %zu "
                           "processes)\n\n",
                           total, k, p->nprocs);
    for (size_t i = 0; i < k && *n < cap - 1; i++) {
        char bar[64] = "", label[192];
        int w = (int)(10 * ps[i].seconds / total + 0.5);
        for (int b = 0; b < 10; b++)
            strcat(bar, b < w ? "\u2588" : "\u2591");
        profile_proc_label(p, ps[i].pid, label, sizeof label);
        *n += (size_t)snprintf(md + *n, cap - *n, "    %s %3.0f%%  %7.3f s  %s\n", bar,
                               100 * ps[i].seconds / total, ps[i].seconds, label);
    }
    if (untold > 0 && *n < cap - 1)
        *n += (size_t)snprintf(md + *n, cap - *n, "    %3.0f%% not told apart\n",
                               100 * untold / total);
}

/* "Who calls this line": over every stack through (path, line) (interned
 * store strings: compared by pointer), the frames outside the line's own,
 * up to VIEW_CALLER_DEPTH calls out, merged into a tree, each node with its
 * share of those stacks' seconds: a small text flame, turned upside down
 * (the line's callers first, their callers indented under them). Appends
 * markdown to md[*n..cap). */
static void hover_callers(const struct profile *p, const char *path, int line, char *md, size_t *n,
                          size_t cap)
{
    const struct prof_stack **all = p->nstacks ? malloc(p->nstacks * sizeof *all) : NULL;
    struct caller *c = malloc(VIEW_CALLERS_DISTINCT * sizeof *c);
    size_t ns = all && c ? profile_top_stacks(p, path, line, all, p->nstacks) : 0, nc = 0;
    double total = 0, other = 0;
    for (size_t i = 0; i < ns; i++) {
        const struct prof_stack *st = all[i];
        size_t k = 0; /* the innermost frame at the line: its callers are next */
        while (k < st->nfr && !(st->fr[k].line == line && !strcmp(st->fr[k].file, path)))
            k++;
        total += st->seconds;
        int parent = -1;
        for (int d = 0; d < VIEW_CALLER_DEPTH; d++) {
            size_t at = k + 1 + (size_t)d;
            const struct prof_frame *fr = at < st->nfr ? &st->fr[at] : NULL;
            if (!fr && d > 0) break; /* the chain reached the stack's root */
            size_t j = 0;
            while (j < nc && !(c[j].parent == parent && same_frame(c[j].fr, fr)))
                j++;
            if (j == nc && nc == VIEW_CALLERS_DISTINCT) {
                if (!d) other += st->seconds;
                break;
            }
            if (j == nc) c[nc++] = (struct caller){fr, parent, d, 0};
            c[j].seconds += st->seconds;
            if (!fr) break;
            parent = (int)j;
        }
    }
    if (nc && total > 0 && *n < cap) {
        *n += (size_t)snprintf(md + *n, cap - *n,
                               "\n**Who calls this line** (%.3f s of stacks)\n\n", total);
        callers_md(c, nc, -1, 0, total, md, n, cap);
        if (other > 0 && *n < cap)
            *n += (size_t)snprintf(md + *n, cap - *n, "    %3.0f%% from other callers\n",
                                   100 * other / total);
    }
    free(all);
    free(c);
}

static void view_hover(struct lsp_facilities *s, void *self, json_t *id, json_t *params)
{
    (void)self;
    struct lsp_docview v = {0};
    int on = lsp_setting_bool(s, "hover.enabled", 1);
    if (!on || view_open(s, params, &v)) {
        lsp_reply(s, id, json_null());
        return;
    }
    /* position.line is an integer (checked at the door) */
    json_int_t line =
        json_integer_value(json_object_get(json_object_get(params, "position"), "line"));
    int pl = line >= 0 ? profiled_line(&v, (uint32_t)line) : 0;
    const struct agent_stats *st = pl ? line_stats(v.pf, pl) : NULL;
    if (!st) {
        lsp_reply(s, id, json_null());
        return;
    }
    const struct profile *p = lsp_pview_profile(s);
    size_t cap = 8192, n = 0;
    char *md = malloc(cap);
    if (!md) {
        lsp_reply(s, id, json_null());
        return;
    }
    char tmp[1024];
    summary_breakdown(p, st, tmp, sizeof tmp);
    n += (size_t)snprintf(md + n, cap - n, "**Hotline** \u2014 line %d\n\n%s\n", pl, tmp);
    spark(p, v.pf, pl, tmp, sizeof tmp);
    if (n < cap) n += (size_t)snprintf(md + n, cap - n, "%s", tmp);
    if (n < cap) hover_procs(p, v.path, pl, md, &n, cap);
    if (n < cap) hover_callers(p, v.path, pl, md, &n, cap);
    const struct prof_stack *stacks[VIEW_HOVER_STACKS];
    size_t ns = profile_top_stacks(p, v.path, pl, stacks, VIEW_HOVER_STACKS);
    if (ns && n < cap)
        n += (size_t)snprintf(md + n, cap - n, "\n**Call stacks reaching this line**\n");
    for (size_t i = 0; i < ns && n < cap - 1; i++) {
        n += (size_t)snprintf(md + n, cap - n, "\n%zu. %.3f s, %lld samples\n", i + 1,
                              stacks[i]->seconds, stacks[i]->samples);
        for (size_t k = 0; k < stacks[i]->nfr && k < 12 && n < cap - 1; k++) {
            const struct prof_frame *fr = &stacks[i]->fr[k];
            const char *base = strrchr(fr->file, '/');
            n += (size_t)snprintf(md + n, cap - n, "    %s (%s:%d)\n", fr->name,
                                  base ? base + 1 : fr->file, fr->line);
        }
    }
    if (n >= cap) n = cap - 1;
    md[n] = 0;
    lsp_reply(s, id, json_pack("{s:{s:s, s:s}}", "contents", "kind", "markdown", "value", md));
    free(md);
}

/* ---- the provider ---- */

static void view_initialize(struct lsp_facilities *s, void *self, json_t *caps)
{
    (void)s, (void)self;
    json_object_set_new(caps, "inlayHintProvider", json_pack("{s:b}", "resolveProvider", 0));
    json_object_set_new(caps, "hoverProvider", json_true());
}

static const struct lsp_method view_methods[] = {
    {"textDocument/inlayHint", view_inlay_hint, NULL,
     "textDocument.uri:s range.start.line:i range.start.character:i range.end.line:i "
     "range.end.character:i"},
    {"textDocument/hover", view_hover, NULL,
     "textDocument.uri:s position.line:i position.character:i"},
    {NULL, NULL, NULL, NULL},
};

const struct lsp_provider lsp_view_provider = {
    .name = "view",
    .initialize = view_initialize,
    .methods = view_methods,
    .code_lens = view_code_lens,
};
