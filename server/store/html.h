/* html: `--html OUT` of hotline run / view, one self-contained HTML report
 * (flame graph, line table, memory footprint, leaks; docs/pictures.md). */
#ifndef HOTLINE_HTML_H
#define HOTLINE_HTML_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "store/profile.h"

/* Where report.html takes the data (a JSON object). */
#define HTML_DATA_MARK "/*HOTLINE_DATA*/"

/* New reference: the page's data for p (borrowed): program, samples,
 * elapsed_s, totals, peak_mb, memory_timeline, speedscope, lines, leaks.
 * NULL on ENOMEM. The flame-graph view sends it to a page already open. */
json_t *html_report_data(const struct profile *p);
/* New (malloc) page with p's data in it, NUL-terminated, its length in
 * *len (may be NULL); NULL on ENOMEM or a template without the mark. */
char *html_report_page(const struct profile *p, size_t *len);
/* s (a path or a name from a profile) into f as HTML text or a quoted
 * attribute's value: & < > " ' as character references, so that a
 * function named "<script>" stays text. Pages written in C (`hotline diff
 * --html`) use it; report.html escapes the same way in its script (esc). */
void html_put_text(FILE *f, const char *s);
/* Writes the report of p (borrowed) to path, atomically. 0 or -errno. */
int html_report_save(const struct profile *p, const char *path);

#endif
