/* site.c: classes of a code object's units (site.h). */
#include "site.h"

size_t site_classify(const site_ops_t *ops, const uint8_t *code, size_t n, uint8_t *out)
{
    size_t i = 0, ext = 0; /* ext: EXTENDED_ARG units waiting for their instruction */
    while (i < n) {
        uint8_t op = code[2 * i];
        uint8_t c = ops->cls[op];
        if (c == SITE_EXT) {
            ext++;
            i++;
            continue;
        }
        /* the prefixes are the instruction (3.9/3.10 leave f_lasti on them) */
        for (size_t k = i - ext; k < i; k++)
            out[k] = c;
        ext = 0;
        out[i++] = c;
        /* inline caches (3.11+): the instruction's too (3.11 may leave
         * prev_instr on one) */
        for (unsigned k = 0; k < ops->caches[op] && i < n; k++)
            out[i++] = c;
    }
    for (size_t k = n - ext; k < n; k++)
        out[k] = SITE_NONE;
    return n;
}
