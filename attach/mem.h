/* mem.h: where the reader's bytes come from. The thread and frame reader
 * (frames.c) asks a `struct attach_mem` for bytes at an address of the
 * target and never cares whether they come from the live process
 * (process_vm_readv) or from a snapshot recorded earlier (a set of address
 * ranges with their bytes, loaded from a file: the tests replay a real
 * stack with no Python running), as py-spy's readers are generic over
 * their ProcessMemory. A recorder wraps a source and keeps every range
 * read through it with its bytes, so that a live read can be saved as a
 * snapshot (snapshot.c writes and loads the file). */
#ifndef HOTLINE_ATTACH_MEM_H
#define HOTLINE_ATTACH_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ATTACH_MEM_MAX_RANGES 65536              /* ranges a recording or snapshot keeps */
#define ATTACH_MEM_MAX_BYTES ((size_t)16 << 20)  /* bytes they hold, all together */
#define ATTACH_MEM_MAX_RANGE ((size_t)256 << 10) /* bytes of one range */

/* A source of the target's bytes: read() fills buf[0..n) from addr and
 * returns 0, or -EFAULT (not there: unmapped, short, not recorded), -ESRCH
 * (the process is gone), -EPERM. ctx is borrowed, the source's own. */
struct attach_mem {
    int (*read)(void *ctx, uint64_t addr, void *buf, size_t n);
    void *ctx;
};

/* Read n bytes at addr through m: addr 0 is -EFAULT whatever the source. */
int attach_mem_read(const struct attach_mem *m, uint64_t addr, void *buf, size_t n);

/* Read n bytes at addr of pid with process_vm_readv: 0, -EFAULT (unmapped
 * or short), -ESRCH, -EPERM. */
int attach_read(pid_t pid, uint64_t addr, void *buf, size_t n);

/* The live process pid as a source (no allocation: ctx packs the pid). */
struct attach_mem attach_mem_live(pid_t pid);

/* One recorded range: bytes[0..n) were at addr. */
struct attach_mem_range {
    uint64_t addr;
    size_t n;
    uint8_t *bytes; /* owned */
};

/* A set of ranges: what a recorder kept or what a snapshot file held. A
 * read is answered when it lies inside one range (looked up one by one:
 * snapshots are for tests and hold a few hundred ranges). */
struct attach_ranges {
    struct attach_mem_range *r; /* owned */
    size_t n, cap, bytes;
    struct attach_mem inner; /* a recorder's source (borrowed); none for a snapshot */
    int full;                /* a recorder hit a cap: the recording is incomplete */
};

/* Add bytes[0..n) at addr (copied; nothing when a range holds them
 * already): 0, -ENOMEM, -E2BIG past a cap, -EINVAL for an empty range or
 * one that wraps past the end of the address space. */
int attach_ranges_add(struct attach_ranges *s, uint64_t addr, const void *bytes, size_t n);
/* The range holding [addr, addr + n), or NULL (borrowed). */
const struct attach_mem_range *attach_ranges_find(const struct attach_ranges *s, uint64_t addr,
                                                  size_t n);
void attach_ranges_free(struct attach_ranges *s);

/* A recorder over inner (borrowed, outlives the recorder): reads go to
 * inner and each one that succeeds is kept in s (which starts zeroed and
 * is freed with attach_ranges_free). */
struct attach_mem attach_mem_recorder(struct attach_ranges *s, struct attach_mem inner);

/* A replay of s (borrowed, outlives the source). */
struct attach_mem attach_mem_snapshot(struct attach_ranges *s);

#endif
