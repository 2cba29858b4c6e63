/* attach/elfsym.c and attach_read() on this very process: libc's getpid
 * found through /proc/self/maps + its ELF dynamic symbols + the load bias
 * must be the address the dynamic linker gave it, and its .bss where the
 * program's zero-initialised statics are; files that are not
 * 64-bit ELF, or are cut short, are refused without reading past them. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* A small valid ELF whose tables all sit at odd offsets (legal bytes: the
 * reader must copy them out, not cast; UBSan's alignment check trips on a
 * cast): one PT_LOAD with a .bss, a .dynsym naming getpid at 0x401234. */
static size_t odd_elf(uint8_t *f)
{
    memset(f, 0, 400);
    const size_t ph_at = 65, str_at = 121, sym_at = 129, sh_at = 177;
    Elf64_Ehdr eh = {.e_type = ET_DYN, .e_machine = EM_X86_64, .e_version = EV_CURRENT};
    memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_ident[EI_VERSION] = EV_CURRENT;
    eh.e_ehsize = sizeof eh;
    eh.e_phoff = ph_at;
    eh.e_phentsize = sizeof(Elf64_Phdr);
    eh.e_phnum = 1;
    eh.e_shoff = sh_at;
    eh.e_shentsize = sizeof(Elf64_Shdr);
    eh.e_shnum = 3;
    memcpy(f, &eh, sizeof eh);
    Elf64_Phdr ph = {.p_type = PT_LOAD,
                     .p_flags = PF_R | PF_W,
                     .p_offset = 0,
                     .p_vaddr = 0x400123,
                     .p_filesz = 400,
                     .p_memsz = 400 + 64};
    memcpy(f + ph_at, &ph, sizeof ph);
    memcpy(f + str_at, "\0getpid", 8);
    Elf64_Sym sym[2] = {{0}, {.st_name = 1, .st_shndx = 1, .st_value = 0x401234}};
    memcpy(f + sym_at, sym, sizeof sym);
    Elf64_Shdr sh[3] = {{0},
                        {.sh_type = SHT_DYNSYM,
                         .sh_offset = sym_at,
                         .sh_size = sizeof sym,
                         .sh_link = 2,
                         .sh_entsize = sizeof(Elf64_Sym)},
                        {.sh_type = SHT_STRTAB, .sh_offset = str_at, .sh_size = 8}};
    memcpy(f + sh_at, sh, sizeof sh);
    return 400;
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

    /* headers at odd offsets: read (no misaligned access under UBSan), from
     * a file and from bytes at an odd address */
    static uint8_t raw[401];
    size_t elf_n = odd_elf(raw + 1);
    char odd[] = "/tmp/hotline-elfsym-odd-XXXXXX";
    fd = mkstemp(odd);
    CHECK(fd >= 0 && write(fd, raw + 1, elf_n) == (ssize_t)elf_n);
    close(fd);
    CHECK_EQ(elfsym_lookup(odd, names, vals, 2, &load), 0);
    CHECK(vals[0] == 0x401234 && vals[1] == 0 && load == 0x400000);
    CHECK_EQ(elfsym_bss(odd, &bss, &bss_len, &load), 0);
    CHECK(bss == 0x400123 + 400 && bss_len == 64);
    CHECK_EQ(elfsym_lookup_mem(raw + 1, elf_n, names, vals, 2, &load), 0);
    CHECK(vals[0] == 0x401234);
    unlink(odd);

    /* a FIFO where an image was (a deleted binary's "<path> (deleted)"):
     * refused at once, not waited on for a writer */
    char fifo[] = "/tmp/hotline-elfsym-fifo-XXXXXX";
    CHECK(mkdtemp(fifo) != NULL);
    char fifo_path[64];
    snprintf(fifo_path, sizeof fifo_path, "%s/python3 (deleted)", fifo);
    CHECK(mkfifo(fifo_path, 0600) == 0);
    CHECK_EQ(elfsym_lookup(fifo_path, names, vals, 2, &load), -ENOEXEC);
    CHECK_EQ(elfsym_bss(fifo_path, &bss, &bss_len, &load), -ENOEXEC);
    CHECK_EQ(elfsym_open(fifo_path), -ENOEXEC);
    unlink(fifo_path);
    rmdir(fifo);
    return check_exit("attach_elfsym");
}
