/* Anchoring (server/anchor/anchor.c, docs/lsp.md "Anchoring"): a hint is on the
 * line it was profiled on, wherever edits moved that line, or absent. Each
 * case takes a snapshot of the profiled text, opens a document, applies real
 * edits through the document store (doc_apply_change gives the struct
 * doc_edit the editor's didChange would) and checks, for every line of the
 * document, which profiled line anchor_line (the rule the lenses, hints
 * and hovers use) draws there. Files profiled with duplicate lines make a map
 * that moved wrongly visible even where the line hash would still match. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "text/document.h"
#include "anchor/anchor.h"

#define URI "file:///nonexistent/hotline-anchor/a.py"
#define PATH "/nonexistent/hotline-anchor/a.py" /* no file: the snapshot is all there is */

struct fx {
    struct anchor_set f;
    struct doc_store ds;
    struct doc *d;
    struct anchor_snap *sn;
    const char *path;
};

/* Profile `profiled` (snapshot under path), open `text` as the document. */
static void fx_open(struct fx *x, const char *path, const char *profiled, const char *text)
{
    memset(x, 0, sizeof *x);
    x->path = path;
    x->sn = anchor_snap_from_text(&x->f, path, profiled, strlen(profiled));
    CHECK(x->sn != NULL);
    doc_store_init(&x->ds);
    CHECK(doc_open(&x->ds, URI, "python", 1, text, strlen(text)) == 0);
    x->d = doc_find(&x->ds, URI);
    CHECK(x->d && anchor_of(&x->f, x->d, path) != NULL);
}

static void fx_close(struct fx *x)
{
    anchor_maps_clear(&x->f);
    anchor_snaps_clear(&x->f);
    anchor_set_clear(&x->f);
    doc_store_free(&x->ds);
}

/* One didChange with a range (positions in enc), as lsp.c applies it. */
static void fx_edit(struct fx *x, uint32_t l0, uint32_t c0, uint32_t l1, uint32_t c1,
                    const char *text, enum pos_encoding enc)
{
    struct doc_edit e;
    CHECK(doc_apply_change(x->d, 1, l0, c0, l1, c1, text, strlen(text), enc, &e) == 0);
    anchor_edited(&x->f, x->d, &e);
}

/* A didChange without a range: the whole text replaced. */
static void fx_replace(struct fx *x, const char *text)
{
    struct doc_edit e;
    CHECK(doc_apply_change(x->d, 0, 0, 0, 0, 0, text, strlen(text), POS_UTF8, &e) == 0);
    anchor_edited(&x->f, x->d, &e);
}

static int shown(struct fx *x, uint32_t line)
{
    struct anchor_map *a = anchor_of(&x->f, x->d, x->path);
    return a ? anchor_line(a, x->sn, x->d, line) : 0;
}

/* want[i]: the profiled line (1-based) drawn at document line i, 0 = none. */
#define EXPECT(x, ...)                                                                             \
    do {                                                                                           \
        static const int want_[] = {__VA_ARGS__};                                                  \
        expect_lines(x, want_, sizeof want_ / sizeof *want_, __LINE__);                            \
    } while (0)

static void expect_lines(struct fx *x, const int *want, size_t n, int at)
{
    CHECK_EQ_U(x->d->nlines, n);
    for (size_t i = 0; i < n && i < x->d->nlines; i++) {
        int got = shown(x, (uint32_t)i);
        check_report(got == want[i], __FILE__, at,
                     "document line %zu shows profiled line %d, want %d", i, got, want[i]);
    }
}

/* Profiled file used by most cases: line 4 (1-based) is the hot one, and its
 * text also appears on line 6 (a line the hint must never jump to). */
static const char *const PROG = "import os\n"            /* 1 */
                                "def f(n):\n"            /* 2 */
                                "    total = 0\n"        /* 3 */
                                "    total += work(n)\n" /* 4: hot */
                                "    log(total)\n"       /* 5 */
                                "    total += work(n)\n" /* 6: same text */
                                "    return total\n"     /* 7 */
                                "f(3)\n";                /* 8, then the empty 9 */

static void test_unchanged(void)
{
    struct fx x;
    fx_open(&x, PATH, PROG, PROG);
    EXPECT(&x, 1, 2, 3, 4, 5, 6, 7, 8, 9);
    CHECK_EQ_U(x.sn->nlines, 9);
    fx_close(&x);
}

