/* The language server on stdin/stdout (lsp_stdio.c): the transport
 * around struct server and its loop. `hotline lsp` (cli/cmd_lsp.c) parses
 * its arguments into lsp_stdio_opts and calls lsp_stdio_serve. */
#ifndef HOTLINE_LSP_STDIO_H
#define HOTLINE_LSP_STDIO_H

#include <stddef.h>

struct lsp_stdio_opts {
    size_t max_message;  /* framing cap, 0: the default */
    size_t max_output;   /* unread output before notifications drop, 0: LSP_OUT_CAP */
    size_t max_document; /* one document's cap, 0: the default */
};

/* Serve until the client exits (or stdin ends, or SIGTERM / SIGINT); the
 * process's exit status (0 after shutdown + exit, 1 otherwise or when the
 * server cannot start). */
int lsp_stdio_serve(const struct lsp_stdio_opts *o);

#endif
