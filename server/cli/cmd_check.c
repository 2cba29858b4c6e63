/* cmd_check: `hotline check PROFILE --budget SPEC...`: exit 1 when a
 * function, a line or the whole profile is over its budget, with a
 * readable list (docs/cli.md, hotline check). Budgets come from --budget,
 * --budgets FILE (one per line), or else the `budgets` array of
 * `[tool.hotline]` in ./pyproject.toml. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/budgets.h"
#include "cli/cli.h"
#include "cli/load.h"
#include "cli/outputs.h"
#include "store/compare.h"
#include "text/termsafe.h"

static const char check_usage[] =
    "usage: hotline check [--budget SPEC]... [--budgets FILE] PROFILE\n"
    "\n"
    "Exits 1 when anything in PROFILE is over its budget, listing each budget.\n"
    "SPEC is TARGET<=AMOUNT (or TARGET<AMOUNT):\n"
    "  TARGET  total | FILE:LINE | FILE:FUNCTION | package.module:FUNCTION,\n"
    "          optionally followed by [stat] (python_s, native_s, system_s, cpu_s,\n"
    "          alloc_mb, kept_mb, peak_mb, ...; docs/profile-format.md)\n"
    "  AMOUNT  a number with s or ms (time: python + native + system seconds)\n"
    "          or KB, MB, GB (allocated MB), or a bare number with [stat]\n"
    "FILE matches the profile's file whose path ends with it. Without --budget\n"
    "and --budgets, the budgets array of [tool.hotline] in ./pyproject.toml.\n"
    "  --budget SPEC   one budget (repeat for more)\n"
    "  --budgets FILE  budgets, one per line ('#' starts a comment)\n"
    "Exit status: 0 all within, 1 some over, 2 a budget or the profile is unusable.\n";

#define SAFE(buf, s) termsafe_str(buf, sizeof buf, s)

/* ---- one budget -------------------------------------------------------- */

struct target {
    char what[1024]; /* as written, for the list */
    int stat;        /* AGENT_STAT_*, or -1: time (python + native + system) */
    double limit;    /* in the stat's unit (s or MB) */
    int strict;      /* '<' rather than '<=' */
    struct agent_stats st;
    int ndefs;          /* functions of that name summed */
    const char *absent; /* why the value is 0, or NULL */
};

static int stat_by_key(const char *k)
{
    if (!strcmp(k, "time")) return -1;
    for (int i = 0; i < AGENT_NSTATS; i++)
        if (!strcmp(agent_stat_descs[i].json, k)) return i;
    return -2;
}

static int is_mb_stat(int s)
{
    size_t n = strlen(agent_stat_descs[s].json);
    return n > 3 && !strcmp(agent_stat_descs[s].json + n - 3, "_mb");
}

static int is_s_stat(int s)
{
    size_t n = strlen(agent_stat_descs[s].json);
    return s == -1 || (n > 2 && !strcmp(agent_stat_descs[s].json + n - 2, "_s"));
}

/* The amount "0.5s", "100 MB", "3" (with a [stat]) into t->limit and, with
 * no [stat], t->stat. 0 or a message in err. */
static int parse_amount(const char *s, int stat_given, struct target *t, char *err, size_t n)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !isfinite(v) || v < 0) {
        snprintf(err, n, "the amount '%s' is not a number >= 0", s);
        return -1;
    }
    while (*end == ' ')
        end++;
    double mul = 1;
    int kind = 0; /* 1 time, 2 MB */
    if (!strcmp(end, "s"))
        kind = 1;
    else if (!strcmp(end, "ms"))
        kind = 1, mul = 1e-3;
    else if (!strcasecmp(end, "MB"))
        kind = 2;
    else if (!strcasecmp(end, "KB"))
        kind = 2, mul = 1.0 / 1024;
    else if (!strcasecmp(end, "GB"))
        kind = 2, mul = 1024;
    else if (*end) {
        snprintf(err, n, "unknown unit '%s' (s, ms, KB, MB, GB)", end);
        return -1;
    }
    if (!stat_given) {
        if (!kind) {
            snprintf(err, n, "say s or MB after %g (or name a [stat])", v);
            return -1;
        }
        t->stat = kind == 1 ? -1 : AGENT_STAT_ALLOC;
    } else if ((kind == 1 && !is_s_stat(t->stat)) || (kind == 2 && !is_mb_stat(t->stat))) {
        snprintf(err, n, "the unit '%s' does not fit that stat", end);
        return -1;
    }
    t->limit = v * mul;
    return 0;
}

