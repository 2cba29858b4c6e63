/* outputs: writing the profile and its pictures after a run or a view. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/html.h"
#include "cli/outputs.h"
#include "store/export.h"
#include "store/gecko.h"
#include "hotline_version.h"

const char **cli_output_slot(struct cli_outputs *o, const char *a)
{
    if (!strcmp(a, "--json")) return &o->json;
    if (!strcmp(a, "--collapsed")) return &o->collapsed;
    if (!strcmp(a, "--speedscope")) return &o->speedscope;
    if (!strcmp(a, "--html")) return &o->html;
    if (!strcmp(a, "--gecko")) return &o->gecko;
    if (!strcmp(a, "--collapsed-by")) return &o->collapsed_by;
    if (!strcmp(a, "--collapsed-paths")) return &o->collapsed_paths;
    return NULL;
}

int cli_outputs_check(const struct cli_outputs *o, const char *who)
{
    if (o->collapsed_by && strcmp(o->collapsed_by, "line") && strcmp(o->collapsed_by, "function")) {
        fprintf(stderr, "%s: --collapsed-by is line or function\n", who);
        return 2;
    }
    if (o->collapsed_paths && strcmp(o->collapsed_paths, "absolute") &&
        strcmp(o->collapsed_paths, "relative")) {
        fprintf(stderr, "%s: --collapsed-paths is absolute or relative\n", who);
        return 2;
    }
    if ((o->collapsed_by || o->collapsed_paths) && !o->collapsed) {
        fprintf(stderr, "%s: --collapsed-by and --collapsed-paths go with --collapsed FILE\n", who);
        return 2;
    }
    return 0;
}

/* The folded stacks with their options; the program's folder is the base
 * of relative paths (none for -m module). */
static int collapsed_save(const struct cli_outputs *o, const struct profile *p)
{
    int flags = 0;
    if (o->collapsed_by && !strcmp(o->collapsed_by, "function")) flags |= EXPORT_BY_FUNCTION;
    if (o->collapsed_paths && !strcmp(o->collapsed_paths, "relative")) flags |= EXPORT_RELATIVE;
    char base[PATH_MAX] = "";
    const char *prog = p->meta.program;
    if (prog && prog[0] == '/' && strlen(prog) < sizeof base) {
        strcpy(base, prog);
        char *slash = strrchr(base, '/');
        slash[slash == base ? 1 : 0] = 0;
    }
    return export_collapsed_save_opts(p, o->collapsed, flags, base[0] ? base : NULL);
}

int cli_outputs_write(const struct cli_outputs *o, const struct profile *p, const char *who,
                      int quiet)
{
    struct {
        const char *path, *what;
    } out[] = {{o->json, "profile"},
               {o->collapsed, "folded stacks"},
               {o->speedscope, "speedscope"},
               {o->html, "HTML report"},
               {o->gecko, "Firefox Profiler file"}};
    int bad = 0;
    for (size_t i = 0; i < sizeof out / sizeof *out; i++) {
        if (!out[i].path) continue;
        int e = i == 0   ? profile_save(p, out[i].path)
                : i == 1 ? collapsed_save(o, p)
                : i == 2 ? export_speedscope_save(p, "hotline " HOTLINE_VERSION, out[i].path)
                : i == 3 ? html_report_save(p, out[i].path)
                         : export_gecko_save(p, "hotline " HOTLINE_VERSION, out[i].path);
        if (e) {
            fprintf(stderr, "%s: cannot write %s: %s\n", who, out[i].path, strerror(-e));
            bad++;
        } else if (!quiet) {
            fprintf(stderr, "\n  %s saved to %s\n", out[i].what, out[i].path);
        }
    }
    return bad;
}

void cli_catch_stop(void (*handler)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

int cli_parse_num(const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi)) return -EINVAL;
    *out = v;
    return 0;
}

const char *cli_valued_opt(int argc, char **argv, int *i, const char *const *names, size_t n,
                           const char **val)
{
    const char *a = argv[*i], *name = NULL;
    *val = NULL;
    for (size_t k = 0; k < n; k++) {
        size_t l = strlen(names[k]);
        if (!strncmp(a, names[k], l) && (a[l] == 0 || a[l] == '=')) {
            name = names[k];
            *val = a[l] == '=' ? a + l + 1 : NULL;
        }
    }
    if (name && !*val && *i + 1 < argc) *val = argv[++*i];
    return name;
}
