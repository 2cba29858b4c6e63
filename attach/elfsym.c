/* elfsym.c: see elfsym.h. The file is mapped read-only; every offset taken
 * from it is bounds-checked against its size (a truncated or hostile file
 * gives -ENOEXEC, never a read past the map). */
#include "elfsym.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int in_file(size_t size, uint64_t off, uint64_t len)
{
    return off <= size && len <= size - off;
}

static int scan_symtab(const uint8_t *m, size_t size, const Elf64_Shdr *sh, const Elf64_Shdr *shs,
                       int nsh, const char *const *names, uint64_t *vals, int n)
{
    if (sh->sh_link >= (unsigned)nsh || sh->sh_entsize != sizeof(Elf64_Sym)) return -ENOEXEC;
    const Elf64_Shdr *str = &shs[sh->sh_link];
    if (!in_file(size, sh->sh_offset, sh->sh_size) || !in_file(size, str->sh_offset, str->sh_size))
        return -ENOEXEC;
    const Elf64_Sym *sym = (const void *)(m + sh->sh_offset);
    const char *strs = (const char *)(m + str->sh_offset);
    size_t nsym = sh->sh_size / sizeof *sym;
    for (size_t i = 0; i < nsym; i++) {
        if (sym[i].st_name >= str->sh_size || sym[i].st_shndx == SHN_UNDEF) continue;
        const char *name = strs + sym[i].st_name;
        size_t room = str->sh_size - sym[i].st_name;
        for (int k = 0; k < n; k++)
            if (!vals[k] && strnlen(name, room) < room && !strcmp(name, names[k]))
                vals[k] = sym[i].st_value;
    }
    return 0;
}

/* path mapped read-only (*m, *size; munmap it) with its ELF header and
 * program/section header tables checked to lie inside: 0 or -errno. */
static int elf_map(const char *path, const uint8_t **m, size_t *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    *size = (size_t)st.st_size;
    if (*size < sizeof(Elf64_Ehdr) || *size > ELFSYM_MAX_FILE) {
        close(fd);
        return -ENOEXEC;
    }
    *m = mmap(NULL, *size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (*m == MAP_FAILED) return -errno;
    const Elf64_Ehdr *eh = (const void *)*m;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_phentsize != sizeof(Elf64_Phdr) ||
        eh->e_shentsize != sizeof(Elf64_Shdr) ||
        !in_file(*size, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr)) ||
        !in_file(*size, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr))) {
        munmap((void *)*m, *size);
        return -ENOEXEC;
    }
    return 0;
}

/* page-aligned p_vaddr of the PT_LOAD mapping file offset 0: 0 or -ENOEXEC */
static int load_base(const uint8_t *m, uint64_t *load_vaddr)
{
    const Elf64_Ehdr *eh = (const void *)m;
    const Elf64_Phdr *ph = (const void *)(m + eh->e_phoff);
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && ph[i].p_offset == 0) {
            *load_vaddr = ph[i].p_vaddr & ~(uint64_t)4095;
            return 0;
        }
    return -ENOEXEC;
}

int elfsym_lookup(const char *path, const char *const *names, uint64_t *vals, int n,
                  uint64_t *load_vaddr)
{
    for (int k = 0; k < n; k++)
        vals[k] = 0;
    const uint8_t *m;
    size_t size;
    int rc = elf_map(path, &m, &size);
    if (rc) return rc;
    const Elf64_Ehdr *eh = (const void *)m;
    if ((rc = load_base(m, load_vaddr))) goto out;
    const Elf64_Shdr *sh = (const void *)(m + eh->e_shoff);
    /* .dynsym first (always there in a binary that exports its API), then
     * .symtab for whatever it lacks (an unstripped static build) */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < eh->e_shnum; i++)
            if (sh[i].sh_type == (pass ? SHT_SYMTAB : SHT_DYNSYM)) {
                rc = scan_symtab(m, size, &sh[i], sh, eh->e_shnum, names, vals, n);
                if (rc) goto out;
            }
    rc = 0;
out:
    munmap((void *)m, size);
    return rc;
}

int elfsym_bss(const char *path, uint64_t *start, uint64_t *len, uint64_t *load_vaddr)
{
    const uint8_t *m;
    size_t size;
    int rc = elf_map(path, &m, &size);
    if (rc) return rc;
    const Elf64_Ehdr *eh = (const void *)m;
    const Elf64_Phdr *ph = (const void *)(m + eh->e_phoff);
    *len = 0;
    if (!(rc = load_base(m, load_vaddr))) {
        rc = -ENOENT;
        for (int i = 0; i < eh->e_phnum; i++) /* the last writable segment holds .bss */
            if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_W) &&
                ph[i].p_memsz > ph[i].p_filesz) {
                *start = ph[i].p_vaddr + ph[i].p_filesz;
                *len = ph[i].p_memsz - ph[i].p_filesz;
                rc = 0;
            }
    }
    munmap((void *)m, size);
    return rc;
}
