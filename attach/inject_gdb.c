/* inject_gdb: gdb started, read and judged (inject_gdb.h). */
#include "inject_gdb.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach.h"

int inject_gdb_find(char *out, size_t n)
{
    const char *env = getenv("HOTLINE_GDB");
    if (env && *env) {
        snprintf(out, n, "%s", env);
        return access(out, X_OK) == 0 ? 0 : -ENOENT;
    }
    const char *path = getenv("PATH");
    if (!path) return -ENOENT;
    const char *p = path;
    while (*p) {
        size_t l = strcspn(p, ":");
        if (l > 0 && (size_t)snprintf(out, n, "%.*s/gdb", (int)l, p) < n && access(out, X_OK) == 0)
            return 0;
        p += l;
        if (*p == ':') p++;
    }
    return -ENOENT;
}

static void gdb_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
    (void)h;
    (void)hint;
    static char buf[4096]; /* one read at a time, consumed before the next */
    b->base = buf;
    b->len = sizeof buf;
}

static void gdb_line(struct inject_gdb *g, const char *l)
{
    if (getenv("HOTLINE_ATTACH_DEBUG")) fprintf(stderr, "gdb: %s\n", l);
    int rc;
    if (!strncmp(l, "HOTLINE stopped", 15)) {
        g->stopped = 1; /* from here gdb must finish: it is changing registers */
        if (g->on_stopped) g->on_stopped(g);
    } else if (!strcmp(l, "HOTLINE nostop")) {
        g->nostop = 1;
    } else if (sscanf(l, "HOTLINE rc %d", &rc) == 1) {
        g->queued = rc == 0;
        g->refused = rc != 0;
    } else if (l[0] && strncmp(l, "HOTLINE", 7) && !strstr(l, "Breakpoint") &&
               !strstr(l, "breakpoint") && !strstr(l, "SIGSEGV") && !strstr(l, "SIGURG") &&
               strncmp(l, "0x", 2) && strncmp(l, "[", 1)) {
        snprintf(g->last, sizeof g->last, "%.200s", l);
    }
}

static void gdb_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b)
{
    struct inject_gdb *g = st->data;
    if (n < 0) {
        if (!uv_is_closing((uv_handle_t *)st)) uv_close((uv_handle_t *)st, NULL);
        g->out_open = 0;
        return;
    }
    for (ssize_t i = 0; i < n; i++) {
        char c = b->base[i];
        if (c == '\n' || g->line_len == sizeof g->line - 1) {
            g->line[g->line_len] = 0;
            gdb_line(g, g->line);
            g->line_len = 0;
        } else {
            g->line[g->line_len++] = c;
        }
    }
}

static void on_exit_cb(uv_process_t *p, int64_t status, int sig)
{
    struct inject_gdb *g = p->data;
    g->running = 0;
    uv_close((uv_handle_t *)p, NULL);
    if (g->on_exited) g->on_exited(g, status, sig);
}

