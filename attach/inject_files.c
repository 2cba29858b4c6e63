/* inject_files: the private folder, the socket's name and the script the
 * target runs, with its Python (inject_files.h). */
#include "inject_files.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procfs.h"

int inject_files_dir(struct inject_files *f, int rexec, char *err, size_t n)
{
    memset(f, 0, sizeof *f);
    f->rexec = rexec;
    f->script_fd = -1;
    const char *base = getenv("TMPDIR");
    if (!base || !*base || strlen(base) > 80) base = "/tmp";
    snprintf(f->dir, sizeof f->dir, "%s/hotline-attach-XXXXXX", base);
    if (!mkdtemp(f->dir)) {
        snprintf(err, n, "cannot create a private directory: %s", strerror(errno));
        f->dir[0] = 0;
        return -1;
    }
    snprintf(f->sockpath, sizeof f->sockpath, "%s/agent.sock", f->dir);
    if (rexec)
        snprintf(f->script, sizeof f->script, "%s/agent.py", f->dir);
    else /* the memfd, as gdb sees it (inject_gdb_spawn puts it at 3) */
        snprintf(f->script, sizeof f->script, "/proc/self/fd/3");
    return 0;
}

static void hex(char *out, const char *s)
{
    for (; *s; s++, out += 2)
        sprintf(out, "%02x", (unsigned char)*s);
    *out = 0;
}

/* The injected agent's config (new string, or NULL on ENOMEM): memory on,
 * the interval, and the --include / --exclude patterns when given (else
 * the agent's defaults, as for a run without them). */
static char *agent_config(const struct inject_config *o)
{
    json_t *c = json_pack("{s:b,s:f}", "memory", 1, "interval_ms", o->interval_ms);
    json_t *inc = json_array(), *exc = json_array();
    for (int i = 0; inc && i < o->ninclude; i++)
        json_array_append_new(inc, json_string(o->include[i]));
    for (int i = 0; exc && i < o->nexclude; i++)
        json_array_append_new(exc, json_string(o->exclude[i]));
    char *out = NULL;
    if (c && inc && exc) {
        if (o->ninclude) json_object_set(c, "include", inc);
        if (o->nexclude) json_object_set(c, "exclude", exc);
        out = json_dumps(c, JSON_COMPACT);
    }
    json_decref(inc);
    json_decref(exc);
    json_decref(c);
    return out;
}

/* The Python the target runs, into code (at most max bytes, n > max):
 * nothing happens unless our socket still exists; the agent's package
 * (its private name: the program's own `hotline` stays its own) is
 * imported from agent_dir, which leaves sys.path at once; every error is
 * swallowed. Strings travel as hex: no quoting. 0, -ENOMEM, or -E2BIG
 * with the size it needs in *need. */
static int python_code(char *code, size_t n, size_t max, const char *agent_dir, const char *pkg,
                       const char *sock, const char *config, size_t *need)
{
    char inner[512];
    int il = snprintf(inner, sizeof inner,
                      "import os,sys\n"
                      "if os.path.exists(S):\n"
                      " sys.path.insert(0,A)\n"
                      " try:\n"
                      "  import %s\n"
                      " finally:\n"
                      "  sys.path.remove(A)\n"
                      " %s._attach(S,C)\n",
                      pkg, pkg);
    if (il < 0 || (size_t)il >= sizeof inner) return -E2BIG;
    const char *dec = "').decode('utf-8','surrogateescape')";
    static const char frame[] =
        "try:exec(bytes.fromhex('%s').decode(),{'__name__':'__hotline_attach__',"
        "'S':bytes.fromhex('%s%s,'A':bytes.fromhex('%s%s,'C':bytes.fromhex('%s%s})"
        "\nexcept BaseException:pass\n";
    /* exactly what snprintf writes below */
    *need = 2 * ((size_t)il + strlen(agent_dir) + strlen(sock) + strlen(config)) + 3 * strlen(dec) +
            sizeof frame - 1 - 2 * 6;
    if (*need > max || *need >= n) return -E2BIG;
    char *hi = malloc(2 * (size_t)il + 1), *ha = malloc(2 * strlen(agent_dir) + 1),
         *hs = malloc(2 * strlen(sock) + 1), *hc = malloc(2 * strlen(config) + 1);
    int rc = -ENOMEM;
    if (hi && ha && hs && hc) {
        hex(hi, inner);
        hex(ha, agent_dir);
        hex(hs, sock);
        hex(hc, config);
        int w = snprintf(code, n, frame, hi, hs, dec, ha, dec, hc, dec);
        rc = w > 0 && (size_t)w < n && (size_t)w <= max ? 0 : -E2BIG;
        if (w > 0) *need = (size_t)w;
    }
    free(hi);
    free(ha);
    free(hs);
    free(hc);
    return rc;
}

