/* cmd_diff: `hotline diff OLD NEW [--top N] [--json OUT] [--html OUT]`:
 * what changed between two profiles, per function and per line, largest
 * time change first (store/compare.h says how files, functions and lines
 * are paired), and as a page with a differential flame graph
 * (store/diff_html.h). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/load.h"
#include "cli/outputs.h"
#include "cli/report.h"
#include "store/compare.h"
#include "store/diff_html.h"
#include "text/termsafe.h"

static const char diff_usage[] =
    "usage: hotline diff [--top N] [--json OUT] [--html OUT] OLD NEW\n"
    "\n"
    "Compares two profiles (JSON profiles or wire streams): the total, then the\n"
    "functions and lines whose time changed most, old -> new seconds, the change\n"
    "split into python / native / system, and allocated MB when either has memory.\n"
    "Files pair by their path's trailing components, functions by qualified name,\n"
    "lines through their function's move, so runs from other folders or after an\n"
    "edit above the code still line up (docs/cli.md, hotline diff).\n"
    "  --top N     functions and lines shown (default 10 each)\n"
    "  --json OUT  every row as JSON into OUT ('-': standard output, no text)\n"
    "  --html OUT  a self-contained page into OUT: a differential flame graph\n"
    "              (the new profile's frames, red slower, blue faster than the\n"
    "              old one's), the frames gone, and the tables (--top rows, 100\n"
    "              without it)\n";

#define SAFE(buf, s) termsafe_str(buf, sizeof buf, s)

static const char *shown(const char *path, const char *cwd)
{
    size_t n = strlen(cwd);
    if (n && !strncmp(path, cwd, n) && path[n] == '/') return path + n + 1;
    return path;
}

static void row_numbers(FILE *out, const struct cmp_row *r, int mem)
{
    double o = cmp_time(&r->old), c = cmp_time(&r->cur);
    char w[16];
    cmp_change_word(r, w, sizeof w);
    fprintf(out, "  %8.3f %8.3f %+8.3f %-5s %+7.3f %+7.3f %+7.3f", o, c, c - o, w,
            r->cur.v[AGENT_STAT_PY] - r->old.v[AGENT_STAT_PY],
            r->cur.v[AGENT_STAT_NAT] - r->old.v[AGENT_STAT_NAT],
            r->cur.v[AGENT_STAT_SYS] - r->old.v[AGENT_STAT_SYS]);
    if (mem) fprintf(out, " %8.1f %8.1f", r->old.v[AGENT_STAT_ALLOC], r->cur.v[AGENT_STAT_ALLOC]);
}

static void header_row(FILE *out, const char *what, int mem)
{
    fprintf(out, "\n%s (largest change in time first)\n", what);
    fprintf(out, "  %8s %8s %8s %-5s %7s %7s %7s", "old s", "new s", "change", "", "python",
            "native", "system");
    if (mem) fprintf(out, " %8s %8s", "old MB", "new MB");
    fprintf(out, "  where\n");
}

static void print_text(FILE *out, const struct profile *old, const struct profile *cur,
                       const struct cmp_result *r, int top, const char *old_path,
                       const char *new_path)
{
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) cwd[0] = 0;
    char a[TERMSAFE_SIZE(PATH_MAX)], b[TERMSAFE_SIZE(PATH_MAX)], c[TERMSAFE_SIZE(512)];
    double to = cmp_time(&old->total), tc = cmp_time(&cur->total);
    fprintf(out, "hotline diff: %s -> %s\n", SAFE(a, old_path), SAFE(b, new_path));
    fprintf(out, "total: %.3f s -> %.3f s, %+.3f s", to, tc, tc - to);
    if (to > 0) fprintf(out, " (%+.0f%%)", 100.0 * (tc - to) / to);
    fprintf(out, "; python %+.3f, native %+.3f, system %+.3f s",
            cur->total.v[AGENT_STAT_PY] - old->total.v[AGENT_STAT_PY],
            cur->total.v[AGENT_STAT_NAT] - old->total.v[AGENT_STAT_NAT],
            cur->total.v[AGENT_STAT_SYS] - old->total.v[AGENT_STAT_SYS]);
    if (old->meta.elapsed_s > 0 || cur->meta.elapsed_s > 0)
        fprintf(out, "; wall %.2f s -> %.2f s", old->meta.elapsed_s, cur->meta.elapsed_s);
    fputc('\n', out);
    fprintf(out, "files: %zu paired of %zu new, %zu old", r->files_paired, cur->nfiles,
            old->nfiles);
    if (r->files_ambiguous)
        fprintf(out, "; %zu not paired: their name fits several old files equally",
                r->files_ambiguous);
    fputc('\n', out);
    int mem = cmp_has_memory(r);

    header_row(out, "Functions", mem);
    int shown_n = 0;
    for (size_t i = 0; i < r->nfuncs && shown_n < top; i++) {
        const struct cmp_row *row = &r->funcs[i];
        if (!cmp_row_changed(row)) continue;
        shown_n++;
        row_numbers(out, row, mem);
        const char *f = row->has_new ? row->file_new : row->file_old;
        fprintf(out, "  %s: %s", SAFE(a, shown(f, cwd)), SAFE(b, row->name ? row->name : "?"));
        if (row->has_new && row->has_old && row->line_new != row->line_old)
            fprintf(out, " (line %d, was %d)", row->line_new, row->line_old);
        else
            fprintf(out, " (line %d)", row->has_new ? row->line_new : row->line_old);
        fputc('\n', out);
    }
    if (!shown_n) fprintf(out, "  (no change)\n");

    header_row(out, "Lines", mem);
    shown_n = 0;
    for (size_t i = 0; i < r->nlines && shown_n < top; i++) {
        const struct cmp_row *row = &r->lines[i];
        if (!cmp_row_changed(row)) continue;
        shown_n++;
        row_numbers(out, row, mem);
        const char *f = row->has_new ? row->file_new : row->file_old;
        int ln = row->has_new ? row->line_new : row->line_old;
        fprintf(out, "  %s:%d", SAFE(a, shown(f, cwd)), ln);
        if (row->has_new && row->has_old && row->line_new != row->line_old)
            fprintf(out, " (was %d)", row->line_old);
        if (row->name) fprintf(out, " in %s", SAFE(b, row->name));
        /* the text as the new file has it now (a gone line: nothing) */
        if (row->has_new && !report_source_line(row->file_new, row->line_new, 40, c, sizeof c) &&
            c[0])
            fprintf(out, "  | %s", c);
        fputc('\n', out);
    }
    if (!shown_n) fprintf(out, "  (no change)\n");
}

