/* Unit tests for protocol/position: columns in UTF-8, UTF-16 and UTF-32 against byte
 * offsets, with 1- to 4-byte characters, rounding inside a character, clamping past the
 * end, invalid UTF-8, and round trips over every column of mixed lines. */
#include "position.h"
#include "check.h"

#include <errno.h>

#define E_ACUTE "\xc3\xa9"      /* é, U+00E9: 2 bytes, 1 UTF-16 unit */
#define EURO "\xe2\x82\xac"     /* €, U+20AC: 3 bytes, 1 unit */
#define CJK "\xe4\xb8\xad"      /* 中, U+4E2D: 3 bytes, 1 unit */
#define GRIN "\xf0\x9f\x98\x80" /* 😀, U+1F600: 4 bytes, 2 UTF-16 units */

static size_t c2b(const char *s, uint32_t col, enum pos_encoding e)
{
    return pos_col_to_byte(s, strlen(s), col, e);
}
static uint32_t b2c(const char *s, size_t byte, enum pos_encoding e)
{
    return pos_byte_to_col(s, strlen(s), byte, e);
}
static uint32_t units(const char *s, enum pos_encoding e)
{
    return pos_line_units(s, strlen(s), e);
}

static void test_ascii(void)
{
    const char *s = "def f(x):";
    for (int e = POS_UTF8; e <= POS_UTF32; e++) {
        CHECK_EQ_U(units(s, e), 9);
        for (uint32_t c = 0; c <= 9; c++) {
            CHECK_EQ_U(c2b(s, c, e), c);
            CHECK_EQ_U(b2c(s, c, e), c);
        }
        CHECK_EQ_U(c2b(s, 10, e), 9); /* clamp */
        CHECK_EQ_U(c2b(s, UINT32_MAX, e), 9);
        CHECK_EQ_U(b2c(s, 100, e), 9);
        CHECK_EQ_U(units("", e), 0);
        CHECK_EQ_U(c2b("", 3, e), 0);
    }
}

static void test_multibyte(void)
{
    /* "a é € 中 😀 b" without spaces: bytes a=0 é=1 €=3 中=6 😀=9 b=13, len 14 */
    const char *s = "a" E_ACUTE EURO CJK GRIN "b";
    CHECK_EQ_U(strlen(s), 14);
    CHECK_EQ_U(units(s, POS_UTF8), 14);
    CHECK_EQ_U(units(s, POS_UTF16), 7);
    CHECK_EQ_U(units(s, POS_UTF32), 6);

    static const size_t starts[] = {0, 1, 3, 6, 9, 13, 14};
    /* UTF-32: column k = k-th character */
    for (uint32_t k = 0; k < 7; k++) {
        CHECK_EQ_U(c2b(s, k, POS_UTF32), starts[k]);
        CHECK_EQ_U(b2c(s, starts[k], POS_UTF32), k);
    }
    /* UTF-16: the emoji takes columns 4 and 5 */
    static const size_t u16_to_byte[] = {0, 1, 3, 6, 9, 9, 13, 14};
    for (uint32_t c = 0; c < 8; c++)
        CHECK_EQ_U(c2b(s, c, POS_UTF16), u16_to_byte[c]);
    CHECK_EQ_U(b2c(s, 9, POS_UTF16), 4);
    CHECK_EQ_U(b2c(s, 13, POS_UTF16), 6);
    CHECK_EQ_U(b2c(s, 14, POS_UTF16), 7);
    /* UTF-8: a column inside a character rounds down to its start */
    CHECK_EQ_U(c2b(s, 2, POS_UTF8), 1);
    CHECK_EQ_U(c2b(s, 5, POS_UTF8), 3);
    CHECK_EQ_U(c2b(s, 12, POS_UTF8), 9);
    CHECK_EQ_U(c2b(s, 13, POS_UTF8), 13);
    /* bytes inside a character round down in every encoding */
    CHECK_EQ_U(b2c(s, 2, POS_UTF16), 1);
    CHECK_EQ_U(b2c(s, 4, POS_UTF32), 2);
    CHECK_EQ_U(b2c(s, 8, POS_UTF16), 3);
    CHECK_EQ_U(b2c(s, 10, POS_UTF16), 4);
    CHECK_EQ_U(b2c(s, 12, POS_UTF16), 4);
    CHECK_EQ_U(b2c(s, 12, POS_UTF32), 4);
    CHECK_EQ_U(b2c(s, 11, POS_UTF8), 9);
    /* clamping */
    CHECK_EQ_U(c2b(s, 8, POS_UTF16), 14);
    CHECK_EQ_U(b2c(s, 15, POS_UTF16), 7);
    /* a line of only astral characters */
    const char *g = GRIN GRIN;
    CHECK_EQ_U(units(g, POS_UTF16), 4);
    CHECK_EQ_U(c2b(g, 1, POS_UTF16), 0);
    CHECK_EQ_U(c2b(g, 2, POS_UTF16), 4);
    CHECK_EQ_U(c2b(g, 3, POS_UTF16), 4);
    CHECK_EQ_U(b2c(g, 4, POS_UTF16), 2);
}

