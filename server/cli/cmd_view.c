/* cmd_view: `hotline view FILE [--top N] [--json OUT] [--collapsed OUT]
 * [--speedscope OUT]`: print the report of a
 * saved profile. FILE is either a JSON profile written by `hotline run --json`
 * (docs/profile-format.md) or a raw wire stream (.jsonl) written by a
 * standalone agent (HOTLINE_OUT, docs/agent-protocol.md); the first line
 * tells which. --json converts either into a JSON profile; the other
 * outputs are the pictures of docs/pictures.md. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/load.h"
#include "cli/outputs.h"
#include "store/profile.h"
#include "cli/report.h"
#include "text/termsafe.h"

static const char view_usage[] =
    "usage: hotline view [--top N] [--json OUT] [--collapsed OUT] [--speedscope OUT]\n"
    "                    [--html OUT] [--gecko OUT] PROFILE\n"
    "\n"
    "Prints the report of a saved profile: a JSON profile from `hotline run --json`,\n"
    "or a wire stream (.jsonl) written by a standalone agent.\n"
    "  --top N           lines and functions shown (default 10)\n" CLI_OUTPUTS_USAGE;

int cmd_view(int argc, char **argv)
{
    const char *path = NULL;
    struct cli_outputs outs = {0};
    int top = 10;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(view_usage, stdout);
            return 0;
        }
        const char **slot = cli_output_slot(&outs, a);
        if (!strcmp(a, "--top") || slot) {
            if (i + 1 >= argc) {
                fprintf(stderr, "hotline view: %s needs a value\n\n%s", a, view_usage);
                return 2;
            }
            if (slot) {
                *slot = argv[++i];
            } else {
                char *end;
                long v = strtol(argv[++i], &end, 10);
                if (*end || v < 1 || v > 100000) {
                    fprintf(stderr, "hotline view: --top wants a whole number >= 1\n");
                    return 2;
                }
                top = (int)v;
            }
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "hotline view: unknown option '%s'\n\n%s", a, view_usage);
            return 2;
        } else if (path) {
            fprintf(stderr, "hotline view: one profile at a time\n\n%s", view_usage);
            return 2;
        } else {
            path = a;
        }
    }
    if (!path) {
        fprintf(stderr, "hotline view: no profile given\n\n%s", view_usage);
        return 2;
    }
    if (cli_outputs_check(&outs, "hotline view")) return 2;
    char err[512];
    struct profile *p = cli_load_profile("hotline view", path, err, sizeof err);
    if (!p) { /* err quotes the file's name and maybe its text */
        char safe[TERMSAFE_SIZE(sizeof err)];
        fprintf(stderr, "hotline view: %s\n", termsafe_str(safe, sizeof safe, err));
        return 1;
    }
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) cwd[0] = 0;
    report_print(stdout, p, top, cwd);
    int rc = cli_outputs_write(&outs, p, "hotline view", 1) ? 1 : 0;
    profile_free(p);
    return rc;
}
