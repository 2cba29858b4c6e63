/* The interpreters the server may run on its own (interp.h). An
 * interpreter is a workspace file when its path, or the path it resolves
 * to, is under the workspace root: a venv's symlink to /usr/bin/python3 is
 * one too, since that python reads the venv's pyvenv.cfg and executes the
 * .pth files of its site-packages even under -I. Such a file is run only
 * after the user ran the program with it (the runs of this session are
 * remembered here, capped), so opening a folder and picking an action never
 * executes what the folder brought. */
#include "core/interp.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/facilities.h"

const char *lsp_interp_exe(const char *given, char *buf, size_t n)
{
    const char *venv = getenv("VIRTUAL_ENV");
    char cwd[2048];
    if (given && *given && (given[0] == '/' || !strchr(given, '/'))) return given;
    if (given && *given && getcwd(cwd, sizeof cwd) &&
        (size_t)snprintf(buf, n, "%s/%s", cwd, given) < n)
        return buf;
    if (given && *given) return given;
    if (venv && *venv && (size_t)snprintf(buf, n, "%s/bin/python", venv) < n &&
        access(buf, X_OK) == 0)
        return buf;
    return "python3";
}

void lsp_interp_ran(struct lsp_facilities *s, const char *exe)
{
    if (!exe || !*exe) return;
    if (!s->interp_ran) s->interp_ran = json_object();
    if (!s->interp_ran || json_object_size(s->interp_ran) >= LSP_INTERP_MAX_RAN) return;
    json_object_set_new(s->interp_ran, exe, json_true());
}

/* The file a bare name runs (the first executable on PATH), into buf; 0 or -1. */
static int on_path(const char *name, char *buf, size_t n)
{
    const char *path = getenv("PATH");
    while (path && *path) {
        const char *colon = strchr(path, ':');
        size_t len = colon ? (size_t)(colon - path) : strlen(path);
        if ((size_t)snprintf(buf, n, "%.*s/%s", (int)len, len ? path : ".", name) < n &&
            access(buf, X_OK) == 0)
            return 0;
        path = colon ? colon + 1 : NULL;
    }
    return -1;
}

/* 1 when path is top or below it (both absolute, no trailing slash on top). */
static int below(const char *path, const char *top)
{
    size_t n = strlen(top);
    return !strncmp(path, top, n) && (path[n] == '/' || path[n] == 0 || (n == 1 && top[0] == '/'));
}

int lsp_interp_trusted(struct lsp_facilities *s, const char *exe, const char *doc_dir)
{
    char found[PATH_MAX], top[PATH_MAX], real[PATH_MAX], dir[PATH_MAX];
    if (!exe || !*exe) return 0;
    if (json_object_get(s->interp_ran, exe)) return 1;
    const char *ws = s->root_path ? s->root_path : doc_dir;
    if (!ws || !realpath(ws, top)) return 1; /* no workspace: nothing is the folder's */
    if (!strchr(exe, '/')) {
        if (on_path(exe, found, sizeof found)) return 1; /* nothing runs */
        exe = found;
    }
    /* the path as named (its folder resolved: a symlinked workspace), and
     * the file it finally is: either inside makes it the folder's */
    snprintf(dir, sizeof dir, "%s", exe);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    char named[PATH_MAX];
    if (slash && realpath(dir[0] ? dir : "/", named)) {
        size_t l = strlen(named);
        snprintf(named + l, sizeof named - l, "/%s", slash + 1);
        if (below(named, top)) return 0;
    }
    if (below(exe, top)) return 0;
    if (realpath(exe, real) && below(real, top)) return 0;
    return 1;
}
