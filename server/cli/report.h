/* report: the text report `hotline run` and `hotline view` print: a header
 * (program, Python, elapsed, samples, how it ended), the hottest lines with
 * their python/native/system split and source text, and a per-function
 * summary. Fixed-width, meant for a terminal's stderr; every text taken
 * from the profile or the sources is escaped (text/termsafe.h). */
#ifndef HOTLINE_REPORT_H
#define HOTLINE_REPORT_H

#include <stdio.h>

#include "store/profile.h"

#define REPORT_DEFAULT_TOP 10
#define REPORT_SOURCE_WIDTH 60 /* characters of source text shown per line */

/* Print the report of p (borrowed) to out. top: lines/functions shown.
 * cwd (may be NULL): paths under it are shown relative to it. */
void report_print(FILE *out, const struct profile *p, int top, const char *cwd);

/* Line `line` (1-based) of the regular file at path, leading/trailing blanks
 * trimmed, cut to width characters (UTF-8 aware) into buf, escaped
 * (text/termsafe.h: up to TERMSAFE_CHAR_MAX bytes a character). Returns 0, or -errno when
 * the file cannot be read / has no such line (buf is then ""). */
int report_source_line(const char *path, int line, int width, char *buf, size_t n);

#endif
