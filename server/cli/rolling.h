/* rolling: `hotline attach PID --every T --duration S --keep N --json DIR`,
 * a profile of a running service every T, each in a file of its own, the
 * newest N kept (docs/attach.md, "Periodic profiles"). The rounds are
 * cmd_attach.c's; the files, the pruning and the wait between rounds are
 * here. */
#ifndef HOTLINE_CLI_ROLLING_H
#define HOTLINE_CLI_ROLLING_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

/* "30s", "10m", "1h", "500ms", "2.5" (seconds) into *out, within [lo, hi]
 * seconds: 0 or -EINVAL. */
int cli_parse_duration(const char *s, double lo, double hi, double *out);

/* DIR/hotline-PID-YYYYmmddTHHMMSS.mmmZ.json for now (UTC, milliseconds;
 * "-2", "-3" ... when taken), names that sort in time order: 0, or -errno
 * (DIR not a folder, path too long). DIR is made when missing (0700). */
int rolling_path(const char *dir, pid_t pid, char *out, size_t n);

/* Removes all but the newest keep files of pid's rolling profiles in dir
 * (only names rolling_path makes): the number removed, or -errno. */
int rolling_prune(const char *dir, pid_t pid, int keep);

/* Sleeps until the monotonic clock (attach_mono) reaches until: 0; 1 when
 * *stop was set meanwhile; 2 when pid is gone or is another process than
 * the one started at start0 (procfs_gone). */
int rolling_wait(double until, volatile sig_atomic_t *stop, pid_t pid, unsigned long long start0);

#endif
