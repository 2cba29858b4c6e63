/* Document store: incremental edits in every position encoding, and the line
 * movements (struct doc_edit) that profile hints follow. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "text/document.h"

static struct doc *open_doc(struct doc_store *s, const char *text)
{
    CHECK(doc_open(s, "file:///a.py", "python", 1, text, strlen(text)) == 0);
    return doc_find(s, "file:///a.py");
}

static void edit(struct doc *d, uint32_t l0, uint32_t c0, uint32_t l1, uint32_t c1,
                 const char *text, enum pos_encoding enc, struct doc_edit *e)
{
    CHECK(doc_apply_change(d, 1, l0, c0, l1, c1, text, strlen(text), enc, e) == 0);
}

static void test_basic(void)
{
    struct doc_store s;
    doc_store_init(&s);
    struct doc *d = open_doc(&s, "one\ntwo\nthree");
    CHECK(d && d->nlines == 3);
    size_t len;
    const char *l = doc_line(d, 2, &len);
    CHECK(l && len == 5 && !memcmp(l, "three", 5));
    CHECK(doc_line(d, 3, &len) == NULL);
    /* reopen replaces */
    CHECK(doc_open(&s, "file:///a.py", "python", 2, "x", 1) == 0);
    CHECK(s.count == 1 && doc_find(&s, "file:///a.py")->version == 2);
    CHECK(doc_close(&s, "file:///a.py") == 0);
    CHECK(doc_close(&s, "file:///a.py") == -ENOENT);
    CHECK(doc_find(&s, "file:///a.py") == NULL);
    /* many documents: the table grows */
    char uri[64];
    for (int i = 0; i < 200; i++) {
        snprintf(uri, sizeof uri, "file:///f%d.py", i);
        CHECK(doc_open(&s, uri, NULL, i, uri, strlen(uri)) == 0);
    }
    CHECK(s.count == 200);
    CHECK(doc_find(&s, "file:///f137.py") && doc_find(&s, "file:///f137.py")->version == 137);
    doc_store_free(&s);
}

static void test_encodings(void)
{
    struct doc_store s;
    doc_store_init(&s);
    /* a (1 unit) 😀 (UTF-16: 2, UTF-8: 4, UTF-32: 1) b */
    struct doc *d = open_doc(&s, "a\xf0\x9f\x98\x80"
                                 "b\n");
    edit(d, 0, 3, 0, 4, "X", POS_UTF16, NULL);
    CHECK(!strcmp(d->text, "a\xf0\x9f\x98\x80"
                           "X\n"));
    edit(d, 0, 2, 0, 3, "Y", POS_UTF32, NULL);
    CHECK(!strcmp(d->text, "a\xf0\x9f\x98\x80"
                           "Y\n"));
    edit(d, 0, 5, 0, 6, "Z", POS_UTF8, NULL);
    CHECK(!strcmp(d->text, "a\xf0\x9f\x98\x80"
                           "Z\n"));
    /* a column inside the surrogate pair rounds down to the character start */
    edit(d, 0, 2, 0, 2, "_", POS_UTF16, NULL);
    CHECK(!strcmp(d->text, "a_\xf0\x9f\x98\x80"
                           "Z\n"));
    /* 2- and 3-byte characters */
    CHECK(doc_open(&s, "file:///a.py", NULL, 1, "\xc3\xa9\xe2\x82\xac!", 6) == 0);
    d = doc_find(&s, "file:///a.py");
    edit(d, 0, 2, 0, 3, "?", POS_UTF16, NULL);
    CHECK(!strcmp(d->text, "\xc3\xa9\xe2\x82\xac?"));
    /* CRLF line endings: the \r is not part of the line */
    CHECK(doc_open(&s, "file:///a.py", NULL, 1, "ab\r\ncd\r\n", 8) == 0);
    d = doc_find(&s, "file:///a.py");
    size_t len;
    const char *l = doc_line(d, 0, &len);
    CHECK(len == 2 && !memcmp(l, "ab", 2));
    doc_store_free(&s);
}

static void expect_edit(struct doc_edit e, uint32_t first, uint32_t oldc, uint32_t newc)
{
    CHECK(!e.whole);
    CHECK(e.first == first);
    CHECK(e.old_count == oldc);
    CHECK(e.new_count == newc);
    if (e.first != first || e.old_count != oldc || e.new_count != newc)
        fprintf(stderr, "  got first=%u old=%u new=%u, want %u %u %u\n", e.first, e.old_count,
                e.new_count, first, oldc, newc);
}

