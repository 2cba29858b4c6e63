/* memtest.c: libhotline_memtest.so, known native memory work for the memory
 * tests, loaded with ctypes so that one build serves every Python: mallocs
 * that the test keeps, frees or leaks, and memcpy of a known size. The
 * calls go through the PLT, as an extension's would. */
#include <stdlib.h>
#include <string.h>

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
