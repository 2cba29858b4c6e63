/* attach.c: see attach.h. Order of a reader's questions: which file holds
 * the runtime (maps + ELF), which layout (Py_Version, _Py_DebugOffsets or
 * the generated table), then threads -> frames -> code objects. */
#include "attach.h"

#include <errno.h>
#include <fcntl.h>
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "elfsym.h"
#include "linetable.h"
#include "procfs.h"

#define ATTACH_MAX_CANDIDATES 8
#define ATTACH_MAX_BSS ((size_t)16 << 20) /* bytes of .bss searched for the version text */
#define ATTACH_VERSION_TEXT 250           /* Py_GetVersion's buffer (3.9/3.10) */
#define ATTACH_DELETED " (deleted)"       /* /proc/PID/maps' mark of a file unlinked since */

int attach_read(pid_t pid, uint64_t addr, void *buf, size_t n)
{
    if (!addr) return -EFAULT;
    struct iovec local = {buf, n}, remote = {(void *)(uintptr_t)addr, n};
    ssize_t r = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (r < 0) return errno == ESRCH ? -ESRCH : errno == EPERM ? -EPERM : -EFAULT;
    return (size_t)r == n ? 0 : -EFAULT;
}

static int read_u64(pid_t pid, uint64_t addr, uint64_t *out)
{
    return attach_read(pid, addr, out, sizeof *out);
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
    int rc = attach_read(ap->pid, ap->runtime, d, l->dbg_size);
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
        int rc = attach_read(ap->pid, bias + start + o, b + o, k);
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
    if (!rc) rc = attach_read(ap->pid, frame_type + l->tp_basicsize, &fs, sizeof fs);
    if (!rc) rc = attach_read(ap->pid, code_type + l->tp_basicsize, &cs, sizeof cs);
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

/* 3.9/3.10: the tids the thread states lead to (pthread_tid) must be the
 * target's threads in one of a few reads (a race can spoil one), else its
 * C library keeps them elsewhere than hotline's: refused rather than
 * charging the wrong threads. */
static int check_thread_ids(struct attach_proc *ap, char *why, size_t n)
{
    struct attach_thread *t = malloc(ATTACH_MAX_THREADS * sizeof *t);
    if (!t) return -ENOMEM;
    int rc = ATTACH_ERACE;
    for (int k = 0; k < 3 && rc == ATTACH_ERACE; k++)
        rc = attach_threads(ap, t, ATTACH_MAX_THREADS);
    free(t);
    if (rc >= 0) return 0;
    if (rc == -ESRCH) {
        snprintf(why, n, "process %d exited", (int)ap->pid);
        return -ESRCH;
    }
    snprintf(why, n,
             "Python %s in process %d: its thread states do not lead to its threads in "
             "/proc/%d/task (their pthread_t read at glibc's tid offset %ld): its C library "
             "keeps the thread id elsewhere than hotline's (another libc in a container?)",
             ap->version, (int)ap->pid, (int)ap->pid, ap->tid_off);
    return ATTACH_EVERSION;
}

int attach_open(struct attach_proc *ap, pid_t pid, char *why, size_t n)
{
    memset(ap, 0, sizeof *ap);
    ap->pid = pid;
    char st = procfs_state(NULL, pid);
    if (pid <= 0 || !st || st == 'X') {
        snprintf(why, n, "no such process: %d", (int)pid);
        return -ESRCH;
    }
    if (st == 'Z') {
        snprintf(why, n, "process %d has exited (a zombie waiting for its parent)", (int)pid);
        return -ESRCH;
    }
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
        int rc = vals[1] ? attach_read(pid, bias + vals[1], &ap->version_hex, 4)
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
        if (read_u64(pid, ap->runtime + ap->lay.rt_interp_head, &head) || !head) {
            snprintf(why, n, "process %d: the Python runtime in %s is not initialised", (int)pid,
                     c[i].path);
            last = ATTACH_ENOTPY;
            continue;
        }
        ap->codes = calloc(ATTACH_CODE_CACHE, sizeof *ap->codes);
        if (!ap->codes) return -ENOMEM;
        return ap->lay.frame_object ? check_thread_ids(ap, why, n) : 0;
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

void attach_close(struct attach_proc *ap)
{
    if (ap->codes)
        for (int i = 0; i < ATTACH_CODE_CACHE; i++)
            free(ap->codes[i].tab);
    free(ap->codes);
    ap->codes = NULL;
}

static int thread_frame(struct attach_proc *ap, uint64_t ts, uint64_t *frame)
{
    const struct attach_layout *l = &ap->lay;
    uint64_t p;
    int rc = read_u64(ap->pid, ts + l->ts_frame, &p);
    if (rc) return rc;
    if (l->has_cframe && p) rc = read_u64(ap->pid, p + l->cf_current, &p);
    *frame = p;
    return rc;
}

static int frame_sig(struct attach_proc *ap, uint64_t frame, uint64_t *sig)
{
    uint64_t instr = 0;
    int rc = 0;
    if (frame && ap->lay.frame_object) { /* f_lasti, an int */
        uint32_t lasti = 0;
        rc = attach_read(ap->pid, frame + ap->lay.fr_instr, &lasti, sizeof lasti);
        instr = lasti;
    } else if (frame) {
        rc = read_u64(ap->pid, frame + ap->lay.fr_instr, &instr);
    }
    *sig = (frame * 0x9E3779B97F4A7C15ull) ^ instr;
    return rc;
}

/* 3.9/3.10: the kernel tid of the thread whose pthread_t is p: glibc's tid
 * at tid_off in the target's struct pthread (hotline's own glibc layout),
 * kept only when /proc/PID/task has it; else, in a process with one
 * thread, that thread. 0 when neither (the thread's sample is dropped). */
static long pthread_tid(struct attach_proc *ap, uint64_t p)
{
    int32_t v = 0;
    if (p && attach_read(ap->pid, p + (uint64_t)ap->tid_off, &v, sizeof v) == 0 && v > 0 &&
        procfs_task_exists(NULL, ap->pid, v))
        return v;
    long tids[2];
    return procfs_tasks(NULL, ap->pid, tids, 2) == 1 ? tids[0] : 0;
}

int attach_threads(struct attach_proc *ap, struct attach_thread *out, int max)
{
    const struct attach_layout *l = &ap->lay;
    uint64_t interp, ts;
    int rc = read_u64(ap->pid, ap->runtime + l->rt_interp_head, &interp);
    if (!rc) rc = read_u64(ap->pid, interp + l->is_threads_head, &ts);
    if (rc) return rc == -ESRCH ? rc : ATTACH_ERACE;
    int nt = 0, seen = 0;
    while (ts && nt < max) {
        struct attach_thread *t = &out[nt];
        t->tstate = ts;
        uint64_t tid;
        rc = read_u64(ap->pid, ts + l->ts_native_tid, &tid);
        if (!rc) rc = thread_frame(ap, ts, &t->frame);
        if (!rc) rc = frame_sig(ap, t->frame, &t->sig);
        if (!rc) rc = read_u64(ap->pid, ts + l->ts_next, &ts);
        if (rc) return rc == -ESRCH ? rc : ATTACH_ERACE;
        /* 3.9/3.10: tid is the pthread_t; a list longer than 4 * max cycles */
        if (l->frame_object) {
            if (++seen > 4 * max) return ATTACH_ERACE;
            if (!(tid = (uint64_t)pthread_tid(ap, tid))) continue;
        }
        if (tid == 0 || tid > INT_MAX) return ATTACH_ERACE;
        t->tid = (long)tid;
        nt++;
    }
    /* 3.9/3.10: not one thread state led to a thread of the target */
    if (l->frame_object && seen && !nt) return ATTACH_ERACE;
    return nt;
}

int attach_thread_sig(struct attach_proc *ap, const struct attach_thread *t, uint64_t *sig)
{
    uint64_t frame;
    int rc = thread_frame(ap, t->tstate, &frame);
    if (!rc) rc = frame_sig(ap, frame, sig);
    return rc;
}

int attach_holds_gil(struct attach_proc *ap, const struct attach_thread *t)
{
    const struct attach_layout *l = &ap->lay;
    uint64_t base = ap->runtime;
    int rc = 0;
    if (l->gil_in_interp) rc = read_u64(ap->pid, ap->runtime + l->rt_interp_head, &base);
    int locked = 0;
    uint64_t holder = 0;
    if (!rc) rc = attach_read(ap->pid, base + l->gil_locked, &locked, sizeof locked);
    if (!rc) rc = read_u64(ap->pid, base + l->gil_holder, &holder);
    if (rc) return rc;
    return locked && holder == t->tstate;
}

/* Append UTF-8 of code point cp to s (room for 4 more bytes checked by the caller). */
static size_t put_utf8(char *s, uint32_t cp)
{
    if (cp < 0x80) return s[0] = (char)cp, 1;
    if (cp < 0x800) return s[0] = (char)(0xC0 | cp >> 6), s[1] = (char)(0x80 | (cp & 63)), 2;
    if (cp < 0x10000) {
        s[0] = (char)(0xE0 | cp >> 12);
        s[1] = (char)(0x80 | ((cp >> 6) & 63));
        s[2] = (char)(0x80 | (cp & 63));
        return 3;
    }
    s[0] = (char)(0xF0 | cp >> 18);
    s[1] = (char)(0x80 | ((cp >> 12) & 63));
    s[2] = (char)(0x80 | ((cp >> 6) & 63));
    s[3] = (char)(0x80 | (cp & 63));
    return 4;
}

/* A str object into out (UTF-8); ATTACH_ERACE when it is not a sane
 * compact str (freed, reused memory). */
static int read_str(struct attach_proc *ap, uint64_t addr, char *out, size_t outn)
{
    const struct attach_layout *l = &ap->lay;
    uint8_t hdr[256];
    if (l->uni_compact_size > sizeof hdr) return ATTACH_EVERSION;
    int rc = attach_read(ap->pid, addr, hdr, l->uni_compact_size);
    if (rc) return rc;
    int64_t len;
    uint32_t state;
    memcpy(&len, hdr + l->uni_length, 8);
    memcpy(&state, hdr + l->uni_state, 4);
    unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
    if (!compact || len < 0 || len > 4 * ATTACH_MAX_STR || (kind != 1 && kind != 2 && kind != 4))
        return ATTACH_ERACE;
    size_t take = (size_t)len < outn / 4 - 1 ? (size_t)len : outn / 4 - 1;
    uint8_t raw[4 * ATTACH_MAX_STR];
    uint64_t data = addr + (ascii ? l->uni_ascii_size : l->uni_compact_size);
    rc = attach_read(ap->pid, data, raw, take * kind);
    if (rc) return rc;
    size_t o = 0;
    for (size_t i = 0; i < take; i++) {
        uint32_t cp = kind == 1 ? raw[i] : kind == 2 ? ((uint16_t *)raw)[i] : ((uint32_t *)raw)[i];
        if (ascii && cp > 127) return ATTACH_ERACE;
        o += put_utf8(out + o, cp);
    }
    out[o] = 0;
    return 0;
}

/* The line table's format (sampling/linetable.h) */
static int lt_format(const struct attach_layout *l)
{
    if (!l->frame_object) return LT_LOCATIONS;
    return l->minor >= 10 ? LT_LINETABLE310 : LT_LNOTAB;
}

/* The cached code object at addr, read (again) when its fields changed. */
static int code_get(struct attach_proc *ap, uint64_t addr, struct attach_code **out)
{
    const struct attach_layout *l = &ap->lay;
    uint8_t head[1024];
    if (l->co_code_adaptive > sizeof head) return ATTACH_EVERSION;
    int rc = attach_read(ap->pid, addr, head, l->co_code_adaptive);
    if (rc) return rc;
    if (l->frame_object) { /* 3.9/3.10: a code object, not what was freed there */
        uint64_t type;
        memcpy(&type, head + l->ob_type, 8);
        if (type != ap->code_type) return ATTACH_ERACE;
    }
    uint64_t fname, qname, tab;
    int first;
    memcpy(&fname, head + l->co_filename, 8);
    memcpy(&qname, head + l->co_qualname, 8);
    memcpy(&tab, head + l->co_linetable, 8);
    memcpy(&first, head + l->co_firstlineno, 4);
    if (first < 0 || first > 10000000) return ATTACH_ERACE;
    struct attach_code *c = &ap->codes[(addr >> 4) % ATTACH_CODE_CACHE];
    if (c->addr == addr && c->filename == fname && c->linetable == tab && c->firstline == first) {
        *out = c;
        return 0;
    }
    c->addr = 0;
    if ((rc = read_str(ap, fname, c->file, sizeof c->file)) ||
        (rc = read_str(ap, qname, c->name, sizeof c->name)))
        return rc;
    int64_t tn;
    rc = attach_read(ap->pid, tab + l->bytes_size, &tn, 8);
    if (rc) return rc;
    if (tn < 0 || tn > ATTACH_MAX_TABLE) return ATTACH_ERACE;
    uint8_t *t = realloc(c->tab, tn ? (size_t)tn : 1);
    if (!t) return -ENOMEM;
    c->tab = t;
    c->tab_n = (size_t)tn;
    rc = attach_read(ap->pid, tab + l->bytes_sval, t, c->tab_n);
    if (rc && tn) return rc;
    c->addr = addr;
    c->filename = fname;
    c->linetable = tab;
    c->firstline = first;
    c->lastline = lt_last_line(lt_format(l), c->tab, c->tab_n, first);
    *out = c;
    return 0;
}

/* 3.9/3.10: the PyFrameObject chain (f_back), each frame checked to be one
 * (a frame freed and reused under us is not) */
static int stack_frame_objects(struct attach_proc *ap, const struct attach_thread *t,
                               struct attach_frame *out, int max)
{
    const struct attach_layout *l = &ap->lay;
    uint64_t f = t->frame;
    int nf = 0;
    size_t need = l->fr_instr + 4;
    if (l->fr_previous + 8 > need) need = l->fr_previous + 8;
    if (l->fr_code + 8 > need) need = l->fr_code + 8;
    if (l->ob_type + 8 > need) need = l->ob_type + 8;
    uint8_t fr[512];
    if (need > sizeof fr) return ATTACH_EVERSION;
    while (f && nf < max) {
        int rc = attach_read(ap->pid, f, fr, need);
        if (rc) return rc == -ESRCH ? rc : ATTACH_ERACE;
        uint64_t type, prev, code;
        int32_t lasti;
        memcpy(&type, fr + l->ob_type, 8);
        memcpy(&prev, fr + l->fr_previous, 8);
        memcpy(&code, fr + l->fr_code, 8);
        memcpy(&lasti, fr + l->fr_instr, 4);
        if (type != ap->frame_type) return ATTACH_ERACE;
        struct attach_code *c;
        rc = code_get(ap, code, &c);
        if (rc) return rc == -ESRCH || rc == -ENOMEM ? rc : ATTACH_ERACE;
        /* in the table's unit (as profiler/compat_code.h): 3.9's f_lasti
         * counts bytes, 3.10's 2-byte instructions; -1: not started */
        long addr = lasti < 0 ? -1 : l->minor >= 10 ? 2L * lasti : (long)lasti;
        out[nf].file = c->file;
        out[nf].name = c->name;
        out[nf].firstline = c->firstline;
        out[nf].lastline = c->lastline;
        out[nf].line = lt_line(lt_format(l), c->tab, c->tab_n, c->firstline, addr);
        nf++;
        f = prev;
    }
    return nf;
}

int attach_stack(struct attach_proc *ap, const struct attach_thread *t, struct attach_frame *out,
                 int max)
{
    const struct attach_layout *l = &ap->lay;
    if (l->frame_object) return stack_frame_objects(ap, t, out, max);
    uint64_t f = t->frame;
    int nf = 0, hops = 0;
    while (f && nf < max) {
        if (++hops > 4 * ATTACH_MAX_FRAMES) return ATTACH_ERACE; /* a cycle */
        uint8_t fr[256];
        size_t need = l->fr_owner + 1;
        if (l->fr_previous + 8 > need) need = l->fr_previous + 8;
        if (l->fr_code + 8 > need) need = l->fr_code + 8;
        if (l->fr_instr + 8 > need) need = l->fr_instr + 8;
        if (need > sizeof fr) return ATTACH_EVERSION;
        int rc = attach_read(ap->pid, f, fr, need);
        if (rc) return rc == -ESRCH ? rc : ATTACH_ERACE;
        uint64_t prev, code, instr;
        memcpy(&prev, fr + l->fr_previous, 8);
        memcpy(&code, fr + l->fr_code, 8);
        memcpy(&instr, fr + l->fr_instr, 8);
        uint8_t owner = fr[l->fr_owner];
        f = prev;
        if (owner >= l->owner_shim_min) continue;
        if (owner > 8) return ATTACH_ERACE;
        code &= ~(uint64_t)7; /* 3.14: a tagged stack reference */
        struct attach_code *c;
        rc = code_get(ap, code, &c);
        if (rc) return rc == -ESRCH || rc == -ENOMEM ? rc : ATTACH_ERACE;
        uint64_t start = code + l->co_code_adaptive;
        long addr = instr < start ? -1 : (long)((instr - start) / 2);
        out[nf].file = c->file;
        out[nf].name = c->name;
        out[nf].firstline = c->firstline;
        out[nf].lastline = c->lastline;
        out[nf].line = lt_line(lt_format(l), c->tab, c->tab_n, c->firstline, addr);
        nf++;
    }
    return nf;
}
