/* profile: the profile store. Everything Hotline knows about a run lives
 * here: per file (absolute path) -> per line and per function statistics, the
 * hottest call stacks, per-thread totals and program metadata.
 *
 * Data arrives from one or several agent connections (one per profiled
 * process). Each connection has its own string and stack ids; a prof_conn
 * maps them onto store-wide ones, so the same file seen by a parent and its
 * children lands on the same lines. The store is also filled from a saved
 * JSON profile (docs/profile-format.md) and written back to one atomically.
 *
 * The statistics carried per line/function are the AGENT_STATS table in
 * protocol/agent_wire.h: add a row there and this store, its JSON writer and
 * reader carry the new field. Read-only structs are exposed so that the LSP
 * providers can walk them without copying; never modify them from outside. */
#ifndef HOTLINE_PROFILE_H
#define HOTLINE_PROFILE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "agent_wire.h"
#include "store/memprof.h"
#include "store/timeline.h"

#define PROFILE_FORMAT_VERSION 1
#define PROFILE_MAX_FILES 100000
/* Line numbers above are dropped: no Python source has a million lines
 * (PEP 611's bound). Lines are stored sparsely (a hash of the lines that
 * have data), so a file's memory follows how many lines have data, never
 * its largest line number. */
#define PROFILE_MAX_LINE 1000000
#define PROFILE_MAX_LINES 2000000 /* line records per store; later ones counted in dropped */
#define PROFILE_MAX_FUNCS 1000000 /* per store */
#define PROFILE_MAX_STACKS 200000 /* distinct stacks kept; later ones counted in dropped */
#define PROFILE_MAX_THREADS 4096
#define PROFILE_MAX_PROCS 4096
#define PROFILE_MAX_CONN_IDS (1 << 24) /* per-connection str/stack ids */
#define PROFILE_JSON_STACKS 500        /* top stacks written to the JSON profile */
/* Per-thread parts of stacks (struct prof_stack_part): at most this many
 * threads per stack and this many parts per store (32 B each); past either,
 * a sample stays in the stack's totals only, "not told apart". */
#define PROFILE_STACK_THREADS 256
#define PROFILE_MAX_STACK_PARTS (1 << 20)
/* A saved profile bigger than this is refused before parsing: the JSON tree
 * and the store take several times the file's size. 30,000 files of one
 * line each make ~6 MB. */
#define PROFILE_MAX_JSON_BYTES ((size_t)64 << 20)
/* ... and so is one whose JSON tree would take more than this: what a file
 * under the size cap builds depends on what it holds (57 MB of "[]," is 19
 * million arrays, 2.7 GB in jansson; a 63 MB profile that hotline wrote,
 * ~470 MB). Estimated by a scan of the text (profile_json_precheck). */
#define PROFILE_MAX_JSON_TREE ((size_t)768 << 20)
/* Every number in a saved profile is within +-PROFILE_MAX_NUMBER (a
 * trillion seconds, MB or samples): then no sum of what a file under
 * PROFILE_MAX_JSON_BYTES holds overflows a double or a long long, and every
 * total, export and ratio stays finite (1e308 twice was +inf: speedscope
 * and HTML failed with "Cannot allocate memory"). */
#define PROFILE_MAX_NUMBER 1e12

struct prof_func {
    const char *name; /* store-owned */
    int first_line, last_line;
    struct agent_stats st;
};

struct prof_line {
    int line; /* 1-based (0: module-level code without a line) */
    struct agent_stats st;
};

struct prof_file {
    const char *path; /* absolute, store-owned */
    /* the lines that have data, in first-seen order (not sorted); find one
     * with profile_file_line() */
    struct prof_line *lines;
    size_t nlines, caplines;
    uint32_t *p__slots; /* private: open-addressing index, lines[i] as i + 1 */
    size_t p__nslots;
    struct prof_func **funcs; /* store-owned */
    size_t nfuncs, capfuncs;
    struct agent_stats total; /* sum over lines */
};

struct prof_frame {
    const char *file, *name; /* store-owned */
    int line;
};

/* One thread's share of a stack. */
struct prof_stack_part {
    long long pid, tid;
    long long samples;
    double seconds;
};

