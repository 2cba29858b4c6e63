/* LSP positions: map a column counted in UTF-8 bytes, UTF-16 code units or code points
 * to a byte offset within one line of UTF-8 text, and back. The client picks the
 * encoding at initialize (positionEncoding); LSP's default is UTF-16.
 * Invalid UTF-8 (stray continuation bytes, truncated sequences, overlongs, surrogates,
 * > U+10FFFF): each invalid byte is one character of one unit in every encoding, as if
 * it were U+FFFD. Columns are uint32_t and saturate at UINT32_MAX. Pure code, no I/O. */
#ifndef HOTLINE_PROTOCOL_POSITION_H
#define HOTLINE_PROTOCOL_POSITION_H

#include <stddef.h>
#include <stdint.h>

enum pos_encoding { POS_UTF8, POS_UTF16, POS_UTF32 };

/* A line is given as UTF-8 bytes (borrowed) without its newline. */

/* Length of the line break starting at text[i] (i < len): 2 for "\r\n", 1 for
 * "\n" or a lone "\r" (LSP counts all three as line ends, as Python's own
 * line numbers do), 0 when text[i] ends no line. */
size_t pos_line_break(const char *text, size_t len, size_t i);

/* Map a column in enc to a byte offset in the line. A column past the end clamps to len; a
 * column inside a character (e.g. the 2nd UTF-16 unit of a surrogate pair) rounds down to
 * that character's start. */
size_t pos_col_to_byte(const char *line, size_t len, uint32_t col, enum pos_encoding enc);
/* Map a byte offset to a column in enc (byte inside a character rounds down; past end clamps). */
uint32_t pos_byte_to_col(const char *line, size_t len, size_t byte, enum pos_encoding enc);
/* Length of the line in enc units. */
uint32_t pos_line_units(const char *line, size_t len, enum pos_encoding enc);
/* Parse "utf-8"/"utf-16"/"utf-32" (ASCII case-insensitive) => 0 and *enc; -EINVAL otherwise. */
int pos_encoding_parse(const char *name, enum pos_encoding *enc);
/* Static LSP name of enc ("utf-16"), or NULL if enc is out of range. */
const char *pos_encoding_name(enum pos_encoding enc);
/* Length in bytes (1..4) of the character starting at line[i] (i < len); 1 for an invalid
 * byte. *units (may be NULL) gets its length in enc units. */
size_t pos_char_len(const char *line, size_t len, size_t i, enum pos_encoding enc, uint32_t *units);

#endif
