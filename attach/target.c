/* target.c: opening a target (target.h): which file holds the runtime
 * (/proc/PID/maps + its ELF dynamic symbols), which Python it is
 * (Py_Version, or Py_GetVersion's text on 3.9/3.10) and which layout to
 * read it with (the generated rows, or the target's _Py_DebugOffsets). */
#include "target.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "elfsym.h"
#include "procfs.h"

#define ATTACH_MAX_CANDIDATES 8
#define ATTACH_MAX_BSS ((size_t)16 << 20) /* bytes of .bss searched for the version text */
#define ATTACH_VERSION_TEXT 250           /* Py_GetVersion's buffer (3.9/3.10) */
#define ATTACH_DELETED " (deleted)"       /* /proc/PID/maps' mark of a file unlinked since */

static int read_u64(struct attach_proc *ap, uint64_t addr, uint64_t *out)
{
    return attach_mem_read(&ap->mem, addr, out, sizeof *out);
}

static int is_libpython(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    return !strncmp(b, "libpython3.", 11) && strstr(b, ".so");
}

/* A python3.X binary mapped by something else: run through a loader
 * (`ld.so python3.14`, as tests/py-sid.sh runs Debian sid's), the
 * executable is ld.so and the interpreter one of its mappings. */
static int is_python_binary(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    if (strncmp(b, "python3", 7)) return 0;
    b += 7;
    if (*b == 0) return 1;
    if (*b++ != '.' || !*b) return 0;
    while (*b >= '0' && *b <= '9')
        b++;
    return *b == 0;
}

int attach__minor_from_name(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    if (!strncmp(b, "lib", 3)) b += 3;
    if (strncmp(b, "python3.", 8)) return -1;
    b += 8;
    if (*b < '0' || *b > '9') return -1;
    return (int)strtol(b, NULL, 10);
}

int attach__mappings(pid_t pid, struct attach__mapping *m, int max,
                     int (*keep)(const char *path, const char *exe))
{
    char path[64], exe[512];
    procfs_exe(NULL, pid, exe, sizeof exe);
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -errno;
    int nm = 0;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        unsigned long start, end, off;
        int pos = 0;
        if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %n", &start, &end, &off, &pos) < 3 || !pos)
            continue;
        char *file = line + pos;
        file[strcspn(file, "\n")] = 0;
        if (file[0] != '/' || off != 0 || nm == max || (keep && !keep(file, exe))) continue;
        int dup = 0;
        for (int i = 0; i < nm && !dup; i++)
            dup = !strcmp(m[i].path, file);
        if (dup) continue;
        snprintf(m[nm].path, sizeof m[nm].path, "%s", file);
        m[nm].base = start;
        m[nm].end = end;
        m[nm].exe = !strcmp(file, exe);
        if (m[nm].exe && nm > 0) { /* the executable goes first */
            struct attach__mapping t = m[0];
            m[0] = m[nm];
            m[nm] = t;
        }
        nm++;
    }
    fclose(f);
    return nm;
}

int attach__open_image(pid_t pid, const struct attach__mapping *m)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "/proc/%d/map_files/%llx-%llx", (int)pid, (unsigned long long)m->base,
             (unsigned long long)m->end);
    int fd = elfsym_open(p);
    if (fd >= 0) return fd;
    if (m->exe) {
        snprintf(p, sizeof p, "/proc/%d/exe", (int)pid);
        if ((fd = elfsym_open(p)) >= 0) return fd;
    }
    if (snprintf(p, sizeof p, "/proc/%d/root%s", (int)pid, m->path) >= (int)sizeof p)
        return -ENAMETOOLONG;
    return elfsym_open(p);
}

/* The executable, every libpython and every python3.X binary mapped */
static int is_candidate(const char *path, const char *exe)
{
    char p[512];
    snprintf(p, sizeof p, "%s", path);
    size_t l = strlen(p), dl = strlen(ATTACH_DELETED);
    if (l > dl && !strcmp(p + l - dl, ATTACH_DELETED)) p[l - dl] = 0; /* replaced since */
    return !strcmp(path, exe) || is_libpython(p) || is_python_binary(p);
}