struct prof_stack {
    struct prof_frame *fr; /* innermost first */
    size_t nfr;
    long long samples; /* every thread's */
    double seconds;
    /* the threads that ran it, first seen first; what samples/seconds hold
     * beyond their sum belongs to threads not told apart (an older agent or
     * profile, a thread past AGENT_STACK_THREADS or the caps above) */
    struct prof_stack_part *parts; /* owned */
    size_t nparts;
};

struct prof_thread {
    long long pid, tid;
    char *name;
    double py, nat, sys;
};

#define PROFILE_ROLE_MAX 128 /* bytes of a process's role kept (cut beyond) */
struct prof_proc {
    long long pid, ppid;
    char *python;     /* version string, or NULL */
    json_t *argv;     /* owned array, or NULL */
    char *end_reason; /* "exit", "stop", ... from `end`; NULL: EOF without end */
    char *role;       /* from `role` ("dask worker tcp://..."), or NULL */
    double last_ts;
};

/* Program metadata; set by the session (or loaded), read by the report. */
struct prof_meta {
    char *program;        /* main script (absolute) or "-m module"; owned */
    json_t *argv;         /* owned array of strings (program arguments) or NULL */
    char *python_version; /* owned or NULL */
    double elapsed_s;
    double interval_ms;
    long long samples; /* sum of delta.samples */
    int exit_status;   /* -1 unknown */
    int exit_signal;   /* 0 none */
    char *reason;      /* "exited 0", "crashed (SIGSEGV)", "killed", ...; owned */
};

struct profile {
    struct prof_meta meta;
    struct prof_file **files; /* in first-seen order */
    size_t nfiles, capfiles;
    struct prof_stack **stacks;
    size_t nstacks, capstacks;
    struct prof_thread *threads;
    size_t nthreads;
    struct prof_proc *procs;
    size_t nprocs;
    size_t nstack_parts;  /* over all stacks (PROFILE_MAX_STACK_PARTS) */
    long long dropped;    /* records dropped by caps or bad entries */
    size_t nline_records; /* lines with data over all files (PROFILE_MAX_LINES) */
    struct agent_stats total;
    void *p__idx;            /* private hash indexes */
    struct memprof *mem;     /* owned: memory timelines and leak analysis (memprof.h) */
    struct prof_timeline tl; /* when each stack ran (timeline.h) */
};

/* New empty store, or NULL on ENOMEM. */
struct profile *profile_new(void);
void profile_free(struct profile *p);

/* Replace an owned metadata string (s borrowed, copied; NULL clears). */
int profile_set_str(char **slot, const char *s);
/* "exited 3", "crashed (SIGSEGV)", "killed (SIGKILL)", "interrupted (SIGINT)" ... into buf. */
void profile_describe_exit(int status, int sig, char *buf, size_t n);

/* ---- feeding from agent connections ---- */
struct prof_conn;
/* New per-connection id mapping for p (borrowed; must outlive the conn). */
struct prof_conn *profile_conn_new(struct profile *p);
/* c's messages arrive as its agent sends them (a socket, not a saved
 * stream): a hello without mono0 (an agent of another host) is then placed
 * on the timeline by when its first delta arrives. */
void profile_conn_live(struct prof_conn *c);
void profile_conn_free(struct prof_conn *c);
/* Apply one decoded message (borrowed). hello/str/stack/delta/end change the
 * store; other types are ignored. Returns 0, -EPROTO on an id used before its
 * definition or an id over the cap (the rest of the message is still applied
 * where possible), -ENOMEM. */
int profile_conn_apply(struct prof_conn *c, const struct agent_msg *m);
/* Forget what the file at path measured so far (a notebook cell run again:
 * it shows its latest execution only, issue 22): its lines' and functions'
 * statistics go to zero and the totals follow; the records stay, empty.
 * So do the stacks through the file (no longer listed by
 * profile_top_stacks) and their ticks leave the timeline. Memory timelines
 * are kept. 0, or -ENOENT when path has no data. */
int profile_reset_file(struct profile *p, const char *path);
/* pid from this connection's hello, 0 before it. */
long long profile_conn_pid(const struct prof_conn *c);
/* Turn a `now` message (borrowed) into store terms. New reference:
 * {"ts":s,"pid":n,"threads":[{"tid","name","state","since_s",
 *  "frames":[{"file","name","line"}...]}]}; unknown ids become "?". */
json_t *profile_conn_resolve_now(struct prof_conn *c, const struct agent_msg *m);

