/* export: the profile's call stacks as folded stacks (flamegraph.pl,
 * inferno) and as a speedscope file. Both read the same list: the store's
 * stacks heaviest first, plus one "[other stacks]" entry for the samples no
 * stored stack carries (a profile read back from JSON keeps only the
 * heaviest PROFILE_JSON_STACKS), so a picture's total is the profile's. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/export.h"

/* Appends s to buf[*k..n-1), escaping what would break a folded line. */
static void put_escaped(char *buf, size_t n, size_t *k, const char *s, int escape)
{
    for (; *s && *k + 1 < n; s++) {
        const char *rep = NULL;
        if (escape) {
            switch (*s) {
            case ';':
                rep = "%3B";
                break;
            case '%':
                rep = "%25";
                break;
            case '\n':
                rep = "%0A";
                break;
            case '\r':
                rep = "%0D";
                break;
            default:
                break;
            }
        }
        if (!rep) {
            buf[(*k)++] = *s;
        } else if (*k + 3 < n) {
            memcpy(buf + *k, rep, 3);
            *k += 3;
        } else {
            break; /* truncated: never half an escape */
        }
    }
    buf[*k] = 0;
}

void export_frame_name(const struct prof_frame *fr, int escape, char *buf, size_t n)
{
    char ln[32];
    size_t k = 0;
    if (!n) return;
    buf[0] = 0;
    snprintf(ln, sizeof ln, ":%d)", fr->line);
    put_escaped(buf, n, &k, fr->name ? fr->name : "?", escape);
    put_escaped(buf, n, &k, " (", 0);
    put_escaped(buf, n, &k, fr->file ? fr->file : "?", escape);
    put_escaped(buf, n, &k, ln, 0);
}

/* Samples and seconds that no stack carries: the profile's totals minus the
 * stacks' sums (never negative; seconds differ by rounding only). */
static void unstacked(const struct profile *p, long long *samples, double *seconds)
{
    long long n = 0;
    double s = 0;
    for (size_t i = 0; i < p->nstacks; i++) {
        n += p->stacks[i]->samples;
        s += p->stacks[i]->seconds;
    }
    double total = agent_stats_time(&p->total);
    *samples = p->meta.samples > n ? p->meta.samples - n : 0;
    *seconds = *samples && total > s ? total - s : 0;
}

/* New array of every stack, heaviest first (NULL with *n 0 when empty or
 * on ENOMEM: the caller tells them apart by p->nstacks). */
static const struct prof_stack **all_stacks(const struct profile *p, size_t *n)
{
    *n = 0;
    if (!p->nstacks) return NULL;
    const struct prof_stack **v = malloc(p->nstacks * sizeof *v);
    if (v) *n = profile_top_stacks(p, NULL, 0, v, p->nstacks);
    return v;
}

#define EXPORT_FRAME_MAX 4096 /* bytes of one frame name; longer ones are cut */

int export_collapsed(const struct profile *p, FILE *out)
{
    size_t ns;
    const struct prof_stack **v = all_stacks(p, &ns);
    if (!v && p->nstacks) return -ENOMEM;
    char *name = malloc(EXPORT_FRAME_MAX);
    if (!name) {
        free(v);
        return -ENOMEM;
    }
    for (size_t i = 0; i < ns; i++) {
        const struct prof_stack *s = v[i];
        if (s->samples <= 0) continue; /* a line per sample count; seconds alone draw nothing */
        if (!s->nfr) fputs(EXPORT_NO_FRAMES, out);
        for (size_t j = s->nfr; j-- > 0;) { /* stored innermost first; folded is root first */
            export_frame_name(&s->fr[j], 1, name, EXPORT_FRAME_MAX);
            fputs(name, out);
            if (j) fputc(';', out);
        }
        fprintf(out, " %lld\n", s->samples);
    }
    long long rest;
    double rest_s;
    unstacked(p, &rest, &rest_s);
    if (rest) fprintf(out, "%s %lld\n", EXPORT_OTHER_STACKS, rest);
    free(name);
    free(v);
    return ferror(out) ? -EIO : 0;
}

/* Index of the frame named name in frames (new entry when unseen); -1 on ENOMEM. */
static json_int_t frame_index(json_t *index, json_t *frames, const char *name, const char *file,
                              int line)
{
    json_t *have = json_object_get(index, name);
    if (have) return json_integer_value(have);
    json_int_t k = (json_int_t)json_array_size(frames);
    json_t *fr = file ? json_pack("{s:s,s:s,s:i}", "name", name, "file", file, "line", line)
                      : json_pack("{s:s}", "name", name);
    if (!fr || json_array_append_new(frames, fr) ||
        json_object_set_new(index, name, json_integer(k)))
        return -1;
    return k;
}

