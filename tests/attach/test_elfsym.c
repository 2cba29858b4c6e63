/* attach/elfsym.c and attach_read() on this very process: libc's getpid
 * found through /proc/self/maps + its ELF dynamic symbols + the load bias
 * must be the address the dynamic linker gave it, and its .bss where the
 * program's zero-initialised statics are; files that are not
 * 64-bit ELF, or are cut short, are refused without reading past them. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach.h"
#include "check.h"
#include "elfsym.h"

/* path and start of libc's mapping at file offset 0 */
static int find_libc(char *path, size_t n, uint64_t *base)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    char line[1024];
    int found = -1;
    while (found && fgets(line, sizeof line, f)) {
        unsigned long start, off;
        int pos = 0;
        if (sscanf(line, "%lx-%*x %*s %lx %*s %*s %n", &start, &off, &pos) < 2 || !pos) continue;
        char *file = line + pos;
        file[strcspn(file, "\n")] = 0;
        if (off == 0 && strstr(file, "/libc.so")) {
            snprintf(path, n, "%s", file);
            *base = start;
            found = 0;
        }
    }
    fclose(f);
    return found;
}

int main(void)
{
    char path[512];
    uint64_t base = 0, load = 0;
    CHECK(find_libc(path, sizeof path, &base) == 0);
    static const char *const names[] = {"getpid", "no_such_symbol_here"};
    uint64_t vals[2];
    CHECK_EQ(elfsym_lookup(path, names, vals, 2, &load), 0);
    CHECK(vals[0] != 0);
    CHECK(vals[1] == 0);
    void *real = dlsym(RTLD_DEFAULT, "getpid");
    CHECK(real != NULL);
    CHECK(base - load + vals[0] == (uint64_t)(uintptr_t)real);

    /* elfsym_bss: a zero-initialised static of this program lies in the
     * .bss it names (where attach reads 3.9/3.10's version text) */
    static char zeroed[64];
    static struct attach__mapping self[64]; /* the executable first */
    CHECK(attach__mappings(getpid(), self, 64, NULL) >= 1);
    uint64_t bss = 0, bss_len = 0, exe_load = 0;
    CHECK_EQ(elfsym_bss(self[0].path, &bss, &bss_len, &exe_load), 0);
    uint64_t at = (uint64_t)(uintptr_t)zeroed - (self[0].base - exe_load);
    CHECK(at >= bss && at + sizeof zeroed <= bss + bss_len);
    zeroed[0] = 1; /* (used: kept in .bss) */

    /* attach_read: our own memory, and an unmapped address */
    static const char secret[] = "hotline";
    char got[8] = "";
    CHECK_EQ(attach_read(getpid(), (uint64_t)(uintptr_t)secret, got, sizeof got), 0);
    CHECK(memcmp(got, secret, sizeof got) == 0);
    CHECK_EQ(attach_read(getpid(), 8, got, sizeof got), -EFAULT);

    /* not ELF, and an ELF header cut short */
    char tmp[] = "/tmp/hotline-elfsym-XXXXXX";
    int fd = mkstemp(tmp);
    CHECK(fd >= 0);
    CHECK(write(fd, "#!/bin/sh\necho not elf\n", 23) == 23);
    CHECK_EQ(elfsym_lookup(tmp, names, vals, 2, &load), -ENOEXEC);
    int src = open(path, O_RDONLY);
    char head[100];
    CHECK(src >= 0 && read(src, head, sizeof head) == (ssize_t)sizeof head);
    close(src);
    CHECK(ftruncate(fd, 0) == 0 && pwrite(fd, head, sizeof head, 0) == (ssize_t)sizeof head);
    CHECK_EQ(elfsym_lookup(tmp, names, vals, 2, &load), -ENOEXEC);
    CHECK_EQ(elfsym_bss(tmp, &bss, &bss_len, &load), -ENOEXEC);
    close(fd);
    unlink(tmp);
    CHECK_EQ(elfsym_lookup("/nonexistent/hotline", names, vals, 2, &load), -ENOENT);
    return check_exit("attach_elfsym");
}
