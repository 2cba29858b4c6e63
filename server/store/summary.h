/* Profile text for the editor: the share of a record in the whole run, the
 * breakdown of one record (inlay hint tooltips, hovers) and the
 * hotline.showProfile summary. Pure functions of a profile store: no
 * server, no documents (the store layer, beside report.c for the CLI). */
#ifndef HOTLINE_SUMMARY_H
#define HOTLINE_SUMMARY_H

#include <stddef.h>

#include "store/profile.h"

/* Share of st (borrowed) in the whole profile p, 0..100. */
double summary_share(const struct profile *p, const struct agent_stats *st);
/* "12.0% of the run (0.120 s, 12 samples)\n- python ...": the time
 * breakdown, then the memory and GPU measurements st has, into buf. */
void summary_breakdown(const struct profile *p, const struct agent_stats *st, char *buf, size_t n);
/* The showProfile text (new, caller frees; NULL on ENOMEM): header, the
 * record of path:line when both are given (line 1-based, 0: none), top
 * functions and lines. */
char *summary_text(const struct profile *p, const char *path, int line);

#endif
