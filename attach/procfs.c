/* procfs: the /proc files of a process, read and parsed once (procfs.h). */
#include "procfs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROCFS_ROOT "/proc"

static const char *root_of(const char *root)
{
    return root && *root ? root : PROCFS_ROOT;
}

/* Up to n - 1 bytes of path into buf, NUL added: the count, or -errno. */
static long read_small(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f) return -errno;
    size_t got = fread(buf, 1, n - 1, f);
    fclose(f);
    buf[got] = 0;
    return (long)got;
}

static int is_number(const char *s)
{
    if (!*s) return 0;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s)) return 0;
    return 1;
}

char procfs_stat_parse(const char *text, struct procfs_stat *ps, char *comm, size_t ncomm)
{
    const char *lp = strchr(text, '('), *rp = strrchr(text, ')'); /* comm may hold either */
    if (!lp || !rp || rp < lp || rp[1] != ' ' || !rp[2]) return 0;
    if (comm && ncomm) {
        size_t cl = (size_t)(rp - lp - 1);
        if (cl >= ncomm) cl = ncomm - 1;
        memcpy(comm, lp + 1, cl);
        comm[cl] = 0;
    }
    if (ps) { /* fields 4 (ppid), 22 (starttime), 48 (arg_start), counted from 1 */
        unsigned long long fld[49] = {0};
        char *p = (char *)rp + 3;
        for (int i = 4; i <= 48 && *p; i++)
            fld[i] = strtoull(p, &p, 10);
        ps->ppid = (pid_t)fld[4];
        ps->start = fld[22];
        ps->arg_start = fld[48];
    }
    return rp[2];
}

int procfs_gone(char state, const struct procfs_stat *ps, unsigned long long start0)
{
    if (state == 0 || state == 'Z' || state == 'X') return 1;
    return start0 && ps->start != start0;
}

char procfs_stat(const char *root, pid_t pid, struct procfs_stat *ps, char *comm, size_t ncomm)
{
    char path[PATH_MAX], buf[1024];
    snprintf(path, sizeof path, "%s/%d/stat", root_of(root), (int)pid);
    if (read_small(path, buf, sizeof buf) < 0) return 0;
    return procfs_stat_parse(buf, ps, comm, ncomm);
}

char procfs_state(const char *root, pid_t pid)
{
    return procfs_stat(root, pid, NULL, NULL, 0);
}

int procfs_alive(const char *root, pid_t pid, char *why, size_t n)
{
    char st = pid > 0 ? procfs_state(root, pid) : 0;
    if (!st || st == 'X') {
        snprintf(why, n, "no such process: %d", (int)pid);
        return -ESRCH;
    }
    if (st == 'Z') {
        snprintf(why, n, "process %d has exited (a zombie waiting for its parent)", (int)pid);
        return -ESRCH;
    }
    return st;
}

char procfs_task(const char *root, pid_t pid, long tid, double *cpu)
{
    char path[PATH_MAX], buf[512];
    snprintf(path, sizeof path, "%s/%d/task/%ld/schedstat", root_of(root), (int)pid, tid);
    unsigned long long ns = 0;
    if (read_small(path, buf, sizeof buf) < 0 || sscanf(buf, "%llu", &ns) != 1) return 0;
    snprintf(path, sizeof path, "%s/%d/task/%ld/stat", root_of(root), (int)pid, tid);
    if (read_small(path, buf, sizeof buf) < 0) return 0;
    char *p = strrchr(buf, ')');
    *cpu = (double)ns * 1e-9;
    return p && p[1] == ' ' ? p[2] : '?';
}

int procfs_comm(const char *root, pid_t pid, long tid, char *out, size_t n)
{
    char path[PATH_MAX];
    if (tid)
        snprintf(path, sizeof path, "%s/%d/task/%ld/comm", root_of(root), (int)pid, tid);
    else
        snprintf(path, sizeof path, "%s/%d/comm", root_of(root), (int)pid);
    long r = read_small(path, out, n);
    if (r < 0) {
        out[0] = 0;
        return (int)r;
    }
    out[strcspn(out, "\n")] = 0;
    return 0;
}

long procfs_cmdline(const char *root, pid_t pid, char *buf, size_t n)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%d/cmdline", root_of(root), (int)pid);
    long r = read_small(path, buf, n);
    if (r < 0) buf[0] = 0;
    return r;
}

