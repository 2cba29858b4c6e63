/* layout.c: the table of generated rows (attach/CMakeLists.txt runs one
 * gen_layout per interpreter and lists its output in attach_layouts.inc). */
#include "layout.h"

const struct attach_layout attach_layouts[] = {
#include "attach_layouts.inc"
    {.major = 0},
};
const size_t attach_nlayouts = sizeof attach_layouts / sizeof attach_layouts[0] - 1;