int attach__perm_message(pid_t pid, char *why, size_t n)
{
    int scope = -1;
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    if (f) {
        if (fscanf(f, "%d", &scope) != 1) scope = -1;
        fclose(f);
    }
    if (geteuid() != 0 && scope < 0)
        snprintf(why, n,
                 "permission denied reading process %d: it runs as another user; run "
                 "hotline attach as that user or as root",
                 (int)pid);
    else if (geteuid() != 0)
        snprintf(why, n,
                 "permission denied reading process %d: it must run as your user and "
                 "kernel.yama.ptrace_scope must be 0 (it is %d; `sudo sysctl "
                 "kernel.yama.ptrace_scope=0`), or run hotline attach as root",
                 (int)pid, scope);
    else
        snprintf(why, n,
                 "permission denied reading process %d as root: this container lacks "
                 "CAP_SYS_PTRACE (docker run --cap-add=SYS_PTRACE) or a security module "
                 "forbids it (ptrace_scope %d)",
                 (int)pid, scope);
    return -EPERM;
}

/* Take the target's own offsets from its _Py_DebugOffsets (3.13+). */
static int apply_debug_offsets(struct attach_proc *ap, char *why, size_t n)
{
    struct attach_layout *l = &ap->lay;
    if (l->dbg_size > 4096) return ATTACH_EVERSION;
    uint8_t d[4096];
    int rc = attach_mem_read(&ap->mem, ap->runtime, d, l->dbg_size);
    if (rc) return rc;
    if (memcmp(d, "xdebugpy", 8) != 0) {
        snprintf(why, n, "Python %s in process %d has no _Py_DebugOffsets cookie", ap->version,
                 (int)ap->pid);
        return ATTACH_EVERSION;
    }
    uint64_t v;
    memcpy(&v, d + l->dbg_version, 8);
    if ((v >> 16) != (ap->version_hex >> 16)) {
        snprintf(why, n, "_Py_DebugOffsets says %d.%d, Py_Version %s", (int)(v >> 24) & 255,
                 (int)(v >> 16) & 255, ap->version);
        return ATTACH_EVERSION;
    }
    const struct {
        uint64_t *field, pos;
    } f[] = {
        {&l->rt_interp_head, l->dbg_rt_interp_head},
        {&l->is_threads_head, l->dbg_is_threads_head},
        {&l->ts_next, l->dbg_ts_next},
        {&l->ts_native_tid, l->dbg_ts_native_tid},
        {&l->ts_frame, l->dbg_ts_frame},
        {&l->fr_previous, l->dbg_fr_previous},
        {&l->fr_code, l->dbg_fr_code},
        {&l->fr_instr, l->dbg_fr_instr},
        {&l->fr_owner, l->dbg_fr_owner},
        {&l->co_filename, l->dbg_co_filename},
        {&l->co_qualname, l->dbg_co_qualname},
        {&l->co_linetable, l->dbg_co_linetable},
        {&l->co_firstlineno, l->dbg_co_firstlineno},
        {&l->co_code_adaptive, l->dbg_co_code_adaptive},
        {&l->uni_length, l->dbg_uni_length},
        {&l->uni_state, l->dbg_uni_state},
        {&l->uni_ascii_size, l->dbg_uni_ascii_size},
        {&l->gil_locked, l->dbg_gil_locked},
        {&l->gil_holder, l->dbg_gil_holder},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        uint64_t val;
        if (f[i].pos + 8 > l->dbg_size) return ATTACH_EVERSION;
        memcpy(&val, d + f[i].pos, 8);
        if (val > (1u << 20)) {
            snprintf(why, n, "Python %s: implausible _Py_DebugOffsets entry %zu (%llu)",
                     ap->version, i, (unsigned long long)val);
            return ATTACH_EVERSION;
        }
        *f[i].field = val;
    }
    return 0;
}