/* Appends one sample (stack root first, weight seconds) to samples/weights. */
static int add_sample(json_t *index, json_t *frames, json_t *samples, json_t *weights,
                      const struct prof_stack *s, double seconds, char *name)
{
    json_t *st = json_array();
    if (!st) return -ENOMEM;
    if (!s || !s->nfr) {
        json_int_t k =
            frame_index(index, frames, s ? EXPORT_NO_FRAMES : EXPORT_OTHER_STACKS, NULL, 0);
        if (k < 0 || json_array_append_new(st, json_integer(k))) goto fail;
    }
    for (size_t j = s ? s->nfr : 0; j-- > 0;) {
        export_frame_name(&s->fr[j], 0, name, EXPORT_FRAME_MAX);
        json_int_t k =
            frame_index(index, frames, name, s->fr[j].file ? s->fr[j].file : "?", s->fr[j].line);
        if (k < 0 || json_array_append_new(st, json_integer(k))) goto fail;
    }
    if (json_array_append_new(samples, st)) return -ENOMEM;
    if (json_array_append_new(weights, json_real(seconds))) return -ENOMEM;
    return 0;
fail:
    json_decref(st);
    return -ENOMEM;
}

json_t *export_speedscope(const struct profile *p, const char *exporter)
{
    size_t ns;
    const struct prof_stack **v = all_stacks(p, &ns);
    if (!v && p->nstacks) return NULL;
    char *name = malloc(EXPORT_FRAME_MAX);
    json_t *index = json_object(), *frames = json_array(), *samples = json_array(),
           *weights = json_array();
    json_t *root = NULL;
    int rc = name && index && frames && samples && weights ? 0 : -ENOMEM;
    double total = 0;
    for (size_t i = 0; !rc && i < ns; i++) {
        if (v[i]->seconds <= 0) continue;
        rc = add_sample(index, frames, samples, weights, v[i], v[i]->seconds, name);
        total += v[i]->seconds;
    }
    long long rest;
    double rest_s;
    unstacked(p, &rest, &rest_s);
    if (!rc && rest_s > 0) {
        rc = add_sample(index, frames, samples, weights, NULL, rest_s, name);
        total += rest_s;
    }
    if (!rc) {
        /* The stacks are not recorded per thread (docs/pictures.md): one
         * profile holds every thread of every process. */
        char title[512];
        snprintf(title, sizeof title, "%s (all threads)",
                 p->meta.program ? p->meta.program : "profile");
        json_t *prof = json_pack("{s:s,s:s,s:s,s:f,s:f,s:o,s:o}", "type", "sampled", "name", title,
                                 "unit", "seconds", "startValue", 0.0, "endValue", total, "samples",
                                 samples, "weights", weights);
        samples = weights = NULL; /* stolen by json_pack, even on failure */
        root = prof
                   ? json_pack("{s:s,s:{s:o},s:[o],s:s,s:i,s:s}", "$schema",
                               "https://www.speedscope.app/file-format-schema.json", "shared",
                               "frames", frames, "profiles", prof, "name", title,
                               "activeProfileIndex", 0, "exporter", exporter ? exporter : "hotline")
                   : NULL;
        if (prof) frames = NULL; /* stolen with prof, even on failure */
    }
    json_decref(index);
    json_decref(frames);
    json_decref(samples);
    json_decref(weights);
    free(name);
    free(v);
    return root;
}

struct text_fill {
    const char *buf;
    size_t len;
};

static int fill_text(FILE *f, void *ud)
{
    const struct text_fill *t = ud;
    return t->len && fwrite(t->buf, 1, t->len, f) != t->len ? (errno ? -errno : -EIO) : 0;
}

int export_save_text(const char *path, const char *buf, size_t len)
{
    struct text_fill t = {buf, len};
    return profile_save_with(path, fill_text, &t);
}

static int fill_collapsed(FILE *f, void *ud)
{
    return export_collapsed(ud, f);
}

int export_collapsed_save(const struct profile *p, const char *path)
{
    return profile_save_with(path, fill_collapsed, (void *)p);
}

int export_speedscope_save(const struct profile *p, const char *exporter, const char *path)
{
    json_t *root = export_speedscope(p, exporter);
    if (!root) return -ENOMEM;
    int rc = profile_save_json(root, path, JSON_COMPACT | JSON_REAL_PRECISION(10));
    json_decref(root);
    return rc;
}
