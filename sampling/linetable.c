/* linetable.c: decoders for the three CPython line-table formats (see
 * linetable.h). Facts from CPython's Objects/lnotab_notes.txt (3.9, 3.10)
 * and Objects/locations.md (3.11+). All reads are bounds-checked: the table
 * is a copy taken without the GIL and may be torn. */
#include "linetable.h"

/* 3.11+ varint: 6-bit chunks, bit 6 = more follows. */
static int loc_varint(const uint8_t *t, size_t n, size_t *i, unsigned *out)
{
    unsigned v = 0;
    int shift = 0;
    for (;;) {
        if (*i >= n || shift > 28) return -1;
        uint8_t b = t[(*i)++];
        v |= (unsigned)(b & 63) << shift;
        shift += 6;
        if (!(b & 64)) break;
    }
    *out = v;
    return 0;
}

static int loc_svarint(const uint8_t *t, size_t n, size_t *i, int *out)
{
    unsigned u;
    if (loc_varint(t, n, i, &u) != 0) return -1;
    *out = (u & 1) ? -(int)(u >> 1) : (int)(u >> 1);
    return 0;
}

/* Walks the location table; calls back per entry. Returns the line of the
 * entry covering `addr` (addr >= 0) or the max line (addr < 0 with want_max). */
static int loc_walk(const uint8_t *t, size_t n, int firstline, long addr, int want_max)
{
    size_t i = 0;
    long start = 0;
    int line = firstline, max = firstline;
    while (i < n) {
        uint8_t b = t[i++];
        if (!(b & 128)) return want_max ? max : -1; /* desynchronised: give up */
        int code = (b >> 3) & 15;
        long len = (b & 7) + 1;
        int entry_line = line, dl = 0;
        unsigned skip;
        switch (code) {
        case 15:
            entry_line = -1;
            break;
        case 14:
            if (loc_svarint(t, n, &i, &dl) || loc_varint(t, n, &i, &skip) ||
                loc_varint(t, n, &i, &skip) || loc_varint(t, n, &i, &skip))
                return want_max ? max : -1;
            line += dl;
            entry_line = line;
            break;
        case 13:
            if (loc_svarint(t, n, &i, &dl)) return want_max ? max : -1;
            line += dl;
            entry_line = line;
            break;
        case 10:
        case 11:
        case 12:
            line += code - 10;
            entry_line = line;
            i += 2;
            break;
        default: /* short form, same line */
            i += 1;
            break;
        }
        if (entry_line > max) max = entry_line;
        if (!want_max && addr >= start && addr < start + len) return entry_line;
        start += len;
    }
    return want_max ? max : -1;
}

int lt_line(int fmt, const uint8_t *tab, size_t n, int firstline, long addr)
{
    if (addr < 0) return firstline;
    if (fmt == LT_LOCATIONS) return loc_walk(tab, n, firstline, addr, 0);
    if (fmt == LT_LINETABLE310) {
        long start = 0;
        int line = firstline;
        for (size_t i = 0; i + 1 < n; i += 2) {
            long end = start + tab[i];
            int8_t dl = (int8_t)tab[i + 1];
            int cur = -1;
            if (dl != -128) {
                line += dl;
                cur = line;
            }
            if (addr >= start && addr < end) return cur;
            start = end;
        }
        return -1;
    }
    /* LT_LNOTAB */
    long a = 0;
    int line = firstline;
    for (size_t i = 0; i + 1 < n; i += 2) {
        a += tab[i];
        if (a > addr) break;
        line += (int8_t)tab[i + 1];
    }
    return line;
}

int lt_last_line(int fmt, const uint8_t *tab, size_t n, int firstline)
{
    if (fmt == LT_LOCATIONS) return loc_walk(tab, n, firstline, -1, 1);
    int line = firstline, max = firstline;
    for (size_t i = 0; i + 1 < n; i += 2) {
        int8_t dl = (int8_t)tab[i + 1];
        if (fmt == LT_LINETABLE310 && dl == -128) continue;
        line += dl;
        if (line > max) max = line;
    }
    return max;
}
