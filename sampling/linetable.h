/* linetable.h: instruction offset -> source line, decoded by us.
 *
 * The agent's sampler cannot call PyCode_Addr2Line (it never holds the
 * GIL), and hotline attach reads another process, so both keep a copy of
 * each code object's line table and decode it here. Pure functions, no
 * Python headers: tests/unit/test_linetable.c feeds hand-made tables.
 */
#ifndef HOTLINE_LINETABLE_H
#define HOTLINE_LINETABLE_H

#include <stddef.h>
#include <stdint.h>

enum {
    LT_LNOTAB = 1,       /* 3.9: (byte delta, signed line delta) pairs */
    LT_LINETABLE310 = 2, /* 3.10: (byte delta, signed line delta, -128 = none) */
    LT_LOCATIONS = 3     /* 3.11+: location table, lengths in code units */
};

/* Line of the instruction at `addr` (unit per format), or -1 when the table
 * says it has none; `firstline` when addr < 0. tab is borrowed. */
int lt_line(int fmt, const uint8_t *tab, size_t n, int firstline, long addr);

/* Highest line mentioned in the table (at least firstline). tab is borrowed. */
int lt_last_line(int fmt, const uint8_t *tab, size_t n, int firstline);

#endif
