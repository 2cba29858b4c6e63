/* The attach reader replayed from the committed snapshot fixture
 * (snapshots/py3.11.2.snap, recorded from /usr/bin/python3 running
 * snap_target.py; snapshots/README says how to record it again): no Python
 * runs, the threads and frames must be the ones the live read gave
 * (snapshots/py3.11.2.expected). Then copies of the fixture cut short at
 * many points, and with bytes changed, must be refused with a sentence or
 * read to a clean error, never a crash or a read past a buffer (this test
 * runs in the ASan build too). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "attach.h"

#define TEXT_MAX (1 << 20)

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *b = malloc(TEXT_MAX + 1);
    size_t n = b ? fread(b, 1, TEXT_MAX, f) : 0;
    fclose(f);
    if (b) b[n] = 0;
    *len = n;
    return b;
}

/* ap's threads and stacks as attach_snapshot prints them: 0 or the reader's code. */
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

/* The fixture read back as the live read gave it. */
static void test_replay(const char *expected)
{
    static char got[TEXT_MAX];
    struct attach_proc ap;
    char why[512] = "";
    int rc = attach_open_snapshot(&ap, HOTLINE_SNAPSHOTS "/py3.11.2.snap", why, sizeof why);
    CHECK_EQ(rc, 0);
    if (rc) fprintf(stderr, "open: %s\n", why);
    CHECK_STR(ap.version, "3.11.2");
    CHECK_EQ(read_all(&ap, got, sizeof got), 0);
    CHECK_STR(got, expected);
    /* a second read (the code cache warm) gives the same */
    CHECK_EQ(read_all(&ap, got, sizeof got), 0);
    CHECK_STR(got, expected);
    /* what was not recorded is not there: -EFAULT, not a guess */
    uint8_t b[16];
    CHECK_EQ(attach_mem_read(&ap.mem, 0, b, 8), -EFAULT);
    CHECK_EQ(attach_mem_read(&ap.mem, 8, b, 8), -EFAULT);
    CHECK(ap.snap && ap.snap->n > 0);
    if (ap.snap && ap.snap->n) {
        const struct attach_mem_range *r = &ap.snap->r[0];
        CHECK_EQ(attach_mem_read(&ap.mem, r->addr, b, 1), 0);
        CHECK_EQ(b[0], r->bytes[0]);
        CHECK_EQ(attach_mem_read(&ap.mem, r->addr + r->n - 1, b, 2), -EFAULT); /* past its end */
    }
    attach_close(&ap);
    /* a file that is not there */
    CHECK_EQ(attach_open_snapshot(&ap, HOTLINE_SNAPSHOTS "/no-such.snap", why, sizeof why),
             -ENOENT);
    attach_close(&ap);
}

/* text must be refused with code want (0: any negative) and a sentence. */
static void refused(const char *text, size_t len, int want, const char *what)
{
    struct attach_proc ap;
    char why[512] = "";
    int rc = attach_open_snapshot_text(&ap, text, len, why, sizeof why);
    check_report(want ? rc == want : rc < 0, __FILE__, __LINE__, "%s: got %d (%s)", what, rc, why);
    check_report(why[0] != 0, __FILE__, __LINE__, "%s: no sentence", what);
    attach_close(&ap);
}

/* The fixture with the line key starts (key begins with its "\n") replaced by line. */
static char *edited(const char *text, const char *key, const char *line, size_t *len)
{
    char *out = malloc(strlen(text) + strlen(line) + 2);
    const char *at = strstr(text, key), *eol = at ? strchr(at + 1, '\n') : NULL;
    if (!out || !eol) {
        free(out);
        return NULL;
    }
    size_t pre = (size_t)(at - text);
    memcpy(out, text, pre);
    strcpy(out + pre, line);
    strcat(out + pre, eol);
    *len = strlen(out);
    return out;
}

