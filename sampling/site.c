/* site.c: classes of a code object's units (site.h). */
#include "site.h"

#include <stdlib.h>

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

void site_callable_slots(int call, int depth, int oparg, long *first, long *second)
{
    long d = depth, n = oparg;
    *first = *second = -1;
    switch (call) {
    case SITE_CALL_FN:
        *first = d - n - 1;
        break;
    case SITE_CALL_FN_KW:
        *first = d - n - 2;
        break;
    case SITE_CALL_EX:
        *first = d - 2 - (n & 1);
        break;
    case SITE_CALL_METHOD:
        *first = d - n - 2;
        *second = d - n - 1;
        break;
    case SITE_CALL_313:
        *first = d - n - 2;
        break;
    case SITE_CALL_313_KW:
        *first = d - n - 3;
        break;
    case SITE_CALL_313_EX:
        *first = d - 3 - (n & 1);
        break;
    case SITE_CALL_314_EX:
        *first = d - 4;
        break;
    case SITE_CALL_311:
        *first = d - 2;
        *second = d - 1;
        break;
    default:
        break;
    }
    if (*first < 0) *first = *second = -1;
}

/* One instruction from unit i: its opcode unit (after EXTENDED_ARG
 * prefixes), its oparg and the unit after it and its caches. */
static size_t decode(const site_ops_t *ops, const uint8_t *code, size_t n, size_t i, size_t *op_at,
                     unsigned *oparg)
{
    unsigned arg = 0;
    while (i < n && ops->cls[code[2 * i]] == SITE_EXT) {
        arg = (arg << 8) | code[2 * i + 1];
        i++;
    }
    *op_at = i;
    if (i >= n) return n;
    arg = (arg << 8) | code[2 * i + 1];
    *oparg = arg;
    size_t next = i + 1 + ops->caches[code[2 * i]];
    return next < n ? next : n;
}

int site_effect(const site_effects_t *e, int op, int oparg, int jump)
{
    if (op < 0 || op > 255 || oparg < 0) return INT32_MIN;
    jump = jump ? 1 : 0;
    int v = e->tab[jump][op][oparg & 255];
    if (v == SITE_EFFECT_NONE) return INT32_MIN;
    if (oparg > 255) {
        if (e->k[jump][op] == SITE_EFFECT_NONE) return INT32_MIN;
        long w = v + (long)e->k[jump][op] * (oparg >> 8);
        if (w < -30000 || w > 30000) return INT32_MIN;
        v = (int)w;
    }
    return v;
}

/* The stack effect from the callback, or else from the table. */
struct effect_src {
    int (*fn)(int op, int oparg, int jump);
    const site_effects_t *tab;
};

static int effect_of(const struct effect_src *src, int op, int oparg, int jump)
{
    return src->fn ? src->fn(op, oparg, jump) : site_effect(src->tab, op, oparg, jump);
}

#define DEPTH_CONFLICT (-2)

static int depths(const site_ops_t *ops, const uint8_t *code, size_t n,
                  const struct effect_src *src, int16_t *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = -1;
    if (!n) return 0;
    int *d = malloc(n * sizeof *d);
    size_t *work = malloc(n * sizeof *work);
    if (!d || !work) {
        free(d);
        free(work);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        d[i] = -1;
    size_t nw = 0;
    d[0] = (ops->flags[code[0]] & SITE_F_START1) ? 1 : 0;
    work[nw++] = 0;
    while (nw) {
        size_t i = work[--nw], at;
        unsigned arg = 0;
        int depth = d[i];
        if (depth < 0) continue; /* a conflict since it was queued */
        size_t next = decode(ops, code, n, i, &at, &arg);
        if (at >= n) continue;
        uint8_t op = code[2 * at], fl = ops->flags[op];
        size_t to[2];
        int to_d[2], nt = 0;
        if (fl & (SITE_F_JREL | SITE_F_JABS)) {
            long a = ops->jump_bytes ? (long)arg / 2 : (long)arg, t;
            if (fl & SITE_F_JABS)
                t = a;
            else
                t = (fl & SITE_F_BACK) ? (long)next - a : (long)next + a;
            int e = effect_of(src, ops->base[op], (int)arg, 1);
            if (e != INT32_MIN && t >= 0 && (size_t)t < n) {
                to[nt] = (size_t)t;
                to_d[nt++] = depth + e;
            }
        }
        if (!(fl & SITE_F_NOFALL) && next < n) {
            int e = (fl & SITE_F_GEN) ? 1 : effect_of(src, ops->base[op], (int)arg, 0);
            if (e != INT32_MIN) {
                to[nt] = next;
                to_d[nt++] = depth + e;
            }
        }
        for (int k = 0; k < nt; k++) {
            size_t t = to[k];
            if (to_d[k] < 0 || to_d[k] > 30000) continue;
            if (d[t] == -1) {
                d[t] = to_d[k];
                work[nw++] = t; /* each unit is queued once: nw <= n */
            } else if (d[t] != to_d[k]) {
                d[t] = DEPTH_CONFLICT;
            }
        }
    }
    /* every unit of an instruction (prefixes, caches) gets its depth */
    for (size_t i = 0; i < n;) {
        size_t at;
        unsigned arg;
        size_t next = decode(ops, code, n, i, &at, &arg);
        int v = d[i] >= 0 ? d[i] : -1;
        for (size_t k = i; k < next && k < n; k++)
            out[k] = (int16_t)v;
        i = next > i ? next : i + 1;
    }
    free(d);
    free(work);
    return 0;
}

int site_depths(const site_ops_t *ops, const uint8_t *code, size_t n,
                int (*effect)(int op, int oparg, int jump), int16_t *out)
{
    struct effect_src src = {effect, NULL};
    return depths(ops, code, n, &src, out);
}

static int analyze(const site_ops_t *ops, const uint8_t *code, size_t n,
                   const struct effect_src *src, site_unit_t *out)
{
    uint8_t *cls = malloc(n ? n : 1);
    int16_t *depth = malloc((n ? n : 1) * sizeof *depth);
    int rc = 0;
    if (!cls || !depth) {
        free(cls);
        free(depth);
        return -1;
    }
    site_classify(ops, code, n, cls);
    if ((!src->fn && !src->tab) || depths(ops, code, n, src, depth) != 0) {
        for (size_t i = 0; i < n; i++)
            depth[i] = -1;
        rc = -1;
    }
    for (size_t i = 0; i < n;) {
        size_t at;
        unsigned arg = 0;
        size_t next = decode(ops, code, n, i, &at, &arg);
        uint8_t op = at < n ? code[2 * at] : 0;
        uint8_t call = cls[i] == SITE_CALL ? ops->call[op]
                       : cls[i] == SITE_OP ? ((ops->flags[op] & SITE_F_UNARY) ? 1 : 2)
                                           : 0;
        for (size_t k = i; k < next && k < n; k++) {
            out[k].cls = cls[k];
            out[k].call = call;
            out[k].depth = depth[k];
            out[k].oparg = arg;
        }
        i = next > i ? next : i + 1;
    }
    free(cls);
    free(depth);
    return rc;
}

int site_analyze(const site_ops_t *ops, const uint8_t *code, size_t n,
                 int (*effect)(int op, int oparg, int jump), site_unit_t *out)
{
    struct effect_src src = {effect, NULL};
    return analyze(ops, code, n, &src, out);
}

int site_analyze_tab(const site_ops_t *ops, const site_effects_t *eff, const uint8_t *code,
                     size_t n, site_unit_t *out)
{
    struct effect_src src = {NULL, eff};
    return analyze(ops, code, n, &src, out);
}
