/* The "Optimize this" prompt (see prompt_template.h and docs/optimize.md).
 * Change the wording here and only here. */
#include "llm/prompt_template.h"

#include <stdlib.h>
#include <string.h>

const char prompt_system[] =
    "You are an expert Python performance engineer. You rewrite code to run faster while "
    "keeping its behaviour identical: same results, same output, same exceptions, same "
    "side effects, same public names. You only use libraries the code already imports.";

const char prompt_user[] =
    "Optimize the hot region of `{{file}}` shown below (lines {{first_line}}-{{last_line}}).\n"
    "\n"
    "Environment: Python {{python}}. Library versions: {{libraries}}.\n"
    "\n"
    "Imports of the file:\n"
    "```python\n{{imports}}```\n"
    "\n"
    "Lines just above the region (context, do not return them):\n"
    "```python\n{{context}}```\n"
    "\n"
    "The region to rewrite:\n"
    "```python\n{{region}}```\n"
    "\n"
    "Measured profile of the region, per line ({{total}}). Time shares are of the whole "
    "run; python = time in the interpreter, native = time in compiled code called from the "
    "line, system = waiting on I/O or the OS; memory and copy columns appear when measured:\n"
    "{{profile}}\n"
    "Rules:\n"
    "- Keep the behaviour identical. Do not change what the code prints or returns.\n"
    "- Answer with exactly ONE ```python code block that replaces the whole region (same "
    "indentation as the region), followed by a short explanation (at most 5 sentences) of "
    "why it is faster.\n"
    "- If the region cannot be made meaningfully faster, return it unchanged and say why.\n";

char *prompt_fill(const char *tmpl, const char *const *keys, const char *const *vals, size_t n)
{
    size_t cap = strlen(tmpl) + 1, len = 0;
    for (size_t i = 0; i < n; i++)
        cap += strlen(vals[i]) * 2; /* a key may appear twice */
    char *out = malloc(cap + 64);
    if (!out) return NULL;
    cap += 64;
    const char *p = tmpl;
    while (*p) {
        const char *open = strstr(p, "{{");
        const char *close = open ? strstr(open + 2, "}}") : NULL;
        size_t k = n;
        if (close)
            for (k = 0; k < n; k++)
                if (strlen(keys[k]) == (size_t)(close - open - 2) &&
                    !strncmp(open + 2, keys[k], (size_t)(close - open - 2)))
                    break;
        const char *lit_end = open ? open : p + strlen(p);
        if (open && k == n) lit_end = open + 2; /* not ours: keep "{{" and go on */
        size_t ll = (size_t)(lit_end - p), vl = open && k < n ? strlen(vals[k]) : 0;
        if (len + ll + vl + 1 > cap) {
            cap = (len + ll + vl + 1) * 2;
            char *nb = realloc(out, cap);
            if (!nb) {
                free(out);
                return NULL;
            }
            out = nb;
        }
        memcpy(out + len, p, ll);
        len += ll;
        if (open && k < n) {
            memcpy(out + len, vals[k], vl);
            len += vl;
            p = close + 2;
        } else {
            p = lit_end;
        }
    }
    out[len] = 0;
    return out;
}
