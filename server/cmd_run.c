/* Placeholder until the run/view session lands. */
#include <stdio.h>
#include "cli.h"
int cmd_run(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fputs("hotline: 'run' is not available yet\n", stderr);
    return 2;
}
int cmd_view(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fputs("hotline: 'view' is not available yet\n", stderr);
    return 2;
}
