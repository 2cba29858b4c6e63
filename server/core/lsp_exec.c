/* The live line of a profiled program: hotline/executing's params from an
 * agent's resolved `now` stacks (lsp_exec.h). Shared by every provider that
 * streams agents (a run's, the workspace socket's kernels). */
#include "core/lsp_exec.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/lsp_pview.h"
#include "core/notebook.h"
#include "store/profile.h"
#include "text/cellname.h"
#include "text/document.h"

static int under(const char *file, const char *dir)
{
    size_t n = dir ? strlen(dir) : 0;
    return n && !strncmp(file, dir, n) && (file[n] == '/' || dir[n - 1] == '/');
}

int lsp_exec_user_file(const char *file, const char *const *dirs, int ndirs)
{
    int in = 0;
    for (int i = 0; i < ndirs && !in; i++)
        in = under(file, dirs[i]);
    return (in && !strstr(file, "/site-packages/") && !strstr(file, "/dist-packages/") &&
            !strstr(file, "/..")) ||
           !cellname_ipykernel_parse(file, NULL);
}

/* The dotted module of a frame's file, as editors name a library call: the
 * path after site-packages / dist-packages / lib/pythonX.Y, else the file
 * name; without ".py" and "/__init__". Written to buf (cap n), "" if none. */
void lsp_exec_module_of(const char *file, char *buf, size_t n)
{
    const char *rel = NULL, *p;
    buf[0] = 0;
    /* a Jupyter cell's file is named by a hash: no module worth a name */
    if (!file || !*file || !strcmp(file, "?") || !cellname_ipykernel_parse(file, NULL)) return;
    if ((p = strstr(file, "/site-packages/")) || (p = strstr(file, "/dist-packages/")))
        rel = p + strlen("/site-packages/"); /* same length as /dist-packages/ */
    for (p = file; !rel && (p = strstr(p, "/lib/python")); p++) {
        const char *q = p + strlen("/lib/python");
        if (!(*q >= '0' && *q <= '9')) continue;
        while (*q >= '0' && *q <= '9')
            q++;
        if (*q++ != '.' || !(*q >= '0' && *q <= '9')) continue;
        while (*q >= '0' && *q <= '9')
            q++;
        if (*q == '/' && q[1]) rel = q + 1;
    }
    if (!rel) rel = (p = strrchr(file, '/')) ? p + 1 : file;
    size_t len = strlen(rel);
    if (len > 3 && !strcmp(rel + len - 3, ".py")) len -= 3;
    if (len > 9 && !strncmp(rel + len - 9, "/__init__", 9)) len -= 9;
    if (len >= n) len = n - 1;
    for (size_t i = 0; i < len; i++)
        buf[i] = rel[i] == '/' ? '.' : rel[i];
    buf[len] = 0;
}

/* One stack entry of hotline/executing (new): where it is, whether it is a
 * library frame (not the program's own code), and the name editors show,
 * "module.function". Computed here once so that no editor has to. */
static json_t *exec_frame(const json_t *fr, const char *const *dirs, int ndirs)
{
    const char *file = json_string_value(json_object_get(fr, "file"));
    const char *fn = json_string_value(json_object_get(fr, "name")) ?: "?";
    int user = file && lsp_exec_user_file(file, dirs, ndirs);
    char mod[256], name[512];
    lsp_exec_module_of(file, mod, sizeof mod);
    if (file && !strcmp(file, "<native>")) mod[0] = 0; /* a C callee: its name says it all */
    snprintf(name, sizeof name, "%s%s%s", mod, *mod ? "." : "", fn);
    return json_pack("{s:s, s:s, s:I, s:b, s:b, s:s}", "function", fn, "file", file ?: "?", "line",
                     json_integer_value(json_object_get(fr, "line")), "user", user, "library",
                     !user, "name", name);
}

static int ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           (unsigned char)c >= 0x80;
}

/* The call expression on the program's line that entered fn (a qualified
 * name: "BaseMixture.fit"): the first dotted name followed by "(" whose
 * last part is fn's last part ("gmm.fit" in "gmm.fit(temp)"), into buf;
 * "" when the line has none (the callee was reached another way: an
 * operator, a property, a decorator). */
void lsp_exec_call_text(const char *line, size_t len, const char *fn, char *buf, size_t n)
{
    buf[0] = 0;
    const char *last = strrchr(fn, '.');
    last = last ? last + 1 : fn;
    size_t ln = strlen(last);
    if (!ln || !n) return;
    for (size_t i = 0; i + ln <= len; i++) {
        if (memcmp(line + i, last, ln) || (i && ident_char(line[i - 1]) && line[i - 1] != '.'))
            continue;
        size_t e = i + ln, k = e;
        while (k < len && (line[k] == ' ' || line[k] == '\t'))
            k++;
        if (k >= len || line[k] != '(' || (e < len && ident_char(line[e]))) continue;
        size_t b = i; /* back over "obj." parts */
        while (b > 0 && (ident_char(line[b - 1]) || line[b - 1] == '.'))
            b--;
        while (b < i && line[b] == '.')
            b++;
        size_t m = e - b < n - 1 ? e - b : n - 1;
        memcpy(buf, line + b, m);
        buf[m] = 0;
        return;
    }
}