static int pick_layout(struct attach_proc *ap, char *why, size_t n)
{
    unsigned major = ap->version_hex >> 24, minor = (ap->version_hex >> 16) & 255;
    for (size_t i = 0; i < attach_nlayouts; i++)
        if (attach_layouts[i].major == major && attach_layouts[i].minor == minor) {
            ap->lay = attach_layouts[i];
            return ap->lay.has_debug ? apply_debug_offsets(ap, why, n) : 0;
        }
    char have[256] = "";
    for (size_t i = 0; i < attach_nlayouts; i++) {
        size_t l = strlen(have);
        snprintf(have + l, sizeof have - l, "%s%d.%d", i ? ", " : "", (int)attach_layouts[i].major,
                 (int)attach_layouts[i].minor);
    }
    snprintf(why, n, "Python %s is not supported by this hotline build (it reads: %s)", ap->version,
             have[0] ? have : "none");
    return ATTACH_EVERSION;
}

/* How many different versions the text Py_GetVersion() writes ("PY_VERSION
 * (buildinfo) compiler", into a static buffer of 250 bytes) appears with in
 * b[0..n): 0, 1 (*hex and its PY_VERSION in tag) or 2 (more than one). */
static int version_text(const uint8_t *b, size_t n, uint32_t *hex, char *tag, size_t tagn)
{
    int found = 0;
    for (size_t i = 0; i + 8 < n; i++) {
        if (b[i] != '3' || b[i + 1] != '.') continue;
        size_t j = i + 2, end = n - i < ATTACH_VERSION_TEXT ? n : i + ATTACH_VERSION_TEXT;
        unsigned v[2] = {0, 0};
        int ok = 1;
        for (int k = 0; k < 2 && ok; k++) {
            size_t d0 = j;
            while (j < end && j - d0 < 3 && b[j] >= '0' && b[j] <= '9')
                v[k] = v[k] * 10 + (unsigned)(b[j++] - '0');
            ok = j > d0 && (k == 1 || (j < end && b[j++] == '.'));
        }
        if (!ok) continue;
        while (j < end && j - i < 24 && (isalnum(b[j]) || b[j] == '+')) /* "rc2", "+" */
            j++;
        size_t vend = j;
        if (j + 1 >= end || b[j] != ' ' || b[j + 1] != '(') continue;
        /* the rest: "(buildinfo) compiler", printable, ending in the buffer */
        size_t close = 0;
        for (j += 2; j < end && b[j] && (isprint(b[j]) || b[j] == '\n'); j++)
            if (!close && b[j] == ')' && j + 1 < end && b[j + 1] == ' ') close = j;
        if (j == end || b[j] || !close) continue;
        uint32_t h = 3u << 24 | (v[0] & 255) << 16 | (v[1] & 255) << 8;
        if (found && h != *hex) return 2;
        if (!found && vend - i < tagn) {
            memcpy(tag, b + i, vend - i);
            tag[vend - i] = 0;
        }
        *hex = h;
        found = 1;
        i = j;
    }
    return found;
}

/* The version of a runtime without Py_Version (3.9/3.10). Py_GetVersion()
 * formats its text into a static buffer when the sys module is set up (it
 * is sys.version), so the interpreter's .bss holds it: read there once,
 * it gives the exact version, and the file name, when it has a version,
 * must agree (a binary named `python3` or an embedding program says
 * nothing; a text that disagrees is a reason to refuse, not to guess). 0,
 * ATTACH_EVERSION with why, -EPERM, -ESRCH or -ENOMEM. */
