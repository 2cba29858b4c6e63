/* Python source text, read the way "Optimize this" needs it, without a
 * parser: where logical lines begin (outside strings, brackets and
 * backslash continuations), the loop or function around a line, top-level
 * imports, re-indenting a block, splicing lines. Pure functions of a
 * document or a string (the text layer); what they get wrong (nested quotes
 * in 3.12 f-strings) the whole-file compile check after an edit catches. */
#include "text/pytext.h"

#include <errno.h>
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

/* The name after `def ` / `async def ` / `class ` at t (len bytes, leading
 * whitespace skipped): its length, its start in *name; 0 when t is not one. */
static size_t def_name(const char *t, size_t len, const char **name)
{
    size_t i = pytext_lead_ws(t, len);
    if (starts_kw(t, len, "async")) {
        i += 5;
        while (i < len && (t[i] == ' ' || t[i] == '\t'))
            i++;
        t += i, len -= i, i = 0;
    }
    size_t k;
    if (starts_kw(t, len, "def"))
        k = 3;
    else if (starts_kw(t, len, "class"))
        k = 5;
    else
        return 0;
    i += k;
    while (i < len && (t[i] == ' ' || t[i] == '\t'))
        i++;
    size_t b = i;
    while (i < len &&
           (t[i] == '_' || (t[i] >= 'a' && t[i] <= 'z') || (t[i] >= 'A' && t[i] <= 'Z') ||
            (t[i] >= '0' && t[i] <= '9') || (unsigned char)t[i] >= 0x80))
        i++;
    *name = t + b;
    return i - b;
}

/* 1 when the name (len bytes) is one of names ("a b c ", pytext_top_defs). */
static int name_in(const char *names, const char *name, size_t len)
{
    for (const char *p = names; p && *p;) {
        const char *sp = strchr(p, ' ');
        size_t l = sp ? (size_t)(sp - p) : strlen(p);
        if (l == len && !strncmp(p, name, len)) return 1;
        p = sp ? sp + 1 : NULL;
    }
    return 0;
}

int pytext_top_defs(const char *code, char *names, size_t n)
{
    size_t clen = strlen(code), lines = 1, common = (size_t)-1, k = 0, used = 0;
    int count = 0;
    for (const char *q = code; *q; q++)
        lines += *q == '\n';
    if (n) names[0] = 0;
    unsigned char *st = pytext_logical_starts(code, clen, lines, NULL);
    if (!st) return 0;
    for (const char *l = code; *l; k++) { /* the least indentation: the top level */
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        if (st[k] && !blank_or_comment(l, len) && pytext_lead_ws(l, len) < common)
            common = pytext_lead_ws(l, len);
        l += len + (e ? 1 : 0);
    }
    k = 0;
    for (const char *l = code; *l; k++) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        const char *name;
        size_t nl = st[k] && pytext_lead_ws(l, len) == common ? def_name(l, len, &name) : 0;
        if (nl && used + nl + 2 <= n) {
            memcpy(names + used, name, nl);
            used += nl;
            names[used++] = ' ';
            names[used] = 0;
            count++;
        }
        l += len + (e ? 1 : 0);
    }
    free(st);
    return count;
}

/* The enclosing headers of line, innermost first: calls visit(header line)
 * for each logical line of less indentation above it, until visit returns
 * non-zero (that value is returned) or the top level is passed (0). */
static int outward(struct doc *d, const unsigned char *st, uint32_t line,
                   int (*visit)(struct doc *d, uint32_t l, void *ud), void *ud)
{
    size_t len;
    while (line > 0 && !st[line])
        line--;
    const char *t = doc_line(d, line, &len);
    if (!t) return 0;
    size_t cur = blank_or_comment(t, len) ? (size_t)-1 : pytext_lead_ws(t, len);
    for (uint32_t l = line; l-- > 0;) {
        const char *u = doc_line(d, l, &len);
        if (!u || !st[l] || blank_or_comment(u, len)) continue;
        size_t ind = pytext_lead_ws(u, len);
        if (ind >= cur) continue;
        cur = ind;
        int rc = visit(d, l, ud);
        if (rc) return rc;
        if (ind == 0) break;
    }
    return 0;
}

struct want_def {
    const char *names;
    uint32_t head;
};

static int visit_def(struct doc *d, uint32_t l, void *ud)
{
    struct want_def *w = ud;
    size_t len;
    const char *t = doc_line(d, l, &len), *name;
    size_t nl = def_name(t, len, &name);
    if (nl && name_in(w->names, name, nl) && !starts_kw(t, len, "class")) {
        w->head = l;
        return 1;
    }
    return 0;
}

int pytext_enclosing_def(struct doc *d, const unsigned char *st, uint32_t line, const char *names,
                         int with_decorators, uint32_t *l0, uint32_t *l1)
{
    struct want_def w = {names, 0};
    size_t len;
    if (line >= d->nlines) return -ENOENT;
    while (line > 0 && !st[line])
        line--;
    if (!visit_def(d, line, &w) && !outward(d, st, line, visit_def, &w)) return -ENOENT;
    const char *t = doc_line(d, w.head, &len);
    size_t hind = pytext_lead_ws(t, len);
    uint32_t first = w.head, last = w.head;
    while (with_decorators && first > 0) { /* `@deco` lines at its indentation */
        const char *u = doc_line(d, first - 1, &len);
        size_t i = u ? pytext_lead_ws(u, len) : 0;
        if (!u || !st[first - 1] || i != hind || i >= len || u[i] != '@') break;
        first--;
    }
    for (uint32_t l = w.head + 1; l < d->nlines; l++) {
        const char *u = doc_line(d, l, &len);
        if (!st[l]) { /* the rest of a string or call: part of its statement */
            last = l;
            continue;
        }
        if (blank_or_comment(u, len)) continue;
        if (pytext_lead_ws(u, len) <= hind) break;
        last = l;
    }
    *l0 = first;
    *l1 = last + 1;
    return 0;
}

static int visit_loop(struct doc *d, uint32_t l, void *ud)
{
    (void)ud;
    size_t len;
    const char *t = doc_line(d, l, &len), *name;
    if (starts_kw(t, len, "for") || starts_kw(t, len, "while")) return 1;
    if (starts_kw(t, len, "async")) {
        size_t i = pytext_lead_ws(t, len) + 5;
        while (i < len && (t[i] == ' ' || t[i] == '\t'))
            i++;
        if (starts_kw(t + i, len - i, "for")) return 1;
    }
    return def_name(t, len, &name) ? -1 : 0; /* a function: stop, no loop */
}

int pytext_in_loop(struct doc *d, const unsigned char *st, uint32_t line)
{
    return outward(d, st, line, visit_loop, NULL) == 1;
}
