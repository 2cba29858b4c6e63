/* Text from a profile, a program or another process, made safe to print on
 * a terminal. A saved profile may come from a cloned repository and an
 * attached process may belong to another user: a function name, a path, a
 * source line or an argument that carries ESC ] 0 ; ... (the window title)
 * or ESC [ 2 J (clear screen) must reach the terminal as text, never as a
 * command. Escaped: C0 controls (tab and newline included: they would break
 * a report's line), DEL, the C1 controls U+0080..U+009F (UTF-8 or a raw
 * byte, which a terminal in 8-bit mode takes for CSI), every byte that is
 * not well-formed UTF-8, and the bidirectional controls (U+061C, U+200E,
 * U+200F, U+202A..U+202E, U+2066..U+2069: they reorder what is shown).
 * Bytes become \xNN, code points \uNNNN; the rest (printable UTF-8) passes
 * unchanged. Pure functions. */
#ifndef HOTLINE_TERMSAFE_H
#define HOTLINE_TERMSAFE_H

#include <stddef.h>

/* The longest form of one character (\uNNNN), without a NUL. */
#define TERMSAFE_CHAR_MAX 6

/* One character of s (len > 0 bytes, borrowed): its safe form in out
 * (1..TERMSAFE_CHAR_MAX bytes, no NUL) and its length in *outlen. Returns
 * the bytes of s it stood for (1..4). */
size_t termsafe_char(const char *s, size_t len, char *out, size_t *outlen);

/* The safe form of the NUL-terminated s (borrowed; NULL reads as "")
 * into buf (n > 0 bytes, NUL-terminated; cut before a character that does
 * not fit, "..." marking the cut when n allows). Returns buf. */
char *termsafe_str(char *buf, size_t n, const char *s);

/* A buffer size that holds the safe form of any string of len bytes. */
#define TERMSAFE_SIZE(len) ((len) * (size_t)4 + 1)

#endif
