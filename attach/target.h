/* target.h: a CPython process opened for reading from outside. Finds the
 * interpreter in /proc/PID/maps (the executable or a libpython3.X.so,
 * binaries opened through /proc/PID/root so a container's mount namespace
 * works), its _PyRuntime and Py_Version from the ELF dynamic symbols plus
 * the load bias (3.9/3.10, which have no Py_Version: the text
 * Py_GetVersion() left in the interpreter's .bss, checked against the file
 * name and the sizes the target's frame and code types report), and the
 * structure layout from the target's _Py_DebugOffsets (3.13+) or the
 * build-time table (layout.h). What is read once per target; frames.c
 * reads its threads and frames. Nothing is written to the target and it
 * is never stopped. */
#ifndef HOTLINE_ATTACH_TARGET_H
#define HOTLINE_ATTACH_TARGET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "layout.h"
#include "mem.h"

/* error codes beyond -errno */
#define ATTACH_ENOTPY (-1001)   /* no CPython runtime in the process */
#define ATTACH_EVERSION (-1002) /* a CPython this build cannot read */
#define ATTACH_ERACE (-1003)    /* inconsistent read (the target moved): drop the sample */

struct attach_code;
struct attach_ranges;
struct attach_sitectx;

struct attach_proc {
    pid_t pid;
    struct attach_mem mem;     /* where its bytes come from: the live pid, or snap */
    struct attach_layout lay;  /* the target's */
    uint64_t runtime;          /* address of _PyRuntime */
    uint32_t version_hex;      /* Py_Version (3.9/3.10: from Py_GetVersion's text) */
    char version[32];          /* "3.13.0" */
    char binary[512];          /* the file holding the runtime, as the target sees it */
    struct attach_code *codes; /* owned, ATTACH_CODE_CACHE (frames.h) */
    uint32_t code_gen;         /* attach_stack calls so far (frames.c) */
    /* 3.9/3.10 (lay.frame_object): PyFrame_Type and PyCode_Type in the
     * target, and where glibc keeps the kernel tid in a struct pthread */
    uint64_t frame_type, code_type;
    long tid_off;
    struct attach_ranges *snap; /* owned: a replay's recorded bytes (NULL: live) */
    /* the call site (frames.h, attach_site): the opcode tables and what
     * was learnt of its types (owned, NULL: none, the probe decides) */
    struct attach_sitectx *site;
};

/* Shared with attach.c (not for other modules): fill ap for the live pid
 * (its memory source, runtime, version, layout): 0, or a negative code
 * with a sentence in why (attach_open says which). Allocates nothing. */
int attach__target_open(struct attach_proc *ap, pid_t pid, char *why, size_t n);

/* Shared with inject.c (not for other modules): the minor version a file
 * name says ("python3.X", "libpython3.X.so...", "libpython3.Xd.so"), or -1. */
int attach__minor_from_name(const char *path);
/* Shared with inject.c (not for other modules): the permission sentence
 * for pid in why (returns -EPERM). */
int attach__perm_message(pid_t pid, char *why, size_t n);
/* A file mapped at offset 0 in pid, and where. */
struct attach__mapping {
    char path[512]; /* as /proc/PID/maps names it (" (deleted)" when replaced) */
    uint64_t base;  /* start of its mapping at file offset 0 */
    uint64_t end;   /* ... and end (its /proc/PID/map_files entry is base-end) */
    int exe;        /* it is /proc/PID/exe */
};
/* The files mapped at offset 0 in pid, each once, the executable first (a
 * static python's runtime is its own), those keep() accepts (NULL: all;
 * exe is /proc/PID/exe's target): how many (at most max), or -errno from
 * opening /proc/PID/maps. */
int attach__mappings(pid_t pid, struct attach__mapping *m, int max,
                     int (*keep)(const char *path, const char *exe));
/* The file of mapping m of pid opened for elfsym (a new descriptor) or
 * -errno. The very file mapped where the kernel lets us (/proc/PID/map_files:
 * CAP_SYS_ADMIN; /proc/PID/exe for the executable), so that a binary
 * deleted or replaced since the target started (a package upgrade) is
 * still read; else the path through /proc/PID/root. Never blocks: a FIFO
 * or device named there is refused (elfsym_open). */
int attach__open_image(pid_t pid, const struct attach__mapping *m);

#endif
