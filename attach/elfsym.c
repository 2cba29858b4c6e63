/* elfsym.c: see elfsym.h. The file is mapped read-only; every offset taken
 * from it is bounds-checked against its size (a truncated or hostile file
 * gives -ENOEXEC, never a read past the map), and every header and symbol
 * is copied out with memcpy: the file's offsets need not be aligned (an odd
 * e_phoff is legal bytes, a misaligned Elf64_Phdr read is undefined). */
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

/* The checked ELF header of m[0..size): 0 or -ENOEXEC. */
static int ehdr_get(const uint8_t *m, size_t size, Elf64_Ehdr *eh)
{
    if (size < sizeof *eh) return -ENOEXEC;
    memcpy(eh, m, sizeof *eh);
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_phentsize != sizeof(Elf64_Phdr) ||
        eh->e_shentsize != sizeof(Elf64_Shdr) ||
        !in_file(size, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr)) ||
        !in_file(size, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr)))
        return -ENOEXEC;
    return 0;
}

/* Entry i of a table ehdr_get checked to lie inside the file */
static void phdr_get(const uint8_t *m, const Elf64_Ehdr *eh, int i, Elf64_Phdr *ph)
{
    memcpy(ph, m + eh->e_phoff + (uint64_t)i * sizeof *ph, sizeof *ph);
}

static void shdr_get(const uint8_t *m, const Elf64_Ehdr *eh, int i, Elf64_Shdr *sh)
{
    memcpy(sh, m + eh->e_shoff + (uint64_t)i * sizeof *sh, sizeof *sh);
}

static int scan_symtab(const uint8_t *m, size_t size, const Elf64_Ehdr *eh, const Elf64_Shdr *sh,
                       const char *const *names, uint64_t *vals, int n)
{
    if (sh->sh_link >= eh->e_shnum || sh->sh_entsize != sizeof(Elf64_Sym)) return -ENOEXEC;
    Elf64_Shdr str;
    shdr_get(m, eh, (int)sh->sh_link, &str);
    if (!in_file(size, sh->sh_offset, sh->sh_size) || !in_file(size, str.sh_offset, str.sh_size))
        return -ENOEXEC;
    const char *strs = (const char *)(m + str.sh_offset);
    size_t nsym = sh->sh_size / sizeof(Elf64_Sym);
    for (size_t i = 0; i < nsym; i++) {
        Elf64_Sym sym;
        memcpy(&sym, m + sh->sh_offset + i * sizeof sym, sizeof sym);
        if (sym.st_name >= str.sh_size || sym.st_shndx == SHN_UNDEF) continue;
        const char *name = strs + sym.st_name;
        size_t room = str.sh_size - sym.st_name;
        for (int k = 0; k < n; k++)
            if (!vals[k] && strnlen(name, room) < room && !strcmp(name, names[k]))
                vals[k] = sym.st_value;
    }
    return 0;
}

int elfsym_open(const char *path)
{
    /* O_NONBLOCK: a FIFO (or a device) where an image was is not waited on;
     * it is refused below */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return -errno;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return -ENOEXEC;
    }
    return fd;
}

/* fd (borrowed, a regular file) mapped read-only (*m, *size; munmap it):
 * 0 or -errno. */
static int elf_map(int fd, const uint8_t **m, size_t *size)
{
    struct stat st;
    if (fstat(fd, &st) != 0) return -errno;
    if (!S_ISREG(st.st_mode)) return -ENOEXEC;
    *size = (size_t)st.st_size;
    if (*size < sizeof(Elf64_Ehdr) || *size > ELFSYM_MAX_FILE) return -ENOEXEC;
    *m = mmap(NULL, *size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (*m == MAP_FAILED) return -errno;
    return 0;
}

/* page-aligned p_vaddr of the PT_LOAD mapping file offset 0: 0 or -ENOEXEC */
static int load_base(const uint8_t *m, const Elf64_Ehdr *eh, uint64_t *load_vaddr)
{
    for (int i = 0; i < eh->e_phnum; i++) {
        Elf64_Phdr ph;
        phdr_get(m, eh, i, &ph);
        if (ph.p_type == PT_LOAD && ph.p_offset == 0) {
            *load_vaddr = ph.p_vaddr & ~(uint64_t)4095;
            return 0;
        }
    }
    return -ENOEXEC;
}

int elfsym_lookup_mem(const uint8_t *m, size_t size, const char *const *names, uint64_t *vals,
                      int n, uint64_t *load_vaddr)
{
    for (int k = 0; k < n; k++)
        vals[k] = 0;
    Elf64_Ehdr eh;
    int rc = ehdr_get(m, size, &eh);
    if (!rc) rc = load_base(m, &eh, load_vaddr);
    if (rc) return rc;
    /* .dynsym first (always there in a binary that exports its API), then
     * .symtab for whatever it lacks (an unstripped static build) */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < eh.e_shnum; i++) {
            Elf64_Shdr sh;
            shdr_get(m, &eh, i, &sh);
            if (sh.sh_type == (pass ? SHT_SYMTAB : SHT_DYNSYM) &&
                (rc = scan_symtab(m, size, &eh, &sh, names, vals, n)))
                return rc;
        }
    return 0;
}

int elfsym_bss_mem(const uint8_t *m, size_t size, uint64_t *start, uint64_t *len,
                   uint64_t *load_vaddr)
{
    Elf64_Ehdr eh;
    *len = 0;
    int rc = ehdr_get(m, size, &eh);
    if (!rc) rc = load_base(m, &eh, load_vaddr);
    if (rc) return rc;
    rc = -ENOENT;
    for (int i = 0; i < eh.e_phnum; i++) { /* the last writable segment holds .bss */
        Elf64_Phdr ph;
        phdr_get(m, &eh, i, &ph);
        if (ph.p_type == PT_LOAD && (ph.p_flags & PF_W) && ph.p_memsz > ph.p_filesz) {
            *start = ph.p_vaddr + ph.p_filesz;
            *len = ph.p_memsz - ph.p_filesz;
            rc = 0;
        }
    }
    return rc;
}

int elfsym_lookup_fd(int fd, const char *const *names, uint64_t *vals, int n, uint64_t *load_vaddr)
{
    for (int k = 0; k < n; k++)
        vals[k] = 0;
    const uint8_t *m;
    size_t size;
    int rc = elf_map(fd, &m, &size);
    if (rc) return rc;
    rc = elfsym_lookup_mem(m, size, names, vals, n, load_vaddr);
    munmap((void *)m, size);
    return rc;
}

int elfsym_bss_fd(int fd, uint64_t *start, uint64_t *len, uint64_t *load_vaddr)
{
    const uint8_t *m;
    size_t size;
    *len = 0;
    int rc = elf_map(fd, &m, &size);
    if (rc) return rc;
    rc = elfsym_bss_mem(m, size, start, len, load_vaddr);
    munmap((void *)m, size);
    return rc;
}

int elfsym_lookup(const char *path, const char *const *names, uint64_t *vals, int n,
                  uint64_t *load_vaddr)
{
    for (int k = 0; k < n; k++)
        vals[k] = 0;
    int fd = elfsym_open(path);
    if (fd < 0) return fd;
    int rc = elfsym_lookup_fd(fd, names, vals, n, load_vaddr);
    close(fd);
    return rc;
}

int elfsym_bss(const char *path, uint64_t *start, uint64_t *len, uint64_t *load_vaddr)
{
    *len = 0;
    int fd = elfsym_open(path);
    if (fd < 0) return fd;
    int rc = elfsym_bss_fd(fd, start, len, load_vaddr);
    close(fd);
    return rc;
}
