/* Params checked at the door (lsp_provider.h's struct lsp_method.params):
 * a method's params shape written as a short spec, checked once before its
 * handler runs, so that the handler sees only params of that shape.
 *
 * A spec is a list of members separated by spaces, each a dotted path and
 * a type: "textDocument.uri:s position.line:i position.character:i".
 * Types: s string, i integer, n number, b boolean, o object, a array.
 * A path ending in `?` ("range?:o") may be absent, but not of another
 * type. Any spec (even "") wants params to be an object. */
#ifndef HOTLINE_CORE_PARAMS_H
#define HOTLINE_CORE_PARAMS_H

#include <jansson.h>
#include <stddef.h>

#define LSP_PARAMS_MAX_PATH 128 /* longest dotted path in a spec */

/* 0 when params (borrowed, may be NULL: none) have the shape of spec;
 * -EINVAL with why (cap n) saying what is wrong. A spec that cannot be
 * read is -EINVAL too ("bad spec ..."): a bug of the server's. */
int lsp_params_check(const json_t *params, const char *spec, char *why, size_t n);

#endif