/* FILE of a target: a path (has '/' or ends in .py) or a dotted module. */
static const struct prof_file *find_file(const struct profile *p, const char *name, char *err,
                                         size_t n)
{
    char want[PATH_MAX], real[PATH_MAX], safe[TERMSAFE_SIZE(PATH_MAX)];
    size_t nl = strlen(name);
    int dotted = !strchr(name, '/') && !(nl > 3 && !strcmp(name + nl - 3, ".py"));
    const char *tries[2] = {name, NULL};
    char alt[PATH_MAX + 16];
    if (dotted) {
        snprintf(want, sizeof want, "%s", name);
        for (char *c = want; *c; c++)
            if (*c == '.') *c = '/';
        snprintf(alt, sizeof alt, "%s/__init__.py", want);
        strncat(want, ".py", sizeof want - strlen(want) - 1);
        tries[0] = want;
        tries[1] = alt;
    }
    size_t nmatch = 0;
    const struct prof_file *first = NULL;
    for (int k = 0; k < 2 && tries[k]; k++) {
        /* a path to a file that exists here names it exactly */
        if (realpath(tries[k], real)) {
            const struct prof_file *f = profile_file(p, real);
            if (f) return f;
        }
        const struct prof_file *f = profile_find_file(p, tries[k], &nmatch, &first);
        if (f) return f;
        if (nmatch > 1) {
            char other[TERMSAFE_SIZE(PATH_MAX)];
            snprintf(err, n, "'%s' fits %zu files of the profile (%s, ...): give more of its path",
                     SAFE(safe, name), nmatch, SAFE(other, first->path));
            return NULL;
        }
    }
    snprintf(err, n, "no file of the profile is '%s'%s", SAFE(safe, tries[0]),
             dotted ? " (or its __init__.py)" : "");
    return NULL;
}

static int resolve(const struct profile *p, const char *spec, struct target *t, char *err, size_t n)
{
    memset(t, 0, sizeof *t);
    snprintf(t->what, sizeof t->what, "%s", spec);
    char buf[1024];
    if (strlen(spec) >= sizeof buf) {
        snprintf(err, n, "too long");
        return -1;
    }
    strcpy(buf, spec);
    char *lt = strrchr(buf, '<');
    if (!lt) {
        snprintf(err, n, "no '<=' (TARGET<=AMOUNT)");
        return -1;
    }
    const char *amount = lt + 1;
    if (*amount == '=')
        amount++;
    else
        t->strict = 1;
    *lt = 0;
    while (*amount == ' ')
        amount++;
    char *end = lt;
    while (end > buf && isspace((unsigned char)end[-1]))
        *--end = 0;
    snprintf(t->what, sizeof t->what, "%s", buf);

    int stat_given = 0;
    t->stat = -1;
    char *br = strrchr(buf, '[');
    if (br && end > br && end[-1] == ']') {
        end[-1] = 0;
        int s = stat_by_key(br + 1);
        if (s == -2) {
            snprintf(err, n, "unknown stat '%s' (python_s, native_s, system_s, alloc_mb, ...)",
                     br + 1);
            return -1;
        }
        t->stat = s;
        stat_given = 1;
        *br = 0;
    }
    if (parse_amount(amount, stat_given, t, err, n)) return -1;

    if (!strcmp(buf, "total")) {
        t->st = p->total;
        return 0;
    }
    char *colon = strrchr(buf, ':');
    if (!colon || colon == buf || !colon[1]) {
        snprintf(err, n, "the target is total, FILE:LINE or FILE:FUNCTION");
        return -1;
    }
    *colon = 0;
    const char *what = colon + 1;
    const struct prof_file *f = find_file(p, buf, err, n);
    if (!f) return -1;
    char *e;
    long line = strtol(what, &e, 10);
    if (!*e) {
        if (line < 0 || line > INT_MAX) {
            snprintf(err, n, "no line %s", what);
            return -1;
        }
        const struct agent_stats *st = profile_file_line(f, (int)line);
        if (st)
            t->st = *st;
        else
            t->absent = "no samples on that line";
        return 0;
    }
    for (size_t i = 0; i < f->nfuncs; i++) {
        if (strcmp(f->funcs[i]->name, what)) continue;
        struct agent_stats s;
        profile_func_stats(f, f->funcs[i], &s);
        agent_stats_merge(&t->st, &s);
        t->ndefs++;
    }
    if (!t->ndefs) t->absent = "the function has no samples";
    return 0;
}