int inject_gdb_spawn(struct inject_gdb *g, uv_loop_t *loop, const char *gdb, pid_t pid,
                     int script_fd, const char *script, char *err, size_t n)
{
    char spid[24];
    g->pid = pid;
    snprintf(spid, sizeof spid, "%d", (int)pid);
    /* no symbols, no debug info, no scripts of its own: addresses are ours */
    char *args[] = {(char *)gdb,
                    "-nx",
                    "-batch",
                    "-iex",
                    "set auto-load off",
                    "-iex",
                    "set auto-solib-add off",
                    "-iex",
                    "set debuginfod enabled off",
                    "-iex",
                    "set debug-file-directory /nonexistent",
                    "-p",
                    spid,
                    "-x",
                    (char *)script, /* the memfd, at 3 below */
                    NULL};
    /* stdout and stderr both into one pipe: its lines in order */
    int fds[2];
    if (pipe2(fds, O_CLOEXEC)) {
        int e = errno;
        snprintf(err, n, "cannot make a pipe: %s", strerror(e));
        return -e;
    }
    uv_pipe_init(loop, &g->out, 0);
    g->out.data = g;
    uv_pipe_open(&g->out, fds[0]);
    g->out_open = 1;
    uv_stdio_container_t io[4];
    io[0].flags = UV_IGNORE;
    io[1].flags = io[2].flags = io[3].flags = UV_INHERIT_FD;
    io[1].data.fd = io[2].data.fd = fds[1];
    io[3].data.fd = script_fd;
    uv_process_options_t po;
    memset(&po, 0, sizeof po);
    po.file = gdb;
    po.args = args;
    po.exit_cb = on_exit_cb;
    po.stdio_count = 4;
    po.stdio = io;
    /* gdb gets a session of its own: a Ctrl-C in our terminal must not
     * reach it. A SIGINT at the wrong moment (in its attach or its script)
     * made gdb quit with status 1 and the target die of a breakpoint left
     * in it (ctrl_c_while_waiting, 2 runs in 5 on 3.12 when gdb shared our
     * process group). The caller's SIGINT handler ends the wait the safe
     * way instead (inject_gdb_urge's SIGURG); if we die, gdb still
     * finishes at the target's next safe point, and the queued call finds
     * no socket and does nothing. */
    po.flags = UV_PROCESS_DETACHED;
    g->proc.data = g;
    int rc = uv_spawn(loop, &g->proc, &po);
    close(fds[1]); /* gdb has its copy: EOF when it exits */
    if (rc) {
        uv_close((uv_handle_t *)&g->proc, NULL);
        uv_close((uv_handle_t *)&g->out, NULL);
        g->out_open = 0;
        snprintf(err, n, "cannot start gdb: %s", uv_strerror(rc));
        return -EIO;
    }
    g->running = 1;
    uv_read_start((uv_stream_t *)&g->out, gdb_alloc, gdb_read);
    return 0;
}

int inject_gdb_urge(struct inject_gdb *g)
{
    if (!g->running || g->stopped || g->urged) return 0;
    g->urged = 1;
    kill(g->pid, SIGURG);
    return 1;
}

void inject_gdb_kill(struct inject_gdb *g)
{
    if (g->running && !g->stopped) uv_process_kill(&g->proc, SIGTERM);
}

void inject_gdb_close(struct inject_gdb *g)
{
    if (g->out_open && !uv_is_closing((uv_handle_t *)&g->out))
        uv_close((uv_handle_t *)&g->out, NULL);
}

int inject_gdb_failure(const struct inject_gdb *g, double timeout_s, int64_t status, int sig,
                       char *msg, size_t n)
{
    if (g->timed_out && !g->stopped && g->nostop) {
        snprintf(msg, n,
                 "process %d reached no safe point (an allocator call) within %.0f s: it "
                 "may be blocked or idle. gdb detached; the target is unchanged",
                 (int)g->pid, timeout_s);
    } else if (strstr(g->last, "ptrace") || strstr(g->last, "not permitted")) {
        char why[400];
        attach__perm_message(g->pid, why, sizeof why);
        snprintf(msg, n, "gdb could not attach (%s): %s", g->last, why);
        return -EPERM;
    } else if (g->refused) {
        snprintf(msg, n,
                 "Python refused the pending call (Py_AddPendingCall: its queue is full): "
                 "registers put back, the target keeps one unused 4 KiB page");
    } else if (g->stopped) {
        snprintf(msg, n,
                 "gdb ended half-way (%s%s, status %d, signal %d): it puts the registers "
                 "back before anything that can fail (the target may keep one 4 KiB page); "
                 "killed inside one of its two calls it would have left the target broken",
                 g->last[0] ? "last said: " : "no message", g->last, (int)status, sig);
    } else {
        snprintf(msg, n,
                 "gdb failed before touching process %d (%s%s, status %d, "
                 "signal %d): the target is unchanged",
                 (int)g->pid, g->last[0] ? "last said: " : "no message", g->last, (int)status, sig);
    }
    return -EIO;
}