int cmd_diff(int argc, char **argv)
{
    const char *paths[2] = {0}, *json = NULL, *html = NULL;
    int npaths = 0, top = 10, top_given = 0;
    static const char *const valued[] = {"--top", "--json", "--html"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(diff_usage, stdout);
            return 0;
        }
        const char *opt = cli_valued_opt(argc, argv, &i, valued, 3, &val);
        if (opt && !val) {
            fprintf(stderr, "hotline diff: %s needs a value\n\n%s", opt, diff_usage);
            return 2;
        }
        if (opt && !strcmp(opt, "--top")) {
            double v;
            if (cli_parse_num(val, 1, 100000, &v) || v != floor(v)) {
                fprintf(stderr, "hotline diff: --top wants a whole number >= 1\n");
                return 2;
            }
            top = (int)v;
            top_given = 1;
        } else if (opt && !strcmp(opt, "--html")) {
            html = val;
        } else if (opt) {
            json = val;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "hotline diff: unknown option '%s'\n\n%s", a, diff_usage);
            return 2;
        } else if (npaths == 2) {
            fprintf(stderr, "hotline diff: two profiles, OLD and NEW\n\n%s", diff_usage);
            return 2;
        } else {
            paths[npaths++] = a;
        }
    }
    if (npaths != 2) {
        fprintf(stderr, "hotline diff: two profiles, OLD and NEW\n\n%s", diff_usage);
        return 2;
    }
    struct profile *p[2] = {0};
    char err[512], safe[TERMSAFE_SIZE(sizeof err)];
    for (int k = 0; k < 2; k++) {
        if (!(p[k] = cli_load_profile("hotline diff", paths[k], err, sizeof err))) {
            fprintf(stderr, "hotline diff: %s\n", SAFE(safe, err));
            profile_free(p[0]);
            return 1;
        }
    }
    int rc = 1;
    struct cmp_result r;
    if (profile_compare(p[0], p[1], &r)) {
        fprintf(stderr, "hotline diff: out of memory\n");
        goto done;
    }
    if (json) {
        json_t *j = profile_compare_json(p[0], p[1], &r);
        int bad = !j;
        if (j && !strcmp(json, "-")) {
            bad = json_dumpf(j, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(6)) ||
                  fputc('\n', stdout) == EOF;
        } else if (j) {
            bad = profile_write_json(j, json, JSON_INDENT(1) | JSON_REAL_PRECISION(6), 0) != 0;
        }
        json_decref(j);
        if (bad) {
            fprintf(stderr, "hotline diff: cannot write %s\n", SAFE(safe, json));
            profile_compare_free(&r);
            goto done;
        }
    }
    if (html) {
        /* a page holds more rows than a terminal: 100 unless --top says */
        struct diff_html d = {p[0], p[1], &r, paths[0], paths[1], top_given ? top : 100};
        if (diff_html_save(&d, html)) {
            fprintf(stderr, "hotline diff: cannot write %s\n", SAFE(safe, html));
            profile_compare_free(&r);
            goto done;
        }
    }
    if (!json || strcmp(json, "-")) print_text(stdout, p[0], p[1], &r, top, paths[0], paths[1]);
    profile_compare_free(&r);
    rc = fflush(stdout) ? 1 : 0;
done:
    profile_free(p[0]);
    profile_free(p[1]);
    return rc;
}