static double value_of(const struct target *t)
{
    return t->stat == -1 ? cmp_time(&t->st) : t->st.v[t->stat];
}

static const char *unit_of(const struct target *t)
{
    if (t->stat == -1 || is_s_stat(t->stat)) return " s";
    if (is_mb_stat(t->stat)) return " MB";
    return "";
}

int cmd_check(int argc, char **argv)
{
    struct budgets b = {0};
    const char *path = NULL, *file = NULL;
    int rc = 2;
    static const char *const valued[] = {"--budget", "--budgets"};
    struct profile *p = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(check_usage, stdout);
            rc = 0;
            goto done;
        }
        const char *opt = cli_valued_opt(argc, argv, &i, valued, 2, &val);
        if (opt && !val) {
            fprintf(stderr, "hotline check: %s needs a value\n\n%s", opt, check_usage);
            goto done;
        }
        if (opt && !strcmp(opt, "--budget")) {
            if (budgets_add(&b, val, strlen(val))) goto done;
        } else if (opt) {
            file = val;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "hotline check: unknown option '%s'\n\n%s", a, check_usage);
            goto done;
        } else if (path) {
            fprintf(stderr, "hotline check: one profile at a time\n\n%s", check_usage);
            goto done;
        } else {
            path = a;
        }
    }
    if (!path) {
        fprintf(stderr, "hotline check: no profile given\n\n%s", check_usage);
        goto done;
    }
    if (file && budgets_file(&b, file)) goto done;
    if (!b.n && !file && budgets_pyproject(&b, "pyproject.toml") < 0) goto done;
    if (!b.n) {
        fprintf(stderr, "hotline check: no budgets (--budget, --budgets FILE, or budgets in "
                        "[tool.hotline] of ./pyproject.toml)\n");
        goto done;
    }
    char err[1024], safe[TERMSAFE_SIZE(1024)], safe2[TERMSAFE_SIZE(1024)];
    if (!(p = cli_load_profile("hotline check", path, err, sizeof err))) {
        fprintf(stderr, "hotline check: %s\n", SAFE(safe, err));
        goto done;
    }
    /* every budget is read first: a typo is an error, never a pass */
    struct target *t = calloc(b.n, sizeof *t);
    if (!t) goto done;
    int bad = 0;
    for (size_t i = 0; i < b.n; i++) {
        if (resolve(p, b.v[i], &t[i], err, sizeof err)) {
            fprintf(stderr, "hotline check: budget '%s': %s\n", SAFE(safe, b.v[i]),
                    SAFE(safe2, err));
            bad = 1;
        }
    }
    if (bad) {
        free(t);
        goto done;
    }
    size_t over = 0;
    printf("hotline check: %s\n", SAFE(safe, path));
    for (size_t i = 0; i < b.n; i++) {
        double v = value_of(&t[i]);
        int ok = t[i].strict ? v < t[i].limit : v <= t[i].limit;
        over += !ok;
        printf("  %-4s  %-40s %10.3f%s %s %g%s", ok ? "ok" : "OVER", SAFE(safe, t[i].what), v,
               unit_of(&t[i]), ok ? (t[i].strict ? "< " : "<=") : (t[i].strict ? ">=" : "> "),
               t[i].limit, unit_of(&t[i]));
        if (!ok && t[i].limit > 0) printf("  (%+.0f%%)", 100.0 * (v - t[i].limit) / t[i].limit);
        if (t[i].ndefs > 1) printf("  (%d definitions)", t[i].ndefs);
        if (t[i].absent) printf("  (%s)", t[i].absent);
        putchar('\n');
    }
    printf("%zu budget%s, %zu over\n", b.n, b.n == 1 ? "" : "s", over);
    free(t);
    rc = over ? 1 : 0;
done:
    profile_free(p);
    budgets_free(&b);
    return rc;
}
