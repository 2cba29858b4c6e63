/* Python source text, read the way "Optimize this" needs it, without a
 * parser: where logical lines begin (outside strings, brackets and
 * backslash continuations), the loop or function around a line, top-level
 * imports, re-indenting a block, splicing lines. Pure functions of a
 * document or a string (the text layer); what they get wrong (nested quotes
 * in 3.12 f-strings) the whole-file compile check after an edit catches. */
#include "text/pytext.h"

#include <stdlib.h>
#include <string.h>

size_t pytext_lead_ws(const char *t, size_t len)
{
    size_t i = 0;
    while (i < len && (t[i] == ' ' || t[i] == '\t'))
        i++;
    return i;
}

static int blank_or_comment(const char *t, size_t len)
{
    size_t i = pytext_lead_ws(t, len);
    while (len && (t[len - 1] == '\r' || t[len - 1] == ' '))
        len--;
    return i >= len || t[i] == '#';
}

static int starts_kw(const char *t, size_t len, const char *kw)
{
    size_t i = pytext_lead_ws(t, len), k = strlen(kw);
    return len - i > k && !strncmp(t + i, kw, k) &&
           (t[i + k] == ' ' || t[i + k] == '\t' || t[i + k] == '(');
}

static int is_block_header(const char *t, size_t len)
{
    return starts_kw(t, len, "for") || starts_kw(t, len, "while") || starts_kw(t, len, "def") ||
           starts_kw(t, len, "async");
}

/* Which of the nlines lines ('\n'-separated) of text begin a logical line
 * (new array, one flag per line, or NULL): not inside a string, not inside
 * brackets, not after a backslash. in_str (nlines flags, may be NULL) gets
 * which lines begin inside a string.
 * Indentation means something only on those lines, so the region found by
 * indentation never cuts through a triple-quoted string or a call spread
 * over lines. A tokenizer of strings, comments and brackets only; what it
 * gets wrong (nested quotes in 3.12 f-strings) the whole-file check after
 * the edit still catches. */
unsigned char *pytext_logical_starts(const char *text, size_t tlen, size_t nlines,
                                     unsigned char *in_str)
{
    unsigned char *st = malloc(nlines ? nlines : 1);
    if (!st) return NULL;
    char q = 0; /* the quote of the open string, 0 outside strings */
    int triple = 0, depth = 0, cont = 0;
    const char *t = text, *end = text + tlen;
    for (size_t l = 0; l < nlines; l++) {
        const char *nl = t < end ? memchr(t, '\n', (size_t)(end - t)) : NULL;
        size_t len = nl ? (size_t)(nl - t) : (size_t)(end - t);
        const char *next = nl ? nl + 1 : end;
        while (len && t[len - 1] == '\r')
            len--;
        st[l] = !q && depth == 0 && !cont;
        if (in_str) in_str[l] = q != 0;
        cont = 0;
        for (size_t i = 0; i < len; i++) {
            char c = t[i];
            if (q) {
                if (c == '\\') {
                    if (i + 1 == len) cont = 1; /* the string goes on */
                    i++;
                } else if (c == q && (!triple || (i + 2 < len && t[i + 1] == q && t[i + 2] == q))) {
                    i += triple ? 2 : 0;
                    q = 0;
                }
            } else if (c == '#') {
                break;
            } else if (c == '\\' && i + 1 == len) {
                cont = 1;
            } else if (c == '"' || c == '\'') {
                q = c;
                triple = i + 2 < len && t[i + 1] == c && t[i + 2] == c;
                i += triple ? 2 : 0;
            } else if (c == '(' || c == '[' || c == '{') {
                depth++;
            } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
                depth--;
            }
        }
        if (q && !triple && !cont) q = 0; /* a one-line string ends with its line */
        t = next;
    }
    return st;
}

/* For a single line: the innermost loop or function around it (the line
 * itself when it heads one, or when nothing encloses it). [*l0, *l1). st:
 * pytext_logical_starts(d). */
void pytext_enclosing_block(struct doc *d, const unsigned char *st, uint32_t line,
                            uint32_t max_lines, uint32_t *l0, uint32_t *l1)
{
    size_t len;
    while (line > 0 && !st[line]) /* inside a string or brackets: its statement */
        line--;
    const char *t = doc_line(d, line, &len);
    uint32_t head = line;
    int found = t && is_block_header(t, len);
    if (t && !found) {
        size_t cur = pytext_lead_ws(t, len);
        for (uint32_t l = line; l-- > 0 && line - l < 5000;) {
            const char *u = doc_line(d, l, &len);
            if (!u || !st[l] || blank_or_comment(u, len)) continue;
            size_t ind = pytext_lead_ws(u, len);
            if (ind >= cur) continue;
            cur = ind;
            if (is_block_header(u, len)) {
                head = l;
                found = 1;
                break;
            }
            if (ind == 0) break;
        }
    }
    *l0 = head;
    *l1 = head + 1;
    while (*l1 < d->nlines && !st[*l1]) /* the whole statement, not its first line */
        (*l1)++;
    if (!found) return;
    t = doc_line(d, head, &len);
    size_t hind = pytext_lead_ws(t, len);
    uint32_t last = head;
    for (uint32_t l = head + 1; l < d->nlines && l - head < max_lines; l++) {
        const char *u = doc_line(d, l, &len);
        if (!st[l]) { /* the rest of a string or call: part of its statement */
            last = l;
            continue;
        }
        if (blank_or_comment(u, len)) continue;
        if (pytext_lead_ws(u, len) <= hind) break;
        last = l;
    }
    *l1 = last + 1;
}

