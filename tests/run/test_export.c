/* Pictures of a profile (server/store/export.c): folded stacks and the
 * speedscope file, from a profile read back from JSON as `hotline view`
 * does. Totals equal the profile's samples; unicode, spaces, ';', '%' and
 * newlines in names and paths round-trip through the folded format. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "store/html.h"
#include "store/export.h"
#include "store/profile.h"

static const char *const PROFILE_JSON =
    "{\"version\":1,\"program\":\"/p/dïr with space/main.py\",\"samples\":60,"
    "\"files\":{\"/p/dïr with space/main.py\":{\"lines\":{\"1\":"
    "{\"python_s\":0.6,\"native_s\":0,\"system_s\":0,\"cpu_s\":0.6,\"samples\":60}}}},"
    "\"stacks\":["
    "{\"frames\":[{\"file\":\"/p/dïr with space/ü mod.py\",\"name\":\"work\",\"line\":3},"
    "{\"file\":\"/usr/lib/python3.11/a;b%.py\",\"name\":\"odd;name\\nwith%newline\",\"line\":7},"
    "{\"file\":\"/p/日本/main.py\",\"name\":\"<module>\",\"line\":1}],"
    "\"samples\":30,\"seconds\":0.3},"
    "{\"frames\":[{\"file\":\"/p/日本/main.py\",\"name\":\"<module>\",\"line\":2}],"
    "\"samples\":20,\"seconds\":0.2}]}";

/* New profile from JSON text, or NULL (reported). */
static struct profile *load(const char *text)
{
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    if (!j) {
        CHECK_FAIL("bad test JSON: %s", je.text);
        return NULL;
    }
    char err[256];
    struct profile *p = profile_from_json(j, err, sizeof err);
    json_decref(j);
    if (!p) CHECK_FAIL("profile_from_json: %s", err);
    return p;
}

/* Undoes export's escapes in place (%3B %25 %0A %0D). */
static void unescape(char *s)
{
    char *o = s;
    for (; *s; s++) {
        if (*s == '%' && s[1] && s[2]) {
            char hex[3] = {s[1], s[2], 0};
            *o++ = (char)strtol(hex, NULL, 16);
            s += 2;
        } else {
            *o++ = *s;
        }
    }
    *o = 0;
}

#define MAXFR 8
struct folded {
    char *fr[MAXFR];
    int nfr;
    long long n;
};

/* Splits one folded line (modified in place) into frames and its count. */
static int parse_line(char *line, struct folded *f)
{
    char *sp = strrchr(line, ' ');
    if (!sp) return -1;
    *sp = 0;
    f->n = strtoll(sp + 1, NULL, 10);
    f->nfr = 0;
    for (char *tok = strtok(line, ";"); tok && f->nfr < MAXFR; tok = strtok(NULL, ";")) {
        unescape(tok);
        f->fr[f->nfr++] = tok;
    }
    return 0;
}

static void test_collapsed(void)
{
    struct profile *p = load(PROFILE_JSON);
    if (!p) return;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK_EQ(export_collapsed(p, f), 0);
    fclose(f);
    /* 2 stacks + the 10 samples no stored stack carries */
    long long total = 0;
    int lines = 0, seen_deep = 0, seen_other = 0;
    for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        struct folded fo;
        lines++;
        if (parse_line(l, &fo)) {
            CHECK_FAIL("no count in '%s'", l);
            continue;
        }
        total += fo.n;
        if (fo.nfr == 3) { /* root first: the stored stack reversed */
            seen_deep = 1;
            CHECK_STR(fo.fr[0], "<module> (/p/日本/main.py:1)");
            CHECK_STR(fo.fr[1], "odd;name\nwith%newline (/usr/lib/python3.11/a;b%.py:7)");
            CHECK_STR(fo.fr[2], "work (/p/dïr with space/ü mod.py:3)");
            CHECK_EQ(fo.n, 30);
        } else if (fo.nfr == 1 && !strcmp(fo.fr[0], EXPORT_OTHER_STACKS)) {
            seen_other = 1;
            CHECK_EQ(fo.n, 10);
        } else if (fo.nfr == 1) {
            CHECK_STR(fo.fr[0], "<module> (/p/日本/main.py:2)");
            CHECK_EQ(fo.n, 20);
        } else {
            CHECK_FAIL("unexpected folded line with %d frames", fo.nfr);
        }
    }
    CHECK_EQ(lines, 3); /* the newline inside a name did not split a line */
    CHECK(seen_deep && seen_other);
    CHECK_EQ(total, p->meta.samples);
    free(buf);
    profile_free(p);
}

