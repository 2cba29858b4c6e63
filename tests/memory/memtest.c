/* memtest.c: libhotline_memtest.so, known native memory work for the memory
 * tests, loaded with ctypes so that one build serves every Python: mallocs
 * that the test keeps, frees or leaks, anonymous mappings, and memcpy of a
 * known size. The calls go through the PLT, as an extension's would. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void *mt_alloc(size_t n)
{
    char *p = malloc(n);
    if (p) memset(p, 1, n); /* touch it: real resident memory */
    return p;
}

void mt_free(void *p)
{
    free(p);
}

void mt_copy(void *dst, const void *src, size_t n)
{
    memcpy(dst, src, n);
}

/* An anonymous mapping of n bytes, touched (an extension's own big buffer). */
void *mt_map(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    memset(p, 1, n);
    return p;
}

void mt_unmap(void *p, size_t n)
{
    munmap(p, n);
}
