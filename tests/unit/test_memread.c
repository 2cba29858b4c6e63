/* Unit tests for profiler/memread.c: the reads the sampler makes of its own
 * process. mem_snap_read serves a walk's many small reads from whole pages
 * read at once; mem_read_more reads a header and what follows it in one
 * call. Both must give the bytes there are, fail (never crash) at a page
 * that is not mapped, and count the system calls they make. mem_populate
 * backs a table's pages without changing them, mem_pop_* a piece a call. */
#include "memread.h"
#include "check.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PG MEM_SNAP_PAGE

/* pages 1 and 2 of a 4-page mapping, 0 and 3 unmapped on either side */
static unsigned char *g_map;

static unsigned char *page(int i)
{
    return g_map + (size_t)i * PG;
}

static int setup(void)
{
    if (sysconf(_SC_PAGESIZE) != PG) return -1;
    g_map = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (g_map == MAP_FAILED) return -1;
    for (size_t i = PG; i < 3 * PG; i++)
        g_map[i] = (unsigned char)(i * 7 + 3);
    munmap(page(0), PG);
    munmap(page(3), PG);
    return 0;
}

static mem_snap_t g_snap;

/* A walk down one data stack: 40 frames of 96 bytes, from the top of page
 * 2 into page 1, each read and compared: one window holds them all. */
