/* The language server: one struct server holds all of its state (STYLE.md: no
 * global mutable state); its providers see only its facilities (s->f,
 * facilities.h), and the core's parts below it never see it. Input bytes are fed to lsp_feed() by
 * whoever owns the transport (lsp_stdio.c on stdio, the fuzz target in memory); output goes through
 * the `write` hook. Messages are queued and handled from the event loop, so that a $/cancelRequest
 * that arrives behind a request in the same read can still cancel it. */
#ifndef HOTLINE_LSP_H
#define HOTLINE_LSP_H

#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>
#include <uv.h>

#include "core/facilities.h"
#include "core/lsp_call.h"
#include "core/lsp_out.h"
#include "core/lsp_provider.h"
#include "core/lsp_pview.h"
#include "core/notebook.h"
#include "framing.h"

enum lsp_state { LSP_UNINITIALIZED, LSP_RUNNING, LSP_SHUT_DOWN, LSP_EXITED };

struct lsp_queued {
    json_t *msg; /* owned */
    int cancelled;
    struct lsp_queued *next;
};

#define LSP_MAX_QUEUED 4096 /* more unprocessed messages than this: reject new ones */

struct server {
    /* what providers get (f.out, f.calls, ... point at the parts below) */
    struct lsp_facilities f;
    struct lsp_out out;
    struct lsp_calls calls;
    struct lsp_pview view;    /* the profile shown (lsp_pview.h) */
    struct lsp_notebooks nbs; /* open notebooks: their cells' texts are in f.docs */
    /* the providers' states, in the order of lsp_providers[] */
    void *pself[LSP_MAX_PROVIDERS];

    enum lsp_state state;
    int exit_code; /* valid once state == LSP_EXITED */
    struct rpc_reader reader;

    /* output: the transport's writer (buf borrowed) */
    void (*write)(struct server *s, const char *buf, size_t len);
    /* bytes written but not yet taken by the client (NULL: always 0); the
     * transport calls lsp_out_drained() whenever that number goes down */
    size_t (*out_pending)(struct server *s);
    void *transport; /* owned by the transport */
    /* called once when the server wants to exit (state is LSP_EXITED) */
    void (*on_exit)(struct server *s);

    /* incoming queue, drained from an idle handle */
    struct lsp_queued *qhead, *qtail;
    size_t qlen;
    uv_idle_t idle;
    int idle_active;
    int has_loop_handles;
    size_t nstarted; /* providers whose init succeeded (the first ones) */

    long client_pid;         /* 0 if unknown */
    uv_timer_t parent_timer; /* watches client_pid where no pidfd can */
    uv_poll_t parent_poll;   /* watches client_pid's pidfd (readable when it exits) */
    int parent_fd;           /* the pidfd, -1 if none */
};

/* Set up a server on loop (may be NULL: no queueing, messages are handled at
 * once, as the fuzz target wants). max_message: framing cap (0 = default).
 * 0, or a negative errno: then what was made is closed already, and the
 * caller runs the loop (if any) and calls lsp_server_free, as after
 * lsp_server_close. */
int lsp_server_init(struct server *s, uv_loop_t *loop, size_t max_message);
/* Close the server's loop handles; call lsp_server_free after the loop has
 * run their close callbacks. */
void lsp_server_close(struct server *s);
void lsp_server_free(struct server *s);

/* Feed raw bytes from the client. */
void lsp_feed(struct server *s, const char *data, size_t len);
/* End of input: behaves like `exit`. */
void lsp_eof(struct server *s);
/* Handle every queued message now (used without a loop, and by tests). */
void lsp_drain(struct server *s);

/* The transport wrote some of what was pending: send what was held back. */
void lsp_out_drained(struct server *s);

#endif
