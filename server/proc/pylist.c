/* pylist.c: see pylist.h. */
#include "proc/pylist.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach.h"
#include "marimo.h"
#include "procfs.h"

int pyproc_describe(pid_t pid, struct pyproc_info *out)
{
    memset(out, 0, sizeof *out);
    char buf[8192];
    long n = procfs_cmdline(NULL, pid, buf, sizeof buf);
    if (n < 0) return n == -ENOENT ? -ESRCH : (int)n;
    procfs_cwd(NULL, pid, out->cwd, sizeof out->cwd);
    procfs_exe(NULL, pid, out->exe, sizeof out->exe);
    size_t cl = 0;
    int skip_next = 0, done = 0;
    for (long i = 0; i < n; i += (long)strlen(buf + i) + 1) {
        const char *arg = buf + i;
        if (cl < sizeof out->command - 1)
            cl += (size_t)snprintf(out->command + cl, sizeof out->command - cl, "%s%s",
                                   cl ? " " : "", arg);
        if (i == 0) { /* a script only follows a python's own argv[0] */
            const char *base = strrchr(arg, '/');
            done = strncmp(base ? base + 1 : arg, "python", 6) != 0;
            continue;
        }
        if (done) continue;
        /* the script: the first argument that is not an option of python's
         * own (-m/-c end the search: no script) */
        if (skip_next) {
            skip_next = 0;
        } else if (!strcmp(arg, "-m") || !strcmp(arg, "-c")) {
            done = 1;
        } else if (!strcmp(arg, "-W") || !strcmp(arg, "-X") ||
                   !strcmp(arg, "--check-hash-based-pycs")) {
            skip_next = 1;
        } else if (arg[0] != '-') {
            char joined[2 * PATH_MAX + 2], real[PATH_MAX];
            if (arg[0] == '/' || !out->cwd[0])
                snprintf(joined, sizeof joined, "%s", arg);
            else
                snprintf(joined, sizeof joined, "%s/%s", out->cwd,
                         !strncmp(arg, "./", 2) ? arg + 2 : arg);
            const char *m = realpath(joined, real) ? real : joined;
            if (m[0] == '/' && strlen(m) < sizeof out->main) memcpy(out->main, m, strlen(m) + 1);
            done = 1;
        }
    }
    /* marimo: the kernel (a spawn child of `marimo edit`) runs the cells of
     * the notebook its server names; the server only waits. Both are the
     * notebook's (its folder the program's own code, not marimo's script) */
    if (marimo_kernel(NULL, pid, &out->marimo_server, out->notebook, sizeof out->notebook))
        out->marimo = 'k';
    else if (marimo_server(NULL, pid, out->notebook, sizeof out->notebook))
        out->marimo = 's';
    if (out->marimo && out->notebook[0]) memcpy(out->main, out->notebook, sizeof out->main);
    return 0;
}

/* python3.11, python3, python: by its executable or its argv[0] */
static int looks_python(pid_t pid, const struct pyproc_info *in)
{
    const char *names[2] = {in->exe, in->command};
    for (int k = 0; k < 2; k++) {
        char first[PATH_MAX];
        snprintf(first, sizeof first, "%s", names[k]);
        char *sp = k ? strchr(first, ' ') : NULL;
        if (sp) *sp = 0;
        const char *base = strrchr(first, '/');
        base = base ? base + 1 : first;
        if (!strncmp(base, "python", 6)) return 1;
    }
    /* an embedding program (uwsgi, a C host) maps libpython */
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int yes = 0;
    while (!yes && fgets(line, sizeof line, f))
        yes = strstr(line, "/libpython3") != NULL;
    fclose(f);
    return yes;
}

static int under(const char *path, const char *root)
{
    size_t n = strlen(root);
    while (n > 1 && root[n - 1] == '/')
        n--;
    return path[0] && n && !strncmp(path, root, n) && (path[n] == '/' || path[n] == 0);
}

/* The entry of pid before its image is opened: as listed when that open
 * blocks (new, or NULL). */
static json_t *blocked_entry(pid_t pid, const struct pyproc_info *in, int ws)
{
    json_t *o = json_pack("{s:i,s:s,s:s,s:s,s:n,s:b,s:b,s:s}", "pid", (int)pid, "command",
                          in->command, "cwd", in->cwd, "main", in->main, "python", "inWorkspace",
                          ws, "canAttach", 0, "why",
                          "its interpreter image did not open in time (a FIFO, or a hung "
                          "network or FUSE mount?)");
    return o;
}

static int skipped(const struct pylist_share *sh, pid_t pid)
{
    for (int i = 0; sh && i < sh->nskip; i++)
        if (sh->skip[i] == pid) return 1;
    return 0;
}

