/* Subcommands of the `hotline` executable. Each takes the arguments after its
 * own name (argv[0] is the subcommand) and returns the process exit status. */
#ifndef HOTLINE_CLI_H
#define HOTLINE_CLI_H

int cmd_run(int argc, char **argv);    /* server/cli/cmd_run.c */
int cmd_view(int argc, char **argv);   /* server/cli/cmd_view.c */
int cmd_attach(int argc, char **argv); /* server/cli/cmd_attach.c */
int cmd_lsp(int argc, char **argv);    /* server/cli/cmd_lsp.c (core/lsp_stdio.c serves) */

#endif
