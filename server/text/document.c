/* Open text documents and their incremental edits (see document.h).
 * Documents live in a small chained hash table keyed by URI; each keeps an
 * index of line starts, rebuilt after every change (O(size), fine for the
 * sizes editors send, and simpler than a piece table to keep right). */
#include "text/document.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

void doc_store_init(struct doc_store *s)
{
    memset(s, 0, sizeof *s);
}

static void doc_free(struct doc *d)
{
    free(d->uri);
    free(d->language);
    free(d->text);
    free(d->lines);
    free(d);
}

void doc_store_free(struct doc_store *s)
{
    for (size_t i = 0; i < s->nbuckets; i++) {
        struct doc *d = s->buckets[i];
        while (d) {
            struct doc *next = d->next;
            doc_free(d);
            d = next;
        }
    }
    free(s->buckets);
    memset(s, 0, sizeof *s);
}

struct doc *doc_find(struct doc_store *s, const char *uri)
{
    if (!s->nbuckets) return NULL;
    for (struct doc *d = s->buckets[hash_str(uri) % s->nbuckets]; d; d = d->next)
        if (!strcmp(d->uri, uri)) return d;
    return NULL;
}

/* Rebuild the line index of text: a line ends at "\n", "\r\n" or a lone
 * "\r" (LSP's three line breaks). 0 or -ENOMEM (index unchanged). */
static int index_lines(const char *text, size_t len, size_t **out, size_t *nout)
{
    size_t n = 1;
    for (size_t i = 0; i < len; i++) {
        size_t b = pos_line_break(text, len, i);
        if (b) {
            n++;
            i += b - 1;
        }
    }
    size_t *lines = malloc(n * sizeof *lines);
    if (!lines) return -ENOMEM;
    size_t k = 0;
    lines[k++] = 0;
    for (size_t i = 0; i < len; i++) {
        size_t b = pos_line_break(text, len, i);
        if (b) {
            i += b - 1;
            lines[k++] = i + 1;
        }
    }
    *out = lines;
    *nout = n;
    return 0;
}

static int grow_buckets(struct doc_store *s)
{
    size_t n = s->nbuckets ? s->nbuckets * 2 : 16;
    struct doc **b = calloc(n, sizeof *b);
    if (!b) return -ENOMEM;
    for (size_t i = 0; i < s->nbuckets; i++) {
        struct doc *d = s->buckets[i];
        while (d) {
            struct doc *next = d->next;
            size_t h = hash_str(d->uri) % n;
            d->next = b[h];
            b[h] = d;
            d = next;
        }
    }
    free(s->buckets);
    s->buckets = b;
    s->nbuckets = n;
    return 0;
}

int doc_open(struct doc_store *s, const char *uri, const char *language, int version,
             const char *text, size_t len)
{
    size_t cap = s->max_bytes ? s->max_bytes : DOC_MAX_BYTES;
    if (len > cap) return -EFBIG;
    doc_close(s, uri);
    if (s->count + 1 > s->nbuckets && grow_buckets(s)) return -ENOMEM;
    struct doc *d = calloc(1, sizeof *d);
    if (!d) return -ENOMEM;
    d->uri = strdup(uri);
    d->language = language ? strdup(language) : NULL;
    d->text = malloc(len + 1);
    if (!d->uri || (language && !d->language) || !d->text ||
        index_lines(text, len, &d->lines, &d->nlines)) {
        doc_free(d);
        return -ENOMEM;
    }
    memcpy(d->text, text, len);
    d->text[len] = 0;
    d->len = len;
    d->version = version;
    d->max_bytes = cap;
    size_t h = hash_str(uri) % s->nbuckets;
    d->next = s->buckets[h];
    s->buckets[h] = d;
    s->count++;
    return 0;
}

int doc_close(struct doc_store *s, const char *uri)
{
    if (!s->nbuckets) return -ENOENT;
    struct doc **pp = &s->buckets[hash_str(uri) % s->nbuckets];
    for (; *pp; pp = &(*pp)->next) {
        if (!strcmp((*pp)->uri, uri)) {
            struct doc *d = *pp;
            *pp = d->next;
            doc_free(d);
            s->count--;
            return 0;
        }
    }
    return -ENOENT;
}

const char *doc_line(const struct doc *d, uint32_t line, size_t *len)
{
    *len = 0;
    if (line >= d->nlines) return NULL;
    size_t start = d->lines[line], end = d->len;
    if (line + 1 < d->nlines) { /* drop the break: "\n", "\r\n" or "\r" */
        end = d->lines[line + 1] - 1;
        if (d->text[end] == '\n' && end > start && d->text[end - 1] == '\r') end--;
    }
    *len = end - start;
    return d->text + start;
}

