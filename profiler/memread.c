/* memread.c: read our own process's memory without trusting it.
 *
 * The sampler walks interpreter structures that other threads free and
 * reuse while it looks. process_vm_readv() on our own pid copies the bytes
 * through the kernel: a stale pointer into unmapped memory comes back as
 * EFAULT instead of a SIGSEGV in the program. Torn or reused contents are
 * possible and every caller validates what it reads.
 */
#include "memread.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

/* Our pid, kept: getpid() is a system call (glibc caches it no more), and
 * it was half the system calls of a sample: every read paid two. Forgotten
 * in a forked child before fork() returns there (pthread_atfork), so a
 * read in the child never names the parent. */
static atomic_int g_pid;
static pthread_once_t g_pid_once = PTHREAD_ONCE_INIT;

static void pid_forget(void)
{
    atomic_store(&g_pid, 0);
}

static void pid_once(void)
{
    pthread_atfork(NULL, NULL, pid_forget);
}

static pid_t self_pid(void)
{
    pid_t p = atomic_load(&g_pid);
    if (p) return p;
    pthread_once(&g_pid_once, pid_once);
    p = getpid();
    atomic_store(&g_pid, p);
    return p;
}

int mem_read(uintptr_t addr, void *dst, size_t n)
{
    if (addr < 4096 || n == 0) return -EFAULT;
    struct iovec local = {dst, n};
    struct iovec remote = {(void *)addr, n};
    ssize_t r = process_vm_readv(self_pid(), &local, 1, &remote, 1, 0);
    if (r < 0) return -errno;
    return (size_t)r == n ? 0 : -EFAULT;
}

int mem_read_more(uintptr_t addr, void *dst, size_t need, size_t cap)
{
    if (need == 0 || need > cap) return -EINVAL;
    /* past need, only what shares need's last page: mapped if need is */
    uintptr_t last = addr + need - 1;
    uintptr_t page_end = (last | (uintptr_t)(MEM_SNAP_PAGE - 1)) + 1;
    size_t n = page_end - addr < cap ? (size_t)(page_end - addr) : cap;
    int r = mem_read(addr, dst, n);
    return r == 0 ? (int)n : r;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* [*lo, *hi): the whole pages inside [p, p + n); 0 when there are none */
static int whole_pages(const void *p, size_t n, uintptr_t *lo, uintptr_t *hi)
{
    *lo = ((uintptr_t)p + MEM_SNAP_PAGE - 1) & ~(uintptr_t)(MEM_SNAP_PAGE - 1);
    *hi = ((uintptr_t)p + n) & ~(uintptr_t)(MEM_SNAP_PAGE - 1);
    return p && *hi > *lo;
}

void mem_populate(void *p, size_t n)
{
    uintptr_t lo, hi;
    if (whole_pages(p, n, &lo, &hi))
        (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE); /* older: EINVAL */
}

void mem_pop_add(mem_pop_t *q, void *p, size_t n)
{
    uintptr_t lo, hi; /* whole pages: steps then end on page boundaries */
    if (!whole_pages(p, n, &lo, &hi) || q->count >= MEM_POP_RANGES) return;
    q->p[q->count] = (char *)lo;
    q->n[q->count++] = hi - lo;
}

int mem_pop_step(mem_pop_t *q, size_t budget)
{
    budget &= ~(size_t)(MEM_SNAP_PAGE - 1);
    while (budget && q->at < q->count) {
        size_t left = q->n[q->at] - q->off, k = left < budget ? left : budget;
        mem_populate(q->p[q->at] + q->off, k);
        q->off += k;
        budget -= k;
        if (q->off == q->n[q->at]) {
            q->at++;
            q->off = 0;
        }
    }
    return q->at < q->count;
}

int mem_check(void)
{
    static const uint64_t probe = 0x486f746c696e65; /* read-only, ours */
    uint64_t v = 0;
    int r = mem_read((uintptr_t)&probe, &v, sizeof v);
    if (r != 0) return r;
    return v == probe ? 0 : -EIO;
}

/* Windows of MEM_SNAP_PAGES pages, read whole and kept for one walk. A
 * window is placed so that it holds the page of the read and the page
 * below it when the read fits its page (frames on 3.11+ sit one below the
 * other in the thread's data stack, and a walk goes down), else that page
 * and the one above. Each page is its own iovec: a page that is not mapped
 * ends the read there and the pages before it still count. */
static void snap_fill(mem_snap_t *s, unsigned w, uintptr_t base)
{
    struct iovec local[MEM_SNAP_PAGES], remote[MEM_SNAP_PAGES];
    for (int i = 0; i < MEM_SNAP_PAGES; i++) {
        local[i].iov_base = s->buf[w] + (size_t)i * MEM_SNAP_PAGE;
        local[i].iov_len = MEM_SNAP_PAGE;
        remote[i].iov_base = (void *)(base + (uintptr_t)i * MEM_SNAP_PAGE);
        remote[i].iov_len = MEM_SNAP_PAGE;
    }
    ssize_t r = process_vm_readv(self_pid(), local, MEM_SNAP_PAGES, remote, MEM_SNAP_PAGES, 0);
    s->fills++;
    s->base[w] = base;
    s->len[w] = r > 0 ? (uint32_t)r : 0;
}

/* 1 when window w holds [addr, addr + n) */
static int snap_has(const mem_snap_t *s, unsigned w, uintptr_t addr, size_t n)
{
    return addr >= s->base[w] && addr - s->base[w] + n <= s->len[w];
}

void mem_snap_reset(mem_snap_t *s)
{
    for (int i = 0; i < MEM_SNAP_WINDOWS; i++)
        s->len[i] = 0;
}

int mem_snap_read(mem_snap_t *s, uintptr_t addr, void *dst, size_t n)
{
    if (addr < 4096 || n == 0) return -EFAULT;
    unsigned w = 0;
    while (w < MEM_SNAP_WINDOWS && !snap_has(s, w, addr, n))
        w++;
    if (w == MEM_SNAP_WINDOWS) { /* in no window: fill the oldest */
        if (n > MEM_SNAP_PAGE) return mem_read(addr, dst, n);
        uintptr_t page = addr & ~(uintptr_t)(MEM_SNAP_PAGE - 1);
        int fits = (addr - page) + n <= MEM_SNAP_PAGE;
        uintptr_t below = (uintptr_t)MEM_SNAP_PAGE * (MEM_SNAP_PAGES - 1);
        uintptr_t base = fits && page >= below + 4096 ? page - below : page;
        w = s->next++ % MEM_SNAP_WINDOWS;
        snap_fill(s, w, base);
        if (!snap_has(s, w, addr, n) && base != page)
            snap_fill(s, w, page); /* the page below is not mapped: from the read's page up */
        if (!snap_has(s, w, addr, n))
            return mem_read(addr, dst, n); /* says why: EFAULT or a short read */
    }
    memcpy(dst, s->buf[w] + (addr - s->base[w]), n);
    return 0;
}