static void test_collapsed_no_rest(void)
{
    /* samples equal to the stacks' sum: no "[other stacks]" line */
    char *text = strdup(PROFILE_JSON);
    memcpy(strstr(text, "\"samples\":60"), "\"samples\":50", 12);
    struct profile *p = load(text);
    free(text);
    if (!p) return;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK_EQ(export_collapsed(p, f), 0);
    fclose(f);
    CHECK(!strstr(buf, EXPORT_OTHER_STACKS));
    free(buf);
    profile_free(p);
}

static void test_speedscope(void)
{
    struct profile *p = load(PROFILE_JSON);
    if (!p) return;
    json_t *s = export_speedscope(p, "test");
    CHECK(s != NULL);
    if (!s) {
        profile_free(p);
        return;
    }
    CHECK_STR(json_string_value(json_object_get(s, "$schema")),
              "https://www.speedscope.app/file-format-schema.json");
    json_t *frames = json_object_get(json_object_get(s, "shared"), "frames");
    /* 4 distinct frames + [other stacks]; <module> at lines 1 and 2 differ */
    CHECK_EQ(json_array_size(frames), 5);
    json_t *prof = json_array_get(json_object_get(s, "profiles"), 0);
    CHECK_STR(json_string_value(json_object_get(prof, "type")), "sampled");
    CHECK_STR(json_string_value(json_object_get(prof, "unit")), "seconds");
    json_t *samples = json_object_get(prof, "samples"), *weights = json_object_get(prof, "weights");
    CHECK_EQ(json_array_size(samples), 3);
    CHECK_EQ(json_array_size(weights), 3);
    double w = 0;
    for (size_t i = 0; i < json_array_size(weights); i++)
        w += json_real_value(json_array_get(weights, i));
    CHECK_NEAR(w, 0.6, 1e-9); /* the profile's seconds */
    CHECK_NEAR(json_real_value(json_object_get(prof, "endValue")), w, 1e-9);
    /* the heaviest stack, root first: <module>:1 then the library frame */
    json_t *st = json_array_get(samples, 0);
    CHECK_EQ(json_array_size(st), 3);
    json_t *root = json_array_get(frames, (size_t)json_integer_value(json_array_get(st, 0)));
    json_t *lib = json_array_get(frames, (size_t)json_integer_value(json_array_get(st, 1)));
    CHECK_STR(json_string_value(json_object_get(root, "name")), "<module> (/p/日本/main.py:1)");
    CHECK_STR(json_string_value(json_object_get(lib, "file")), "/usr/lib/python3.11/a;b%.py");
    CHECK_EQ(json_integer_value(json_object_get(lib, "line")), 7);
    /* speedscope names are not escaped: JSON carries any character */
    CHECK_STR(json_string_value(json_object_get(lib, "name")),
              "odd;name\nwith%newline (/usr/lib/python3.11/a;b%.py:7)");
    json_decref(s);
    profile_free(p);
}

static void test_html_escape(void)
{
    /* a name that would end the page's data block and start a script */
    char *text = strdup(PROFILE_JSON);
    const char *evil = "</script><script>x=1</script><!--";
    size_t at = (size_t)(strstr(text, "\"work\"") - text);
    char *t2 = malloc(strlen(text) + strlen(evil) + 8);
    sprintf(t2, "%.*s\"%s\"%s", (int)at, text, evil, text + at + strlen("\"work\""));
    free(text);
    struct profile *p = load(t2);
    free(t2);
    if (!p) return;
    char path[] = "/tmp/hotline-html-test-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    CHECK_EQ(html_report_save(p, path), 0);
    FILE *f = fopen(path, "r");
    char *page = calloc(1, 1 << 20);
    size_t n = f ? fread(page, 1, (1 << 20) - 1, f) : 0;
    if (f) fclose(f);
    CHECK(n > 1000);
    int closes = 0;
    for (const char *s = page; (s = strstr(s, "</script>")); s++)
        closes++;
    CHECK_EQ(closes, 2); /* the page's own two script blocks, none from the data */
    CHECK(!strstr(page, "<!--\""));
    CHECK(strstr(page, "\\u003c/script>\\u003cscript>x=1") != NULL);
    CHECK(!strstr(page, "/*HOTLINE_DATA*/"));
    free(page);
    unlink(path);
    profile_free(p);
}

int main(void)
{
    test_collapsed();
    test_collapsed_no_rest();
    test_speedscope();
    test_html_escape();
    return check_exit("run_export");
}