static int old_version(struct attach_proc *ap, int fd, const char *path, uint64_t bias, char *why,
                       size_t n)
{
    uint64_t start, len, load;
    if (elfsym_bss_fd(fd, &start, &len, &load) || !len) {
        snprintf(why, n,
                 "process %d: %s has no Py_Version (Python 3.10 or older) and no .bss to read "
                 "Py_GetVersion's text from: cannot tell which Python it is",
                 (int)ap->pid, path);
        return ATTACH_EVERSION;
    }
    if (len > ATTACH_MAX_BSS) len = ATTACH_MAX_BSS;
    uint8_t *b = malloc(len);
    if (!b) return -ENOMEM;
    for (uint64_t o = 0; o < len; o += 65536) {
        size_t k = len - o < 65536 ? len - o : 65536;
        int rc = attach_mem_read(&ap->mem, bias + start + o, b + o, k);
        if (rc == -EPERM || rc == -ESRCH) {
            free(b);
            return rc;
        }
        if (rc) memset(b + o, 0, k);
    }
    uint32_t hex = 0;
    char tag[32] = "";
    int nv = version_text(b, len, &hex, tag, sizeof tag);
    free(b);
    int named = attach__minor_from_name(path), minor = (int)(hex >> 16) & 255;
    if (nv != 1) {
        snprintf(why, n,
                 "process %d: cannot tell which Python %s is: no Py_Version (3.10 or older) "
                 "and %s",
                 (int)ap->pid, path,
                 nv ? "Py_GetVersion's text appears with different versions in its data"
                    : "no Py_GetVersion text in its data");
        return ATTACH_EVERSION;
    }
    if (named >= 0 && named != minor) {
        snprintf(why, n,
                 "process %d: %s is named for Python 3.%d but its Py_GetVersion text says %s: "
                 "not sure which Python it is",
                 (int)ap->pid, path, named, tag);
        return ATTACH_EVERSION;
    }
    ap->version_hex = hex;
    snprintf(ap->version, sizeof ap->version, "%s", tag);
    return 0;
}

/* Offset of the kernel tid in glibc's struct pthread (where pthread_self()
 * points), found in hotline's own thread as the agent does in its process
 * (profiler/walk.c, walk_tid_offset): the first int equal to gettid().
 * The target is assumed to use the same glibc layout; check_thread_ids()
 * and pthread_tid() hold it to /proc. >0 or -errno. */
static long own_tid_offset(void)
{
    uint8_t buf[4096];
    uint64_t self = (uint64_t)pthread_self();
    int tid = (int)syscall(SYS_gettid);
    size_t len = sizeof buf;
    /* the main thread's struct can end near its mapping's end: read less */
    while (attach_read(getpid(), self, buf, len) != 0)
        if ((len /= 2) < 1024) return -EFAULT;
    for (size_t off = 0; off + sizeof(int) <= len; off += sizeof(int)) {
        int v;
        memcpy(&v, buf + off, sizeof v);
        if (v == tid) return (long)off;
    }
    return -ENOENT;
}

/* 3.9/3.10: the target against its row. PyFrame_Type and PyCode_Type
 * (exported) report their objects' sizes in tp_basicsize, which must be the
 * sizes of the structures the row was made from: a 3.9 read as 3.10 (or a
 * patched interpreter) is refused here, before any frame is read. */
static int check_frame_objects(struct attach_proc *ap, uint64_t frame_type, uint64_t code_type,
                               char *why, size_t n)
{
    const struct attach_layout *l = &ap->lay;
    int64_t fs = -1, cs = -1;
    int rc = frame_type && code_type ? 0 : -ENOENT;
    if (!rc) rc = attach_mem_read(&ap->mem, frame_type + l->tp_basicsize, &fs, sizeof fs);
    if (!rc) rc = attach_mem_read(&ap->mem, code_type + l->tp_basicsize, &cs, sizeof cs);
    if (rc == -EPERM || rc == -ESRCH) return rc;
    if (rc || fs != (int64_t)l->frame_size || cs != (int64_t)l->code_size) {
        snprintf(why, n,
                 "Python %s in process %d does not have the layout this hotline build read from "
                 "3.%d's headers (frame %lld bytes, code %lld; expected %llu, %llu): a patched "
                 "or differently configured interpreter",
                 ap->version, (int)ap->pid, (int)l->minor, (long long)fs, (long long)cs,
                 (unsigned long long)l->frame_size, (unsigned long long)l->code_size);
        return ATTACH_EVERSION;
    }
    ap->frame_type = frame_type;
    ap->code_type = code_type;
    ap->tid_off = own_tid_offset();
    if (ap->tid_off <= 0) {
        snprintf(why, n,
                 "Python %s in process %d keeps no native thread id, and hotline cannot find "
                 "where its own C library keeps one (struct pthread): not read",
                 ap->version, (int)ap->pid);
        return ATTACH_EVERSION;
    }
    return 0;
}

