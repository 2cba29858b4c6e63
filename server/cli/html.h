/* html: `--html OUT` of hotline run / view, one self-contained HTML report
 * (flame graph, line table, memory footprint, leaks; docs/pictures.md). */
#ifndef HOTLINE_HTML_H
#define HOTLINE_HTML_H

#include "store/profile.h"

/* Where report.html takes the data (a JSON object). */
#define HTML_DATA_MARK "/*HOTLINE_DATA*/"

/* Writes the report of p (borrowed) to path, atomically. 0 or -errno. */
int html_report_save(const struct profile *p, const char *path);

#endif
