/* attach: read a running CPython from outside (`hotline attach`). Finds the
 * interpreter in /proc/PID/maps (the executable or a libpython3.X.so,
 * binaries opened through /proc/PID/root so a container's mount namespace
 * works), its _PyRuntime and Py_Version from the ELF dynamic symbols plus
 * the load bias (3.9/3.10, which have no Py_Version: the text
 * Py_GetVersion() left in the interpreter's .bss, checked against the file
 * name and the sizes the target's frame and code types report), the
 * structure layout from the target's _Py_DebugOffsets (3.13+) or the
 * build-time table (layout.h), then reads threads and
 * frames with process_vm_readv. Nothing is written to the target and it is
 * never stopped: every read races with it, so every pointer chain is
 * validated and an inconsistent read is an error, never a guess.
 * No jansson, no libuv: the sampler (sampler.c) aggregates. */
#ifndef HOTLINE_ATTACH_H
#define HOTLINE_ATTACH_H

#include <stdint.h>
#include <sys/types.h>

#include "layout.h"

#define ATTACH_MAX_THREADS 256 /* sampled per tick (the CLI picks which) */
#define ATTACH_MAX_LISTED 4096 /* thread states listed (attach_threads' max) */
#define ATTACH_MAX_FRAMES 256
#define ATTACH_MAX_STR 1024    /* a file name or qualname longer is cut */
#define ATTACH_MAX_TABLE 65536 /* bytes of a line table copied */
#define ATTACH_CODE_CACHE 1024 /* code objects remembered (direct-mapped) */

/* error codes beyond -errno */
#define ATTACH_ENOTPY (-1001)   /* no CPython runtime in the process */
#define ATTACH_EVERSION (-1002) /* a CPython this build cannot read */
#define ATTACH_ERACE (-1003)    /* inconsistent read (the target moved): drop the sample */

struct attach_code {
    uint64_t addr, filename, linetable; /* cache key: the object and its fields */
    int firstline, lastline;
    char file[ATTACH_MAX_STR], name[ATTACH_MAX_STR];
    uint8_t *tab; /* owned */
    size_t tab_n;
};

struct attach_proc {
    pid_t pid;
    struct attach_layout lay;  /* the target's */
    uint64_t runtime;          /* address of _PyRuntime */
    uint32_t version_hex;      /* Py_Version (3.9/3.10: from Py_GetVersion's text) */
    char version[32];          /* "3.13.0" */
    char binary[512];          /* the file holding the runtime, as the target sees it */
    struct attach_code *codes; /* owned, ATTACH_CODE_CACHE */
    /* 3.9/3.10 (lay.frame_object): PyFrame_Type and PyCode_Type in the
     * target, and where glibc keeps the kernel tid in a struct pthread */
    uint64_t frame_type, code_type;
    long tid_off;
};

struct attach_thread {
    uint64_t tstate, frame; /* innermost frame (0: no Python frame) */
    long tid;
    uint64_t sig; /* innermost frame state: changes when bytecode runs */
};

struct attach_frame {
    const char *file, *name; /* borrowed from the code cache, valid until the next call */
    int line, firstline, lastline;
};

/* Open pid: 0, or a negative code with a sentence for the user in why:
 * -ESRCH no such process (or a zombie), -EPERM/-EACCES permission (says
 * which), ATTACH_ENOTPY, ATTACH_EVERSION. attach_close() in every case. */
int attach_open(struct attach_proc *ap, pid_t pid, char *why, size_t n);
void attach_close(struct attach_proc *ap);

/* The target's Python threads (main interpreter): fills out[0..ret).
 * Negative: -ESRCH (the target is gone), ATTACH_ERACE. */
int attach_threads(struct attach_proc *ap, struct attach_thread *out, int max);

/* Innermost frame state of one thread again (probing): 0 or negative. */
int attach_thread_sig(struct attach_proc *ap, const struct attach_thread *t, uint64_t *sig);

/* 1 when the thread holds the GIL, 0 when not, negative on a failed read. */
int attach_holds_gil(struct attach_proc *ap, const struct attach_thread *t);

/* The thread's Python frames, innermost first: fills out[0..ret), or a
 * negative code (ATTACH_ERACE: a chain that did not validate). */
int attach_stack(struct attach_proc *ap, const struct attach_thread *t, struct attach_frame *out,
                 int max);

/* Read n bytes at addr of pid: 0, -EFAULT (unmapped or short), -ESRCH,
 * -EPERM. */
int attach_read(pid_t pid, uint64_t addr, void *buf, size_t n);

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
