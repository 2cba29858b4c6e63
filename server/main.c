/* hotline: entry point. Dispatches to a subcommand (lsp, run, view, diff, check, attach) and
 * answers --help / --version. Usage errors exit with status 2. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "hotline_version.h"

static const char usage[] =
    "usage: hotline <command> [options]\n"
    "\n"
    "commands:\n"
    "  run [options] [--] script.py [args...]   profile a program, print a per-line report\n"
    "  run [options] -m module [args...]        same, for `python -m module`\n"
    "  view PROFILE                             print the report of a saved profile\n"
    "  diff OLD NEW                             what changed between two profiles\n"
    "  check PROFILE --budget SPEC...           exit 1 when something is over its budget\n"
    "  attach PID [options]                     sample a running Python, print the report\n"
    "  top PID | top -- script.py [args...]     live view of the hottest lines\n"
    "  lsp                                      language server on stdin/stdout\n"
    "\n"
    "options:\n"
    "  -h, --help       this help (`hotline <command> --help` for a command's options)\n"
    "  -V, --version    print the version\n";

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        fputs(usage, stdout);
        return 0;
    }
    if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
        printf("hotline %s\n", HOTLINE_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "lsp")) return cmd_lsp(argc - 1, argv + 1);
    if (!strcmp(cmd, "run")) return cmd_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "view")) return cmd_view(argc - 1, argv + 1);
    if (!strcmp(cmd, "diff")) return cmd_diff(argc - 1, argv + 1);
    if (!strcmp(cmd, "check")) return cmd_check(argc - 1, argv + 1);
    if (!strcmp(cmd, "top")) return cmd_top(argc - 1, argv + 1);
    if (!strcmp(cmd, "attach")) return cmd_attach(argc - 1, argv + 1);
    fprintf(stderr, "hotline: unknown command '%s'\n\n%s", cmd, usage);
    return 2;
}
