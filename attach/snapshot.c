/* snapshot.c: a target's memory written to and read back from a file
 * (snapshot.h says the format and why). */
#include "snapshot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SNAP_MAGIC "hotline-attach-snapshot 1"

/* The layout fields frames.c reads: what a replay needs of a row. */
#define SNAP_LAYOUT(X)                                                                             \
    X(major)                                                                                       \
    X(minor)                                                                                       \
    X(rt_interp_head)                                                                              \
    X(is_threads_head)                                                                             \
    X(ts_next)                                                                                     \
    X(ts_native_tid)                                                                               \
    X(ts_frame)                                                                                    \
    X(has_cframe)                                                                                  \
    X(cf_current)                                                                                  \
    X(fr_previous)                                                                                 \
    X(fr_code)                                                                                     \
    X(fr_instr)                                                                                    \
    X(fr_owner)                                                                                    \
    X(owner_shim_min)                                                                              \
    X(co_filename)                                                                                 \
    X(co_qualname)                                                                                 \
    X(co_linetable)                                                                                \
    X(co_firstlineno)                                                                              \
    X(co_code_adaptive)                                                                            \
    X(bytes_size)                                                                                  \
    X(bytes_sval)                                                                                  \
    X(uni_length)                                                                                  \
    X(uni_state)                                                                                   \
    X(uni_ascii_size)                                                                              \
    X(uni_compact_size)                                                                            \
    X(gil_in_interp)                                                                               \
    X(gil_locked)                                                                                  \
    X(gil_holder)                                                                                  \
    X(frame_object)                                                                                \
    X(ob_type)

static const struct {
    const char *name;
    size_t off;
} lay_fields[] = {
#define SNAP_FIELD(f) {"lay." #f, offsetof(struct attach_layout, f)},
    SNAP_LAYOUT(SNAP_FIELD)
#undef SNAP_FIELD
};
#define NLAY (sizeof lay_fields / sizeof lay_fields[0])

/* The identity lines, in the order written; each appears exactly once. */
enum {
    K_PID,
    K_VERSION,
    K_BINARY,
    K_VERSION_HEX,
    K_RUNTIME,
    K_FRAME_TYPE,
    K_CODE_TYPE,
    K_TID_OFF,
    NKEYS
};
static const char *const keys[NKEYS] = {"pid",     "version",    "binary",    "version_hex",
                                        "runtime", "frame_type", "code_type", "tid_off"};

static uint64_t *lay_field(struct attach_layout *l, size_t i)
{
    return (uint64_t *)((char *)l + lay_fields[i].off);
}

int attach_snapshot_save(const struct attach_proc *ap, const struct attach_ranges *s,
                         const char *path, char *why, size_t n)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        int e = errno;
        snprintf(why, n, "cannot write %s: %s", path, strerror(e));
        return -e;
    }
    fprintf(f, "%s\n", SNAP_MAGIC);
    fprintf(f, "pid %d\nversion %s\nbinary %s\nversion_hex 0x%x\nruntime 0x%llx\n", (int)ap->pid,
            ap->version, ap->binary, (unsigned)ap->version_hex, (unsigned long long)ap->runtime);
    fprintf(f, "frame_type 0x%llx\ncode_type 0x%llx\ntid_off %ld\n",
            (unsigned long long)ap->frame_type, (unsigned long long)ap->code_type, ap->tid_off);
    struct attach_layout lay = ap->lay;
    for (size_t i = 0; i < NLAY; i++)
        fprintf(f, "%s %llu\n", lay_fields[i].name, (unsigned long long)*lay_field(&lay, i));
    for (size_t i = 0; i < s->n; i++) {
        fprintf(f, "range 0x%llx %zu ", (unsigned long long)s->r[i].addr, s->r[i].n);
        for (size_t k = 0; k < s->r[i].n; k++)
            fprintf(f, "%02x", s->r[i].bytes[k]);
        fputc('\n', f);
    }
    fprintf(f, "end\n");
    int bad = ferror(f);
    if (fclose(f) || bad) {
        snprintf(why, n, "cannot write %s", path);
        return -EIO;
    }
    return 0;
}