/* ---- queries ---- */
/* Borrowed file record for an absolute path, or NULL. */
const struct prof_file *profile_file(const struct profile *p, const char *path);
/* Borrowed stats of (file, line), or NULL when the line has no data. */
const struct agent_stats *profile_line(const struct profile *p, const char *path, int line);
/* The same in a file record (borrowed). */
const struct agent_stats *profile_file_line(const struct prof_file *f, int line);
/* fn's stats with its memory filled in from the lines of its range
 * [first_line, last_line] in f (the agent charges memory to lines only):
 * allocated, freed, Python part and copies summed, peak the highest line
 * peak, then the derived fields. Nested functions' lines count too. */
void profile_func_stats(const struct prof_file *f, const struct prof_func *fn,
                        struct agent_stats *out);

struct prof_line_ref {
    const struct prof_file *file; /* borrowed */
    int line;
    const struct agent_stats *st; /* borrowed */
};
/* The n hottest lines of the whole profile (by py+nat+sys), hottest first.
 * Fills out[0..ret). */
size_t profile_top_lines(const struct profile *p, struct prof_line_ref *out, size_t n);

struct prof_func_ref {
    const struct prof_file *file;
    const struct prof_func *fn;
};
size_t profile_top_funcs(const struct profile *p, struct prof_func_ref *out, size_t n);
/* The same by one statistic of profile_func_stats (AGENT_STAT_ALLOC, ...:
 * memory too; -1: by time, as profile_top_funcs), largest first, ties by
 * time then place. */
size_t profile_top_funcs_by(const struct profile *p, int stat, struct prof_func_ref *out, size_t n);

/* The n heaviest stacks (by seconds), hottest first; if path is not NULL only
 * stacks that have a frame at (path, line). Borrowed pointers into out. */
size_t profile_top_stacks(const struct profile *p, const char *path, int line,
                          const struct prof_stack **out, size_t n);

/* ---- processes ---- */
/* A short name of process pid for lists (hover, flame graph; of a pid that
 * exec'd, its entry with a role, else its latest): its role
 * ("dask worker tcp://... (pid 12)", the `role` message), else its script's
 * name, "multiprocessing child", "python -c", or "pid 12". */
void profile_proc_label(const struct profile *p, long long pid, char *buf, size_t n);
struct prof_pid_seconds {
    long long pid;
    double seconds;
};
/* Seconds of the stored stacks through (path, line), per process (the
 * stacks' per-thread parts), heaviest first: fills out[0..ret), at most n
 * processes; *untold (may be NULL) gets the seconds of threads not told
 * apart and of processes past n. */
size_t profile_line_by_process(const struct profile *p, const char *path, int line,
                               struct prof_pid_seconds *out, size_t n, double *untold);

/* ---- leaks (memprof's rule over each file's lines with data) ---- */
/* Leaks of one file: fills out[0..ret) (at most n), most likely first.
 * Costs the file's lines with data (not the whole profile's). */
size_t profile_leaks(const struct profile *p, const char *path, struct memprof_leak *out, size_t n);
/* New set for p (borrowed, may be NULL; the set borrows its paths, so it
 * must not outlive p), or NULL when no file has a leak (or ENOMEM). Touches
 * nothing else: the loader calls it off the loop thread. */
struct memprof_leak_set *profile_leak_set_new(const struct profile *p);

/* ---- JSON ---- */
/* New reference: the whole profile in docs/profile-format.md form. */
json_t *profile_to_json(const struct profile *p);
/* New reference: the `leaks` list of one file as the profile writes it, or
 * NULL when it has none. */
json_t *profile_leaks_json(const struct profile *p, const char *path);
/* New store from a JSON profile (borrowed), or NULL with a reason in err. */
struct profile *profile_from_json(const json_t *root, char *err, size_t errlen);
/* The same, cancellable from another thread: once *cancel (borrowed, may be
 * NULL) is non-zero the load stops within PROFILE_CANCEL_EVERY records and
 * returns NULL with err "cancelled". A big profile takes seconds to load; a
 * server that exits must not wait for it (docs/lsp.md). */
#define PROFILE_CANCEL_EVERY 1024
struct profile *profile_from_json_cancellable(const json_t *root, const atomic_int *cancel,
                                              char *err, size_t errlen);