void procfs_cmdline_line(const char *root, pid_t pid, char *buf, size_t n)
{
    char raw[512];
    long r = procfs_cmdline(root, pid, raw, sizeof raw);
    size_t l = r > 0 ? (size_t)r : 0;
    while (l > 0 && raw[l - 1] == 0)
        l--;
    raw[l] = 0;
    for (size_t i = 0; i < l; i++)
        if (raw[i] == 0 || !isprint((unsigned char)raw[i])) raw[i] = ' ';
    if (!l) snprintf(raw, sizeof raw, "?");
    if (strlen(raw) < n) {
        snprintf(buf, n, "%s", raw);
    } else {
        snprintf(buf, n, "%.*s...", (int)(n - 4), raw);
    }
}

void procfs_script(const char *args, size_t len, const char *cwd, char *out, size_t n)
{
    out[0] = 0;
    for (size_t i = 0; i < len; i += strlen(args + i) + 1) {
        const char *arg = args + i;
        size_t al = strlen(arg);
        if (al > 3 && !strcmp(arg + al - 3, ".py")) {
            snprintf(out, n, "%s%s%s", arg[0] == '/' ? "" : cwd, arg[0] == '/' ? "" : "/", arg);
            return;
        }
    }
}

static int read_link(const char *root, pid_t pid, const char *what, char *out, size_t n)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%d/%s", root_of(root), (int)pid, what);
    ssize_t l = readlink(path, out, n - 1);
    int err = l < 0 ? -errno : 0;
    out[l > 0 ? l : 0] = 0;
    return err;
}

int procfs_exe(const char *root, pid_t pid, char *out, size_t n)
{
    return read_link(root, pid, "exe", out, n);
}

int procfs_cwd(const char *root, pid_t pid, char *out, size_t n)
{
    return read_link(root, pid, "cwd", out, n);
}

int procfs_owner(const char *root, pid_t pid, uid_t *uid, gid_t *gid)
{
    char path[PATH_MAX];
    struct stat st;
    snprintf(path, sizeof path, "%s/%d", root_of(root), (int)pid);
    if (stat(path, &st) != 0) return -errno;
    *uid = st.st_uid;
    *gid = st.st_gid;
    return 0;
}

long procfs_tracer(const char *root, pid_t pid)
{
    char path[PATH_MAX], line[256];
    long tracer = 0;
    snprintf(path, sizeof path, "%s/%d/status", root_of(root), (int)pid);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "TracerPid: %ld", &tracer) == 1) break;
    if (f) fclose(f);
    return tracer;
}

int procfs_tasks(const char *root, pid_t pid, long *tids, int max)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%d/task", root_of(root), (int)pid);
    DIR *d = opendir(path);
    if (!d) return -errno;
    int n = 0;
    struct dirent *e;
    while (n < max && (e = readdir(d)))
        if (is_number(e->d_name)) tids[n++] = atol(e->d_name);
    closedir(d);
    return n;
}

int procfs_task_exists(const char *root, pid_t pid, long tid)
{
    char path[PATH_MAX];
    struct stat st;
    snprintf(path, sizeof path, "%s/%d/task/%ld", root_of(root), (int)pid, tid);
    return stat(path, &st) == 0;
}

int procfs_each_pid(const char *root, int (*cb)(pid_t pid, void *data), void *data)
{
    DIR *d = opendir(root_of(root));
    struct dirent *e;
    int rc = 0;
    while (!rc && d && (e = readdir(d)))
        if (is_number(e->d_name)) rc = cb((pid_t)atoi(e->d_name), data);
    if (d) closedir(d);
    return rc;
}

int procfs_each_child(const char *root, pid_t pid, int (*cb)(pid_t child, void *data), void *data)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%d/task", root_of(root), (int)pid);
    DIR *d = opendir(path);
    struct dirent *e;
    int rc = 0;
    while (!rc && d && (e = readdir(d))) {
        if (!is_number(e->d_name)) continue;
        char cp[PATH_MAX + 300], buf[4096];
        snprintf(cp, sizeof cp, "%s/%s/children", path, e->d_name);
        if (read_small(cp, buf, sizeof buf) < 0) buf[0] = 0;
        for (char *p = buf, *q; *p && !rc; p = q) {
            long c = strtol(p, &q, 10);
            if (q == p) break;
            if (c > 0) rc = cb((pid_t)c, data);
        }
    }
    if (d) closedir(d);
    return rc;
}

int procfs_has_children_files(const char *root)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%d/task/%d/children", root_of(root), (int)getpid(),
             (int)getpid());
    return access(path, R_OK) == 0;
}