int attach__target_open(struct attach_proc *ap, pid_t pid, char *why, size_t n)
{
    memset(ap, 0, sizeof *ap);
    ap->pid = pid;
    ap->mem = attach_mem_live(pid);
    int alive = procfs_alive(NULL, pid, why, n);
    if (alive < 0) return alive;
    struct attach__mapping c[ATTACH_MAX_CANDIDATES];
    int nc = attach__mappings(pid, c, ATTACH_MAX_CANDIDATES, is_candidate);
    if (nc == -EACCES || nc == -EPERM) return attach__perm_message(pid, why, n);
    if (nc < 0) return nc == -ENOENT ? -ESRCH : nc;
    int found = 0, last = ATTACH_ENOTPY;
    const char *unread = NULL; /* a candidate replaced since and not readable */
    for (int i = 0; i < nc; i++) {
        int fd = attach__open_image(pid, &c[i]);
        if (fd < 0) {
            if (strstr(c[i].path, ATTACH_DELETED)) unread = c[i].path;
            continue;
        }
        static const char *const names[] = {"_PyRuntime", "Py_Version", "PyFrame_Type",
                                            "PyCode_Type"};
        uint64_t vals[4], load;
        if (elfsym_lookup_fd(fd, names, vals, 4, &load) != 0 || !vals[0] ||
            snprintf(ap->binary, sizeof ap->binary, "%s", c[i].path) >= (int)sizeof ap->binary) {
            close(fd);
            continue;
        }
        found = 1;
        uint64_t bias = c[i].base - load;
        ap->runtime = bias + vals[0];
        int rc = vals[1] ? attach_mem_read(&ap->mem, bias + vals[1], &ap->version_hex, 4)
                         : old_version(ap, fd, c[i].path, bias, why, n);
        close(fd);
        if (rc == -EPERM) return attach__perm_message(pid, why, n);
        if (rc == -ESRCH) {
            snprintf(why, n, "process %d exited", (int)pid);
            return -ESRCH;
        }
        if (rc == -ENOMEM) return rc;
        if (rc == ATTACH_EVERSION) last = rc;
        if (rc) continue;
        if (vals[1])
            snprintf(ap->version, sizeof ap->version, "%u.%u.%u", ap->version_hex >> 24,
                     (ap->version_hex >> 16) & 255, (ap->version_hex >> 8) & 255);
        last = pick_layout(ap, why, n);
        if (!last && ap->lay.frame_object)
            last = check_frame_objects(ap, vals[2] ? bias + vals[2] : 0,
                                       vals[3] ? bias + vals[3] : 0, why, n);
        if (last == -EPERM) return attach__perm_message(pid, why, n);
        if (last) continue;
        /* a second libpython (ctypes.CDLL) has a runtime that never started:
         * take the one with an interpreter */
        uint64_t head = 0;
        if (read_u64(ap, ap->runtime + ap->lay.rt_interp_head, &head) || !head) {
            snprintf(why, n, "process %d: the Python runtime in %s is not initialised", (int)pid,
                     c[i].path);
            last = ATTACH_ENOTPY;
            continue;
        }
        return 0;
    }
    if (!found) {
        char comm[64];
        if (procfs_comm(NULL, pid, 0, comm, sizeof comm)) snprintf(comm, sizeof comm, "?");
        if (unread)
            snprintf(why, n,
                     "process %d (%s): %s was deleted or replaced since it started, and its "
                     "mapped copy cannot be opened (/proc/%d/map_files needs root): cannot "
                     "tell whether it is a Python process",
                     (int)pid, comm, unread, (int)pid);
        else
            snprintf(why, n,
                     "process %d (%s) is not a Python process (no _PyRuntime in its "
                     "executable or a libpython)",
                     (int)pid, comm);
        return ATTACH_ENOTPY;
    }
    return last;
}
