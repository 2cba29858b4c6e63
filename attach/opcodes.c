/* opcodes.c: the target's opcode tables and stack effects, from its own
 * interpreter (opcodes.h). */
#include "opcodes.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "opcodes_script.h" /* attach_opcodes_script: generated (CMakeLists.txt) */
#include "procfs.h"

#define OUT_MAX (1 << 20) /* the child's output: ~40 KB */

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* n bytes of hex from s into out: 0, or -1. */
static int unhex(const char *s, size_t slen, uint8_t *out, size_t n)
{
    if (slen != 2 * n) return -1;
    for (size_t i = 0; i < n; i++) {
        int a = hexval(s[2 * i]), b = hexval(s[2 * i + 1]);
        if (a < 0 || b < 0) return -1;
        out[i] = (uint8_t)(a << 4 | b);
    }
    return 0;
}

int attach_opcodes_parse(const char *text, size_t len, int minor, site_ops_t *ops,
                         site_effects_t *eff, char *why, size_t n)
{
    memset(ops, 0, sizeof *ops);
    for (int j = 0; j < 2; j++)
        for (int op = 0; op < 256; op++) {
            eff->k[j][op] = SITE_EFFECT_NONE;
            for (int a = 0; a < 256; a++)
                eff->tab[j][op][a] = SITE_EFFECT_NONE;
        }
    uint8_t *tabs[5] = {ops->cls, ops->caches, ops->base, ops->flags, ops->call};
    int ln = 0, ended = 0;
    for (size_t i = 0; i < len && !ended; ln++) {
        const char *s = text + i, *nl = memchr(s, '\n', len - i);
        size_t sl = nl ? (size_t)(nl - s) : len - i;
        i += sl + 1;
        char head[64];
        snprintf(head, sizeof head, "%.*s", (int)(sl < 63 ? sl : 63), s);
        if (ln == 0) {
            if (strcmp(head, "hotline-opcodes 1") != 0) goto bad;
        } else if (ln == 1) {
            int ma, mi;
            if (sscanf(head, "%d.%d", &ma, &mi) != 2) goto bad;
            if (ma != 3 || mi != minor) {
                snprintf(why, n, "its interpreter is %d.%d, the target 3.%d", ma, mi, minor);
                return -EINVAL;
            }
        } else if (ln == 2) {
            ops->jump_bytes = head[0] == '1';
        } else if (ln < 8) {
            if (unhex(s, sl, tabs[ln - 3], 256)) goto bad;
        } else if (!strcmp(head, "end")) {
            ended = 1;
        } else {
            char kind;
            int j, op, k, at;
            if (sscanf(head, "%c %d %d %d %n", &kind, &j, &op, &k, &at) != 4 || j < 0 || j > 1 ||
                op < 0 || op > 255 || k < INT16_MIN || k > INT16_MAX)
                goto bad;
            eff->k[j][op] = (int16_t)k;
            if (kind == 'c') {
                int v;
                if (sscanf(head + at, "%d", &v) != 1 || v < INT16_MIN || v > INT16_MAX) goto bad;
                for (int a = 0; a < 256; a++)
                    eff->tab[j][op][a] = (int16_t)v;
            } else if (kind == 'e') {
                /* the hex starts at the same place in the whole line */
                uint8_t raw[512];
                if ((size_t)at > sl || unhex(s + at, sl - (size_t)at, raw, sizeof raw)) goto bad;
                for (int a = 0; a < 256; a++)
                    eff->tab[j][op][a] = (int16_t)(raw[2 * a] | raw[2 * a + 1] << 8);
            } else {
                goto bad;
            }
        }
    }
    if (!ended) goto bad;
    return 0;
bad:
    snprintf(why, n, "its opcode tables did not read (line %d)", ln);
    return -EINVAL;
}

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* 1 when path's file name says a Python interpreter (python, python3,
 * python3.12, python3.12d...): another program embedding libpython (uwsgi)
 * would not take -I -S -c. */
static int python_name(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    if (strncmp(b, "python", 6) != 0) return 0;
    for (b += 6; *b; b++)
        if (!strchr("0123456789.dmut", *b)) return 0;
    return 1;
}

int attach_opcodes_load(pid_t pid, int minor, site_ops_t *ops, site_effects_t *eff, char *why,
                        size_t n)
{
    char exe[4096], path[4200];
    if (procfs_exe(NULL, pid, exe, sizeof exe) || !exe[0]) {
        snprintf(why, n, "its executable is not known");
        return -ENOENT;
    }
    if (strstr(exe, " (deleted)") || !python_name(exe)) {
        snprintf(why, n, "its executable %s is not a python one still there", exe);
        return -ENOENT;
    }
    /* through its root: a container's interpreter finds its own library */
    snprintf(path, sizeof path, "/proc/%d/root%s", (int)pid, exe);
    uid_t uid = 0;
    gid_t gid = 0;
    if (geteuid() == 0 && procfs_owner(NULL, pid, &uid, &gid) != 0) {
        snprintf(why, n, "its owner is not known");
        return -EPERM;
    }
    int fd[2];
    if (pipe2(fd, O_CLOEXEC)) return -errno;
    char *argv[] = {path, "-I", "-S", "-c", (char *)attach_opcodes_script, NULL};
    char *envp[] = {"PATH=/usr/bin:/bin", "LC_ALL=C", NULL};
    pid_t child = fork();
    if (child < 0) {
        int e = -errno;
        close(fd[0]);
        close(fd[1]);
        return e;
    }
    if (child == 0) {
        int nul = open("/dev/null", O_RDWR);
        if (nul < 0 || dup2(nul, 0) < 0 || dup2(fd[1], 1) < 0 || dup2(nul, 2) < 0) _exit(127);
        /* root runs the target's binary as its owner, never as root */
        if (geteuid() == 0 && uid != 0 &&
            (setgroups(0, NULL) || setgid(gid) || setuid(uid) || setuid(0) == 0))
            _exit(126);
        execve(path, argv, envp);
        _exit(127);
    }
    close(fd[1]);
    char *buf = malloc(OUT_MAX);
    size_t len = 0;
    int rc = 0;
    double end = mono() + ATTACH_OPCODES_TIMEOUT;
    while (buf) {
        double left = end - mono();
        struct pollfd p = {.fd = fd[0], .events = POLLIN};
        int r = left > 0 ? poll(&p, 1, (int)(left * 1000) + 1) : 0;
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            snprintf(why, n, "its interpreter did not answer within %.0f s",
                     ATTACH_OPCODES_TIMEOUT);
            rc = -ETIMEDOUT;
            break;
        }
        ssize_t got = read(fd[0], buf + len, OUT_MAX - len);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        len += (size_t)got;
        if (len == OUT_MAX) {
            snprintf(why, n, "its interpreter wrote too much");
            rc = -E2BIG;
            break;
        }
    }
    close(fd[0]);
    if (rc) kill(child, SIGKILL);
    int st = 0;
    while (waitpid(child, &st, 0) < 0 && errno == EINTR) {
    }
    if (!buf) return -ENOMEM;
    if (!rc && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
        snprintf(why, n, "its interpreter failed (status %d)", st);
        rc = -ECHILD;
    }
    if (!rc) rc = attach_opcodes_parse(buf, len, minor, ops, eff, why, n);
    free(buf);
    return rc;
}