/* Byte offset of (line, col); clamps and sets *clamped when out of range. */
static size_t offset_of(const struct doc *d, uint32_t line, uint32_t col, enum pos_encoding enc,
                        int *clamped)
{
    if (line >= d->nlines) {
        *clamped = 1;
        return d->len;
    }
    size_t len;
    const char *p = doc_line(d, line, &len);
    if (col > pos_line_units(p, len, enc)) *clamped = 1;
    return (size_t)(p - d->text) + pos_col_to_byte(p, len, col, enc);
}

static uint32_t line_of(const struct doc *d, size_t off)
{
    size_t lo = 0, hi = d->nlines; /* last line start <= off */
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (d->lines[mid] <= off)
            lo = mid;
        else
            hi = mid;
    }
    return (uint32_t)lo;
}

/* Byte offset where the text of line `line` ends (before its break). */
static size_t line_end(const struct doc *d, uint32_t line)
{
    size_t n;
    const char *t = doc_line(d, line, &n);
    return t ? (size_t)(t - d->text) + n : d->len;
}

/* Describe how replacing [b0, b1) of d (still the old text) by text moves
 * lines (see struct doc_edit); the new text has new_nlines lines. Counting
 * from the line totals keeps every kind of line break right, including a
 * "\r" and a "\n" that the edit joins into one "\r\n" (or splits). */
static void describe_edit(const struct doc *d, size_t b0, size_t b1, const char *text, size_t len,
                          size_t new_nlines, struct doc_edit *e)
{
    uint32_t l0 = line_of(d, b0), l1 = line_of(d, b1);
    int64_t delta = (int64_t)new_nlines - (int64_t)d->nlines;
    char before = b0 > 0 ? d->text[b0 - 1] : 0, after = b1 < d->len ? d->text[b1] : 0;
    char first = len ? text[0] : after, last = len ? text[len - 1] : before;
    int joins = (before == '\r' && first == '\n') || (len && last == '\r' && after == '\n');
    int at_start0 = d->lines[l0] == b0, at_start1 = d->lines[l1] == b1;
    size_t n0;
    const char *t0 = doc_line(d, l0, &n0);
    size_t end0 = t0 ? (size_t)(t0 - d->text) + n0 : d->len;
    e->whole = 0;
    if (!joins && at_start0 && at_start1 && (len == 0 || last == '\n' || last == '\r')) {
        /* whole lines replaced, inserted or deleted */
        e->first = l0;
        e->old_count = l1 - l0;
    } else if (!joins && b0 == b1 && b0 == end0 && len > 0 && (first == '\n' || first == '\r')) {
        /* Enter at the end of a line: new lines below it, nothing changed */
        e->first = l0 + 1;
        e->old_count = 0;
    } else if (!joins && len == 0 && l1 > l0 && b0 == end0 && b1 == line_end(d, l1)) {
        /* from the end of a line to the end of a later one (Backspace at the
         * start of an empty line, "delete line" on the last line): the lines
         * below are deleted, the first keeps its text */
        e->first = l0 + 1;
        e->old_count = l1 - l0;
    } else {
        e->first = l0;
        e->old_count = l1 - l0 + 1;
    }
    int64_t nc = (int64_t)e->old_count + delta;
    e->new_count = nc > 0 ? (uint32_t)nc : 0;
}

int doc_apply_change(struct doc *d, int has_range, uint32_t l0, uint32_t c0, uint32_t l1,
                     uint32_t c1, const char *text, size_t len, enum pos_encoding enc,
                     struct doc_edit *edit)
{
    size_t b0 = 0, b1 = d->len;
    int clamped = 0;
    struct doc_edit e = {0, (uint32_t)d->nlines, 0, 1};
    if (has_range) {
        b0 = offset_of(d, l0, c0, enc, &clamped);
        b1 = offset_of(d, l1, c1, enc, &clamped);
        if (b1 < b0) { /* reversed range: treat as empty at the start */
            b1 = b0;
            clamped = 1;
        }
    }
    size_t nlen = d->len - (b1 - b0) + len;
    if (nlen > d->max_bytes) return -EFBIG;
    char *nt = malloc(nlen + 1);
    if (!nt) return -ENOMEM;
    memcpy(nt, d->text, b0);
    memcpy(nt + b0, text, len);
    memcpy(nt + b0 + len, d->text + b1, d->len - b1);
    nt[nlen] = 0;
    size_t *lines, nlines;
    if (index_lines(nt, nlen, &lines, &nlines)) {
        free(nt);
        return -ENOMEM;
    }
    if (has_range)
        describe_edit(d, b0, b1, text, len, nlines, &e);
    else
        e.new_count = (uint32_t)nlines;
    free(d->text);
    free(d->lines);
    d->text = nt;
    d->len = nlen;
    d->lines = lines;
    d->nlines = nlines;
    if (edit) *edit = e;
    return clamped ? -ERANGE : 0;
}
