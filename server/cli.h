/* Subcommands of the `hotline` executable. Each takes the arguments after its
 * own name (argv[0] is the subcommand) and returns the process exit status. */
#ifndef HOTLINE_CLI_H
#define HOTLINE_CLI_H

int cmd_lsp(int argc, char **argv);  /* server/lsp_main.c */
int cmd_run(int argc, char **argv);  /* server/cmd_run.c */
int cmd_view(int argc, char **argv); /* server/cmd_view.c */

#endif