/* Saving to a path the user named (--json, --html, ...). A regular file, or
 * a path where nothing is yet, is written atomically: a new temp file in the
 * same directory (random name, created with O_EXCL so that nothing already
 * there, a symlink included, is followed; mode 0600: the profile holds the
 * program's argv), fsync, rename over path. A symlink to a regular file
 * has the file it resolves to replaced that way, the link kept. Anything
 * else (a terminal, /dev/null, /dev/stdout, a FIFO, a symlink to one) is
 * opened and written in place, never replaced. 0 or -errno. */
/* How profile_save formats the file (for a profile_to_json snapshot saved
 * with profile_save_json elsewhere, e.g. on another thread). */
#define PROFILE_SAVE_FLAGS (JSON_INDENT(1) | JSON_SORT_KEYS | JSON_REAL_PRECISION(10))
int profile_save(const struct profile *p, const char *path);
/* The same for any JSON value (borrowed), dumped with jansson's flags. */
int profile_save_json(const json_t *root, const char *path, size_t flags);
/* The same for any content: fill(f, ud) writes it to the file's buffered
 * stream and returns 0 or -errno. */
int profile_save_with(const char *path, int (*fill)(FILE *f, void *ud), void *ud);
/* profile_write flags. PROFILE_WRITE_REPLACE: a file of ours in a folder we
 * do not trust (<root>/.hotline): always the temp file renamed over path,
 * so that whatever a repository placed there (a symlink, a FIFO that would
 * block the write) is replaced, never followed nor opened. */
#define PROFILE_WRITE_REPLACE 1
/* The one writing routine: profile_save_with with PROFILE_WRITE_* flags. */
int profile_write(const char *path, int wflags, int (*fill)(FILE *f, void *ud), void *ud);
/* profile_save_json with PROFILE_WRITE_* flags. */
int profile_write_json(const json_t *root, const char *path, size_t flags, int wflags);

/* profile_read_file flags */
#define PROFILE_READ_NOFOLLOW 1 /* refuse a symlink as the last component */
#define PROFILE_READ_REGULAR 2  /* refuse a FIFO, a device...: opened without blocking */
#define PROFILE_READ_UNTRUSTED (PROFILE_READ_NOFOLLOW | PROFILE_READ_REGULAR)
/* Read a whole file of at most max bytes into *out (new, NUL-terminated,
 * *len bytes). 0 or -errno: -ELOOP a symlink (NOFOLLOW), -EINVAL not a
 * regular file (REGULAR), -EFBIG more than max bytes (nothing past max+1 is
 * read: /dev/zero ends too). */
int profile_read_file(const char *path, size_t max, int flags, char **out, size_t *len);
/* Load a saved profile of at most PROFILE_MAX_JSON_BYTES (flags as above:
 * PROFILE_READ_UNTRUSTED for a file the user did not name); NULL with a
 * reason in err (missing file, symlink, not a regular file, too big, bad
 * JSON, wrong version, wrong field type). */
struct profile *profile_load(const char *path, int flags, char *err, size_t errlen);
/* The same, cancellable as profile_from_json_cancellable: the JSON parse
 * (most of the time) stops within a few KiB of text once *cancel is set,
 * the store's fill within PROFILE_CANCEL_EVERY records. */
struct profile *profile_load_cancellable(const char *path, int flags, const atomic_int *cancel,
                                         char *err, size_t errlen);
/* profile_load_cancellable from len bytes of text (borrowed) already read:
 * the same checks (tree size, JSON, numbers, fields); err names no file. */
struct profile *profile_load_text(const char *text, size_t len, const atomic_int *cancel, char *err,
                                  size_t errlen);
/* 0 when the JSON tree of len bytes of text (borrowed) would take at most
 * PROFILE_MAX_JSON_TREE; -E2BIG with the estimate in err otherwise. A scan
 * of the text that allocates nothing; the text need not be valid JSON. */
int profile_json_precheck(const char *text, size_t len, char *err, size_t errlen);
/* New JSON value parsed from len bytes of text (borrowed) once it passed
 * profile_json_precheck; cancellable as profile_load_cancellable (*cancel
 * borrowed, may be NULL). NULL with the reason in err. */
json_t *profile_json_parse(const char *text, size_t len, const atomic_int *cancel, char *err,
                           size_t errlen);

#endif
