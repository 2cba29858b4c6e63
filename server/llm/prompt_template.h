/* The prompt Hotline sends to the user's LLM endpoint for "Optimize this".
 * The ONE place the wording lives (docs/optimize.md explains each part).
 * providers/optimize.c fills the {{placeholders}} with prompt_fill(). */
#ifndef HOTLINE_PROMPT_TEMPLATE_H
#define HOTLINE_PROMPT_TEMPLATE_H

#include <stddef.h>

/* System message (both providers). */
extern const char prompt_system[];
/* User message, with placeholders:
 *   {{file}} {{python}} {{libraries}} {{imports}} {{context}} {{region}}
 *   {{profile}} {{first_line}} {{last_line}} {{total}} */
extern const char prompt_user[];

/* New string (caller frees): tmpl (borrowed) with each {{name}} replaced by
 * the value for name in keys/vals (n pairs, borrowed); unknown names are
 * left as they are. NULL on ENOMEM. */
char *prompt_fill(const char *tmpl, const char *const *keys, const char *const *vals, size_t n);

#endif
