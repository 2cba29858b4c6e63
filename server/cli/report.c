/* report: render a profile as text (see report.h). */
#include "cli/report.h"
#include "store/memprof.h"
#include "text/termsafe.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BAR_WIDTH 10

/* Up to n - 1 bytes of line `line` (1-based) of the regular file at path
 * into buf; the rest of a longer line is skipped, so that a file without a
 * newline (or /dev/zero behind a symlink: a profile names any path) costs
 * no more memory than buf. */
static int read_line(const char *path, int line, char *buf, size_t n)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* a FIFO must not block */
    if (fd < 0) return -errno;
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        return -EINVAL;
    }
    char chunk[65536];
    size_t k = 0;
    int ln = 1, rc = -ENOENT;
    ssize_t r;
    while (rc == -ENOENT && (r = read(fd, chunk, sizeof chunk)) > 0) {
        for (size_t i = 0; i < (size_t)r;) {
            const char *nl = memchr(chunk + i, '\n', (size_t)r - i);
            size_t end = nl ? (size_t)(nl - chunk) : (size_t)r;
            if (ln == line) {
                size_t take = end - i < n - 1 - k ? end - i : n - 1 - k;
                memcpy(buf + k, chunk + i, take);
                k += take;
            }
            if (!nl) break;
            if (ln++ == line) {
                rc = 0;
                break;
            }
            i = end + 1;
        }
    }
    if (rc == -ENOENT && ln == line && k) rc = 0; /* the last line, without a newline */
    close(fd);
    buf[k] = 0;
    return rc;
}

int report_source_line(const char *path, int line, int width, char *buf, size_t n)
{
    buf[0] = 0;
    if (n == 0 || line < 1) return -EINVAL;
    char l[4096];
    int rc = read_line(path, line, l, sizeof l);
    if (rc) return rc;
    char *s = l;
    while (*s == ' ' || *s == '\t')
        s++;
    size_t sl = strlen(s);
    while (sl && (s[sl - 1] == '\n' || s[sl - 1] == '\r' || s[sl - 1] == ' ' || s[sl - 1] == '\t'))
        s[--sl] = 0;
    /* cut at width characters, never inside a UTF-8 sequence; controls
     * (an ESC sequence in the source) shown escaped (text/termsafe.h) */
    size_t out = 0;
    int cps = 0;
    for (size_t i = 0; i < sl;) {
        char one[TERMSAFE_CHAR_MAX];
        size_t ol, used = termsafe_char(s + i, sl - i, one, &ol);
        if (out + ol + 4 > n) break;
        if (cps == width) {
            memcpy(buf + out, "...", 3);
            out += 3;
            break;
        }
        memcpy(buf + out, one, ol);
        out += ol;
        i += used;
        cps++;
    }
    buf[out] = 0;
    return 0;
}

/* Every text from the profile is printed through SAFE (text/termsafe.h): a
 * saved profile may come from a cloned repository, an attached process may
 * be another user's, and their names must not drive the terminal. */
#define SAFE_SIZE TERMSAFE_SIZE(PATH_MAX)
#define SAFE(buf, s) termsafe_str(buf, sizeof buf, s)

static const char *shown_path(const char *path, const char *cwd)
{
    size_t n = cwd ? strlen(cwd) : 0;
    if (n && !strncmp(path, cwd, n) && path[n] == '/') return path + n + 1;
    return path;
}

/* '#' python, '=' native, '.' system; width proportional to share of total */
static void bar(char *b, const struct agent_stats *st, double total)
{
    double t = agent_stats_time(st);
    int w = total > 0 ? (int)(BAR_WIDTH * t / total + 0.5) : 0;
    if (w > BAR_WIDTH) w = BAR_WIDTH;
    int py = t > 0 ? (int)(w * st->v[AGENT_STAT_PY] / t + 0.5) : 0;
    int nat = t > 0 ? (int)(w * (st->v[AGENT_STAT_PY] + st->v[AGENT_STAT_NAT]) / t + 0.5) - py : 0;
    int i = 0;
    for (; i < py && i < w; i++)
        b[i] = '#';
    for (; i < py + nat && i < w; i++)
        b[i] = '=';
    for (; i < w; i++)
        b[i] = '.';
    for (; i < BAR_WIDTH; i++)
        b[i] = ' ';
    b[BAR_WIDTH] = 0;
}

