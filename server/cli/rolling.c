/* rolling: periodic profiles' files and waits (see rolling.h). */
#include "cli/rolling.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "procfs.h"
#include "sampler.h"

int cli_parse_duration(const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !isfinite(v)) return -EINVAL;
    if (!strcmp(end, "ms"))
        v /= 1000;
    else if (!strcmp(end, "m"))
        v *= 60;
    else if (!strcmp(end, "h"))
        v *= 3600;
    else if (*end && strcmp(end, "s"))
        return -EINVAL;
    if (v < lo || v > hi) return -EINVAL;
    *out = v;
    return 0;
}

int rolling_path(const char *dir, pid_t pid, char *out, size_t n)
{
    struct stat st;
    if (stat(dir, &st)) {
        if (errno != ENOENT || mkdir(dir, 0700)) return -errno;
    } else if (!S_ISDIR(st.st_mode)) {
        return -ENOTDIR;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    char day[24], stamp[32];
    gmtime_r(&ts.tv_sec, &tm);
    strftime(day, sizeof day, "%Y%m%dT%H%M%S", &tm);
    /* milliseconds: fixed width, so that names sort in time order */
    snprintf(stamp, sizeof stamp, "%.15s.%03dZ", day, (int)(ts.tv_nsec / 1000000) % 1000);
    for (int k = 1; k < 1000; k++) {
        char suffix[16] = "";
        if (k > 1) snprintf(suffix, sizeof suffix, "-%d", k);
        int w = snprintf(out, n, "%s/hotline-%d-%s%s.json", dir, (int)pid, stamp, suffix);
        if (w < 0 || (size_t)w >= n) return -ENAMETOOLONG;
        if (access(out, F_OK)) return 0;
    }
    return -EEXIST;
}

/* Characters of a stamp: YYYYmmddTHHMMSS.mmmZ */
#define STAMP_LEN 20

/* Time order of two of one pid's names: the stamp, then the "-k" after it
 * (none is 1). The prefix is the same for both, so its length is where
 * the stamp starts: the first digit after "hotline-PID-". */
static int cmp_names(const void *a, const void *b)
{
    const char *x = *(char *const *)a, *y = *(char *const *)b;
    const char *sx = strchr(strchr(x, '-') + 1, '-') + 1, *sy = strchr(strchr(y, '-') + 1, '-') + 1;
    int c = strncmp(sx, sy, STAMP_LEN);
    if (c) return c;
    long kx = sx[STAMP_LEN] == '-' ? strtol(sx + STAMP_LEN + 1, NULL, 10) : 1;
    long ky = sy[STAMP_LEN] == '-' ? strtol(sy + STAMP_LEN + 1, NULL, 10) : 1;
    return (kx > ky) - (kx < ky);
}

/* One of pid's rolling profiles: hotline-PID-<stamp>[-k].json */
static int is_ours(const char *name, const char *prefix)
{
    size_t pl = strlen(prefix), nl = strlen(name);
    if (strncmp(name, prefix, pl) || nl < pl + STAMP_LEN + 5) return 0;
    const char *st = name + pl;
    if (st[8] != 'T' || st[15] != '.' || st[19] != 'Z') return 0;
    for (int i = 0; i < 19; i++)
        if (i != 8 && i != 15 && (st[i] < '0' || st[i] > '9')) return 0;
    return !strcmp(name + nl - 5, ".json");
}

int rolling_prune(const char *dir, pid_t pid, int keep)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "hotline-%d-", (int)pid);
    DIR *d = opendir(dir);
    if (!d) return -errno;
    char **names = NULL;
    size_t nn = 0, cap = 0;
    int rc = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!is_ours(de->d_name, prefix)) continue;
        if (nn == cap) {
            size_t c = cap ? cap * 2 : 32;
            char **v = realloc(names, c * sizeof *v);
            if (!v) {
                rc = -ENOMEM;
                break;
            }
            names = v;
            cap = c;
        }
        if (!(names[nn] = strdup(de->d_name))) {
            rc = -ENOMEM;
            break;
        }
        nn++;
    }
    closedir(d);
    if (!rc && nn > (size_t)keep) {
        qsort(names, nn, sizeof *names, cmp_names);
        for (size_t i = 0; i + (size_t)keep < nn; i++) {
            char path[4096];
            if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, names[i]) < sizeof path &&
                !unlink(path))
                rc++;
        }
    }
    for (size_t i = 0; i < nn; i++)
        free(names[i]);
    free(names);
    return rc;
}

int rolling_wait(double until, volatile sig_atomic_t *stop, pid_t pid, unsigned long long start0)
{
    for (;;) {
        if (*stop) return 1;
        struct procfs_stat ps;
        char state = procfs_stat(NULL, pid, &ps, NULL, 0);
        if (procfs_gone(state, &ps, start0)) return 2;
        double left = until - attach_mono();
        if (left <= 0) return 0;
        double step = left < 0.1 ? left : 0.1; /* a signal or the target's exit ends it soon */
        struct timespec ts = {(time_t)step, (long)((step - floor(step)) * 1e9)};
        nanosleep(&ts, NULL);
    }
}
