/* cmd_view: `hotline view FILE [--top N] [--json OUT] [--collapsed OUT]
 * [--speedscope OUT]`: print the report of a
 * saved profile. FILE is either a JSON profile written by `hotline run --json`
 * (docs/profile-format.md) or a raw wire stream (.jsonl) written by a
 * standalone agent (HOTLINE_OUT, docs/agent-protocol.md); the first line
 * tells which. --json converts either into a JSON profile; the other
 * outputs are the pictures of docs/pictures.md. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/outputs.h"
#include "store/profile.h"
#include "cli/report.h"
#include "text/termsafe.h"

static const char view_usage[] =
    "usage: hotline view [--top N] [--json OUT] [--collapsed OUT] [--speedscope OUT]\n"
    "                    [--html OUT] PROFILE\n"
    "\n"
    "Prints the report of a saved profile: a JSON profile from `hotline run --json`,\n"
    "or a wire stream (.jsonl) written by a standalone agent.\n"
    "  --top N           lines and functions shown (default 10)\n" CLI_OUTPUTS_USAGE;

#define VIEW_FIRST_LINE (1 << 20)

struct wire_load {
    struct profile *p;
    struct prof_conn *c;
    int ended, bad;
    double last_ts;
};

static int wire_line(void *ud, enum agent_line_status st, const char *line, size_t len)
{
    struct wire_load *w = ud;
    struct agent_msg m;
    if (st != AGENT_LINE_OK || agent_msg_parse(line, len, &m, NULL, 0)) {
        w->bad++;
        return 0;
    }
    profile_conn_apply(w->c, &m);
    if (m.type == AGENT_MSG_HELLO) {
        if (m.u.hello.main && !w->p->meta.program)
            profile_set_str(&w->p->meta.program, m.u.hello.main);
        if (m.u.hello.argv && !w->p->meta.argv) {
            json_t *a = json_array();
            for (size_t i = 1; i < json_array_size(m.u.hello.argv); i++)
                json_array_append(a, json_array_get(m.u.hello.argv, i));
            w->p->meta.argv = a;
        }
    } else if (m.type == AGENT_MSG_DELTA && m.u.delta.ts > w->last_ts) {
        w->last_ts = m.u.delta.ts;
    } else if (m.type == AGENT_MSG_END) {
        w->ended = 1;
        if (m.u.end.ts > w->last_ts) w->last_ts = m.u.end.ts;
    }
    agent_msg_clear(&m);
    return 0;
}

static struct profile *load_wire(FILE *f, char *err, size_t errlen)
{
    struct wire_load w = {profile_new(), NULL, 0, 0, 0};
    if (!w.p || !(w.c = profile_conn_new(w.p))) {
        profile_free(w.p);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    struct agent_reader r;
    agent_reader_init(&r);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        agent_reader_feed(&r, buf, n, wire_line, &w);
    agent_reader_free(&r);
    profile_conn_free(w.c);
    w.p->meta.elapsed_s = w.last_ts;
    profile_set_str(&w.p->meta.reason, w.ended
                                           ? "ended normally"
                                           : "no end record (crashed, killed or still running)");
    if (w.bad) fprintf(stderr, "hotline view: %d malformed line(s) skipped\n", w.bad);
    return w.p;
}

static struct profile *load_any(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    /* A wire stream starts with a one-line object carrying "t" (a hello:
     * short). Only VIEW_FIRST_LINE bytes are looked at: a profile saved on
     * one line of any length is not read whole twice. */
    char *line = malloc(VIEW_FIRST_LINE);
    int wire = 0;
    if (line && fgets(line, VIEW_FIRST_LINE, f)) {
        json_t *o = json_loads(line, 0, NULL);
        wire = json_is_object(o) && json_is_string(json_object_get(o, "t"));
        json_decref(o);
    }
    free(line);
    struct profile *p;
    if (wire) {
        rewind(f);
        p = load_wire(f, err, errlen);
    } else {
        /* the same caps as a workspace's saved profile (size, lines); a
         * file named on the command line may be a symlink or a pipe */
        p = profile_load(path, 0, err, errlen);
    }
    fclose(f);
    return p;
}

int cmd_view(int argc, char **argv)
{
    const char *path = NULL;
    struct cli_outputs outs = {0};
    int top = 10;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(view_usage, stdout);
            return 0;
        }
        const char **slot = cli_output_slot(&outs, a);
        if (!strcmp(a, "--top") || slot) {
            if (i + 1 >= argc) {
                fprintf(stderr, "hotline view: %s needs a value\n\n%s", a, view_usage);
                return 2;
            }
            if (slot) {
                *slot = argv[++i];
            } else {
                char *end;
                long v = strtol(argv[++i], &end, 10);
                if (*end || v < 1 || v > 100000) {
                    fprintf(stderr, "hotline view: --top wants a whole number >= 1\n");
                    return 2;
                }
                top = (int)v;
            }
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "hotline view: unknown option '%s'\n\n%s", a, view_usage);
            return 2;
        } else if (path) {
            fprintf(stderr, "hotline view: one profile at a time\n\n%s", view_usage);
            return 2;
        } else {
            path = a;
        }
    }
    if (!path) {
        fprintf(stderr, "hotline view: no profile given\n\n%s", view_usage);
        return 2;
    }
    char err[512];
    struct profile *p = load_any(path, err, sizeof err);
    if (!p) { /* err quotes the file's name and maybe its text */
        char safe[TERMSAFE_SIZE(sizeof err)];
        fprintf(stderr, "hotline view: %s\n", termsafe_str(safe, sizeof safe, err));
        return 1;
    }
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) cwd[0] = 0;
    report_print(stdout, p, top, cwd);
    int rc = cli_outputs_write(&outs, p, "hotline view", 1) ? 1 : 0;
    profile_free(p);
    return rc;
}
