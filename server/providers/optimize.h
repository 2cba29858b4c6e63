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
 * All state is one struct lsp_opt, the provider's own (lsp_provider.h).
 * See docs/optimize.md. */
#ifndef HOTLINE_LSP_OPTIMIZE_H
#define HOTLINE_LSP_OPTIMIZE_H

#include <jansson.h>

#include "core/facilities.h"

#define LSP_OPT_KIND "refactor.rewrite.hotline.optimize"
#define LSP_OPT_MAX_OPS 8       /* optimizations in flight at once */
#define LSP_OPT_MAX_DONE 64     /* applied suggestions remembered for the lens */
#define LSP_OPT_MAX_REGION 400  /* lines in one region */
#define LSP_OPT_CONTEXT_LINES 8 /* lines above the region sent as context */
#define LSP_OPT_PROC_TIMEOUT_MS 15000

/* The provider (lsp_provider.h), listed in providers/list.c: codeAction
 * (joined), codeAction/resolve, the hotline.optimize command, the
 * before/after lenses (joined), $/cancelRequest of an optimization in
 * flight, hotline/debug/state "optimize": {"inflight", "done", "http"}. */
extern const struct lsp_provider lsp_optimize_provider;

#endif