/* Append o (stolen) to out, under sh's lock when sharing. */
static void add(struct pylist_share *sh, json_t *out, json_t *o)
{
    if (sh) pthread_mutex_lock(&sh->mu);
    json_array_append_new(out, o);
    if (sh) pthread_mutex_unlock(&sh->mu);
}

/* Append o (stolen), or insert it before the entry of pid `before` when
 * listed (a marimo kernel before its server). */
static void add_before(struct pylist_share *sh, json_t *out, json_t *o, pid_t before)
{
    if (sh) pthread_mutex_lock(&sh->mu);
    size_t i = json_array_size(out);
    for (size_t k = 0; before > 0 && k < json_array_size(out); k++)
        if (json_integer_value(json_object_get(json_array_get(out, k), "pid")) == before) {
            i = k;
            break;
        }
    json_array_insert_new(out, i, o);
    if (sh) pthread_mutex_unlock(&sh->mu);
}

struct lister {
    const char *rroot; /* the workspace, resolved ("": none) */
    pid_t self;
    json_t *out;
    struct pylist_share *sh;
};

/* One process of /proc: listed when it is a Python (procfs_each_pid). */
static int list_one(pid_t pid, void *data)
{
    struct lister *l = data;
    const char *rroot = l->rroot;
    struct pylist_share *sh = l->sh;
    json_t *out = l->out;
    if (json_array_size(out) >= PYLIST_MAX) return 1; /* full: the scan stops */
    struct pyproc_info in;
    if (pid <= 0 || pid == l->self || pyproc_describe(pid, &in) || !in.command[0]) return 0;
    if (!looks_python(pid, &in)) return 0;
    char label[PATH_MAX + 32] = "";
    if (in.marimo) {
        const char *base = strrchr(in.notebook, '/');
        snprintf(label, sizeof label, "marimo %s%s%s", in.marimo == 'k' ? "kernel" : "server",
                 in.notebook[0] ? ": " : "", base ? base + 1 : in.notebook);
    }
    int ws = rroot[0] && (under(in.main, rroot) || under(in.cwd, rroot));
    if (skipped(sh, pid)) {
        json_t *o = blocked_entry(pid, &in, ws);
        if (o) add(sh, out, o);
        return 0;
    }
    if (sh) { /* what the waiter lists if the open below never returns */
        json_t *b = blocked_entry(pid, &in, ws);
        pthread_mutex_lock(&sh->mu);
        json_decref(sh->cur);
        sh->cur = b;
        pthread_mutex_unlock(&sh->mu);
    }
    if (sh && pid == sh->hang_pid) /* the test's stand-in for a hung mount */
        for (;;)
            sleep(3600);
    struct attach_proc ap;
    char why[512] = "";
    int rc = attach_open(&ap, pid, why, sizeof why);
    char version[32];
    snprintf(version, sizeof version, "%s", rc == 0 ? ap.version : "");
    attach_close(&ap);
    if (sh) {
        pthread_mutex_lock(&sh->mu);
        json_decref(sh->cur);
        sh->cur = NULL;
        pthread_mutex_unlock(&sh->mu);
    }
    if (rc == ATTACH_ENOTPY || rc == -ESRCH) return 0; /* not Python after all, or gone */
    json_t *o = json_pack("{s:i,s:s,s:s,s:s,s:b,s:b}", "pid", (int)pid, "command", in.command,
                          "cwd", in.cwd, "main", in.main, "inWorkspace", ws, "canAttach", rc == 0);
    if (!o) return 0;
    json_object_set_new(o, "python", version[0] ? json_string(version) : json_null());
    if (rc) json_object_set_new(o, "why", json_string(why[0] ? why : strerror(-rc)));
    if (label[0]) {
        json_t *m = json_pack("{s:s,s:s}", "role", in.marimo == 'k' ? "kernel" : "server",
                              "notebook", in.notebook);
        if (m && in.marimo == 'k') json_object_set_new(m, "server", json_integer(in.marimo_server));
        json_object_set_new(o, "label", json_string(label));
        json_object_set_new(o, "marimo", m);
    }
    add_before(sh, out, o, in.marimo == 'k' ? in.marimo_server : 0);
    return 0;
}

static int list_into(const char *root, pid_t self, json_t *out, struct pylist_share *sh)
{
    char rroot[PATH_MAX] = "";
    if (root && !realpath(root, rroot)) snprintf(rroot, sizeof rroot, "%s", root);
    struct lister l = {rroot, self, out, sh};
    procfs_each_pid(NULL, list_one, &l);
    return 0;
}

json_t *pyproc_list(const char *root, pid_t self)
{
    json_t *out = json_array();
    if (out) list_into(root, self, out, NULL);
    return out;
}

int pyproc_list_shared(const char *root, pid_t self, struct pylist_share *sh)
{
    return sh->out ? list_into(root, self, sh->out, sh) : -ENOMEM;
}
