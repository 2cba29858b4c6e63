/* memread.h: safe reads of our own process's memory (memread.c). */
#ifndef HOTLINE_MEMREAD_H
#define HOTLINE_MEMREAD_H

#include <stddef.h>
#include <stdint.h>

int mem_read(uintptr_t addr, void *dst, size_t n); /* 0 or -errno */
int mem_check(void);                               /* 0 if usable */
/* At least need bytes, and more up to cap while they lie in the page of
 * need's last byte (one system call where a header and the data after it
 * took two): bytes read, or -errno. */
int mem_read_more(uintptr_t addr, void *dst, size_t need, size_t cap);
/* Give the whole pages of [p, p + n) their own memory now, contents kept
 * (MADV_POPULATE_WRITE; nothing before Linux 5.14). Why: a zeroed table
 * (calloc, static) is the kernel's one zero page until written, and a
 * slot read before it is written (a hash table's probe) makes that write
 * a copy-on-write fault that flushes the TLB of every CPU running the
 * process: an interrupt of the program's thread for each 4 KiB of the
 * sampler's tables, 15% of the sampler's CPU on scikit-learn code. */
void mem_populate(void *p, size_t n);

/* Tables to back a piece at a time: ~6 MB took the sampler 4-8 ms at once
 * on a loaded machine, a gap in its ticks and windows at the program's
 * start (a window's samples stand for the time since the previous one). */
#define MEM_POP_RANGES 8
typedef struct {
    char *p[MEM_POP_RANGES];
    size_t n[MEM_POP_RANGES];
    int count, at; /* ranges added; the one being backed */
    size_t off;    /* bytes of it done */
} mem_pop_t;
void mem_pop_add(mem_pop_t *q, void *p, size_t n); /* its whole pages; full: dropped */
int mem_pop_step(mem_pop_t *q, size_t budget);     /* up to budget bytes; 1 while some are left */

/* Reads served from a few whole pages read at once (memread.c): one system
 * call for the many small reads of a stack walk, which cost ~4 us each
 * here. What comes back is as old as its window: reset the snapshot
 * before each walk, and never use one where two reads must be apart in
 * time (a probe). One thread at a time. */
#define MEM_SNAP_PAGE 4096
#define MEM_SNAP_PAGES 2
#define MEM_SNAP_WINDOWS 4
typedef struct {
    uintptr_t base[MEM_SNAP_WINDOWS];
    uint32_t len[MEM_SNAP_WINDOWS]; /* bytes valid from base; 0: empty */
    unsigned next;                  /* window filled next */
    uint64_t fills;                 /* system calls made (stats) */
    unsigned char buf[MEM_SNAP_WINDOWS][MEM_SNAP_PAGE * MEM_SNAP_PAGES];
} mem_snap_t;
void mem_snap_reset(mem_snap_t *s);
int mem_snap_read(mem_snap_t *s, uintptr_t addr, void *dst, size_t n); /* as mem_read */

#endif