/* The number in v[0..vn) (decimal or 0x hex; a '-' only where neg): 0 or -1. */
static int parse_num(const char *v, size_t vn, int neg, long long *sv, uint64_t *uv)
{
    char b[32];
    if (!vn || vn >= sizeof b) return -1;
    memcpy(b, v, vn);
    b[vn] = 0;
    if (!(b[0] >= '0' && b[0] <= '9') && !(neg && b[0] == '-')) return -1;
    char *e;
    errno = 0;
    if (neg)
        *sv = strtoll(b, &e, 0);
    else
        *uv = strtoull(b, &e, 0);
    return errno || *e ? -1 : 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* "ADDR N HEX" into s: 0, -EINVAL, -ENOMEM, -E2BIG. */
static int parse_range(struct attach_ranges *s, const char *v, size_t vn)
{
    const char *sp1 = memchr(v, ' ', vn);
    if (!sp1) return -EINVAL;
    const char *sp2 = memchr(sp1 + 1, ' ', (size_t)(v + vn - sp1 - 1));
    if (!sp2) return -EINVAL;
    uint64_t addr, len;
    if (parse_num(v, (size_t)(sp1 - v), 0, NULL, &addr) ||
        parse_num(sp1 + 1, (size_t)(sp2 - sp1 - 1), 0, NULL, &len))
        return -EINVAL;
    const char *hex = sp2 + 1;
    size_t hn = (size_t)(v + vn - hex);
    if (!addr || !len) return -EINVAL;
    if (len > ATTACH_MEM_MAX_RANGE) return -E2BIG;
    if (hn != 2 * len) return -EINVAL;
    uint8_t *b = malloc(len);
    if (!b) return -ENOMEM;
    int rc = 0;
    for (size_t i = 0; i < len && !rc; i++) {
        int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            rc = -EINVAL;
        else
            b[i] = (uint8_t)(hi << 4 | lo);
    }
    if (!rc) rc = attach_ranges_add(s, addr, b, len);
    free(b);
    return rc;
}

/* One "key value" line: 0, or a negative code (why says). */
static int parse_line(struct attach_proc *ap, struct attach_ranges *s, const char *k, size_t kn,
                      const char *v, size_t vn, char *seen, int line, char *why, size_t n)
{
    if (kn == 5 && !memcmp(k, "range", 5)) {
        int rc = parse_range(s, v, vn);
        if (rc)
            snprintf(why, n, "snapshot line %d: %s", line,
                     rc == -E2BIG    ? "more bytes than a snapshot may hold"
                     : rc == -ENOMEM ? "out of memory"
                                     : "a range is not \"ADDR LEN HEX\" with LEN bytes of hex");
        return rc;
    }
    int idx = -1;
    for (int i = 0; i < NKEYS && idx < 0; i++)
        if (strlen(keys[i]) == kn && !memcmp(k, keys[i], kn)) idx = i;
    for (size_t i = 0; i < NLAY && idx < 0; i++)
        if (strlen(lay_fields[i].name) == kn && !memcmp(k, lay_fields[i].name, kn))
            idx = NKEYS + (int)i;
    if (idx < 0) {
        snprintf(why, n, "snapshot line %d: unknown key \"%.*s\"", line, (int)(kn < 40 ? kn : 40),
                 k);
        return -EINVAL;
    }
    if (seen[idx]++) {
        snprintf(why, n, "snapshot line %d: \"%.*s\" a second time", line, (int)kn, k);
        return -EINVAL;
    }
    long long sv = 0;
    uint64_t uv = 0;
    int bad = 0;
    if (idx == K_VERSION || idx == K_BINARY) {
        char *dst = idx == K_VERSION ? ap->version : ap->binary;
        size_t cap = idx == K_VERSION ? sizeof ap->version : sizeof ap->binary;
        bad = vn >= cap || memchr(v, 0, vn) != NULL;
        if (!bad) {
            memcpy(dst, v, vn);
            dst[vn] = 0;
        }
    } else if (idx == K_PID || idx == K_TID_OFF) {
        bad = parse_num(v, vn, 1, &sv, NULL) || (idx == K_PID && (sv <= 0 || sv > 0x7fffffff));
        if (idx == K_PID)
            ap->pid = (pid_t)sv;
        else
            ap->tid_off = (long)sv;
    } else {
        /* a layout field is an offset or a flag: as apply_debug_offsets,
         * nothing past 1 MiB (frames.c adds them to sizes unchecked) */
        bad = parse_num(v, vn, 0, NULL, &uv) || (idx == K_VERSION_HEX && uv > 0xffffffffu) ||
              (idx >= NKEYS && uv > (1u << 20));
        if (idx == K_VERSION_HEX)
            ap->version_hex = (uint32_t)uv;
        else if (idx == K_RUNTIME)
            ap->runtime = uv;
        else if (idx == K_FRAME_TYPE)
            ap->frame_type = uv;
        else if (idx == K_CODE_TYPE)
            ap->code_type = uv;
        else
            *lay_field(&ap->lay, (size_t)(idx - NKEYS)) = uv;
    }
    if (bad) {
        snprintf(why, n, "snapshot line %d: bad value for \"%.*s\"", line, (int)kn, k);
        return -EINVAL;
    }
    return 0;
}

int attach_snapshot_parse(struct attach_proc *ap, struct attach_ranges *s, const char *text,
                          size_t len, char *why, size_t n)
{
    char seen[NKEYS + NLAY] = {0};
    const char *p = text, *end = text + len;
    int line = 0, ended = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        line++;
        if (!nl) {
            snprintf(why, n, "snapshot line %d is cut short (no end of line)", line);
            return -EINVAL;
        }
        size_t ln = (size_t)(nl - p);
        if (line == 1) {
            if (ln != strlen(SNAP_MAGIC) || memcmp(p, SNAP_MAGIC, ln)) {
                snprintf(why, n, "not a hotline attach snapshot (the first line is not \"%s\")",
                         SNAP_MAGIC);
                return -EINVAL;
            }
        } else if (ended) {
            snprintf(why, n, "snapshot line %d: text after \"end\"", line);
            return -EINVAL;
        } else if (ln == 3 && !memcmp(p, "end", 3)) {
            ended = 1;
        } else if (ln && p[0] != '#') {
            const char *sp = memchr(p, ' ', ln);
            if (!sp) {
                snprintf(why, n, "snapshot line %d is not \"key value\"", line);
                return -EINVAL;
            }
            int rc = parse_line(ap, s, p, (size_t)(sp - p), sp + 1, (size_t)(nl - sp - 1), seen,
                                line, why, n);
            if (rc) return rc;
        }
        p = nl + 1;
    }
    if (!ended) {
        snprintf(why, n, "snapshot is cut short (%d lines, no \"end\")", line);
        return -EINVAL;
    }
    for (int i = 0; i < NKEYS + (int)NLAY; i++)
        if (!seen[i]) {
            snprintf(why, n, "snapshot has no \"%s\"",
                     i < NKEYS ? keys[i] : lay_fields[i - NKEYS].name);
            return -EINVAL;
        }
    return 0;
}

int attach_snapshot_load(struct attach_proc *ap, struct attach_ranges *s, const char *path,
                         char *why, size_t n)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        snprintf(why, n, "cannot read %s: %s", path, strerror(e));
        return -e;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int rc = 0;
    for (;;) {
        if (len == cap) {
            if (cap >= ATTACH_SNAPSHOT_MAX_FILE) {
                snprintf(why, n, "%s: larger than a snapshot may be (%zu bytes)", path,
                         ATTACH_SNAPSHOT_MAX_FILE);
                rc = -E2BIG;
                break;
            }
            cap = cap ? 2 * cap : 65536;
            char *nb = realloc(buf, cap);
            if (!nb) {
                rc = -ENOMEM;
                break;
            }
            buf = nb;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    if (!rc && ferror(f)) {
        snprintf(why, n, "cannot read %s", path);
        rc = -EIO;
    }
    fclose(f);
    if (!rc) rc = attach_snapshot_parse(ap, s, buf, len, why, n);
    free(buf);
    return rc;
}
