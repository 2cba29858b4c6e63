/* cells.c: the table of notebook cell files -> notebook lines (cells.h).
 *
 * One mutex guards the table and the queue. The sampler only takes it on
 * a code-object cache miss for a cell file (cells_is_cell first, without
 * it), so a program without notebook cells never touches it. */
#include "cells.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct cell_map {
    char *from, *to; /* owned */
    int delta;
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static struct cell_map g_map[CELLS_MAX];
static int g_nmap;
static char *g_pending[CELLS_PENDING]; /* owned */
static int g_npending;
static unsigned g_gen;
static long g_waiter; /* the answering thread's tid: Hotline's, not the program's */

int cells_is_cell(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strncmp(base, "__marimo__cell_", 15) == 0;
}

static int find_locked(const char *path)
{
    for (int i = 0; i < g_nmap; i++)
        if (!strcmp(g_map[i].from, path)) return i;
    return -1;
}

int cells_lookup(const char *path, int ask, char *to, size_t n, int *delta)
{
    int found = 0;
    pthread_mutex_lock(&g_mu);
    int i = find_locked(path);
    if (i >= 0 && strlen(g_map[i].to) < n) {
        strcpy(to, g_map[i].to);
        *delta = g_map[i].delta;
        found = 1;
    }
    if ((ask == 2 || (!found && ask)) && g_npending < CELLS_PENDING) {
        int queued = 0;
        for (int k = 0; k < g_npending && !queued; k++)
            queued = !strcmp(g_pending[k], path);
        char *s = queued ? NULL : strdup(path);
        if (s) {
            g_pending[g_npending++] = s;
            pthread_cond_signal(&g_cv);
        }
    }
    pthread_mutex_unlock(&g_mu);
    return found;
}

unsigned cells_gen(void)
{
    return __atomic_load_n(&g_gen, __ATOMIC_ACQUIRE);
}

int cells_set(const char *from, const char *to, int delta)
{
    int rc = 0;
    pthread_mutex_lock(&g_mu);
    int i = find_locked(from);
    if (!to) {
        if (i >= 0) {
            free(g_map[i].from);
            free(g_map[i].to);
            g_map[i] = g_map[--g_nmap];
        }
    } else if (i >= 0 && !strcmp(g_map[i].to, to) && g_map[i].delta == delta) {
        pthread_mutex_unlock(&g_mu); /* the same answer again: nothing to redo */
        return 0;
    } else {
        char *t = strdup(to);
        char *f = i >= 0 ? NULL : strdup(from);
        if (!t || (i < 0 && !f)) {
            rc = -ENOMEM;
        } else if (i < 0 && g_nmap == CELLS_MAX) {
            rc = -ENOSPC;
        } else if (i >= 0) {
            free(g_map[i].to);
            g_map[i].to = t;
            g_map[i].delta = delta;
            t = NULL;
        } else {
            g_map[g_nmap++] = (struct cell_map){f, t, delta};
            t = f = NULL;
        }
        free(t);
        free(f);
    }
    if (rc == 0) __atomic_add_fetch(&g_gen, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&g_mu);
    return rc;
}

int cells_wait(double timeout_s, char ***names)
{
    *names = NULL;
    __atomic_store_n(&g_waiter, (long)syscall(SYS_gettid), __ATOMIC_RELAXED);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    long long ns = until.tv_nsec + (long long)(timeout_s * 1e9);
    until.tv_sec += (time_t)(ns / 1000000000LL);
    until.tv_nsec = (long)(ns % 1000000000LL);
    pthread_mutex_lock(&g_mu);
    while (g_npending == 0)
        if (pthread_cond_timedwait(&g_cv, &g_mu, &until) == ETIMEDOUT) break;
    int n = g_npending;
    if (n > 0) {
        char **out = malloc((size_t)n * sizeof *out);
        if (!out) {
            pthread_mutex_unlock(&g_mu);
            return -ENOMEM;
        }
        memcpy(out, g_pending, (size_t)n * sizeof *out);
        g_npending = 0;
        *names = out;
    }
    pthread_mutex_unlock(&g_mu);
    return n;
}

void cells_free_names(char **names, int n)
{
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

long cells_waiter_tid(void)
{
    return __atomic_load_n(&g_waiter, __ATOMIC_RELAXED);
}

void cells_after_fork(void)
{
    g_waiter = 0;
    pthread_mutex_init(&g_mu, NULL);
    pthread_cond_init(&g_cv, NULL);
}
