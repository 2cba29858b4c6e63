/* marimo.c: see marimo.h. Pure parts first (ids, the notebook's cells),
 * then what reads /proc and the notebook file. */
#include "marimo.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procfs.h"

#define CELL_PREFIX "__marimo__cell_"

int marimo_cell_id(const char *file, char *id, size_t n)
{
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    if (strncmp(base, CELL_PREFIX, sizeof CELL_PREFIX - 1)) return 0;
    const char *p = base + sizeof CELL_PREFIX - 1, *e = strchr(p, '_');
    if (!e || e == p || (size_t)(e - p) >= n) return 0;
    memcpy(id, p, (size_t)(e - p));
    id[e - p] = 0;
    return 1;
}

/* CPython's random.Random(42): MT19937 seeded by init_by_array([42]). */
#define MT_N 624
struct mt {
    uint32_t s[MT_N];
    int i;
};

static void mt_seed42(struct mt *m)
{
    uint32_t *s = m->s;
    s[0] = 19650218u;
    for (int i = 1; i < MT_N; i++)
        s[i] = 1812433253u * (s[i - 1] ^ (s[i - 1] >> 30)) + (uint32_t)i;
    int i = 1;
    for (int k = MT_N; k; k--) { /* key [42], j always 0 */
        s[i] = (s[i] ^ ((s[i - 1] ^ (s[i - 1] >> 30)) * 1664525u)) + 42u;
        if (++i >= MT_N) s[0] = s[MT_N - 1], i = 1;
    }
    for (int k = MT_N - 1; k; k--) {
        s[i] = (s[i] ^ ((s[i - 1] ^ (s[i - 1] >> 30)) * 1566083941u)) - (uint32_t)i;
        if (++i >= MT_N) s[0] = s[MT_N - 1], i = 1;
    }
    s[0] = 0x80000000u;
    m->i = MT_N;
}

