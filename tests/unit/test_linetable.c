/* Unit tests for sampling/linetable.c with hand-made tables of the three
 * formats (CPython's Objects/lnotab_notes.txt and Objects/locations.md),
 * torn ones included: the sampler copies tables without the GIL.
 * profiler.linetable.* checks the same decoders against each interpreter's
 * own mapping. */
#include "linetable.h"
#include "check.h"

static void test_lnotab(void)
{
    /* 3.9: (bytes, signed line delta) */
    const uint8_t t[] = {0, 1, 6, 2, 4, 0xff};
    CHECK_EQ(lt_line(LT_LNOTAB, t, sizeof t, 10, 0), 11);
    CHECK_EQ(lt_line(LT_LNOTAB, t, sizeof t, 10, 4), 11);
    CHECK_EQ(lt_line(LT_LNOTAB, t, sizeof t, 10, 6), 13);
    CHECK_EQ(lt_line(LT_LNOTAB, t, sizeof t, 10, 12), 12);
    CHECK_EQ(lt_line(LT_LNOTAB, t, sizeof t, 10, -1), 10);
    CHECK_EQ(lt_last_line(LT_LNOTAB, t, sizeof t, 10), 13);
    CHECK_EQ(lt_line(LT_LNOTAB, t, 3, 10, 6), 11); /* torn after the first pair */
}

static void test_linetable310(void)
{
    /* 3.10: (bytes, signed line delta, -128 = no line) */
    const uint8_t t[] = {4, 1, 4, 0x80, 6, 2};
    CHECK_EQ(lt_line(LT_LINETABLE310, t, sizeof t, 10, 0), 11);
    CHECK_EQ(lt_line(LT_LINETABLE310, t, sizeof t, 10, 5), -1);
    CHECK_EQ(lt_line(LT_LINETABLE310, t, sizeof t, 10, 8), 13);
    CHECK_EQ(lt_line(LT_LINETABLE310, t, sizeof t, 10, 14), -1); /* past the end */
    CHECK_EQ(lt_last_line(LT_LINETABLE310, t, sizeof t, 10), 13);
}

/* 3.11+: entries of (1 | code:4 | length-1:3), then the code's fields */
static const uint8_t loc[] = {
    0xE9, 0x02,             /* code 13 (line only), 2 units, +1: line 11 */
    0xD8, 0x01, 0x02,       /* code 11 (one line, +1), 1 unit: line 12 */
    0xF8,                   /* code 15, 1 unit: no location */
    0x81, 0x05,             /* code 0 (short form), 2 units: same line, 12 */
    0xE8, 0x07,             /* code 13, 1 unit, -3: line 9 */
    0xF0, 0x0A, 0,    1, 2, /* code 14 (long form), 1 unit, +5: line 14 */
    0xE8, 0x48, 0x03,       /* code 13, 1 unit, +100 (two-chunk varint): 114 */
};

static void test_locations(void)
{
    static const int want[] = {11, 11, 12, -1, 12, 12, 9, 14, 114, -1};
    for (int a = 0; a < (int)(sizeof want / sizeof *want); a++)
        if (lt_line(LT_LOCATIONS, loc, sizeof loc, 10, a) != want[a])
            CHECK_FAIL("unit %d: line %d, want %d", a,
                       lt_line(LT_LOCATIONS, loc, sizeof loc, 10, a), want[a]);
        else
            CHECK(1);
    CHECK_EQ(lt_line(LT_LOCATIONS, loc, sizeof loc, 10, -1), 10);
    CHECK_EQ(lt_last_line(LT_LOCATIONS, loc, sizeof loc, 10), 114);
}

static void test_locations_torn(void)
{
    /* cut inside the first entry's varint: nothing decodes */
    CHECK_EQ(lt_line(LT_LOCATIONS, loc, 1, 10, 0), -1);
    CHECK_EQ(lt_last_line(LT_LOCATIONS, loc, 1, 10), 10);
    /* cut inside the last varint: what came before still decodes */
    CHECK_EQ(lt_line(LT_LOCATIONS, loc, sizeof loc - 1, 10, 7), 14);
    CHECK_EQ(lt_line(LT_LOCATIONS, loc, sizeof loc - 1, 10, 8), -1);
    CHECK_EQ(lt_last_line(LT_LOCATIONS, loc, sizeof loc - 1, 10), 14);
    /* a byte without the entry bit: desynchronised, no guess */
    const uint8_t bad[] = {0xE9, 0x02, 0x10, 0xE9, 0x02};
    CHECK_EQ(lt_line(LT_LOCATIONS, bad, sizeof bad, 10, 1), 11);
    CHECK_EQ(lt_line(LT_LOCATIONS, bad, sizeof bad, 10, 2), -1);
    CHECK_EQ(lt_last_line(LT_LOCATIONS, bad, sizeof bad, 10), 11);
    /* a varint that never ends */
    const uint8_t endless[] = {0xE8, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40};
    CHECK_EQ(lt_line(LT_LOCATIONS, endless, sizeof endless, 10, 0), -1);
}

int main(void)
{
    test_lnotab();
    test_linetable310();
    test_locations();
    test_locations_torn();
    return check_exit("linetable");
}
