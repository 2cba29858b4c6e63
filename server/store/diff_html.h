/* diff_html: `hotline diff --html OUT`, two profiles on one self-contained
 * page (no network, no script): a differential flame graph of the new
 * profile coloured by each frame's change against the old one, the frames
 * only the old profile has, and the function and line tables of the text
 * diff (docs/cli.md, hotline diff).
 *
 * The flame graph merges each profile's stacks into a tree by frame: the
 * frame's file, paired across the two profiles the way compare.h pairs
 * files (cmp_pair_paths over the files the stacks name), and its qualified
 * function name, never its line, so that a run from another folder or
 * after an edit above the code lines up. A node is as wide as its new
 * seconds; red is slower, blue faster, by how much relatively; a node only
 * the new profile has is "new". Nodes under DIFF_HTML_MIN_SHARE of the
 * whole are merged into one "other" box per parent. */
#ifndef HOTLINE_DIFF_HTML_H
#define HOTLINE_DIFF_HTML_H

#include <stdio.h>

#include "store/compare.h"
#include "store/profile.h"

#define DIFF_HTML_MIN_SHARE 0.001 /* of the new total: narrower nodes merge into "other" */
#define DIFF_HTML_MAX_BOXES 5000  /* boxes drawn at most; the rest is counted on the page */
#define DIFF_HTML_GONE_ROWS 50    /* rows of the table of frames only the old profile has */
#define DIFF_HTML_SAME 0.05       /* a relative change under this reads as unchanged */

/* What the page shows: the two profiles and their pairing (borrowed), the
 * names the user gave them (shown on the page), and rows per table. */
struct diff_html {
    const struct profile *old, *cur;
    const struct cmp_result *r;
    const char *old_name, *new_name;
    int rows;
};

/* The page into f. 0, -ENOMEM or -EIO. */
int diff_html_write(FILE *f, const struct diff_html *d);
/* The page to path, as profile_save writes (atomically). 0 or -errno. */
int diff_html_save(const struct diff_html *d, const char *path);

#endif