static void test_malformed(const char *text)
{
    refused("", 0, -EINVAL, "empty");
    refused("hotline-attach-snapshot 1\n", 26, -EINVAL, "the first line only");
    refused("hotline-attach-snapshot 2\nend\n", 30, -EINVAL, "another format");
    static const struct {
        const char *key, *line, *what;
        int want;
    } cases[] = {
        {"\npid ", "\npid 1\npid 2", "a key twice", -EINVAL},
        {"\npid ", "\npid -4", "a negative pid", -EINVAL},
        {"\npid ", "\npod 4", "an unknown key", -EINVAL},
        {"\nruntime ", "\nruntime 0xzz", "a bad number", -EINVAL},
        {"\nruntime ", "\nruntime 99999999999999999999999", "a number too large", -EINVAL},
        {"\nlay.ts_next ", "\n# lay.ts_next gone", "a layout field missing", -EINVAL},
        {"\nrange ", "\nrange 0x1000 4 abcdef", "a range with too few bytes", -EINVAL},
        {"\nrange ", "\nrange 0x1000 2 abcdeg", "a range with a bad hex digit", -EINVAL},
        {"\nrange ", "\nrange 0x1000 3 abcdefab", "a range with too many bytes", -EINVAL},
        {"\nrange ", "\nrange 0 2 abcd", "a range at address 0", -EINVAL},
        {"\nrange ", "\nrange 0xffffffffffffffff 2 abcd", "a range past the end", -EINVAL},
        {"\nrange ", "\nrange 0x1000 999999999 ab", "a range over the cap", -E2BIG},
        {"\nrange ", "\nrange 0x1000", "a range with no length", -EINVAL},
        {"\nend", "\nend\nrange 0x1000 1 ab", "text after end", -EINVAL},
        {"\nversion ", "\nversion", "a line with no value", -EINVAL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len;
        char *t = edited(text, cases[i].key, cases[i].line, &len);
        CHECK(t != NULL);
        if (t) refused(t, len, cases[i].want, cases[i].what);
        free(t);
    }
}

/* Every prefix at a line boundary (and a byte either side), and 200 more
 * points, is refused: a cut file never parses. */
static void test_truncated(const char *text, size_t len)
{
    int n = 0;
    for (size_t cut = 0; cut < len; cut++) {
        int edge = text[cut] == '\n' || (cut + 1 < len && text[cut + 1] == '\n') ||
                   (cut > 0 && text[cut - 1] == '\n');
        if (!edge && cut % (len / 200 + 1)) continue;
        char *t = malloc(cut + 1); /* exactly cut bytes: ASan sees a read past them */
        if (!t) continue;
        memcpy(t, text, cut);
        refused(t, cut, -EINVAL, "cut short");
        free(t);
        n++;
    }
    CHECK(n > 200);
}

/* Bytes changed at random (a fixed seed): refused, or read to a clean
 * end; some of each. */
static void test_corrupted(const char *text, size_t len)
{
    static char got[TEXT_MAX];
    static const char alphabet[] = "0123456789abcdefx \n-#\xff";
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    int opened = 0, refusedn = 0;
    for (int i = 0; i < 400; i++) {
        char *t = malloc(len);
        if (!t) continue;
        memcpy(t, text, len);
        int nchange = 1 + i % 3;
        for (int k = 0; k < nchange; k++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            size_t at = (size_t)(seed >> 33) % len;
            t[at] = alphabet[(seed >> 13) % (sizeof alphabet - 1)];
        }
        struct attach_proc ap;
        char why[512] = "";
        if (attach_open_snapshot_text(&ap, t, len, why, sizeof why) == 0) {
            opened++;
            int rc = read_all(&ap, got, sizeof got);
            check_report(rc >= -1003 && rc <= 0, __FILE__, __LINE__, "mutant %d: read gave %d", i,
                         rc);
        } else {
            refusedn++;
            check_report(why[0] != 0, __FILE__, __LINE__, "mutant %d refused without a sentence",
                         i);
        }
        attach_close(&ap);
        free(t);
    }
    CHECK(opened > 0);
    CHECK(refusedn > 0);
    fprintf(stderr, "corrupted: %d read, %d refused\n", opened, refusedn);
}

/* Each layout field at the extremes a snapshot may give (0 and 1 MiB, the
 * cap): the reader refuses or reads garbage to a clean end, never indexes
 * past the bytes it read (ASan). */
static void test_layout_extremes(const char *text)
{
    static char got[TEXT_MAX];
    static const char *const values[] = {"0", "1048576", "1025", "257"};
    int n = 0;
    for (const char *at = strstr(text, "\nlay."); at; at = strstr(at + 1, "\nlay.")) {
        const char *sp = strchr(at, ' ');
        char key[64], line[96];
        size_t kn = (size_t)(sp - at);
        if (!sp || kn >= sizeof key) continue;
        memcpy(key, at, kn + 1);
        key[kn + 1] = 0;
        for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
            size_t len;
            snprintf(line, sizeof line, "%s%s", key, values[v]);
            char *t = edited(text, key, line, &len);
            if (!t) continue;
            struct attach_proc ap;
            char why[512] = "";
            if (attach_open_snapshot_text(&ap, t, len, why, sizeof why) == 0) {
                int rc = read_all(&ap, got, sizeof got);
                check_report(rc <= 0, __FILE__, __LINE__, "%s: read gave %d", line + 1, rc);
                n++;
            }
            attach_close(&ap);
            free(t);
        }
    }
    CHECK(n > 100);
}

int main(void)
{
    size_t len = 0, elen = 0;
    char *text = slurp(HOTLINE_SNAPSHOTS "/py3.11.2.snap", &len);
    char *expected = slurp(HOTLINE_SNAPSHOTS "/py3.11.2.expected", &elen);
    CHECK(text != NULL && expected != NULL);
    if (text && expected) {
        test_replay(expected);
        test_malformed(text);
        test_truncated(text, len);
        test_corrupted(text, len);
        test_layout_extremes(text);
    }
    free(text);
    free(expected);
    return check_exit("test_snapshot");
}