static uint32_t mt_next(struct mt *m)
{
    uint32_t *s = m->s;
    if (m->i >= MT_N) {
        for (int k = 0; k < MT_N; k++) {
            uint32_t y = (s[k] & 0x80000000u) | (s[(k + 1) % MT_N] & 0x7fffffffu);
            s[k] = s[(k + 397) % MT_N] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
        }
        m->i = 0;
    }
    uint32_t y = s[m->i++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
}

static double mt_random(struct mt *m) /* random.random() */
{
    uint32_t a = mt_next(m) >> 5, b = mt_next(m) >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

void marimo_ids(int n, char (*out)[8])
{
    static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    struct mt *m = malloc(sizeof *m);
    if (!m) {
        for (int i = 0; i < n; i++)
            out[i][0] = 0;
        return;
    }
    mt_seed42(m);
    for (int i = 0; i < n; i++) {
        for (int tries = 0; tries < 100; tries++) { /* CellIdGenerator: repeats skipped */
            for (int k = 0; k < 4; k++)
                out[i][k] = letters[(int)(mt_random(m) * 52.0)];
            out[i][4] = 0;
            int seen = 0;
            for (int j = 0; j < i && !seen; j++)
                seen = !memcmp(out[j], out[i], 5);
            if (!seen) break;
        }
    }
    free(m);
}

static const char *nb_line(const struct marimo_nb *nb, int i, int *len) /* i 1-based */
{
    const char *p = nb->text + nb->line_off[i - 1];
    int l = nb->line_off[i] - nb->line_off[i - 1];
    while (l > 0 && (p[l - 1] == '\n' || p[l - 1] == '\r'))
        l--;
    *len = l;
    return p;
}

static int starts(const char *p, int len, const char *w)
{
    size_t n = strlen(w);
    return (size_t)len >= n && !memcmp(p, w, n);
}

/* `@app.cell`, `@app.cell(...)`: the word ends there */
static int deco(const char *p, int len, const char *w)
{
    size_t n = strlen(w);
    return starts(p, len, w) && ((size_t)len == n || p[n] == '(' || p[n] == ' ' || p[n] == '#');
}

/* Not blank, not only a comment. */
static int code_line(const char *p, int len)
{
    int i = 0;
    while (i < len && (p[i] == ' ' || p[i] == '\t'))
        i++;
    return i < len && p[i] != '#';
}

/* The first line from i on that starts at column 0 with one of the words
 * (within 64 lines), or 0. */
static int find_head(const struct marimo_nb *nb, int i, const char *const *words)
{
    for (int k = i; k <= nb->nlines && k < i + 64; k++) {
        int len;
        const char *p = nb_line(nb, k, &len);
        for (int w = 0; words[w]; w++)
            if (starts(p, len, words[w])) return k;
    }
    return 0;
}

/* The line after a cell's start: the next line at column 0 with code. */
static int cell_end(const struct marimo_nb *nb, int start)
{
    int k = start;
    for (; k <= nb->nlines; k++) {
        int len;
        const char *p = nb_line(nb, k, &len);
        if (len && p[0] != ' ' && p[0] != '\t' && p[0] != '#' && k > start) break;
    }
    return k - 1;
}

static int add_cell(struct marimo_nb *nb, const char *id, int start)
{
    if (nb->ncells >= MARIMO_MAX_CELLS) return 0;
    struct marimo_cell *c = &nb->cells[nb->ncells++];
    snprintf(c->id, sizeof c->id, "%s", id);
    c->start = start;
    c->end = start ? cell_end(nb, start) : 0;
    return 0;
}

int marimo_nb_parse(struct marimo_nb *nb, const char *text, size_t len)
{
    static const char *const defs[] = {"def ", "async def ", NULL};
    static const char *const heads[] = {"def ", "async def ", "class ", NULL};
    char(*ids)[8] = NULL;
    memset(nb, 0, sizeof *nb);
    if (len > MARIMO_MAX_FILE || !memmem(text, len, "marimo", 6)) return -EINVAL;
    int n = 1;
    for (size_t i = 0; i < len; i++)
        n += text[i] == '\n';
    nb->text = malloc(len + 1);
    nb->line_off = malloc(sizeof *nb->line_off * ((size_t)n + 1));
    nb->cells = malloc(sizeof *nb->cells * MARIMO_MAX_CELLS);
    ids = malloc(sizeof *ids * MARIMO_MAX_CELLS);
    if (!nb->text || !nb->line_off || !nb->cells || !ids) goto fail;
    memcpy(nb->text, text, len);
    nb->text[len] = 0;
    nb->nlines = 0;
    nb->line_off[0] = 0;
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\n') nb->line_off[++nb->nlines] = (int)i + 1;
    if (len && text[len - 1] != '\n') nb->line_off[++nb->nlines] = (int)len;
    int nid = 0;
    for (int i = 1; i <= nb->nlines; i++) {
        int l;
        const char *p = nb_line(nb, i, &l);
        if (starts(p, l, "with app.setup")) {
            add_cell(nb, "setup", i + 1);
        } else if (deco(p, l, "@app.cell")) {
            int d = find_head(nb, i + 1, defs), k = d;
            for (; d && k <= nb->nlines && k < d + 64; k++) { /* the signature's end */
                int kl;
                const char *kp = nb_line(nb, k, &kl);
                while (kl && (kp[kl - 1] == ' ' || kp[kl - 1] == '\t'))
                    kl--;
                if (kl && kp[kl - 1] == ':') break;
            }
            if (nid < MARIMO_MAX_CELLS) add_cell(nb, "", d && k <= nb->nlines ? k + 1 : 0);
            nid++;
        } else if (deco(p, l, "@app.function") || deco(p, l, "@app.class_definition")) {
            if (nid < MARIMO_MAX_CELLS) add_cell(nb, "", find_head(nb, i + 1, heads));
            nid++;
        } else if (starts(p, l, "app._unparsable_cell(")) {
            if (nid < MARIMO_MAX_CELLS) add_cell(nb, "", 0);
            nid++;
        }
    }
    if (!nb->ncells) goto fail_inval;
    marimo_ids(nid < MARIMO_MAX_CELLS ? nid : MARIMO_MAX_CELLS, ids);
    for (int i = 0, k = 0; i < nb->ncells; i++)
        if (!nb->cells[i].id[0]) memcpy(nb->cells[i].id, ids[k++], 8);
    free(ids);
    return 0;
fail_inval:
    free(ids);
    marimo_nb_free(nb);
    return -EINVAL;
fail:
    free(ids);
    marimo_nb_free(nb);
    return -ENOMEM;
}

void marimo_nb_free(struct marimo_nb *nb)
{
    free(nb->text);
    free(nb->line_off);
    free(nb->cells);
    nb->text = NULL;
    nb->line_off = NULL;
    nb->cells = NULL;
    nb->ncells = nb->nlines = 0;
}

int marimo_nb_line(const struct marimo_nb *nb, const char *id, int line)
{
    for (int i = 0; i < nb->ncells; i++) {
        const struct marimo_cell *c = &nb->cells[i];
        if (strcmp(c->id, id)) continue;
        int at = c->start + line - 1, len;
        if (!c->start || line < 1 || at > c->end) return 0;
        const char *p = nb_line(nb, at, &len);
        return code_line(p, len) ? at : 0;
    }
    return 0;
}

int marimo_nb_load(struct marimo_nb *nb, const char *path)
{
    memset(nb, 0, sizeof *nb);
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return -errno;
    struct stat st;
    char *buf = NULL;
    int rc = -EINVAL;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > MARIMO_MAX_FILE) goto out;
    buf = malloc((size_t)st.st_size + 1);
    rc = -ENOMEM;
    if (!buf) goto out;
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r <= 0) break;
        got += (size_t)r;
    }
    rc = marimo_nb_parse(nb, buf, got);
    if (!rc) snprintf(nb->path, sizeof nb->path, "%s", path);
