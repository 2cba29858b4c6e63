/* Jupyter cells as files. ipykernel compiles a cell's code under the name
 * <tempdir>/ipykernel_<pid>/<hash>.py, where <hash> is MurmurHash2 (x86,
 * 32-bit) of the raw cell text (its UTF-8 bytes) with the seed 0xC70F6907,
 * in decimal (ipykernel/compiler.py: murmur2_x86, get_file_name; the
 * environment variable IPYKERNEL_CELL_NAME replaces the whole name). The
 * profile names the cell by that file; the language server computes the
 * same hash for the cells the editor has open to show the file's profile on
 * the cell (docs/notebooks.md, "Cells in the editor"). Pure functions. */
#ifndef HOTLINE_CELLNAME_H
#define HOTLINE_CELLNAME_H

#include <stddef.h>
#include <stdint.h>

#define CELLNAME_IPYKERNEL_SEED 0xC70F6907u

/* MurmurHash2, x86 32-bit (Austin Appleby's MurmurHash2, little-endian
 * blocks), of n bytes at p (borrowed). */
uint32_t cellname_murmur2(const void *p, size_t n, uint32_t seed);

/* The <hash> of ipykernel's file name for a cell whose text is the n bytes
 * at text (borrowed, UTF-8). */
uint32_t cellname_ipykernel_hash(const char *text, size_t n);

/* 0 and *hash (may be NULL) when path (borrowed) names an ipykernel cell
 * file, ".../ipykernel_<digits>/<decimal u32>.py"; -ENOENT otherwise. */
int cellname_ipykernel_parse(const char *path, uint32_t *hash);

#endif