static void test_line_movement(void)
{
    struct doc_store s;
    doc_store_init(&s);
    struct doc_edit e;
    struct doc *d = open_doc(&s, "l0\nl1\nl2\nl3\n");
    /* two lines pasted above l1: l1.. move down by 2, nothing changed */
    edit(d, 1, 0, 1, 0, "n1\nn2\n", POS_UTF16, &e);
    expect_edit(e, 1, 0, 2);
    CHECK(!strcmp(d->text, "l0\nn1\nn2\nl1\nl2\nl3\n"));
    /* delete the two lines again */
    edit(d, 1, 0, 3, 0, "", POS_UTF16, &e);
    expect_edit(e, 1, 2, 0);
    CHECK(!strcmp(d->text, "l0\nl1\nl2\nl3\n"));
    /* Enter at the end of l1, then typing: a new line below l1 */
    edit(d, 1, 2, 1, 2, "\n  x", POS_UTF16, &e);
    expect_edit(e, 2, 0, 1);
    CHECK(!strcmp(d->text, "l0\nl1\n  x\nl2\nl3\n"));
    /* Backspace at the start of that new line, once emptied: it goes, l1 stays */
    edit(d, 2, 0, 2, 3, "", POS_UTF16, &e);
    expect_edit(e, 2, 1, 1);
    edit(d, 1, 2, 2, 0, "", POS_UTF16, &e);
    expect_edit(e, 2, 1, 0);
    CHECK(!strcmp(d->text, "l0\nl1\nl2\nl3\n"));
    /* from the end of l1 to the end of l2: l2 deleted, l1 untouched */
    edit(d, 1, 2, 2, 2, "", POS_UTF16, &e);
    expect_edit(e, 2, 1, 0);
    CHECK(!strcmp(d->text, "l0\nl1\nl3\n"));
    edit(d, 2, 0, 2, 0, "l2\n", POS_UTF16, &e);
    edit(d, 1, 2, 1, 2, "\n  x", POS_UTF16, &e);
    CHECK(!strcmp(d->text, "l0\nl1\n  x\nl2\nl3\n"));
    /* an edit inside l3 (now line 4) changes that line only */
    edit(d, 4, 1, 4, 2, "9", POS_UTF16, &e);
    expect_edit(e, 4, 1, 1);
    /* an edit spanning l0..l1 that joins them */
    edit(d, 0, 1, 1, 1, "", POS_UTF16, &e);
    expect_edit(e, 0, 2, 1);
    CHECK(!strcmp(d->text, "l1\n  x\nl2\nl9\n"));
    /* full replacement */
    CHECK(doc_apply_change(d, 0, 0, 0, 0, 0, "a\nb", 3, POS_UTF16, &e) == 0);
    CHECK(e.whole && e.new_count == 2 && d->nlines == 2);
    /* out of range: clamped and reported */
    CHECK(doc_apply_change(d, 1, 1, 0, 9, 9, "Q", 1, POS_UTF16, &e) == -ERANGE);
    CHECK(!strcmp(d->text, "a\nQ"));
    doc_store_free(&s);
}

/* A lone \r ends a line in LSP (old Mac files, some generators): edits after
 * one must land on the line the editor means. */
static void test_lone_cr(void)
{
    struct doc_store s;
    doc_store_init(&s);
    struct doc_edit e;
    struct doc *d = open_doc(&s, "a\rbb\rc");
    CHECK(d->nlines == 3);
    size_t len;
    const char *l = doc_line(d, 1, &len);
    CHECK(l && len == 2 && !memcmp(l, "bb", 2));
    edit(d, 2, 0, 2, 0, "X", POS_UTF16, &e);
    CHECK(!strcmp(d->text, "a\rbb\rXc"));
    expect_edit(e, 2, 1, 1);
    /* all three breaks in one text */
    CHECK(doc_open(&s, "file:///a.py", NULL, 1, "a\r\nb\rc\nd", 9) == 0);
    d = doc_find(&s, "file:///a.py");
    CHECK(d->nlines == 4);
    l = doc_line(d, 2, &len);
    CHECK(l && len == 1 && *l == 'c');
    edit(d, 3, 1, 3, 1, "!", POS_UTF16, NULL);
    CHECK(!strcmp(d->text, "a\r\nb\rc\nd!"));
    /* a whole line ending in \r pasted above line 1 */
    d = open_doc(&s, "l0\rl1\rl2");
    edit(d, 1, 0, 1, 0, "n\r", POS_UTF16, &e);
    expect_edit(e, 1, 0, 1);
    CHECK(d->nlines == 4);
    /* Enter (\r) at the end of a line */
    edit(d, 0, 2, 0, 2, "\r", POS_UTF16, &e);
    expect_edit(e, 1, 0, 1);
    CHECK(!strcmp(d->text, "l0\r\rn\rl1\rl2"));
    /* a \n typed after a lone \r joins them into one \r\n: no new line */
    d = open_doc(&s, "a\rb");
    edit(d, 1, 0, 1, 0, "\n", POS_UTF16, &e);
    CHECK(!strcmp(d->text, "a\r\nb") && d->nlines == 2);
    expect_edit(e, 1, 1, 1);
    doc_store_free(&s);
}

int main(void)
{
    test_lone_cr();
    test_basic();
    test_encodings();
    test_line_movement();
    return check_exit("test_document");
}