static void header(FILE *out, const struct profile *p, const char *cwd)
{
    const struct prof_meta *m = &p->meta;
    char sb[SAFE_SIZE];
    fprintf(out, "hotline: %s", m->program ? SAFE(sb, shown_path(m->program, cwd)) : "?");
    for (size_t i = 0; m->argv && i < json_array_size(m->argv); i++)
        fprintf(out, " %s", SAFE(sb, json_string_value(json_array_get(m->argv, i))));
    fputc('\n', out);
    char reason[64];
    if (m->reason)
        termsafe_str(reason, sizeof reason, m->reason);
    else
        profile_describe_exit(m->exit_status, m->exit_signal, reason, sizeof reason);
    fprintf(out, "  python %s, %.2f s elapsed, %lld samples",
            m->python_version ? SAFE(sb, m->python_version) : "?", m->elapsed_s, m->samples);
    if (p->nprocs > 1) fprintf(out, ", %zu processes", p->nprocs);
    fprintf(out, ", %s\n", reason);
    const struct agent_stats *t = &p->total;
    fprintf(out, "  profiled code: %.2f s (python %.2f, native %.2f, system %.2f)\n",
            agent_stats_time(t), t->v[AGENT_STAT_PY], t->v[AGENT_STAT_NAT], t->v[AGENT_STAT_SYS]);
}

static int cmp_alloc(const void *a, const void *b)
{
    const struct prof_line_ref *ra = a, *rb = b;
    double x = ra->st->v[AGENT_STAT_ALLOC], y = rb->st->v[AGENT_STAT_ALLOC];
    if (x != y) return x < y ? 1 : -1;
    /* ties in file and line order: a file's lines are stored in first-seen order */
    int c = strcmp(ra->file->path, rb->file->path);
    return c ? c : ra->line - rb->line;
}

/* Lines that allocated most, their kept/peak/copy, and the likely leaks
 * (docs/memory.md). Nothing when the run had no memory data. */
static void memory_section(FILE *out, const struct profile *p, int top, const char *cwd)
{
    const char *ppath;
    int pline;
    double peak = memprof_peak_mb(p->mem, &ppath, &pline);
    size_t n = 0, cap = 0;
    struct prof_line_ref *v = NULL;
    for (size_t i = 0; i < p->nfiles; i++) {
        const struct prof_file *f = p->files[i];
        for (size_t j = 0; j < f->nlines; j++) {
            const struct prof_line *l = &f->lines[j];
            if (l->st.v[AGENT_STAT_ALLOC] <= 0) continue;
            if (n == cap) {
                size_t nc = cap ? cap * 2 : 64;
                void *nv = realloc(v, nc * sizeof *v);
                if (!nv) break;
                v = nv;
                cap = nc;
            }
            v[n++] = (struct prof_line_ref){f, l->line, &l->st};
        }
    }
    if (!n && peak <= 0) {
        free(v);
        return;
    }
    char sb[SAFE_SIZE];
    fprintf(out, "\n  memory: peak %.1f MB", peak);
    if (ppath) fprintf(out, " (reached at %s:%d)", SAFE(sb, shown_path(ppath, cwd)), pline);
    fputc('\n', out);
    if (n) qsort(v, n, sizeof *v, cmp_alloc);
    if (n)
        fprintf(out, "  %9s %9s %9s %9s %5s %9s  %s\n", "alloc MB", "freed MB", "kept MB",
                "peak MB", "py%", "copy MB", "line");
    for (size_t i = 0; i < n && i < (size_t)top; i++) {
        const double *x = v[i].st->v;
        char src[REPORT_SOURCE_WIDTH * TERMSAFE_CHAR_MAX + 8];
        report_source_line(v[i].file->path, v[i].line, REPORT_SOURCE_WIDTH, src, sizeof src);
        fprintf(out, "  %9.1f %9.1f %9.1f %9.1f %4.0f%% %9.1f  %s:%d  %s\n", x[AGENT_STAT_ALLOC],
                x[AGENT_STAT_FREED], x[AGENT_STAT_KEPT], x[AGENT_STAT_PEAK],
                100 * x[AGENT_STAT_PYFRAC], x[AGENT_STAT_COPY],
                SAFE(sb, shown_path(v[i].file->path, cwd)), v[i].line, src);
    }
    free(v);
    int first = 1;
    for (size_t i = 0; i < p->nfiles; i++) {
        struct memprof_leak lk[16];
        size_t nk = profile_leaks(p, p->files[i]->path, lk, 16);
        for (size_t j = 0; j < nk; j++) {
            if (first) fprintf(out, "\n  likely leaks\n");
            first = 0;
            fprintf(out, "  %s:%d  keeps %.1f MB/s, %.1f MB kept at the end (likelihood %.0f%%)\n",
                    SAFE(sb, shown_path(p->files[i]->path, cwd)), lk[j].line, lk[j].rate_mb_s,
                    lk[j].kept_mb, 100 * lk[j].likelihood);
        }
    }
}

