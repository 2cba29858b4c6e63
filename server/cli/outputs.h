/* outputs: the files `hotline run`, `view` and `attach` write besides the
 * report: the JSON profile and the pictures (docs/pictures.md). One option
 * table and one writer, so the commands take the same flags. */
#ifndef HOTLINE_OUTPUTS_H
#define HOTLINE_OUTPUTS_H

#include "store/profile.h"

struct cli_outputs {
    /* borrowed paths, NULL: not asked */
    const char *json, *collapsed, *speedscope, *html, *gecko;
    /* --collapsed-by line|function, --collapsed-paths absolute|relative
     * (borrowed, NULL: the first of each) */
    const char *collapsed_by, *collapsed_paths;
};

/* If a (borrowed) names an output option, returns its slot in o, else NULL. */
const char **cli_output_slot(struct cli_outputs *o, const char *a);
/* Checks the values of the options that are not paths: 0, or 2 (a usage
 * error) after a line on stderr prefixed by who. */
int cli_outputs_check(const struct cli_outputs *o, const char *who);
/* Writes every asked-for file of p (borrowed); each failure or success is a
 * line on stderr prefixed by who ("hotline", "hotline view"); quiet drops
 * the success lines. Returns the number of failures. */
int cli_outputs_write(const struct cli_outputs *o, const struct profile *p, const char *who,
                      int quiet);

/* SIGINT, SIGTERM and SIGHUP call handler (attach and top: stop sampling,
 * leave the target as it was, write what was measured). */
void cli_catch_stop(void (*handler)(int));

/* A number in [lo, hi] from the whole of s into *out: 0 or -EINVAL. */
int cli_parse_num(const char *s, double lo, double hi, double *out);
/* argv[*i] as one of the n options with a value in names (`--opt VALUE` or
 * `--opt=VALUE`): returns the name (borrowed from names) and sets *val,
 * stepping *i over a separate value; *val is NULL when the value is
 * missing. NULL when argv[*i] is none of them. */
const char *cli_valued_opt(int argc, char **argv, int *i, const char *const *names, size_t n,
                           const char **val);

/* Usage lines of the options, shared by the commands' help. */
#define CLI_OUTPUTS_USAGE                                                                          \
    "  --json FILE       also save the profile as JSON (docs/profile-format.md)\n"                 \
    "  --collapsed FILE  folded stacks for flamegraph.pl / inferno (docs/pictures.md)\n"           \
    "  --speedscope FILE the stacks in speedscope's format, in time order (docs/pictures.md)\n"    \
    "  --gecko FILE      for the Firefox Profiler: threads, samples in time order, phases\n"       \
    "  --html FILE       one self-contained HTML report: flame graph, lines, memory\n"             \
    "  --collapsed-by line|function  a frame per line (default) or per function\n"                 \
    "  --collapsed-paths absolute|relative  relative: below the program's folder, a\n"             \
    "                    package's own path, the standard library's (comparable runs)\n"

#endif
