/* Subcommands of the `hotline` executable. Each takes the arguments after its
 * own name (argv[0] is the subcommand) and returns the process exit status. */
#ifndef HOTLINE_CLI_H
#define HOTLINE_CLI_H

int cmd_run(int argc, char **argv);    /* server/cli/cmd_run.c */
int cmd_view(int argc, char **argv);   /* server/cli/cmd_view.c */
int cmd_attach(int argc, char **argv); /* server/cli/cmd_attach.c */
int cmd_diff(int argc, char **argv);   /* server/cli/cmd_diff.c (store/compare.c pairs) */
int cmd_check(int argc, char **argv);
int cmd_top(int argc, char **argv); /* server/cli/cmd_check.c */
int cmd_lsp(int argc, char **argv); /* server/cli/cmd_lsp.c (core/lsp_stdio.c serves) */

/* The exit status of an error opening a target (attach/attach.h codes):
 * 3 no such process, 4 not Python, 5 unsupported version, 6 not
 * permitted, else 1 (docs/cli.md). server/cli/cmd_attach.c; attach
 * --memory adds its own codes on top. */
int cli_attach_status(int rc);

#endif
