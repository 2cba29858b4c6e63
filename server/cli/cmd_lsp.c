/* `hotline lsp`: its arguments; the server itself is core/lsp_stdio.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/lsp_stdio.h"

static const char lsp_usage[] =
    "usage: hotline lsp [--max-message-bytes N] [--max-output-bytes N]\n"
    "                   [--max-document-bytes N] [--stdio]\n"
    "Speaks the Language Server Protocol on stdin/stdout.\n";

/* A byte count > 0 from arg into *out: 0, or -EINVAL (said on stderr). */
static int byte_count(const char *opt, const char *arg, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(arg, &end, 10);
    if (errno || *end || v == 0 || arg[0] == '-') {
        fprintf(stderr, "hotline lsp: bad %s '%s'\n", opt, arg);
        return -EINVAL;
    }
    *out = (size_t)v;
    return 0;
}

int cmd_lsp(int argc, char **argv)
{
    struct lsp_stdio_opts o = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        size_t *count = !strcmp(a, "--max-message-bytes")    ? &o.max_message
                        : !strcmp(a, "--max-output-bytes")   ? &o.max_output
                        : !strcmp(a, "--max-document-bytes") ? &o.max_document
                                                             : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(lsp_usage, stdout);
            return 0;
        } else if (!strcmp(a, "--stdio")) {
            /* the default; accepted because many clients pass it */
        } else if (count && i + 1 < argc) {
            if (byte_count(a, argv[++i], count)) return 2;
        } else {
            fprintf(stderr, "hotline lsp: unknown option '%s'\n%s", a, lsp_usage);
            return 2;
        }
    }
    return lsp_stdio_serve(&o);
}
