/* procfs_stat_parse and procfs_gone: the decision `hotline attach`
 * makes on every tick (attach/sampler.c) from the text
 * of /proc/PID/stat: a zombie, no such pid, or the same pid with another
 * start time (the target exited and a new process got its pid) is gone;
 * the attached process, exec'd or not, is not. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"
#include "check.h"

/* A stat line: pid, comm, state, then fields 4..52 with ppid, start time
 * (22) and arg_start (48) set */
static void stat_line(char *buf, size_t n, const char *comm, char state, int ppid,
                      unsigned long long start, unsigned long long arg_start)
{
    int o = snprintf(buf, n, "4242 (%s) %c", comm, state);
    for (int f = 4; f <= 52; f++)
        o += snprintf(buf + o, n - (size_t)o, " %llu",
                      f == 4    ? (unsigned long long)ppid
                      : f == 22 ? start
                      : f == 48 ? arg_start
                                : (unsigned long long)f);
    snprintf(buf + o, n - (size_t)o, "\n");
}

int main(void)
{
    char line[1024], comm[32];
    struct procfs_stat ps;

    /* fields by position, a comm holding ") (" and spaces */
    stat_line(line, sizeof line, "py) (x y", 'S', 17, 123456, 0x7ffd1000);
    CHECK_EQ(procfs_stat_parse(line, &ps, comm, sizeof comm), 'S');
    CHECK(ps.ppid == 17 && ps.start == 123456 && ps.arg_start == 0x7ffd1000);
    CHECK(strcmp(comm, "py) (x y") == 0);
    CHECK_EQ(procfs_stat_parse("garbage", &ps, NULL, 0), 0);
    CHECK_EQ(procfs_stat_parse("1 (x)", &ps, NULL, 0), 0);

    /* the decision */
    CHECK_EQ(procfs_gone('S', &ps, 123456), 0); /* the same process */
    CHECK_EQ(procfs_gone('R', &ps, 0), 0);      /* start not known: not compared */
    CHECK_EQ(procfs_gone('Z', &ps, 123456), 1); /* a zombie */
    CHECK_EQ(procfs_gone('X', &ps, 123456), 1);
    CHECK_EQ(procfs_gone(0, &ps, 123456), 1); /* no such pid */
    /* an exec keeps the start time (arg_start moves): still the target */
    stat_line(line, sizeof line, "python3", 'R', 17, 123456, 0x7ffe2000);
    char st = procfs_stat_parse(line, &ps, NULL, 0);
    CHECK_EQ(procfs_gone(st, &ps, 123456), 0);
    /* the pid reused by another process (a later start time): gone */
    stat_line(line, sizeof line, "python3", 'R', 17, 123999, 0x7ffe2000);
    st = procfs_stat_parse(line, &ps, NULL, 0);
    CHECK_EQ(procfs_gone(st, &ps, 123456), 1);

    /* this process's own stat parses, and is not gone from itself */
    FILE *f = fopen("/proc/self/stat", "r");
    CHECK(f != NULL);
    size_t n = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    line[n] = 0;
    st = procfs_stat_parse(line, &ps, NULL, 0);
    CHECK(st == 'R');
    CHECK(ps.ppid == getppid() && ps.start > 0);
    CHECK_EQ(procfs_gone(st, &ps, ps.start), 0);
    return check_exit("attach_pstat");
}