char *pytext_lines(struct doc *d, uint32_t l0, uint32_t l1)
{
    size_t b0 = l0 < d->nlines ? d->lines[l0] : d->len;
    size_t b1 = l1 < d->nlines ? d->lines[l1] : d->len;
    char *r = malloc(b1 - b0 + 1);
    if (!r) return NULL;
    memcpy(r, d->text + b0, b1 - b0);
    r[b1 - b0] = 0;
    return r;
}

/* Top-level `import` / `from` lines (new text) and the top-level module
 * names they import, space separated (new text). */
void pytext_imports(struct doc *d, const unsigned char *st, char **imports, char **modules)
{
    size_t cap = 4096, n = 0, mcap = 1024, mn = 0;
    char *im = malloc(cap), *mo = malloc(mcap);
    if (!im || !mo) {
        free(im);
        free(mo);
        *imports = *modules = NULL;
        return;
    }
    im[0] = mo[0] = 0;
    for (uint32_t l = 0; l < d->nlines && l < 2000; l++) {
        size_t len;
        const char *t = doc_line(d, l, &len);
        if (!t || !st[l] || !(starts_kw(t, len, "import") || starts_kw(t, len, "from")) ||
            t[0] == ' ' || t[0] == '\t')
            continue;
        if (n + len + 2 < cap) {
            memcpy(im + n, t, len);
            n += len;
            im[n++] = '\n';
            im[n] = 0;
        }
        /* names: after "import " (comma separated) or the word after "from " */
        const char *p = t + (t[0] == 'f' ? 5 : 7), *e = t + len;
        while (p < e) {
            while (p < e && (*p == ' ' || *p == ',' || *p == '('))
                p++;
            const char *w = p;
            while (p < e && *p != ' ' && *p != ',' && *p != '.' && *p != '\r')
                p++;
            if (p > w && *w != '.' && mn + (size_t)(p - w) + 2 < mcap) {
                memcpy(mo + mn, w, (size_t)(p - w));
                mn += (size_t)(p - w);
                mo[mn++] = ' ';
                mo[mn] = 0;
            }
            if (t[0] == 'f') break;
            while (p < e && *p != ',') /* skip "as x" and submodules */
                p++;
        }
    }
    *imports = im;
    *modules = mo;
}

/* The code re-indented to the region's indentation (new): its common
 * indentation replaced by indent on every line that begins a logical line
 * or continues one outside strings; the inside of a multi-line string is
 * copied as it is (re-indenting it would change the string). */
char *pytext_reindent(const char *code, const char *indent, int want_final_nl)
{
    size_t clen = strlen(code), il = strlen(indent), lines = 1;
    for (const char *q = code; *q; q++)
        lines += *q == '\n';
    unsigned char *in_str = malloc(lines);
    unsigned char *st = in_str ? pytext_logical_starts(code, clen, lines, in_str) : NULL;
    if (!st) {
        free(in_str);
        return NULL;
    }
    size_t common = (size_t)-1, k = 0;
    for (const char *l = code; *l; k++) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        size_t w = pytext_lead_ws(l, len);
        if (st[k] && w < len && l[w] != '\r' && w < common) common = w;
        l += len + (e ? 1 : 0);
    }
    if (common == (size_t)-1) common = 0;
    char *out = malloc(clen + lines * (il + 1) + 2);
    if (!out) {
        free(st);
        free(in_str);
        return NULL;
    }
    size_t n = 0;
    k = 0;
    for (const char *l = code; *l; k++) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        size_t w = pytext_lead_ws(l, len);
        if (in_str[k]) { /* verbatim */
            memcpy(out + n, l, len);
            n += len;
        } else if (w < len && l[w] != '\r') {
            size_t cut = w < common ? w : common;
            memcpy(out + n, indent, il);
            n += il;
            memcpy(out + n, l + cut, len - cut);
            n += len - cut;
        }
        if (e) out[n++] = '\n';
        l += len + (e ? 1 : 0);
    }
    free(st);
    free(in_str);
    while (n && out[n - 1] == '\n')
        n--;
    if (want_final_nl) out[n++] = '\n';
    out[n] = 0;
    return out;
}

/* The document's text with lines [l0, l1) replaced by code (new, or NULL). */
char *pytext_splice(struct doc *d, uint32_t l0, uint32_t l1, const char *code)
{
    size_t b0 = l0 < d->nlines ? d->lines[l0] : d->len;
    size_t b1 = l1 < d->nlines ? d->lines[l1] : d->len;
    size_t cl = strlen(code);
    char *out = malloc(b0 + cl + (d->len - b1) + 1);
    if (!out) return NULL;
    memcpy(out, d->text, b0);
    memcpy(out + b0, code, cl);
    memcpy(out + b0 + cl, d->text + b1, d->len - b1);
    out[b0 + cl + d->len - b1] = 0;
    return out;
}