/* The program's line text, when the editor has it open (a file or a
 * notebook cell): borrowed, NULL otherwise. */
static const char *line_text(struct lsp_facilities *s, const char *uri, const char *file,
                             json_int_t line, size_t *len)
{
    struct doc *d = uri && *uri ? doc_find(&s->docs, uri) : NULL;
    if (!d && file) d = lsp_nb_cell_of_path(s, file);
    *len = 0;
    return d && line > 0 ? doc_line(d, (uint32_t)(line - 1), len) : NULL;
}

/* The chain from the program's call down, outermost first, as the status
 * line shows it (the JupyterLab footer's form): "gmm.fit →
 * sklearn.mixture._base.BaseMixture.fit → … → _kmeans_single_lloyd" (the
 * call's text when the line is open in the editor, the library function it
 * entered by module, the innermost function); the middle elided. */
static void chain_text(const json_t *frames, size_t user, const char *call, const char *outer,
                       char *buf, size_t n)
{
    const char *part[4];
    int np = 0;
    const char *inner = json_string_value(json_object_get(json_array_get(frames, 0), "name"));
    size_t cl = call ? strlen(call) : 0, ol = outer ? strlen(outer) : 0;
    /* "pkg.outer(...)" entered pkg.outer: said once */
    if (cl &&
        !(ol >= cl && !strcmp(outer + ol - cl, call) && (ol == cl || outer[ol - cl - 1] == '.')))
        part[np++] = call;
    part[np++] = outer ? outer : "?";
    if (user >= 3) part[np++] = "\u2026"; /* frames between */
    if (user >= 2) part[np++] = inner ? inner : "?";
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < np && k < n; i++) {
        int w = snprintf(buf + k, n - k, "%s%s", i ? " \u2192 " : "", part[i]);
        if (w < 0) break;
        k += (size_t)w;
    }
}

/* From a resolved `now`: the thread whose innermost profiled-program frame is
 * most recent, as {uri, line, thread, since_s, stack, call, text}; NULL if none
 * (new). `call` is the library frame the program's line called (the one just
 * outside its innermost own frame), `text` the one-line status editors show. */
json_t *lsp_exec_from_now(struct lsp_facilities *s, const json_t *now, const char *const *dirs,
                          int ndirs)
{
    json_t *threads = json_object_get(now, "threads");
    size_t i;
    json_t *t;
    json_array_foreach(threads, i, t)
    {
        json_t *frames = json_object_get(t, "frames");
        size_t k, user = (size_t)-1;
        json_t *fr;
        json_array_foreach(frames, k, fr)
        {
            const char *file = json_string_value(json_object_get(fr, "file"));
            if (file && lsp_exec_user_file(file, dirs, ndirs)) {
                user = k;
                break;
            }
        }
        if (user == (size_t)-1) continue;
        json_t *stack = json_array();
        json_array_foreach(frames, k, fr)
        {
            if (k > user + 8 || json_array_size(stack) >= 32) break;
            json_array_append_new(stack, exec_frame(fr, dirs, ndirs));
        }
        json_t *call = NULL; /* new */
        if (user > 0) {
            json_t *lib = exec_frame(json_array_get(frames, user - 1), dirs, ndirs);
            call = json_incref(json_object_get(lib, "name"));
            json_decref(lib);
        }
        double since = json_number_value(json_object_get(t, "since_s"));
        json_t *ufr = json_array_get(frames, user);
        const char *ufile = json_string_value(json_object_get(ufr, "file"));
        char *uri = lsp_pview_uri(s, ufile);
        json_int_t line = json_integer_value(json_object_get(ufr, "line"));
        char text[600], chain[480] = "";
        if (user > 0) {
            size_t len;
            const char *lt = line_text(s, uri, ufile, line, &len);
            const char *fn =
                json_string_value(json_object_get(json_array_get(frames, user - 1), "name"));
            char ctext[80] = "";
            if (lt && fn) lsp_exec_call_text(lt, len, fn, ctext, sizeof ctext);
            chain_text(frames, user, ctext, json_string_value(call), chain, sizeof chain);
        }
        /* the seconds on this line, not the cell's or the run's: said so
         * (issue 22): what the profile holds for it so far (a loop that
         * leaves the line every few ms adds up there), or the time since
         * the thread came to it when more (a long call before its first
         * delta); then what runs under it, the program's call first */
        const struct profile *p = lsp_pview_profile(s);
        const struct agent_stats *st =
            p && ufile && line > 0 && line <= INT32_MAX ? profile_line(p, ufile, (int)line) : NULL;
        double on = st ? agent_stats_time(st) : 0;
        snprintf(text, sizeof text, "\u25b6 %.1f s on this line%s%s", on > since ? on : since,
                 *chain ? " \u00b7 " : "", chain);
        json_t *e =
            json_pack("{s:s, s:I, s:O, s:f, s:o, s:o, s:s}", "uri", uri ?: "", "line",
                      line > 0 ? line - 1 : 0, "thread", json_object_get(t, "name") ?: json_null(),
                      "since_s", since, "stack", stack, "call", call ?: json_null(), "text", text);
        free(uri);
        return e;
    }
    return NULL;
}
