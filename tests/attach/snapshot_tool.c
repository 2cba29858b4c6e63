/* attach_snapshot: record a live Python's stacks as a snapshot file, or
 * print a snapshot's (attach/snapshot.h).
 *
 *   attach_snapshot record PID OUT   read PID's threads and stacks once
 *       through a recorder, print them, save OUT, then read OUT back and
 *       exit 1 unless it gives the very same threads and frames
 *   attach_snapshot replay FILE      print FILE's threads and stacks
 *
 * The printed text (one "thread TID" line, then "  FILE:LINE NAME" per
 * frame, innermost first) is what the .expected files of tests/attach/snapshots/ hold. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach.h"
#include "snapshot.h"

#define TEXT_MAX (1 << 20)

/* ap's threads and stacks as text into out: 0 or the reader's code. */
static int read_all(struct attach_proc *ap, char *out, size_t cap)
{
    static struct attach_thread ts[ATTACH_MAX_THREADS];
    static struct attach_frame fr[ATTACH_MAX_FRAMES];
    int nt = attach_threads(ap, ts, ATTACH_MAX_THREADS);
    if (nt < 0) return nt;
    size_t o = 0;
    out[0] = 0;
    for (int i = 0; i < nt; i++) {
        int nf = attach_stack(ap, &ts[i], fr, ATTACH_MAX_FRAMES);
        if (nf < 0) return nf;
        o += (size_t)snprintf(out + o, cap - o, "thread %ld frames %d\n", ts[i].tid, nf);
        for (int k = 0; k < nf && o < cap; k++)
            o += (size_t)snprintf(out + o, cap - o, "  %s:%d %s\n", fr[k].file, fr[k].line,
                                  fr[k].name);
        if (o >= cap) return -E2BIG;
    }
    return 0;
}

static int replay(const char *path, char *text)
{
    struct attach_proc ap;
    char why[512] = "";
    int rc = attach_open_snapshot(&ap, path, why, sizeof why);
    if (!rc) rc = read_all(&ap, text, TEXT_MAX);
    attach_close(&ap);
    if (rc) fprintf(stderr, "attach_snapshot: %s: %d %s\n", path, rc, why);
    return rc;
}

/* One live read through a recorder; a read that raced with the target is
 * tried again from a fresh open (a fresh code cache, an empty recording),
 * so that the snapshot holds exactly what the kept read went through. */
static int record(pid_t pid, const char *out, char *text)
{
    int rc = ATTACH_ERACE;
    for (int k = 0; k < 20 && rc == ATTACH_ERACE; k++) {
        struct attach_proc ap;
        struct attach_ranges rec = {0};
        char why[512] = "";
        rc = attach_open(&ap, pid, why, sizeof why);
        if (!rc) {
            ap.mem = attach_mem_recorder(&rec, ap.mem);
            rc = read_all(&ap, text, TEXT_MAX);
        }
        if (!rc && rec.full) {
            snprintf(why, sizeof why, "the recording hit a cap of mem.h");
            rc = -E2BIG;
        }
        if (!rc) rc = attach_snapshot_save(&ap, &rec, out, why, sizeof why);
        if (!rc)
            fprintf(stderr, "attach_snapshot: Python %s, %zu ranges, %zu bytes\n", ap.version,
                    rec.n, rec.bytes);
        attach_close(&ap);
        attach_ranges_free(&rec);
        if (rc && rc != ATTACH_ERACE) fprintf(stderr, "attach_snapshot: %d %s\n", rc, why);
        if (rc == ATTACH_ERACE) usleep(20000);
    }
    return rc;
}

int main(int argc, char **argv)
{
    static char live[TEXT_MAX], back[TEXT_MAX];
    if (argc == 4 && !strcmp(argv[1], "record")) {
        if (record((pid_t)atoi(argv[2]), argv[3], live)) return 1;
        fputs(live, stdout);
        if (replay(argv[3], back)) return 1;
        if (strcmp(live, back)) {
            fprintf(stderr, "attach_snapshot: the snapshot reads back differently:\n%s", back);
            return 1;
        }
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "replay")) {
        if (replay(argv[2], back)) return 1;
        fputs(back, stdout);
        return 0;
    }
    fprintf(stderr, "usage: attach_snapshot record PID OUT | replay FILE\n");
    return 2;
}
