/* The core's side of the provider registry (core/lsp_provider.h), shared
 * by the core's files only: walking the provider list, finding the
 * provider of a method, and the answers the core joins from several
 * providers (registry.c). Providers never include this. */
#ifndef HOTLINE_CORE_REGISTRY_H
#define HOTLINE_CORE_REGISTRY_H

#include <jansson.h>

#include "core/facilities.h"

#include "core/lsp_provider.h"

/* Every listed provider p with its state self, in list order. */
#define FOR_PROVIDERS(s, i, p, self)                                                               \
    for (size_t i = 0; lsp_providers[i]; i++)                                                      \
        for (const struct lsp_provider *p = lsp_providers[i]; p; p = NULL)                         \
            for (void *self = (s)->pself[i]; p; p = NULL)

/* The provider method entry for method (a request when request is 1, a
 * notification otherwise) and its provider's state in *selfp, or NULL. */
const struct lsp_method *lsp_registry_method(struct lsp_facilities *s, const char *method,
                                             int request, void **selfp);
/* initialize: every provider's own capabilities into caps (borrowed), then
 * the joined ones: executeCommandProvider (all commands, in list order),
 * codeLensProvider, codeActionProvider (all kinds; resolveProvider when a
 * provider serves codeAction/resolve). */
void lsp_registry_capabilities(struct lsp_facilities *s, json_t *caps);
/* workspace/executeCommand: to the provider that lists the command. */
void lsp_registry_execute_command(struct lsp_facilities *s, json_t *id, json_t *params);
/* textDocument/codeLens and textDocument/codeAction: every provider's. */
void lsp_registry_code_lens(struct lsp_facilities *s, json_t *id, json_t *params);
void lsp_registry_code_action(struct lsp_facilities *s, json_t *id, json_t *params);

#endif
