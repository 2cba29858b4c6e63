/* layout.c: the table of rows, one per minor version: the committed
 * layouts/3.X.inc, which attach/gen_layouts.sh writes from each version's
 * headers with gen_layout.c (never by hand). A new version: add its file
 * there and its line here. */
#include "layout.h"

const struct attach_layout attach_layouts[] = {
#include "layouts/3.9.inc"
#include "layouts/3.10.inc"
#include "layouts/3.11.inc"
#include "layouts/3.12.inc"
#include "layouts/3.13.inc"
#include "layouts/3.14.inc"
#include "layouts/3.15.inc"
    {.major = 0},
};
const size_t attach_nlayouts = sizeof attach_layouts / sizeof attach_layouts[0] - 1;
