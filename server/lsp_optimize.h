/* "Hotline: Optimize this": a code action on profiled hot lines and on
 * selections inside profiled files. When the user picks it (codeAction/resolve,
 * or workspace/executeCommand hotline.optimize for clients without resolve)
 * the region, its context and its per-line profile go to the LLM endpoint the
 * user configured (llm.c); the answer's code block, once it parses, does
 * something and the whole file still compiles with it (the target
 * interpreter run isolated, `-I` from "/", in a subprocess), becomes a
 * WorkspaceEdit replacing exactly the region. A lens over the rewritten region offers to
 * re-run and then shows before / after from the two profiles.
 *
 * All state is one struct lsp_opt hung off struct server (s->opt); lsp.c
 * calls the hooks below. See docs/optimize.md. */
#ifndef HOTLINE_LSP_OPTIMIZE_H
#define HOTLINE_LSP_OPTIMIZE_H

#include <jansson.h>

struct server;

#define LSP_OPT_KIND "refactor.rewrite.hotline.optimize"
#define LSP_OPT_MAX_OPS 8       /* optimizations in flight at once */
#define LSP_OPT_MAX_DONE 64     /* applied suggestions remembered for the lens */
#define LSP_OPT_MAX_REGION 400  /* lines in one region */
#define LSP_OPT_CONTEXT_LINES 8 /* lines above the region sent as context */
#define LSP_OPT_PROC_TIMEOUT_MS 15000

struct lsp_opt;

/* lsp_server_init: 0 or -ENOMEM (the HTTP client exists only with a loop). */
int lsp_opt_init(struct server *s);
/* initialize: add codeActionProvider and our commands to caps (borrowed). */
void lsp_opt_initialize(struct server *s, json_t *caps);
/* lsp_server_close: cancel everything in flight, close handles. */
void lsp_opt_close(struct server *s);
void lsp_opt_free(struct server *s);

/* request handlers (id, params borrowed) */
void lsp_opt_code_action(struct server *s, json_t *id, json_t *params);
void lsp_opt_code_action_resolve(struct server *s, json_t *id, json_t *params);
/* hotline.optimize here; every other command goes to lsp_feat_execute_command */
void lsp_opt_execute_command(struct server *s, json_t *id, json_t *params);
/* lsp_feat_code_lens plus the before/after lenses over rewritten regions */
void lsp_opt_code_lens(struct server *s, json_t *id, json_t *params);

/* $/cancelRequest for a request in flight here: 1 if it was ours (answered
 * -32800), 0 otherwise. id borrowed. */
int lsp_opt_cancel(struct server *s, json_t *id);
/* window/workDoneProgress/cancel: ours, or passed to lsp_feat_progress_cancel */
void lsp_opt_progress_cancel(struct server *s, json_t *params);
/* An answer to one of our requests (applyEdit, progress create): 1 if it was
 * ours. All borrowed. */
int lsp_opt_response(struct server *s, json_t *id, json_t *result, json_t *error);
/* hotline/debug/state: "optimize": {"inflight", "done"} into r (borrowed) */
void lsp_opt_debug_state(struct server *s, json_t *r);

#endif
