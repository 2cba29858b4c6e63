/* attach/procfs.c against a fake procfs tree made here: every file the
 * out-of-process profiler reads about a process (stat with a hostile comm,
 * a thread's stat / schedstat / comm, cmdline, exe and cwd, status'
 * TracerPid, the task list, each thread's children, the process list),
 * and the answers when a file is missing (the process exited). */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "procfs.h"

static char root[256];

static void put(const char *rel, const char *text, size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) { /* mkdir -p */
        *p = 0;
        mkdir(path, 0755);
        *p = '/';
    }
    FILE *f = fopen(path, "w");
    if (!f || fwrite(text, 1, len, f) != len) CHECK_FAIL("cannot write %s", path);
    if (f) fclose(f);
}

static void puts_(const char *rel, const char *text)
{
    put(rel, text, strlen(text));
}

/* A stat line: pid, comm, state, then fields 4..52 with ppid, start time
 * (22) and arg_start (48) set. */
static void stat_file(const char *rel, int pid, const char *comm, char state, int ppid,
                      unsigned long long start)
{
    char buf[1024];
    int o = snprintf(buf, sizeof buf, "%d (%s) %c", pid, comm, state);
    for (int f = 4; f <= 52; f++)
        o += snprintf(buf + o, sizeof buf - (size_t)o, " %llu",
                      f == 4    ? (unsigned long long)ppid
                      : f == 22 ? start
                      : f == 48 ? 0x7ffd0000ull + (unsigned)pid
                                : (unsigned long long)f);
    snprintf(buf + o, sizeof buf - (size_t)o, "\n");
    puts_(rel, buf);
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

struct seen {
    pid_t pids[16];
    int n, stop_at;
};

static int collect(pid_t pid, void *data)
{
    struct seen *s = data;
    if (s->n < 16) s->pids[s->n++] = pid;
    return s->stop_at && s->n == s->stop_at ? 99 : 0;
}

static int has(const struct seen *s, pid_t pid)
{
    for (int i = 0; i < s->n; i++)
        if (s->pids[i] == pid) return 1;
    return 0;
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/hotline-procfs-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(root)) {
        CHECK_FAIL("mkdtemp: %s", strerror(errno));
        return check_exit("attach_procfs");
    }
    char rel[128], link[512];
    /* process 100: a Python with two threads; 101 lists children */
    stat_file("100/stat", 100, "py) (x y", 'S', 1, 5555);
    static const char cmd[] = "python3\0main.py\0--flag\0";
    put("100/cmdline", cmd, sizeof cmd - 1);
    puts_("100/comm", "py) (x y\n");
    puts_("100/status", "Name:\tpy\nState:\tt (tracing stop)\nTracerPid:\t42\nUid:\t0\n");
    stat_file("100/task/100/stat", 100, "py", 'R', 1, 5555);
    puts_("100/task/100/schedstat", "1500000000 20 3\n");
    puts_("100/task/100/children", "202 ");
    stat_file("100/task/101/stat", 101, "worker", 'S', 1, 5556);
    puts_("100/task/101/schedstat", "2000 0 0\n");
    puts_("100/task/101/comm", "worker\n");
    puts_("100/task/101/children", "200 201");
    snprintf(link, sizeof link, "%s/100/exe", root);
    CHECK(symlink("/usr/bin/python3.11", link) == 0);
    snprintf(link, sizeof link, "%s/100/cwd", root);
    CHECK(symlink("/srv/app", link) == 0);
    stat_file("200/stat", 200, "python3", 'R', 100, 6000);
    stat_file("201/stat", 201, "sh", 'Z', 100, 6001);
    stat_file("202/stat", 202, "python3", 'S', 100, 6002);
    stat_file("7/stat", 7, "init", 'S', 0, 1);
    puts_("sys/kernel/pid_max", "4194304\n"); /* not a process */
    snprintf(rel, sizeof rel, "%d/task/%d/children", (int)getpid(), (int)getpid());
    puts_(rel, "");

    /* stat */
    struct procfs_stat ps;
    char comm[32];
    CHECK_EQ(procfs_stat(root, 100, &ps, comm, sizeof comm), 'S');
    CHECK_EQ(ps.ppid, 1);
    CHECK_EQ_U(ps.start, 5555);
    CHECK_EQ_U(ps.arg_start, 0x7ffd0000ull + 100);
    CHECK_STR(comm, "py) (x y");
    CHECK_EQ(procfs_state(root, 201), 'Z');
    CHECK_EQ(procfs_state(root, 999), 0); /* gone */
    CHECK_EQ(procfs_gone(procfs_stat(root, 100, &ps, NULL, 0), &ps, 5555), 0);
    CHECK_EQ(procfs_gone(procfs_stat(root, 100, &ps, NULL, 0), &ps, 5554), 1); /* reused pid */
    CHECK_EQ(procfs_gone(procfs_stat(root, 999, &ps, NULL, 0), &ps, 5555), 1);

    /* a thread's state and CPU */
    double cpu = -1;
    CHECK_EQ(procfs_task(root, 100, 100, &cpu), 'R');
    CHECK_NEAR(cpu, 1.5, 1e-12);
    CHECK_EQ(procfs_task(root, 100, 101, &cpu), 'S');
    CHECK_NEAR(cpu, 2e-6, 1e-15);
    cpu = -1;
    CHECK_EQ(procfs_task(root, 100, 102, &cpu), 0); /* an ended thread */
    CHECK_NEAR(cpu, -1, 0);

    /* comm of the process and of a thread, newline gone */
    char name[32];
    CHECK_EQ(procfs_comm(root, 100, 0, name, sizeof name), 0);
    CHECK_STR(name, "py) (x y");
    CHECK_EQ(procfs_comm(root, 100, 101, name, sizeof name), 0);
    CHECK_STR(name, "worker");
    CHECK_EQ(procfs_comm(root, 100, 100, name, sizeof name), -ENOENT);
    CHECK_STR(name, "");

    /* cmdline: raw, for a person, cut, and the main script */
    char buf[256];
    CHECK_EQ(procfs_cmdline(root, 100, buf, sizeof buf), (long)sizeof cmd - 1);
    CHECK_STR(buf + 8, "main.py");
    CHECK_EQ(procfs_cmdline(root, 999, buf, sizeof buf), -ENOENT);
    procfs_cmdline_line(root, 100, buf, sizeof buf);
    CHECK_STR(buf, "python3 main.py --flag");
    procfs_cmdline_line(root, 100, buf, 12);
    CHECK_STR(buf, "python3 ...");
    procfs_cmdline_line(root, 999, buf, sizeof buf);
    CHECK_STR(buf, "?");
    char script[256];
    procfs_script(cmd, sizeof cmd - 1, "/srv/app", script, sizeof script);
    CHECK_STR(script, "/srv/app/main.py");
    static const char abs_cmd[] = "python3\0-u\0/opt/x.py\0";
    procfs_script(abs_cmd, sizeof abs_cmd - 1, "/srv/app", script, sizeof script);
    CHECK_STR(script, "/opt/x.py");
    procfs_script("python3\0-c\0", 11, "/srv/app", script, sizeof script);
    CHECK_STR(script, "");

    /* links, owner, tracer */
    CHECK_EQ(procfs_exe(root, 100, buf, sizeof buf), 0);
    CHECK_STR(buf, "/usr/bin/python3.11");
    CHECK_EQ(procfs_cwd(root, 100, buf, sizeof buf), 0);
    CHECK_STR(buf, "/srv/app");
    CHECK_EQ(procfs_exe(root, 200, buf, sizeof buf), -ENOENT);
    CHECK_STR(buf, "");
    uid_t uid = 12345;
    gid_t gid = 12345;
    CHECK_EQ(procfs_owner(root, 100, &uid, &gid), 0);
    CHECK_EQ(uid, getuid());
    CHECK_EQ(procfs_owner(root, 999, &uid, &gid), -ENOENT);
    CHECK_EQ(procfs_tracer(root, 100), 42);
    CHECK_EQ(procfs_tracer(root, 200), 0);

    /* tasks */
    long tids[4];
    int nt = procfs_tasks(root, 100, tids, 4);
    CHECK_EQ(nt, 2);
    CHECK(nt == 2 && tids[0] + tids[1] == 201 && (tids[0] == 100 || tids[0] == 101));
    CHECK_EQ(procfs_tasks(root, 100, tids, 1), 1); /* at most max */
    CHECK_EQ(procfs_tasks(root, 999, tids, 4), -ENOENT);
    CHECK_EQ(procfs_task_exists(root, 100, 101), 1);
    CHECK_EQ(procfs_task_exists(root, 100, 102), 0);

    /* the process list: numbered folders only; a non-zero answer stops it */
    struct seen all = {.n = 0};
    CHECK_EQ(procfs_each_pid(root, collect, &all), 0);
    CHECK_EQ(all.n, 6);
    CHECK(has(&all, 7) && has(&all, 100) && has(&all, 200) && has(&all, 201) && has(&all, 202) &&
          has(&all, getpid()));
    struct seen two = {.n = 0, .stop_at = 2};
    CHECK_EQ(procfs_each_pid(root, collect, &two), 99);
    CHECK_EQ(two.n, 2);

    /* each thread's children */
    struct seen kids = {.n = 0};
    CHECK_EQ(procfs_each_child(root, 100, collect, &kids), 0);
    CHECK_EQ(kids.n, 3);
    CHECK(has(&kids, 200) && has(&kids, 201) && has(&kids, 202));
    struct seen none = {.n = 0};
    CHECK_EQ(procfs_each_child(root, 999, collect, &none), 0);
    CHECK_EQ(none.n, 0);
    CHECK_EQ(procfs_has_children_files(root), 1);
    snprintf(link, sizeof link, "%s/%d/task/%d/children", root, (int)getpid(), (int)getpid());
    unlink(link);
    CHECK_EQ(procfs_has_children_files(root), 0);

    /* NULL is the real /proc: our own process */
    CHECK(procfs_stat(NULL, getpid(), &ps, comm, sizeof comm) == 'R');
    CHECK_EQ(ps.ppid, getppid());

    nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    return check_exit("attach_procfs");
}