static void test_walk_down_is_one_read(void)
{
    mem_snap_reset(&g_snap);
    uint64_t before = g_snap.fills;
    int bad = 0;
    for (int i = 1; i <= 40; i++) {
        unsigned char fr[96];
        uintptr_t at = (uintptr_t)page(3) - (uintptr_t)i * sizeof fr;
        if (mem_snap_read(&g_snap, at, fr, sizeof fr) != 0 ||
            memcmp(fr, (void *)at, sizeof fr) != 0)
            bad++;
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ_U(g_snap.fills - before, 1);
}

/* The page below the read is not mapped: the window starts at the read's
 * page (a second call), and the bytes are right. */
static void test_page_below_unmapped(void)
{
    mem_snap_reset(&g_snap);
    unsigned char b[64];
    CHECK_EQ(mem_snap_read(&g_snap, (uintptr_t)page(1) + 8, b, sizeof b), 0);
    CHECK(memcmp(b, page(1) + 8, sizeof b) == 0);
    /* the same window serves page 2 */
    uint64_t f = g_snap.fills;
    CHECK_EQ(mem_snap_read(&g_snap, (uintptr_t)page(2) + 100, b, sizeof b), 0);
    CHECK(memcmp(b, page(2) + 100, sizeof b) == 0);
    CHECK_EQ_U(g_snap.fills - f, 0);
}

/* A read across pages 1-2 is served; one that runs into page 3 fails
 * with EFAULT, as mem_read does; a read bigger than a page goes straight
 * to mem_read; an address in the first page is refused. */
static void test_edges(void)
{
    mem_snap_reset(&g_snap);
    unsigned char b[PG + 512];
    uintptr_t across = (uintptr_t)page(2) - 40;
    CHECK_EQ(mem_snap_read(&g_snap, across, b, 80), 0);
    CHECK(memcmp(b, (void *)across, 80) == 0);
    CHECK_EQ(mem_snap_read(&g_snap, (uintptr_t)page(3) - 16, b, 32), -EFAULT);
    CHECK_EQ(mem_snap_read(&g_snap, (uintptr_t)page(1) + 100, b, PG + 512), 0);
    CHECK(memcmp(b, page(1) + 100, PG + 512) == 0);
    CHECK_EQ(mem_snap_read(&g_snap, 64, b, 8), -EFAULT);
    CHECK_EQ(mem_snap_read(&g_snap, (uintptr_t)page(1), b, 0), -EFAULT);
}

/* A snapshot keeps what it read until reset: the walk sees one moment. */
static void test_snapshot_until_reset(void)
{
    mem_snap_reset(&g_snap);
    uint32_t v = 0, w = 0;
    uint32_t *p = (uint32_t *)(page(2) + 256);
    *p = 11;
    CHECK_EQ(mem_snap_read(&g_snap, (uintptr_t)p, &v, sizeof v), 0);
    *p = 22;
    CHECK_EQ(mem_snap_read(&g_snap, (uintptr_t)p, &w, sizeof w), 0);
    CHECK_EQ_U(v, 11);
    CHECK_EQ_U(w, 11);
    mem_snap_reset(&g_snap);
    CHECK_EQ(mem_snap_read(&g_snap, (uintptr_t)p, &w, sizeof w), 0);
    CHECK_EQ_U(w, 22);
}

/* More places than windows: the oldest window is read again, the bytes
 * always right. */
static void test_windows_recycled(void)
{
    static unsigned char far[8][PG * 4];
    for (int k = 0; k < 8; k++)
        memset(far[k], k + 1, sizeof far[k]);
    mem_snap_reset(&g_snap);
    int bad = 0;
    for (int round = 0; round < 3; round++)
        for (int k = 0; k < 8; k++) {
            unsigned char b[32];
            if (mem_snap_read(&g_snap, (uintptr_t)far[k] + 2 * PG, b, sizeof b) != 0 ||
                b[0] != k + 1 || b[31] != k + 1)
                bad++;
        }
    CHECK_EQ(bad, 0);
}

/* mem_read_more: a header and the bytes after it up to the end of the
 * page of the header's last byte (never into page 3), or cap. */
static void test_read_more(void)
{
    unsigned char b[PG];
    int n = mem_read_more((uintptr_t)page(2) + 3000, b, 16, sizeof b);
    CHECK_EQ(n, PG - 3000);
    CHECK(n > 0 && memcmp(b, page(2) + 3000, (size_t)n) == 0);
    n = mem_read_more((uintptr_t)page(1) + 100, b, 16, 500);
    CHECK_EQ(n, 500);
    CHECK(memcmp(b, page(1) + 100, 500) == 0);
    /* the header crosses into page 2: what follows it there is read too */
    n = mem_read_more((uintptr_t)page(2) - 8, b, 16, 200);
    CHECK_EQ(n, 200);
    CHECK(memcmp(b, page(2) - 8, 200) == 0);
    CHECK(mem_read_more((uintptr_t)page(3) - 8, b, 16, 200) < 0);
    CHECK_EQ(mem_read_more((uintptr_t)page(1), b, 16, 8), -EINVAL);
}

/* pages of m in memory now (mincore), -1 on error */
static int resident(const unsigned char *m, int pages)
{
    unsigned char vec[64];
    if (pages > 64 || mincore((void *)m, (size_t)pages * PG, vec) != 0) return -1;
    int r = 0;
    for (int i = 0; i < pages; i++)
        r += vec[i] & 1;
    return r;
}

/* a fresh private mapping of n pages, none in memory yet; NULL on failure */
static unsigned char *fresh(int pages)
{
    void *m =
        mmap(NULL, (size_t)pages * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m != MAP_FAILED) return m;
    CHECK_FAIL("mmap");
    return NULL;
}

/* mem_populate: the whole pages of a fresh mapping are backed afterwards
 * (mincore), what was written before is kept, and a range with no whole
 * page in it (or NULL) is left alone. */
static void test_populate(void)
{
    enum { N = 16 };
    unsigned char *m = fresh(N);
    if (!m) return;
    m[3 * PG + 5] = 42;
    CHECK_EQ(resident(m, N), 1);
    mem_populate(m + 100, N * PG - 100); /* pages 1..15 whole */
    int after = resident(m + PG, N - 1);
    /* before 5.14 the kernel refuses MADV_POPULATE_WRITE: nothing backed */
    int populate_known = madvise(m, PG, 23) == 0;
    CHECK_EQ(after, populate_known ? N - 1 : 1);
    CHECK_EQ(m[3 * PG + 5], 42);
    CHECK_EQ(m[7 * PG], 0);
    mem_populate(NULL, 4 * PG);
    mem_populate(m + 1, 100);
    munmap(m, N * PG);
}

/* mem_pop_*: ranges backed a budget at a time, page by whole page (an
 * unaligned range gives its whole pages; a budget under a page, none). */
static void test_pop(void)
{
    enum { N = 24 };
    unsigned char *m = fresh(N);
    if (!m) return;
    if (madvise(m + 23 * PG, PG, 23) != 0) { /* MADV_POPULATE_WRITE refused: nothing to see */
        munmap(m, N * PG);
        return;
    }
    mem_pop_t q = {0};
    mem_pop_add(&q, m + 16, 8 * PG);      /* whole pages 1-7 */
    mem_pop_add(&q, m + 10 * PG, 6 * PG); /* 10-15 */
    mem_pop_add(&q, NULL, PG);
    mem_pop_add(&q, m + 20 * PG + 1, 100); /* no whole page */
    CHECK_EQ(q.count, 2);
    CHECK_EQ(mem_pop_step(&q, PG - 1), 1);
    CHECK_EQ(resident(m, 23), 0);
    CHECK_EQ(mem_pop_step(&q, 3 * PG + 100), 1);
    CHECK_EQ(resident(m + PG, 3), 3);
    CHECK_EQ(resident(m, 23), 3);
    CHECK_EQ(mem_pop_step(&q, 6 * PG), 1); /* 4-7, then 10-11 */
    CHECK_EQ(resident(m, 23), 9);
    CHECK_EQ(mem_pop_step(&q, 64 * PG), 0);
    CHECK_EQ(resident(m, 23), 13);
    CHECK_EQ(resident(m, 1) + resident(m + 8 * PG, 2) + resident(m + 16 * PG, 7), 0);
    CHECK_EQ(mem_pop_step(&q, 64 * PG), 0);
    munmap(m, N * PG);
}

int main(void)
{
    if (setup() != 0 || mem_check() != 0) {
        CHECK_FAIL("no 4 KiB pages or no process_vm_readv here");
        return check_exit("test_memread");
    }
    test_walk_down_is_one_read();
    test_page_below_unmapped();
    test_edges();
    test_snapshot_until_reset();
    test_windows_recycled();
    test_read_more();
    test_populate();
    test_pop();
    return check_exit("test_memread");
}
