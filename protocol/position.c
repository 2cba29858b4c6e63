/* UTF-8 <-> LSP column mapping. One decoder (pos_char_len) walks the line a character at a
 * time; the three public mappings are linear scans over it. Lines are short enough that a
 * scan is cheaper than keeping an index in sync with edits. */
#include "position.h"

#include <errno.h>

static int is_cont(unsigned char b)
{
    return (b & 0xC0) == 0x80;
}

/* Length of a well-formed UTF-8 sequence at s[0..n), or 0 if the lead byte does not start
 * one. Second-byte ranges exclude overlongs (E0, F0), surrogates (ED) and > U+10FFFF (F4). */
static size_t valid_seq(const unsigned char *s, size_t n)
{
    unsigned char b = s[0], lo = 0x80, hi = 0xBF;
    size_t need;

    if (b < 0x80) return 1;
    if (b >= 0xC2 && b <= 0xDF)
        need = 2;
    else if (b >= 0xE0 && b <= 0xEF)
        need = 3;
    else if (b >= 0xF0 && b <= 0xF4)
        need = 4;
    else
        return 0;
    if (b == 0xE0) lo = 0xA0;
    if (b == 0xED) hi = 0x9F;
    if (b == 0xF0) lo = 0x90;
    if (b == 0xF4) hi = 0x8F;
    if (n < need || s[1] < lo || s[1] > hi) return 0;
    for (size_t k = 2; k < need; k++)
        if (!is_cont(s[k])) return 0;
    return need;
}

size_t pos_char_len(const char *line, size_t len, size_t i, enum pos_encoding enc, uint32_t *units)
{
    size_t n = valid_seq((const unsigned char *)line + i, len - i);
    uint32_t u;

    if (n == 0) n = 1; /* invalid byte: one character, one unit everywhere */
    if (enc == POS_UTF8)
        u = (uint32_t)n;
    else if (enc == POS_UTF16)
        u = n == 4 ? 2 : 1;
    else
        u = 1;
    if (units) *units = u;
    return n;
}

static uint32_t sat_add(uint32_t a, uint32_t b)
{
    return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

size_t pos_col_to_byte(const char *line, size_t len, uint32_t col, enum pos_encoding enc)
{
    size_t i = 0;
    uint32_t acc = 0, u;

    while (i < len) {
        size_t n = pos_char_len(line, len, i, enc, &u);
        if (acc == col || (uint64_t)acc + u > col) return i;
        acc += u;
        i += n;
    }
    return len;
}

uint32_t pos_byte_to_col(const char *line, size_t len, size_t byte, enum pos_encoding enc)
{
    size_t i = 0;
    uint32_t acc = 0, u;

    while (i < len) {
        size_t n = pos_char_len(line, len, i, enc, &u);
        if (byte < i + n) return acc;
        acc = sat_add(acc, u);
        i += n;
    }
    return acc;
}

uint32_t pos_line_units(const char *line, size_t len, enum pos_encoding enc)
{
    return pos_byte_to_col(line, len, len, enc);
}

static int name_eq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char c = (*a >= 'A' && *a <= 'Z') ? (char)(*a + 32) : *a;
        if (c != *b) return 0;
    }
    return *a == *b;
}

size_t pos_line_break(const char *text, size_t len, size_t i)
{
    if (text[i] == '\n') return 1;
    if (text[i] != '\r') return 0;
    return i + 1 < len && text[i + 1] == '\n' ? 2 : 1;
}

int pos_encoding_parse(const char *name, enum pos_encoding *enc)
{
    static const enum pos_encoding all[] = {POS_UTF8, POS_UTF16, POS_UTF32};

    if (!name) return -EINVAL;
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
        if (name_eq(name, pos_encoding_name(all[k]))) {
            if (enc) *enc = all[k];
            return 0;
        }
    }
    return -EINVAL;
}

const char *pos_encoding_name(enum pos_encoding enc)
{
    switch (enc) {
    case POS_UTF8:
        return "utf-8";
    case POS_UTF16:
        return "utf-16";
    case POS_UTF32:
        return "utf-32";
    }
    return NULL;
}
