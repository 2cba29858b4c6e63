/* memread.h: safe reads of our own process's memory (memread.c). */
#ifndef HOTLINE_MEMREAD_H
#define HOTLINE_MEMREAD_H

#include <stddef.h>
#include <stdint.h>

int mem_read(uintptr_t addr, void *dst, size_t n); /* 0 or -errno */
int mem_check(void);                               /* 0 if usable */

#endif
