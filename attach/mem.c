/* mem.c: the reader's memory sources (mem.h): the live process, a
 * recorder that keeps what it reads, and a replay of recorded ranges. */
#include "mem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

int attach_read(pid_t pid, uint64_t addr, void *buf, size_t n)
{
    if (!addr) return -EFAULT;
    struct iovec local = {buf, n}, remote = {(void *)(uintptr_t)addr, n};
    ssize_t r = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (r < 0) return errno == ESRCH ? -ESRCH : errno == EPERM ? -EPERM : -EFAULT;
    return (size_t)r == n ? 0 : -EFAULT;
}

int attach_mem_read(const struct attach_mem *m, uint64_t addr, void *buf, size_t n)
{
    if (!addr) return -EFAULT;
    return m->read(m->ctx, addr, buf, n);
}

static int live_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
    return attach_read((pid_t)(intptr_t)ctx, addr, buf, n);
}

struct attach_mem attach_mem_live(pid_t pid)
{
    return (struct attach_mem){live_read, (void *)(intptr_t)pid};
}

const struct attach_mem_range *attach_ranges_find(const struct attach_ranges *s, uint64_t addr,
                                                  size_t n)
{
    for (size_t i = 0; i < s->n; i++) {
        const struct attach_mem_range *r = &s->r[i];
        if (addr >= r->addr && n <= r->n && addr - r->addr <= r->n - n) return r;
    }
    return NULL;
}

int attach_ranges_add(struct attach_ranges *s, uint64_t addr, const void *bytes, size_t n)
{
    if (!n || addr + n < addr) return -EINVAL;
    if (attach_ranges_find(s, addr, n)) return 0;
    if (n > ATTACH_MEM_MAX_RANGE || s->n == ATTACH_MEM_MAX_RANGES ||
        s->bytes + n > ATTACH_MEM_MAX_BYTES)
        return -E2BIG;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        struct attach_mem_range *r = realloc(s->r, cap * sizeof *r);
        if (!r) return -ENOMEM;
        s->r = r;
        s->cap = cap;
    }
    uint8_t *b = malloc(n);
    if (!b) return -ENOMEM;
    memcpy(b, bytes, n);
    s->r[s->n++] = (struct attach_mem_range){addr, n, b};
    s->bytes += n;
    return 0;
}

void attach_ranges_free(struct attach_ranges *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->r[i].bytes);
    free(s->r);
    memset(s, 0, sizeof *s);
}

/* Read through to the inner source; keep what came back. A recording that
 * cannot keep a range says so (full) rather than failing the live read. */
static int record_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
    struct attach_ranges *s = ctx;
    int rc = attach_mem_read(&s->inner, addr, buf, n);
    if (!rc && n && attach_ranges_add(s, addr, buf, n)) s->full = 1;
    return rc;
}

struct attach_mem attach_mem_recorder(struct attach_ranges *s, struct attach_mem inner)
{
    s->inner = inner;
    return (struct attach_mem){record_read, s};
}

static int replay_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
    const struct attach_ranges *s = ctx;
    if (!n) return 0;
    const struct attach_mem_range *r = attach_ranges_find(s, addr, n);
    if (!r) return -EFAULT;
    memcpy(buf, r->bytes + (addr - r->addr), n);
    return 0;
}

struct attach_mem attach_mem_snapshot(struct attach_ranges *s)
{
    return (struct attach_mem){replay_read, s};
}