static void test_insert_above(void)
{
    struct fx x;
    fx_open(&x, PATH, PROG, PROG);
    fx_edit(&x, 0, 0, 0, 0, "# a\n# b\n", POS_UTF16); /* two lines pasted at the top */
    EXPECT(&x, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
    fx_edit(&x, 5, 0, 5, 0, "    pass\n", POS_UTF16); /* right above the hot line */
    EXPECT(&x, 0, 0, 1, 2, 3, 0, 4, 5, 6, 7, 8, 9);
    fx_close(&x);
}

static void test_insert_below(void)
{
    struct fx x;
    fx_open(&x, PATH, PROG, PROG);
    /* Enter at the end of the hot line, then typing on the new line */
    fx_edit(&x, 3, 20, 3, 20, "\n    ", POS_UTF16);
    EXPECT(&x, 1, 2, 3, 4, 0, 5, 6, 7, 8, 9);
    fx_edit(&x, 4, 4, 4, 4, "x = 1", POS_UTF16);
    EXPECT(&x, 1, 2, 3, 4, 0, 5, 6, 7, 8, 9);
    /* a whole line pasted below it */
    fx_edit(&x, 5, 0, 5, 0, "    y = 2\n", POS_UTF16);
    EXPECT(&x, 1, 2, 3, 4, 0, 0, 5, 6, 7, 8, 9);
    fx_close(&x);
}

static void test_insert_inside(void)
{
    struct fx x;
    fx_open(&x, PATH, PROG, PROG);
    /* the hot line split in two: neither half is the profiled line */
    fx_edit(&x, 3, 13, 3, 13, "\n        ", POS_UTF16);
    EXPECT(&x, 1, 2, 3, 0, 0, 5, 6, 7, 8, 9);
    /* joined again: the text is the profiled one, but nothing vouches for it */
    fx_edit(&x, 3, 13, 4, 8, "", POS_UTF16);
    EXPECT(&x, 1, 2, 3, 0, 5, 6, 7, 8, 9);
    fx_close(&x);
}

static void test_delete_hot_line(void)
{
    struct fx x;
    fx_open(&x, PATH, PROG, PROG);
    fx_edit(&x, 3, 0, 4, 0, "", POS_UTF16); /* the whole hot line */
    /* retired: not moved onto "    log(total)", nor onto its twin below */
    EXPECT(&x, 1, 2, 3, 5, 6, 7, 8, 9);
    /* the same text typed back where it was is a new line, not the profiled one */
    fx_edit(&x, 3, 0, 3, 0, "    total += work(n)\n", POS_UTF16);
    EXPECT(&x, 1, 2, 3, 0, 5, 6, 7, 8, 9);
    fx_close(&x);

    /* deleted from the end of the line above (the editor's "delete line" on
     * a selection): the hot line goes, the lines after it keep theirs */
    fx_open(&x, PATH, PROG, PROG);
    fx_edit(&x, 2, 13, 3, 20, "", POS_UTF16);
    CHECK_EQ_U(x.d->nlines, 8);
    for (uint32_t i = 0; i < x.d->nlines; i++)
        CHECK(shown(&x, i) != 4);
    CHECK_EQ_U(shown(&x, 3), 5);
    CHECK_EQ_U(shown(&x, 4), 6);
    fx_close(&x);

    /* Enter at the end of the hot line, then Backspace at the start of the
     * new empty line: the hot line's text never changed, its hint stays */
    fx_open(&x, PATH, PROG, PROG);
    fx_edit(&x, 3, 20, 3, 20, "\n", POS_UTF16);
    EXPECT(&x, 1, 2, 3, 4, 0, 5, 6, 7, 8, 9);
    fx_edit(&x, 3, 20, 4, 0, "", POS_UTF16);
    EXPECT(&x, 1, 2, 3, 4, 5, 6, 7, 8, 9);
    /* the line below it deleted from the end of the hot line (VS Code's
     * "Delete Line" on a file's last line sends such a range) */
    fx_edit(&x, 3, 20, 4, 14, "", POS_UTF16);
    EXPECT(&x, 1, 2, 3, 4, 6, 7, 8, 9);
    fx_close(&x);

    /* several lines at once, the hot one among them */
    fx_open(&x, PATH, PROG, PROG);
    fx_edit(&x, 2, 0, 5, 0, "", POS_UTF16);
    EXPECT(&x, 1, 2, 6, 7, 8, 9);
    fx_close(&x);
}

/* docs/lsp.md: a line whose text changed is retired, and undoing the edit
 * does not bring its hint back (re-run). */
static void test_edit_in_place(void)
{
    struct fx x;
    fx_open(&x, PATH, PROG, PROG);
    fx_edit(&x, 3, 13, 3, 17, "rest", POS_UTF16); /* work -> rest */
    EXPECT(&x, 1, 2, 3, 0, 5, 6, 7, 8, 9);
    fx_edit(&x, 3, 13, 3, 17, "work", POS_UTF16); /* and back */
    EXPECT(&x, 1, 2, 3, 0, 5, 6, 7, 8, 9);
    /* a change that spans two lines retires both, others stay */
    fx_edit(&x, 4, 8, 5, 4, "", POS_UTF16);
    EXPECT(&x, 1, 2, 3, 0, 0, 7, 8, 9);
    fx_close(&x);
}

/* Several hot lines, edits in a batch as one didChange sends them. */
static void test_many_edits(void)
{
    struct fx x;
    fx_open(&x, PATH, PROG, PROG);
    fx_edit(&x, 8, 0, 8, 0, "f(4)\n", POS_UTF16);    /* append at the end */
    fx_edit(&x, 1, 0, 1, 0, "\n\n\n", POS_UTF16);    /* blank lines above def */
    fx_edit(&x, 6, 0, 7, 0, "", POS_UTF16);          /* delete the hot line */
    fx_edit(&x, 0, 7, 0, 9, "sys", POS_UTF16);       /* edit the first line */
    fx_edit(&x, 8, 16, 8, 16, "\n# end", POS_UTF16); /* Enter at the end of "return" */
    EXPECT(&x, 0, 0, 0, 0, 2, 3, 5, 6, 7, 0, 8, 0, 9);
    fx_close(&x);
}

/* Opened with other text than the profiled one (edited and not saved, or
 * changed since the run), or replaced whole: nothing is drawn. */
static void test_other_text(void)
{
    struct fx x;
    char *other = strdup(PROG);
    CHECK(other != NULL);
    other[0] = 'I';
    fx_open(&x, PATH, PROG, other); /* even its unchanged lines: nothing */
    EXPECT(&x, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    fx_close(&x);
    free(other);

    /* even lines that still match are not vouched for: the map is all -1 */
    fx_open(&x, PATH, PROG, "import os\ndef g(n):\n    total = 0\n");
    struct anchor_map *a = anchor_of(&x.f, x.d, PATH);
    CHECK(a && a->n == 4);
    for (size_t i = 0; a && i < a->n; i++)
        CHECK(a->map[i] == -1);
    EXPECT(&x, 0, 0, 0, 0);
    fx_close(&x);

    /* a full-text didChange clears the map, with any text (docs/lsp.md) */
    fx_open(&x, PATH, PROG, PROG);
    fx_replace(&x, "import sys\nprint(1)\n");
    EXPECT(&x, 0, 0, 0);
    fx_replace(&x, PROG);
    EXPECT(&x, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    /* closed and opened again as the profiled text: placed again */
    anchor_drop(&x.f, URI);
    CHECK(x.f.maps == NULL);
    CHECK(doc_open(&x.ds, URI, "python", 2, PROG, strlen(PROG)) == 0);
    x.d = doc_find(&x.ds, URI);
    EXPECT(&x, 1, 2, 3, 4, 5, 6, 7, 8, 9);
    fx_close(&x);
}

static int write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "wb");
    if (!fp) return -errno;
    size_t n = strlen(text);
    int ok = fwrite(text, 1, n, fp) == n;
    return fclose(fp) == 0 && ok ? 0 : -EIO;
}

/* A file that changed on disk since the run: the snapshot (taken from disk
 * at run time) says so, and the document opened from the new text shows
 * nothing; written back as it was, it is current again. */
static void test_changed_on_disk(void)
{
    char dir[] = "/tmp/hotline-anchor-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[sizeof dir + 8];
    snprintf(path, sizeof path, "%s/a.py", dir);
    CHECK(write_file(path, PROG) == 0);

    struct anchor_set f;
    memset(&f, 0, sizeof f);
    struct anchor_snap *sn = anchor_snap_get(&f, path); /* as at run start */
    CHECK(sn && sn->nlines == 9);
    CHECK(sn && anchor_snap_stale(sn) == 0);
    CHECK(anchor_snap_get(&f, path) == sn); /* cached, not read again */

    /* changed since the run (another size: the mtime may not have moved) */
    const char *later = "import os\n# new\ndef f(n):\n    total = 0\n";
    CHECK(write_file(path, later) == 0);
    CHECK(sn && anchor_snap_stale(sn) == 1);
    struct doc_store ds;
    doc_store_init(&ds);
    CHECK(doc_open(&ds, URI, "python", 1, later, strlen(later)) == 0);
    struct doc *d = doc_find(&ds, URI);
    struct anchor_map *a = anchor_of(&f, d, path);
    CHECK(a != NULL);
    for (uint32_t i = 0; a && sn && i < d->nlines; i++)
        CHECK(anchor_line(a, sn, d, i) == 0);

    /* saved snapshots (sources.json) check the disk on first use */
    json_t *saved = anchor_snaps_to_json(&f);
    anchor_maps_clear(&f);
    anchor_snaps_clear(&f);
    anchor_snaps_from_json(&f, saved);
    json_decref(saved);
    sn = f.snaps;
    CHECK(sn && f.nsnaps == 1 && sn->nlines == 9);
    CHECK(sn && anchor_snap_stale(sn) == 1);

    /* back to the profiled text, on disk and in the editor */
    CHECK(write_file(path, PROG) == 0);
    CHECK(sn && anchor_snap_stale(sn) == 0);
    CHECK(doc_open(&ds, URI, "python", 2, PROG, strlen(PROG)) == 0);
    d = doc_find(&ds, URI);
    a = anchor_of(&f, d, path);
    CHECK(a != NULL);
    for (uint32_t i = 0; a && sn && i < d->nlines; i++)
        CHECK(anchor_line(a, sn, d, i) == (int)i + 1);

    /* rewritten with as many bytes within the same timestamp tick (a file
     * system keeps mtimes to a few ms, some to 1 s): mtime and size match
     * what was checked, the text does not */
    char *same_size = strdup(PROG);
    CHECK(same_size != NULL);
    if (same_size && sn) {
        same_size[7] = 'x'; /* "import xs" */
        CHECK(write_file(path, same_size) == 0);
        struct timespec ts[2] = {{0, UTIME_OMIT},
                                 {sn->mtime_ns / 1000000000, sn->mtime_ns % 1000000000}};
        CHECK(utimensat(AT_FDCWD, path, ts, 0) == 0);
        CHECK(anchor_snap_stale(sn) == 1);
        CHECK(write_file(path, PROG) == 0);
        CHECK(utimensat(AT_FDCWD, path, ts, 0) == 0);
        CHECK(anchor_snap_stale(sn) == 0);
    }
    free(same_size);

    /* deleted: stale */
    CHECK(unlink(path) == 0);
    CHECK(sn && anchor_snap_stale(sn) == 1);
    CHECK(rmdir(dir) == 0);

    anchor_maps_clear(&f);
    anchor_snaps_clear(&f);
    doc_store_free(&ds);
}

static void test_crlf(void)
{
    static const char crlf[] = "a = 1\r\n"
                               "b = work()\r\n" /* 2: hot */
                               "c = 3\r\n"
                               "b = work()\r\n" /* 4: same text */
                               "d = 5\r\n";
    struct fx x;
    fx_open(&x, PATH, crlf, crlf);
    EXPECT(&x, 1, 2, 3, 4, 5, 6);
    fx_edit(&x, 0, 0, 0, 0, "# top\r\n", POS_UTF16);
    EXPECT(&x, 0, 1, 2, 3, 4, 5, 6);
    fx_edit(&x, 2, 10, 2, 10, "\r\n", POS_UTF16); /* Enter at the end of the hot line */
    EXPECT(&x, 0, 1, 2, 0, 3, 4, 5, 6);
    fx_edit(&x, 2, 0, 3, 0, "", POS_UTF16); /* and then the hot line deleted */
    EXPECT(&x, 0, 1, 0, 3, 4, 5, 6);
    fx_close(&x);

    /* the same file with LF breaks is other text: nothing drawn */
    fx_open(&x, PATH, crlf, "a = 1\nb = work()\nc = 3\nb = work()\nd = 5\n");
    EXPECT(&x, 0, 0, 0, 0, 0, 0);
    fx_close(&x);
}

static void test_lone_cr(void)
{
    static const char cr[] = "a = 1\rb = work()\rc = 3\rb = work()\r";
    struct fx x;
    fx_open(&x, PATH, cr, cr);
    CHECK_EQ_U(x.sn->nlines, 5);
    EXPECT(&x, 1, 2, 3, 4, 5);
    fx_edit(&x, 1, 0, 1, 0, "x = 0\r", POS_UTF16);
    EXPECT(&x, 1, 0, 2, 3, 4, 5);
    fx_edit(&x, 2, 0, 3, 0, "", POS_UTF16); /* hot line deleted */
    EXPECT(&x, 1, 0, 3, 4, 5);
    fx_close(&x);

    /* a "\n" typed right after a lone "\r" makes one "\r\n" break, not two:
     * line numbers do not move, and nothing lands on the wrong line */
    static const char mixed[] = "a = 1\rb = work()\nc = 3\n";
    fx_open(&x, PATH, mixed, mixed);
    fx_edit(&x, 1, 0, 1, 0, "\n", POS_UTF16);
    CHECK_EQ_U(x.d->nlines, 4);
    CHECK(shown(&x, 1) == 0 || shown(&x, 1) == 2);
    CHECK_EQ_U(shown(&x, 2), 3);
    fx_close(&x);
}

/* Positions in UTF-16 (the LSP default) past characters of 2, 3 and 4 bytes. */
static void test_non_ascii(void)
{
    static const char text[] = "s = 'é'\n"           /* 1 */
                               "t = '😀' + work()\n"  /* 2: hot; 17 UTF-16 units */
                               "u = '€'\n"           /* 3 */
                               "t = '😀' + work()\n"; /* 4: same text */
    struct fx x;
    fx_open(&x, PATH, text, text);
    EXPECT(&x, 1, 2, 3, 4, 5);
    fx_edit(&x, 1, 17, 1, 17, "\n# 😀", POS_UTF16); /* Enter at the end of the hot line */
    EXPECT(&x, 1, 2, 0, 3, 4, 5);
    fx_edit(&x, 0, 6, 0, 6, "è", POS_UTF16); /* after "é": line 1 edited */
    EXPECT(&x, 0, 2, 0, 3, 4, 5);
    fx_edit(&x, 3, 0, 3, 0, "ü = '😀'\n", POS_UTF16); /* above "u = '€'" */
    EXPECT(&x, 0, 2, 0, 0, 3, 4, 5);
    /* the emoji of the hot line replaced, by UTF-16 columns 5..7 */
    fx_edit(&x, 1, 5, 1, 7, "x", POS_UTF16);
    EXPECT(&x, 0, 0, 0, 0, 3, 4, 5);
    fx_close(&x);

    /* the same edits in UTF-32 columns */
    fx_open(&x, PATH, text, text);
    fx_edit(&x, 1, 16, 1, 16, "\n", POS_UTF32);
    EXPECT(&x, 1, 2, 0, 3, 4, 5);
    fx_close(&x);
}

static void test_empty(void)
{
    struct fx x;
    fx_open(&x, PATH, "", "");
    CHECK_EQ_U(x.sn->nlines, 1);
    EXPECT(&x, 1);
    fx_edit(&x, 0, 0, 0, 0, "x = 1\n", POS_UTF16);
    EXPECT(&x, 0, 1);
    fx_close(&x);

    /* an empty document for a profiled file, and a file emptied */
    fx_open(&x, PATH, PROG, "");
    EXPECT(&x, 0);
    fx_close(&x);
    fx_open(&x, PATH, PROG, PROG);
    fx_edit(&x, 0, 0, 8, 0, "", POS_UTF16);
    EXPECT(&x, 9);
    fx_replace(&x, "");
    EXPECT(&x, 0);
    fx_close(&x);

    /* a saved snapshot with no lines */
    struct anchor_set f;
    memset(&f, 0, sizeof f);
    json_t *j = json_pack("{s:{s:s, s:[]}}", PATH, "hash", "0", "lines");
    anchor_snaps_from_json(&f, j);
    json_decref(j);
    CHECK(f.snaps && f.snaps->nlines == 0);
    struct doc_store ds;
    doc_store_init(&ds);
    CHECK(doc_open(&ds, URI, NULL, 1, "", 0) == 0);
    struct doc *d = doc_find(&ds, URI);
    struct anchor_map *a = anchor_of(&f, d, PATH);
    CHECK(a && f.snaps && anchor_line(a, f.snaps, d, 0) == 0);
    anchor_maps_clear(&f);
    anchor_snaps_clear(&f);
    doc_store_free(&ds);
}

/* 200,000 lines, every one distinct: edits near both ends and a block of
 * 50,000 lines pasted in the middle (the map grows past its capacity). */
static void test_long_file(void)
{
    enum { N = 200000, BLOCK = 50000 };
    size_t cap = (size_t)N * 24, len = 0;
    char *text = malloc(cap);
    CHECK(text != NULL);
    if (!text) return;
    for (int i = 0; i < N; i++)
        len += (size_t)snprintf(text + len, cap - len, "x%d = %d\n", i, i);
    struct fx x;
    fx_open(&x, PATH, text, text);
    CHECK_EQ_U(x.sn->nlines, N + 1);
    fx_edit(&x, 0, 0, 0, 0, "# head\n", POS_UTF16);
    fx_edit(&x, N - 1, 0, N, 0, "", POS_UTF16); /* profiled line N-1 (1-based) */
    char *block = malloc((size_t)BLOCK * 8 + 1);
    CHECK(block != NULL);
    if (block) {
        for (int i = 0; i < BLOCK; i++)
            memcpy(block + (size_t)i * 8, "# pass \n", 8);
        block[(size_t)BLOCK * 8] = 0;
        fx_edit(&x, 100001, 0, 100001, 0, block, POS_UTF16); /* above profiled 100001 */
    }
    CHECK_EQ_U(x.d->nlines, N + 1 + 1 - 1 + BLOCK);
    /* every line: the head and the block show nothing, the rest their own */
    int bad = 0;
    for (uint32_t i = 0; i < x.d->nlines; i++) {
        int want;
        if (i == 0 || (i >= 100001 && i < 100001 + BLOCK))
            want = 0;
        else if (i < 100001)
            want = (int)i; /* one line above: 1-based = i */
        else
            want = (int)i - BLOCK; /* ... and the block */
        if (want >= N - 1) want++; /* past the deleted line */
        if (shown(&x, i) != want && bad++ < 5)
            fprintf(stderr, "long file: line %u shows %d, want %d\n", i, shown(&x, i), want);
    }
    CHECK(bad == 0);
    fx_close(&x);
    free(block);
    free(text);
}

/* Two documents, two anchors: edits and closing one leave the other alone. */
static void test_two_documents(void)
{
    struct fx x;
    fx_open(&x, PATH, PROG, PROG);
    static const char *const uri2 = "file:///nonexistent/hotline-anchor/b.py";
    static const char *const path2 = "/nonexistent/hotline-anchor/b.py";
    CHECK(anchor_snap_from_text(&x.f, path2, "b = 1\nb = 2\n", 12) != NULL);
    x.sn = anchor_snap_get(&x.f, PATH); /* the list changed; the snapshot did not */
    CHECK(doc_open(&x.ds, uri2, NULL, 1, "b = 1\nb = 2\n", 12) == 0);
    struct doc *d2 = doc_find(&x.ds, uri2);
    struct anchor_map *a2 = anchor_of(&x.f, d2, path2);
    CHECK(a2 != NULL);
    fx_edit(&x, 0, 0, 0, 0, "#\n", POS_UTF16);
    CHECK(a2 && a2->n == 3 && a2->map[0] == 0 && a2->map[1] == 1);
    anchor_drop(&x.f, uri2);
    EXPECT(&x, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
    fx_close(&x);
}

int main(void)
{
    test_unchanged();
    test_insert_above();
    test_insert_below();
    test_insert_inside();
    test_delete_hot_line();
    test_edit_in_place();
    test_many_edits();
    test_other_text();
    test_changed_on_disk();
    test_crlf();
    test_lone_cr();
    test_non_ascii();
    test_empty();
    test_long_file();
    test_two_documents();
    return check_exit("test_anchor");
}
