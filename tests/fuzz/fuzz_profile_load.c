/* libFuzzer target: the saved-profile loader (server/store/profile_json.c)
 * from bytes, as `hotline view` and the language server read a
 * <root>/.hotline/profile.json that a cloned repository may carry: the
 * tree-size scan, the JSON parse, the number and field checks, the store's
 * fill; then what is built from a loaded profile (its JSON, speedscope,
 * folded stacks, HTML data, leaks, top lines/functions/stacks).
 * `hotline diff` of the profile against itself (store/compare.c).
 * Oracles: nothing crashes, leaks or hits undefined behaviour (ASan/UBSan);
 * a refusal says why; a loaded profile saved again loads again (or is
 * refused only for a number out of range: a sum hotline writes, such as
 * "totals", may pass the bound its parts are under). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/compare.h"
#include "store/export.h"
#include "store/html.h"
#include "store/memprof.h"
#include "store/profile.h"

/* A profile compared with itself: every file, function and line pairs
 * with itself, at the same line. */
static void compare_self(const struct profile *p)
{
    struct cmp_result r;
    if (profile_compare(p, p, &r)) return; /* out of memory */
    if (r.files_paired != p->nfiles || r.files_ambiguous) abort();
    for (size_t i = 0; i < r.nfuncs; i++)
        if (!r.funcs[i].has_old || !r.funcs[i].has_new ||
            r.funcs[i].line_old != r.funcs[i].line_new)
            abort();
    for (size_t i = 0; i < r.nlines; i++)
        if (!r.lines[i].has_old || !r.lines[i].has_new ||
            r.lines[i].line_old != r.lines[i].line_new)
            abort();
    json_decref(profile_compare_json(p, p, &r));
    profile_compare_free(&r);
}

static void use_store(struct profile *p)
{
    compare_self(p);
    json_decref(export_speedscope(p, "fuzz", EXPORT_THREADS));
    json_decref(export_speedscope(p, "fuzz", 0));
    json_decref(html_report_data(p));
    memprof_leak_set_free(profile_leak_set_new(p));
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (f) {
        export_collapsed(p, f);
        fclose(f);
    }
    free(buf);
    struct prof_line_ref lines[8];
    struct prof_func_ref funcs[8];
    const struct prof_stack *stacks[8];
    profile_top_lines(p, lines, 8);
    profile_top_funcs(p, funcs, 8);
    size_t ns = profile_top_stacks(p, NULL, 0, stacks, 8);
    if (ns && stacks[0]->nfr) /* the stacks through a frame of the heaviest */
        profile_top_stacks(p, stacks[0]->fr[0].file, stacks[0]->fr[0].line, stacks, 8);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512] = "";
    struct profile *p = profile_load_text((const char *)data, size, NULL, err, sizeof err);
    if (!p) {
        if (!err[0]) abort();
        return 0;
    }
    use_store(p);
    json_t *j = profile_to_json(p);
    char *text = j ? json_dumps(j, PROFILE_SAVE_FLAGS) : NULL;
    json_decref(j);
    if (text) {
        err[0] = 0;
        struct profile *q = profile_load_text(text, strlen(text), NULL, err, sizeof err);
        if (!q && !strstr(err, "a number out of range")) {
            fprintf(stderr, "a saved profile does not load again: %s\n", err);
            abort();
        }
        profile_free(q);
        free(text);
    }
    profile_free(p);
    return 0;
}
