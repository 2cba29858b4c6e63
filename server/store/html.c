/* html: the --html report, one self-contained page (docs/pictures.md), and
 * the same page in VS Code's flame-graph view (providers/pictures.c). The
 * page (server/store/report.html, embedded at build time) carries its own
 * script and styles; this file only fills in the data: the stacks (the
 * speedscope export's frames, samples and weights), the hottest lines, the
 * memory footprint and the leaks, all taken from the profile's JSON form. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/html.h"
#include "store/export.h"
#include "report_html.h" /* generated: static const char report_html[] */

#define HTML_LINES 100 /* rows of the line table */

/* New reference: [{pid, label, seconds}] of the processes with stacks in
 * ss (profiles carrying "pid": EXPORT_PIDS), heaviest first: the flame
 * graph's process filter. NULL on ENOMEM. */
static json_t *html_processes(const struct profile *p, json_t *ss)
{
    json_t *out = json_array(), *seen = json_object();
    size_t i;
    json_t *pr;
    int rc = out && seen ? 0 : -ENOMEM;
    json_array_foreach(json_object_get(ss, "profiles"), i, pr)
    {
        json_int_t pid = json_integer_value(json_object_get(pr, "pid"));
        double w = 0;
        size_t k;
        json_t *x;
        json_array_foreach(json_object_get(pr, "weights"), k, x) w += json_number_value(x);
        if (!pid || rc) continue; /* threads not told apart: only in "all" */
        char key[32], label[192];
        snprintf(key, sizeof key, "%lld", (long long)pid);
        json_t *have = json_object_get(seen, key);
        if (have) {
            json_t *s = json_object_get(have, "seconds");
            json_real_set(s, json_real_value(s) + w);
            continue;
        }
        profile_proc_label(p, pid, label, sizeof label);
        json_t *o = json_pack("{s:I,s:s,s:f}", "pid", pid, "label", label, "seconds", w);
        if (!o || json_object_set(seen, key, o) || json_array_append_new(out, o)) rc = -ENOMEM;
    }
    json_decref(seen);
    if (rc) {
        json_decref(out);
        return NULL;
    }
    /* heaviest first */
    size_t n = json_array_size(out);
    for (size_t a = 1; a < n; a++)
        for (size_t b = a; b > 0; b--) {
            json_t *x = json_array_get(out, b), *y = json_array_get(out, b - 1);
            if (json_real_value(json_object_get(x, "seconds")) <=
                json_real_value(json_object_get(y, "seconds")))
                break;
            json_incref(x);
            json_array_remove(out, b);
            json_array_insert_new(out, b - 1, x);
        }
    return out;
}

/* New reference: what the page's script reads (report.html, `D`). */
json_t *html_report_data(const struct profile *p)
{
    /* one profile for every thread merged; with several processes one per
     * thread, each with its pid, so that the page can show one process */
    int several = p->nprocs > 1;
    json_t *pj = profile_to_json(p),
           *ss = export_speedscope(p, "hotline", several ? EXPORT_THREADS | EXPORT_PIDS : 0);
    json_t *lines = json_array(), *leaks = json_array();
    struct prof_line_ref *top = malloc(HTML_LINES * sizeof *top);
    if (!pj || !ss || !lines || !leaks || !top) goto fail;
    json_object_del(ss, "$schema"); /* the page names no URL at all */
    json_t *files = json_object_get(pj, "files");
    size_t n = profile_top_lines(p, top, HTML_LINES);
    for (size_t i = 0; i < n; i++) {
        char key[16];
        snprintf(key, sizeof key, "%d", top[i].line);
        json_t *st = json_object_get(
            json_object_get(json_object_get(files, top[i].file->path), "lines"), key);
        json_t *row = st ? json_deep_copy(st) : json_object();
        json_object_set_new(row, "file", json_string(top[i].file->path));
        json_object_set_new(row, "line", json_integer(top[i].line));
        json_array_append_new(lines, row);
    }
    const char *path;
    json_t *fo;
    json_object_foreach(files, path, fo)
    {
        size_t k;
        json_t *lk;
        json_array_foreach(json_object_get(fo, "leaks"), k, lk)
        {
            json_t *row = json_deep_copy(lk);
            json_object_set_new(row, "file", json_string(path));
            json_array_append_new(leaks, row);
        }
    }
    json_t *procs = several ? html_processes(p, ss) : NULL;
    if (several && !procs) goto fail;
    json_t *d = json_pack("{s:O?,s:O?,s:O?,s:O?,s:O?,s:O?,s:o,s:o,s:o,s:o?}", "program",
                          json_object_get(pj, "program"), "samples", json_object_get(pj, "samples"),
                          "elapsed_s", json_object_get(pj, "elapsed_s"), "totals",
                          json_object_get(pj, "totals"), "peak_mb", json_object_get(pj, "peak_mb"),
                          "memory_timeline", json_object_get(pj, "memory_timeline"), "speedscope",
                          ss, "lines", lines, "leaks", leaks, "processes", procs);
    free(top);
    json_decref(pj);
    return d;
fail:
    free(top);
    json_decref(pj);
    json_decref(ss);
    json_decref(lines);
    json_decref(leaks);
    return NULL;
}

char *html_report_page(const struct profile *p, size_t *len)
{
    json_t *d = html_report_data(p);
    if (!d) return NULL;
    char *js = json_dumps(d, JSON_COMPACT | JSON_REAL_PRECISION(10));
    json_decref(d);
    if (!js) return NULL;
    const char *mark = strstr(report_html, HTML_DATA_MARK);
    char *page = NULL;
    size_t n = 0;
    FILE *f = mark ? open_memstream(&page, &n) : NULL;
    if (!f) {
        free(js);
        return NULL;
    }
    fwrite(report_html, 1, (size_t)(mark - report_html), f);
    /* '<' only occurs inside JSON strings: \u003c there keeps "</script>"
     * and "<!--" in a path or a name from ending the data block */
    for (const char *s = js; *s; s++) {
        if (*s == '<')
            fputs("\\u003c", f);
        else
            fputc(*s, f);
    }
    fputs(mark + strlen(HTML_DATA_MARK), f);
    free(js);
    if (fclose(f)) {
        free(page);
        return NULL;
    }
    if (len) *len = n;
    return page;
}

void html_put_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (strchr("&<>\"'", *s))
            fprintf(f, "&#%d;", (unsigned char)*s);
        else
            fputc(*s, f);
    }
}

int html_report_save(const struct profile *p, const char *path)
{
    size_t len = 0;
    char *page = html_report_page(p, &len);
    if (!page) return -ENOMEM;
    int rc = export_save_text(path, page, len);
    free(page);
    return rc;
}
