/* load: what `hotline view`, `diff` and `check` read (see load.h). */
#include "cli/load.h"

#include <stdio.h>

#include "store/load_any.h"

struct profile *cli_load_profile(const char *who, const char *path, char *err, size_t errlen)
{
    int bad = 0;
    /* flags 0: a file named on the command line may be a symlink or a pipe */
    struct profile *p = profile_load_any(path, 0, NULL, &bad, err, errlen);
    if (bad) fprintf(stderr, "%s: %d malformed line(s) skipped\n", who, bad);
    return p;
}