void report_print(FILE *out, const struct profile *p, int top, const char *cwd)
{
    if (top <= 0) top = REPORT_DEFAULT_TOP;
    header(out, p, cwd);
    double total = agent_stats_time(&p->total);
    struct prof_line_ref *lines = calloc((size_t)top, sizeof *lines);
    size_t nl = lines ? profile_top_lines(p, lines, (size_t)top) : 0;
    if (!nl) {
        fputs("\n  no samples in the profiled code\n", out);
        free(lines);
        return;
    }
    fprintf(out, "\n  hottest lines            (bar: # python  = native  . system)\n");
    fprintf(out, "  %6s %8s %8s %8s  %-*s  %s\n", "time%", "python", "native", "system", BAR_WIDTH,
            "", "line");
    for (size_t i = 0; i < nl; i++) {
        const struct agent_stats *st = lines[i].st;
        char b[BAR_WIDTH + 1], src[REPORT_SOURCE_WIDTH * TERMSAFE_CHAR_MAX + 8], sb[SAFE_SIZE];
        bar(b, st, total);
        report_source_line(lines[i].file->path, lines[i].line, REPORT_SOURCE_WIDTH, src,
                           sizeof src);
        fprintf(out, "  %5.1f%% %8.3f %8.3f %8.3f  %s  %s:%d  %s\n",
                total > 0 ? 100 * agent_stats_time(st) / total : 0.0, st->v[AGENT_STAT_PY],
                st->v[AGENT_STAT_NAT], st->v[AGENT_STAT_SYS], b,
                SAFE(sb, shown_path(lines[i].file->path, cwd)), lines[i].line, src);
    }
    free(lines);

    struct prof_func_ref *fns = calloc((size_t)top, sizeof *fns);
    size_t nf = fns ? profile_top_funcs(p, fns, (size_t)top) : 0;
    if (nf) {
        fprintf(out, "\n  functions\n");
        fprintf(out, "  %6s %8s %8s %8s  %s\n", "time%", "python", "native", "system", "function");
        for (size_t i = 0; i < nf; i++) {
            const struct agent_stats *st = &fns[i].fn->st;
            char sn[SAFE_SIZE], sb[SAFE_SIZE];
            fprintf(out, "  %5.1f%% %8.3f %8.3f %8.3f  %s  (%s:%d-%d)\n",
                    total > 0 ? 100 * agent_stats_time(st) / total : 0.0, st->v[AGENT_STAT_PY],
                    st->v[AGENT_STAT_NAT], st->v[AGENT_STAT_SYS], SAFE(sn, fns[i].fn->name),
                    SAFE(sb, shown_path(fns[i].file->path, cwd)), fns[i].fn->first_line,
                    fns[i].fn->last_line);
        }
    }
    free(fns);
    memory_section(out, p, top, cwd);
    if (p->dropped)
        fprintf(out, "\n  note: %lld records were dropped (caps or malformed agent data)\n",
                p->dropped);
}
