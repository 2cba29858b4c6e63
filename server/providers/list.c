/* The features of `hotline lsp`, one struct lsp_provider each
 * (lsp_provider.h). A new feature is one file that defines its provider,
 * plus one line here. The order matters only where answers are joined:
 * commands are listed, and code lenses and actions come, in this order. */
#include "core/lsp_provider.h"

extern const struct lsp_provider lsp_notebook_provider;    /* notebook.c */
extern const struct lsp_provider lsp_run_provider;         /* run.c */
extern const struct lsp_provider lsp_attach_provider;      /* attach.c */
extern const struct lsp_provider lsp_optimize_provider;    /* optimize.c */
extern const struct lsp_provider lsp_view_provider;        /* view.c */
extern const struct lsp_provider lsp_diagnostics_provider; /* diagnostics.c */
extern const struct lsp_provider lsp_kernel_provider;      /* kernel.c */
extern const struct lsp_provider lsp_pictures_provider;    /* pictures.c */
extern const struct lsp_provider lsp_persist_provider;     /* persist.c */
extern const struct lsp_provider lsp_processes_provider;   /* processes.c */
extern const struct lsp_provider lsp_live_provider;        /* live.c */

const struct lsp_provider *const lsp_providers[] = {
    &lsp_notebook_provider, /* document sync of cells, before any feature */
    &lsp_run_provider,      &lsp_attach_provider,
    &lsp_optimize_provider, /* its before/after lenses go above the profile's */
    &lsp_view_provider,     &lsp_diagnostics_provider,
    &lsp_kernel_provider,   &lsp_pictures_provider,
    &lsp_persist_provider,  &lsp_processes_provider,
    &lsp_live_provider,     NULL,
};
