/* ipykernel's cell file names (cellname.h). The hash is checked against
 * ipykernel's own murmur2_x86 by tests/lsp/test_cellname.py. */
#include "text/cellname.h"

#include <errno.h>
#include <string.h>

uint32_t cellname_murmur2(const void *p, size_t n, uint32_t seed)
{
    const uint32_t m = 0x5bd1e995u;
    const unsigned char *b = p;
    /* ipykernel mixes the length in as a 32-bit number (seed ^ length) */
    uint32_t h = seed ^ (uint32_t)n;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        uint32_t k = (uint32_t)b[i] | (uint32_t)b[i + 1] << 8 | (uint32_t)b[i + 2] << 16 |
                     (uint32_t)b[i + 3] << 24;
        k *= m;
        k ^= k >> 24;
        k *= m;
        h *= m;
        h ^= k;
    }
    switch (n & 3) {
    case 3:
        h ^= (uint32_t)b[i + 2] << 16;
        /* fall through */
    case 2:
        h ^= (uint32_t)b[i + 1] << 8;
        /* fall through */
    case 1:
        h ^= b[i];
        h *= m;
    }
    h ^= h >> 13;
    h *= m;
    h ^= h >> 15;
    return h;
}

uint32_t cellname_ipykernel_hash(const char *text, size_t n)
{
    return cellname_murmur2(text, n, CELLNAME_IPYKERNEL_SEED);
}

/* 1 when the n bytes at p are all decimal digits (and n > 0). */
static int all_digits(const char *p, size_t n)
{
    if (!n) return 0;
    for (size_t i = 0; i < n; i++)
        if (p[i] < '0' || p[i] > '9') return 0;
    return 1;
}

int cellname_ipykernel_parse(const char *path, uint32_t *hash)
{
    const char *base = path ? strrchr(path, '/') : NULL;
    if (!base || base == path) return -ENOENT;
    size_t blen = strlen(base + 1);
    /* str(hash): decimal, no sign, no leading zero, at most 10 digits */
    if (blen < 4 || blen > 13 || strcmp(base + 1 + blen - 3, ".py")) return -ENOENT;
    size_t nd = blen - 3;
    if (!all_digits(base + 1, nd) || (nd > 1 && base[1] == '0')) return -ENOENT;
    uint64_t v = 0;
    for (size_t i = 0; i < nd; i++)
        v = v * 10 + (uint64_t)(base[1 + i] - '0');
    if (v > UINT32_MAX) return -ENOENT;
    const char *dir = base; /* the parent folder: ipykernel_<pid> */
    while (dir > path && dir[-1] != '/')
        dir--;
    static const char pre[] = "ipykernel_";
    size_t dlen = (size_t)(base - dir);
    if (dlen <= sizeof pre - 1 || strncmp(dir, pre, sizeof pre - 1) ||
        !all_digits(dir + sizeof pre - 1, dlen - (sizeof pre - 1)))
        return -ENOENT;
    if (hash) *hash = (uint32_t)v;
    return 0;
}
