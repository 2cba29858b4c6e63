/* elfsym: dynamic symbols of an ELF file on disk (64-bit, little-endian),
 * for `hotline attach`: where _PyRuntime and Py_Version are in a python
 * binary or libpython, before the load bias, and where its .bss is. Pure
 * file reading, no ptrace. */
#ifndef HOTLINE_ELFSYM_H
#define HOTLINE_ELFSYM_H

#include <stddef.h>
#include <stdint.h>

#define ELFSYM_MAX_FILE ((size_t)1 << 30) /* bigger files are refused */

/* Look up names[0..n) (borrowed) in path's .dynsym (falling back to .symtab);
 * vals[i] = st_value, 0 when absent. *load_vaddr = page-aligned p_vaddr of
 * the PT_LOAD that maps file offset 0 (bias = map start - it). Returns 0 or
 * -errno (-ENOEXEC: not a 64-bit ELF). */
int elfsym_lookup(const char *path, const char *const *names, uint64_t *vals, int n,
                  uint64_t *load_vaddr);

/* The zero-initialised data (.bss: the part of the writable PT_LOAD past its
 * file bytes) of path: *start (before the load bias) and *len, with
 * *load_vaddr as above. 0, -ENOENT when there is none, or -errno. attach
 * reads a 3.9/3.10 interpreter's version text there (attach.c). */
int elfsym_bss(const char *path, uint64_t *start, uint64_t *len, uint64_t *load_vaddr);

/* path opened read-only without waiting (O_NONBLOCK: a FIFO named where an
 * image was must not block attach) and checked to be a regular file: a new
 * descriptor, or -errno (-ENOEXEC: not a regular file). */
int elfsym_open(const char *path);

/* The same two on an open descriptor (borrowed; elfsym_open's or
 * /proc/PID/map_files'), and on bytes already in memory (m borrowed,
 * size bytes, any alignment: the fuzzer's entry, tests/fuzz). */
int elfsym_lookup_fd(int fd, const char *const *names, uint64_t *vals, int n, uint64_t *load_vaddr);
int elfsym_bss_fd(int fd, uint64_t *start, uint64_t *len, uint64_t *load_vaddr);
int elfsym_lookup_mem(const uint8_t *m, size_t size, const char *const *names, uint64_t *vals,
                      int n, uint64_t *load_vaddr);
int elfsym_bss_mem(const uint8_t *m, size_t size, uint64_t *start, uint64_t *len,
                   uint64_t *load_vaddr);

#endif
