/* inject_files: what `hotline attach --memory` leaves for the target to
 * find: a private folder (0700, ours) with the socket the agent connects
 * to, and the script that loads the agent, with the Python it runs
 * generated here. 3.14+ (PEP 768) reads agent.py from that folder; 3.9-3.13
 * run gdb's commands from a memfd that gdb reads as /proc/self/fd/3
 * (inject_gdb.h), which queue the same Python (inject.h). When root
 * attaches to another user's process, that user must connect to the
 * socket and read agent.py: those two files are handed to it, and the
 * folder, still root's, becomes 0711 (reach the names, never create,
 * rename or remove one). Nothing root's gdb reads is anywhere that user
 * can write: the folder was once handed over whole with gdb's script in
 * it, and a user who renamed its own file over inject.gdb before gdb read
 * it ran its commands as root. */
#ifndef HOTLINE_INJECT_FILES_H
#define HOTLINE_INJECT_FILES_H

#include <stddef.h>
#include <sys/types.h>

#include "inject.h"

/* 3.14+: the most Python written to the script file the target runs (gdb's
 * page holds INJECT_CODE_MAX): include / exclude patterns beyond are refused */
#define INJECT_REXEC_CODE_MAX 60000

struct inject_files {
    int rexec; /* 3.14+: PEP 768's agent.py; else gdb's memfd */
    char dir[256], sockpath[300], script[300];
    int script_fd; /* gdb's script (a memfd), or -1 */
};

/* The injected agent's configuration: a run's (patterns borrowed; none:
 * the agent's defaults). */
struct inject_config {
    double interval_ms;
    const char *const *include, *const *exclude;
    int ninclude, nexclude;
};

/* The private folder in $TMPDIR (else /tmp) and the names in it: 0, or -1
 * with a sentence in err. inject_files_remove in every case. */
int inject_files_dir(struct inject_files *f, int rexec, char *err, size_t n);

/* The script for t: the Python that imports the agent's package pkg from
 * agent_dir and connects it to f's socket with config c, written where
 * the target (3.14+) or gdb reads it. Nothing happens unless the socket
 * still exists (a late run after we gave up); every error is swallowed
 * (the program must see none). 0; -E2BIG: too long for the injected code
 * (the patterns, when c has some: a usage error; else the agent's path);
 * -1: another failure. A sentence in err either way. */
int inject_files_script(struct inject_files *f, const struct inject_target *t,
                        const char *agent_dir, const char *pkg, const struct inject_config *c,
                        char *err, size_t n);

/* root attaching to another user's process: the socket and agent.py to
 * that user, the folder 0711. 0 (or nothing to do), or -1 with err. */
int inject_files_hand_over(const struct inject_files *f, pid_t pid, char *err, size_t n);

/* Everything removed (the socket, the script, the folder, the memfd). */
void inject_files_remove(struct inject_files *f);

#endif