out:
    free(buf);
    close(fd);
    return rc;
}

/* The i-th NUL-separated argument of args[0..len), or NULL. */
static const char *arg_at(const char *args, long len, int i)
{
    for (long o = 0; o < len; o += (long)strlen(args + o) + 1)
        if (!i--) return args + o;
    return NULL;
}

static void joined(const char *root, pid_t pid, const char *arg, char *out, size_t n)
{
    char cwd[PATH_MAX] = "", full[2 * PATH_MAX + 2], real[PATH_MAX];
    if (arg[0] != '/') procfs_cwd(root, pid, cwd, sizeof cwd);
    snprintf(full, sizeof full, "%s%s%s", cwd, cwd[0] ? "/" : "", arg);
    snprintf(out, n, "%s", realpath(full, real) ? real : full);
}

int marimo_server(const char *procfs, pid_t pid, char *out, size_t n)
{
    return marimo_server_script(procfs, pid, out, n, NULL, 0);
}

int marimo_server_script(const char *procfs, pid_t pid, char *out, size_t n, char *script,
                         size_t sn)
{
    char args[8192];
    long len = procfs_cmdline(procfs, pid, args, sizeof args - 1);
    if (len <= 0) return 0;
    args[len] = 0;
    out[0] = 0;
    int sub = -1; /* the index of `edit` / `run` */
    for (int i = 0; i < 4 && sub < 0; i++) {
        const char *a = arg_at(args, len, i);
        if (!a) return 0;
        const char *base = strrchr(a, '/');
        base = base ? base + 1 : a;
        if (!strcmp(base, "marimo") || (!strcmp(a, "marimo") && i > 0)) sub = i + 1;
    }
    const char *s = sub > 0 ? arg_at(args, len, sub) : NULL;
    if (!s || (strcmp(s, "edit") && strcmp(s, "run"))) return 0;
    if (script) snprintf(script, sn, "%s", arg_at(args, len, sub - 1));
    for (int i = sub + 1;; i++) {
        const char *a = arg_at(args, len, i);
        if (!a) break;
        size_t l = strlen(a);
        if (l > 3 && a[0] != '-' && !strcmp(a + l - 3, ".py")) {
            joined(procfs, pid, a, out, n);
            break;
        }
    }
    return 1;
}

int marimo_kernel(const char *procfs, pid_t pid, pid_t *server, char *out, size_t n)
{
    char args[4096];
    long len = procfs_cmdline(procfs, pid, args, sizeof args - 1);
    if (len <= 0) return 0;
    args[len] = 0;
    if (!memmem(args, (size_t)len, "spawn_main", 10)) return 0; /* multiprocessing's spawn */
    struct procfs_stat ps;
    if (!procfs_stat(procfs, pid, &ps, NULL, 0) || ps.ppid <= 1) return 0;
    if (!marimo_server(procfs, ps.ppid, out, n)) return 0;
    *server = ps.ppid;
    return 1;
}

static int has_app(const char *path)
{
    struct marimo_nb nb;
    if (marimo_nb_load(&nb, path)) return 0;
    int yes = strstr(nb.text, "marimo.App") != NULL;
    marimo_nb_free(&nb);
    return yes;
}

int marimo_find_notebook(const char *procfs, pid_t pid, char *out, size_t n)
{
    struct procfs_stat ps;
    pid_t who[2] = {pid, 0};
    if (procfs_stat(procfs, pid, &ps, NULL, 0) && ps.ppid > 1) who[1] = ps.ppid;
    for (int w = 0; w < 2 && who[w]; w++) {
        char args[8192];
        long len = procfs_cmdline(procfs, who[w], args, sizeof args - 1);
        if (len <= 0) continue;
        args[len] = 0;
        for (int i = 1;; i++) {
            const char *a = arg_at(args, len, i);
            if (!a) break;
            size_t l = strlen(a);
            if (l <= 3 || a[0] == '-' || strcmp(a + l - 3, ".py")) continue;
            joined(procfs, who[w], a, out, n);
            if (has_app(out)) return 0;
        }
    }
    out[0] = 0;
    return -ENOENT;
}