static void test_invalid_utf8(void)
{
    /* stray continuation, truncated 3-byte sequence, overlong '/', surrogate, > U+10FFFF,
     * lone lead at the end: every invalid byte is one unit in every encoding */
    struct {
        const char *s;
        uint32_t chars; /* characters = units in UTF-16/32 and UTF-8 (each invalid byte: 1) */
    } cases[] = {
        {"\x80", 1},
        {"a\x80"
         "b",
         3},
        {"\xe2\x82"
         "a",
         3},                     /* truncated € then 'a' */
        {"\xc0\xaf", 2},         /* overlong */
        {"\xe0\x80\xaf", 3},     /* overlong 3-byte */
        {"\xed\xa0\x80", 3},     /* UTF-16 surrogate encoded in UTF-8 */
        {"\xf4\x90\x80\x80", 4}, /* > U+10FFFF */
        {"\xf0\x9f\x98", 3},     /* truncated emoji */
        {"x\xf0", 2},            /* lead byte at the end */
        {"\xff\xfe", 2},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const char *s = cases[k].s;
        size_t n = strlen(s);
        CHECK_EQ_U(units(s, POS_UTF8), n);
        CHECK_EQ_U(units(s, POS_UTF16), cases[k].chars);
        CHECK_EQ_U(units(s, POS_UTF32), cases[k].chars);
        CHECK_EQ_U(cases[k].chars, n); /* all of these are byte-per-character */
        for (uint32_t c = 0; c <= n; c++) {
            CHECK_EQ_U(c2b(s, c, POS_UTF16), c);
            CHECK_EQ_U(b2c(s, c, POS_UTF32), c);
        }
    }
    /* a valid character after garbage still counts as itself */
    const char *s = "\x80" GRIN "z";
    CHECK_EQ_U(units(s, POS_UTF16), 4);
    CHECK_EQ_U(c2b(s, 3, POS_UTF16), 5);
    CHECK_EQ_U(c2b(s, 2, POS_UTF16), 1);
    /* embedded NUL is an ordinary character (lengths are explicit) */
    CHECK_EQ_U(pos_line_units("a\0" E_ACUTE, 4, POS_UTF16), 3);
}

/* Every character boundary maps to a column and back; every column maps to a byte whose
 * column is the same, or that of the character it falls inside (UTF-8 bytes of a multi-byte
 * character, the second unit of a surrogate pair). */
static void roundtrip(const char *s)
{
    size_t len = strlen(s);
    for (int e = POS_UTF8; e <= POS_UTF32; e++) {
        uint32_t total = units(s, e), prev_col = 0;
        size_t prev_byte = 0;
        for (size_t b = 0, u; b <= len; b += u) {
            uint32_t col = b2c(s, b, e);
            CHECK_EQ_U(c2b(s, col, e), b);
            CHECK(b == 0 || col > prev_col);
            prev_col = col;
            u = b < len ? pos_char_len(s, len, b, e, NULL) : 1;
        }
        CHECK_EQ_U(prev_col, total);
        for (uint32_t c = 0; c <= total + 2; c++) {
            size_t b = c2b(s, c, e);
            uint32_t back = b2c(s, b, e);
            CHECK(b >= prev_byte || c == 0);
            prev_byte = b;
            if (c > total)
                CHECK_EQ_U(b, len);
            else if (back != c) {
                /* c fell inside the character at b: only multi-unit characters have insides */
                uint32_t u = 0;
                CHECK(e != POS_UTF32 && b < len && back < c);
                if (b < len) pos_char_len(s, len, b, e, &u);
                CHECK(u > 1 && back + u > c);
            }
        }
    }
}

static void test_roundtrips(void)
{
    roundtrip("x = \"" E_ACUTE EURO "\" # " CJK CJK " " GRIN GRIN "!");
    roundtrip(GRIN "a" GRIN E_ACUTE "\x80" GRIN);
    roundtrip("\xe2\x82" GRIN "\xc3"
              "end" EURO);
    roundtrip("");
    roundtrip("plain ascii line");
}

static void test_names(void)
{
    enum pos_encoding e = POS_UTF8;
    CHECK_EQ_U(pos_encoding_parse("utf-16", &e), 0);
    CHECK_EQ_U(e, POS_UTF16);
    CHECK_EQ_U(pos_encoding_parse("utf-32", &e), 0);
    CHECK_EQ_U(e, POS_UTF32);
    CHECK_EQ_U(pos_encoding_parse("UTF-8", &e), 0);
    CHECK_EQ_U(e, POS_UTF8);
    CHECK(pos_encoding_parse("utf16", &e) == -EINVAL);
    CHECK(pos_encoding_parse("utf-16x", &e) == -EINVAL);
    CHECK(pos_encoding_parse("utf-", &e) == -EINVAL);
    CHECK(pos_encoding_parse("", &e) == -EINVAL);
    CHECK(pos_encoding_parse(NULL, &e) == -EINVAL);
    CHECK_EQ_U(e, POS_UTF8); /* untouched on failure */
    CHECK_STR(pos_encoding_name(POS_UTF8), "utf-8");
    CHECK_STR(pos_encoding_name(POS_UTF16), "utf-16");
    CHECK_STR(pos_encoding_name(POS_UTF32), "utf-32");
    CHECK(pos_encoding_name((enum pos_encoding)7) == NULL);
}

static void test_line_breaks(void)
{
    const char *t = "a\nb\r\nc\rd";
    size_t n = strlen(t);
    CHECK_EQ_U(pos_line_break(t, n, 0), 0);
    CHECK_EQ_U(pos_line_break(t, n, 1), 1);    /* \n */
    CHECK_EQ_U(pos_line_break(t, n, 3), 2);    /* \r\n */
    CHECK_EQ_U(pos_line_break(t, n, 4), 1);    /* its \n alone */
    CHECK_EQ_U(pos_line_break(t, n, 6), 1);    /* a lone \r */
    CHECK_EQ_U(pos_line_break("\r", 1, 0), 1); /* \r at the end */
}

int main(void)
{
    test_line_breaks();
    test_ascii();
    test_multibyte();
    test_invalid_utf8();
    test_roundtrips();
    test_names();
    return check_exit("test_position");
}
