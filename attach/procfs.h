/* procfs: every /proc file the out-of-process profiler reads about a
 * process, parsed here once: stat (state, parent, start time, arg_start,
 * comm), a thread's stat / schedstat / comm, cmdline, the exe and cwd
 * links, the task list, each thread's children, the process list, status'
 * TracerPid and the owner. Every function takes the procfs root (NULL:
 * "/proc") so that a test can point it at a fake tree it made
 * (tests/attach/test_procfs.c). Reads are bounded and a file that is gone
 * (the process exited) is an answer, never an error printed. No jansson,
 * no libuv; server/ may use it (proc/pylist.c does), never the reverse. */
#ifndef HOTLINE_PROCFS_H
#define HOTLINE_PROCFS_H

#include <stddef.h>
#include <sys/types.h>

/* /proc/PID/stat's fields that tell a process apart: its parent, start
 * time (field 22, clock ticks since boot: a pid reused is another start
 * time) and where its arguments start (field 48: a new stack at each exec,
 * placed at random, so an exec changes it). */
struct procfs_stat {
    pid_t ppid;
    unsigned long long start, arg_start;
};

/* The state letter of the text of a /proc/PID/stat (0: not one), its
 * fields in ps and its comm (cut to ncomm) when each is not NULL. */
char procfs_stat_parse(const char *text, struct procfs_stat *ps, char *comm, size_t ncomm);

/* 1 when the process read (its state letter and ps, as parsed above) is not
 * the one attached at start time start0 any more: no such pid (state 0), a
 * zombie or dead, or another process at the same pid (another start time:
 * the target exited and its pid was given to a new one). start0 0: not
 * known, not compared. */
int procfs_gone(char state, const struct procfs_stat *ps, unsigned long long start0);

/* ROOT/PID/stat read and parsed (procfs_stat_parse): its state letter, 0
 * when there is no such process. */
char procfs_stat(const char *root, pid_t pid, struct procfs_stat *ps, char *comm, size_t ncomm);
/* The state letter alone ('Z' zombie, 'T' stopped, 't' traced, 0 none). */
char procfs_state(const char *root, pid_t pid);
/* Whether pid can be attached to at all: -ESRCH with the reason in why (no
 * such process, or a zombie), else its state letter. */
int procfs_alive(const char *root, pid_t pid, char *why, size_t n);

/* Thread tid of pid: its state letter (ROOT/PID/task/TID/stat) and its CPU
 * seconds so far (schedstat, which moves at scheduler ticks) in *cpu; 0
 * when it is gone (then *cpu is untouched). */
char procfs_task(const char *root, pid_t pid, long tid, double *cpu);

/* The comm of thread tid of pid (tid 0: the process's own), newline
 * removed, into out: 0, or -errno with out "". */
int procfs_comm(const char *root, pid_t pid, long tid, char *out, size_t n);

/* ROOT/PID/cmdline as it is (arguments each ended by a NUL) into buf (cap
 * n, NUL added): the bytes read, or -errno. */
long procfs_cmdline(const char *root, pid_t pid, char *buf, size_t n);
/* The same for a person: arguments joined by spaces, unprintable bytes as
 * spaces, cut to fit ("..." at the end when cut); "?" when unreadable. */
void procfs_cmdline_line(const char *root, pid_t pid, char *buf, size_t n);
/* The main script in a cmdline (args, len bytes, as procfs_cmdline gives):
 * the first argument ending in ".py", joined to cwd when relative, into
 * out (cap n; "" when none). */
void procfs_script(const char *args, size_t len, const char *cwd, char *out, size_t n);

/* Where ROOT/PID/exe and ROOT/PID/cwd point: 0, or -errno with out "". */
int procfs_exe(const char *root, pid_t pid, char *out, size_t n);
int procfs_cwd(const char *root, pid_t pid, char *out, size_t n);

/* The owner of ROOT/PID: 0, or -errno. */
int procfs_owner(const char *root, pid_t pid, uid_t *uid, gid_t *gid);
/* status' TracerPid: the debugger tracing pid, 0 when none or unreadable. */
long procfs_tracer(const char *root, pid_t pid);

/* The threads of pid (ROOT/PID/task): fills tids[0..ret), at most max;
 * negative -errno when the folder does not open. */
int procfs_tasks(const char *root, pid_t pid, long *tids, int max);
/* 1 when ROOT/PID/task/TID exists. */
int procfs_task_exists(const char *root, pid_t pid, long tid);

/* Each process in ROOT (folders named by a number), cb(pid, data) for
 * each until it returns non-zero: that value, or 0. */
int procfs_each_pid(const char *root, int (*cb)(pid_t pid, void *data), void *data);
/* Each child of each thread of pid (ROOT/PID/task/TID/children, the
 * kernel's CONFIG_PROC_CHILDREN), likewise. */
int procfs_each_child(const char *root, pid_t pid, int (*cb)(pid_t child, void *data), void *data);
/* 1 when the kernel lists children per thread (our own
 * ROOT/SELF/task/SELF/children reads), else 0: then only a scan of every
 * process's parent finds them. */
int procfs_has_children_files(const char *root);

#endif