/* fd (borrowed) gets all of buf's len bytes: 0 or -1 */
static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, buf, len);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        buf += w;
        len -= (size_t)w;
    }
    return 0;
}

int inject_files_script(struct inject_files *f, const struct inject_target *t,
                        const char *agent_dir, const char *pkg, const struct inject_config *c,
                        char *err, size_t n)
{
    /* gdb writes the code into one page; 3.14+ reads it from a file */
    size_t max = f->rexec ? INJECT_REXEC_CODE_MAX : INJECT_CODE_MAX, need = 0;
    char *config = agent_config(c), *code = malloc(INJECT_REXEC_CODE_MAX + 1);
    int rc = config && code ? python_code(code, INJECT_REXEC_CODE_MAX + 1, max, agent_dir, pkg,
                                          f->sockpath, config, &need)
                            : -ENOMEM;
    free(config);
    if (rc) {
        if (rc == -ENOMEM)
            snprintf(err, n, "out of memory");
        else if (c->ninclude || c->nexclude)
            snprintf(err, n,
                     "the --include / --exclude patterns do not fit in the code injected into "
                     "the target: %zu bytes with them, at most %zu%s (they travel hex-encoded: "
                     "each pattern's byte counts twice); use fewer or shorter patterns",
                     need, max,
                     f->rexec ? "" : " (gdb writes it into one 4 KiB page of the target)");
        else
            snprintf(err, n,
                     "the agent's path is too long for the injected code (%zu bytes, at most %zu)",
                     need, max);
        free(code);
        return rc == -E2BIG && (c->ninclude || c->nexclude) ? -E2BIG : -1;
    }
    /* 3.14+: the Python itself is the script the target reads; else gdb's
     * script that queues it */
    char *script = f->rexec ? code : malloc(INJECT_SCRIPT_MAX);
    int len = -ENOMEM;
    if (script)
        len = f->rexec ? (int)strlen(script) : inject_script(t, code, script, INJECT_SCRIPT_MAX);
    int fd = -1;
    if (len > 0 && f->rexec)
        fd = open(f->script, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    else if (len > 0)
        fd = f->script_fd = memfd_create("hotline-inject.gdb", MFD_CLOEXEC);
    int ok = fd >= 0 && write_all(fd, script, (size_t)len) == 0;
    if (fd >= 0 && f->rexec && close(fd)) ok = 0;
    free(script);
    if (script != code) free(code);
    if (!ok) {
        snprintf(err, n, "cannot write %s", f->rexec ? f->script : "gdb's script (a memfd)");
        return -1;
    }
    return 0;
}

int inject_files_hand_over(const struct inject_files *f, pid_t pid, char *err, size_t n)
{
    uid_t uid;
    gid_t gid;
    /* ours already, or root's: nothing to hand over */
    if (geteuid() != 0 || procfs_owner(NULL, pid, &uid, &gid) != 0 || uid == 0) return 0;
    if (chown(f->sockpath, uid, gid) || (f->rexec && chown(f->script, uid, gid)) ||
        chmod(f->dir, 0711)) {
        snprintf(err, n, "cannot hand the socket to the target's user: %s", strerror(errno));
        return -1;
    }
    return 0;
}

void inject_files_remove(struct inject_files *f)
{
    if (f->script_fd >= 0) close(f->script_fd);
    f->script_fd = -1;
    if (f->rexec && f->script[0]) unlink(f->script);
    if (f->sockpath[0]) unlink(f->sockpath);
    if (f->dir[0]) rmdir(f->dir);
    f->script[0] = f->sockpath[0] = f->dir[0] = 0;
}
