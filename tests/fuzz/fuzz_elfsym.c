/* libFuzzer target for attach/elfsym.c, the ELF reader `hotline attach`
 * runs on a target's binary and libpython (as root, on files another user
 * may have made).
 *
 * Input: the file's bytes. Oracles: nothing crashes, reads past the input
 * or misaligns (ASan/UBSan); the answers do not depend on where the bytes
 * lie (the same at an odd address: the reader copies headers out, never
 * casts); an answer of 0 gives a page-aligned load address, and a .bss
 * only with a length. */
#include "elfsym.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = {"_PyRuntime", "Py_Version", "PyFrame_Type", "PyCode_Type",
                                    "getpid"};
#define NNAMES ((int)(sizeof names / sizeof *names))

struct answer {
    int lookup_rc, bss_rc;
    uint64_t vals[NNAMES], load, bss_load, bss_start, bss_len;
};

static void ask(const uint8_t *m, size_t n, struct answer *a)
{
    memset(a, 0, sizeof *a);
    a->lookup_rc = elfsym_lookup_mem(m, n, names, a->vals, NNAMES, &a->load);
    a->bss_rc = elfsym_bss_mem(m, n, &a->bss_start, &a->bss_len, &a->bss_load);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct answer a, b;
    ask(data, size, &a);
    if (a.lookup_rc != 0 && a.lookup_rc != -ENOEXEC) abort();
    if (a.lookup_rc == 0 && (a.load & 4095)) abort();
    if (a.bss_rc == 0 && (!a.bss_len || (a.bss_load & 4095))) abort();
    if (a.bss_rc != 0 && a.bss_rc != -ENOEXEC && a.bss_rc != -ENOENT) abort();
    if (a.bss_rc != 0 && a.bss_len) abort();
    /* the same bytes one past an aligned address */
    uint8_t *odd = malloc(size + 1);
    if (!odd) return 0;
    memcpy(odd + 1, data, size);
    ask(odd + 1, size, &b);
    free(odd);
    if (memcmp(&a, &b, sizeof a) != 0) abort();
    return 0;
}
