/* "Optimize this" (see optimize.h, docs/optimize.md). One optimization is
 * a struct opt_op that walks four asynchronous steps, each on the server's
 * loop: probe the interpreter (Python and library versions, does the file
 * parse; subprocess) -> ask the endpoint (llm.c) -> check the suggestion has
 * statements and the whole file still compiles with it (subprocess) -> hand
 * the edit to the client (resolve answer, or workspace/applyEdit).
 *
 * Both subprocesses are the target interpreter run isolated (`-I`: no script
 * directory or cwd on sys.path, no PYTHON* variables, no user site; `-S`: no
 * site module, so no .pth file runs) from "/", with fixed scripts that
 * import only the standard library and never import or run the user's code:
 * picking the action runs nothing of the workspace. A target interpreter
 * that is itself a workspace file (a repository's .venv/bin/python, whose
 * pyvenv.cfg and stdlib lookup the folder controls) runs only once a run of
 * this session used it (core/interp.h); until then python3 on PATH checks
 * the edit, and the prompt's version comes from the profile.
 * Cancelling frees the op at once: a subprocess still running is detached
 * (it frees itself when its handles close), an HTTP request is aborted.
 *
 * Nothing is sent before the user picks the action; the key is read by
 * llm_build at that moment and lives only in the request's header list. */
#include "providers/optimize.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsonrpc.h"
#include "llm/llm.h"
#include "proc/helper.h"
#include "core/interp.h"
#include "core/lsp_call.h"
#include "core/lsp_out.h"
#include "core/lsp_provider.h"
#include "core/lsp_pview.h"
#include "llm/prompt_template.h"
#include "store/compare.h"
#include "store/summary.h"
#include "text/pytext.h"
#include "core/uri.h"

#define OPT_PROC_MAX_OUT ((size_t)1 << 20)
#define OPT_MAX_EXPLANATION 3000

struct opt_op;

/* Profiled lines [lo, hi] of the file the store names path (owned), the
 * region a suggestion was made from: the before side of its comparison. */
struct opt_lines {
    char *path; /* NULL: none of the region was profiled */
    int lo, hi;
};

struct opt_op {
    struct lsp_facilities *srv;
    json_t *id;     /* owned: the resolve / executeCommand request */
    json_t *action; /* owned: the action being resolved, or NULL (command path) */
    char *uri, *path;
    int version;     /* of the document when the region was taken */
    uint32_t l0, l1; /* region: document lines [l0, l1) */
    char *region;    /* owned text of the region */
    char *indent;    /* owned leading whitespace of its first line */
    char *imports, *context, *table, *modules;
    double before_s;
    int runs_at;
    struct opt_lines from; /* the region's profiled lines */
    char *program;         /* owned: the profiled program's path (for Verify), or NULL */
    char exe[4096];        /* the interpreter the helpers run */
    int stand_in;          /* exe is python3 standing in for a workspace interpreter */
    struct llm_call call;
    struct llm_req *req;
    struct proc_helper *proc; /* the helper running for this op, or NULL */
    void (*next_step)(struct opt_op *op, int64_t status, const char *out);
    char *code, *explanation;     /* owned, from the answer */
    char *raw;                    /* owned: the code block as the model wrote it */
    json_t *edit;                 /* owned WorkspaceEdit once checked */
    long apply_id;                /* the workspace/applyEdit call, 0 if none */
    struct lsp_progress progress; /* cancellable: cancel drops the op */
    struct opt_op *next;
};

struct opt_done {
    char *uri, *path, *code, *program;
    double before_s;
    int runs_at;
    struct opt_lines from;
    struct opt_done *next;
};

struct lsp_opt {
    struct llm_client *http; /* NULL without a loop */
    struct opt_op *ops;
    int nops;
    struct opt_done *done;
    int ndone;
    int seq;
};

/* ---- small helpers ------------------------------------------------------- */

extern const struct lsp_provider lsp_optimize_provider;

/* Borrowed: this provider's state in s. */
static struct lsp_opt *opt_of(struct lsp_facilities *s)
{
    return lsp_provider_self(s, &lsp_optimize_provider);
}

static json_t *llm_settings(struct lsp_facilities *s)
{
    return json_object_get(s->out->settings, "llm");
}

/* The target interpreter (the one hotline.run uses): the `python` setting,
 * else $VIRTUAL_ENV/bin/python, else python3 on PATH. A relative path is
 * made absolute against the server's directory, where it meant something,
 * since the helpers run from "/". Borrowed, or buf. */
static const char *python_exe(struct lsp_facilities *s, char *buf, size_t n)
{
    return lsp_interp_exe(json_string_value(json_object_get(s->out->settings, "python")), buf, n);
}

/* op->exe: the target interpreter when the server may run it on its own,
 * else python3 standing in (op->stand_in), said once in the log; "" when
 * not even that may run. */
static void pick_exe(struct opt_op *op)
{
    char pybuf[4096], dir[4096];
    const char *py = python_exe(op->srv, pybuf, sizeof pybuf);
    snprintf(dir, sizeof dir, "%s", op->path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    if (lsp_interp_trusted(op->srv, py, slash ? dir : NULL)) {
        snprintf(op->exe, sizeof op->exe, "%s", py);
        return;
    }
    op->stand_in = 1;
    int ok = lsp_interp_trusted(op->srv, "python3", slash ? dir : NULL);
    snprintf(op->exe, sizeof op->exe, "%s", ok ? "python3" : "");
    lsp_log(op->srv, LSP_MSG_INFO,
            "optimize: %s is in the workspace and no run of this session used it: not run; %s", py,
            ok ? "python3 checks the suggestion instead" : "nothing can check the suggestion");
}

/* The profile's record for a document's path, found by that path or by its
 * real path (as the hints do): a run through a symlinked folder names the
 * file otherwise than the editor may. NULL: none. */
static const struct prof_file *prof_file(struct lsp_facilities *s, const char *path)
{
    return path ? lsp_pview_file(s, path) : NULL;
}

/* The stats of the profiled line shown at document line cur of d (the
 * core's one query, lsp_profiled_line), or NULL. */
static const struct agent_stats *line_stats(struct lsp_facilities *s, struct doc *d, uint32_t cur)
{
    const struct prof_file *pf;
    int pl = lsp_profiled_line(s, d, cur, &pf);
    return pl ? profile_file_line(pf, pl) : NULL;
}

/* ---- the profile table of the region ------------------------------------ */

/* The profiled lines of document lines [l0, l1) of d into *from (its
 * path replaced): what the before/after lens compares against. */
static void region_lines(struct lsp_facilities *s, struct doc *d, uint32_t l0, uint32_t l1,
                         struct opt_lines *from)
{
    free(from->path);
    from->path = NULL;
    for (uint32_t l = l0; l < l1; l++) {
        const struct prof_file *pf;
        int pl = lsp_profiled_line(s, d, l, &pf);
        if (!pl) continue;
        if (!from->path) {
            from->path = strdup(pf->path); /* NULL on ENOMEM: the lens falls back */
            from->lo = from->hi = pl;
        }
        if (pl < from->lo) from->lo = pl;
        if (pl > from->hi) from->hi = pl;
    }
}

/* The per-line profile table of the region (new text); *before gets the
 * seconds charged to its lines. */
static char *profile_table(struct lsp_facilities *s, struct doc *d, uint32_t l0, uint32_t l1,
                           double *before, char *total, size_t tn)
{
    const struct profile *p = lsp_pview_profile(s);
    static const struct {
        int stat;
        const char *name;
    } extra[] = {
        {AGENT_STAT_ALLOC, "alloc MB"},     {AGENT_STAT_KEPT, "kept MB"},
        {AGENT_STAT_COPYRATE, "copy MB/s"}, {AGENT_STAT_GPUPCT, "GPU %"},
        {AGENT_STAT_GPUMB, "GPU MB"},
    };
    int idx[5], nx = 0;
    const char *names[5];
    for (size_t i = 0; i < 5; i++) {
        int k = extra[i].stat;
        if (!p) continue;
        int any = 0; /* a column only when some line of the region has the value */
        for (uint32_t l = l0; l < l1; l++) {
            const struct agent_stats *st = line_stats(s, d, l);
            if (st && st->v[k] > 0) any = 1;
        }
        if (any) {
            idx[nx] = k;
            names[nx++] = extra[i].name;
        }
    }
    size_t cap = 256 + (size_t)(l1 - l0) * 400, n = 0;
    char *out = malloc(cap);
    if (!out) return NULL;
    n += (size_t)snprintf(out + n, cap - n, "| line | time %% | python s | native s | system s");
    for (int i = 0; i < nx; i++)
        n += (size_t)snprintf(out + n, cap - n, " | %s", names[i]);
    n += (size_t)snprintf(out + n, cap - n, " | code |\n|---|---|---|---|---");
    for (int i = 0; i < nx; i++)
        n += (size_t)snprintf(out + n, cap - n, "|---");
    n += (size_t)snprintf(out + n, cap - n, "|---|\n");
    *before = 0;
    double samples = 0;
    for (uint32_t l = l0; l < l1 && n < cap - 1; l++) {
        size_t len;
        const char *t = doc_line(d, l, &len);
        const struct agent_stats *st = line_stats(s, d, l);
        char code[120];
        size_t w = pytext_lead_ws(t, len), cl = len - w;
        while (cl && t[w + cl - 1] == '\r')
            cl--;
        snprintf(code, sizeof code, "%.*s%s", (int)(cl > 100 ? 100 : cl), t + w,
                 cl > 100 ? "…" : "");
        for (char *q = code; *q; q++)
            if (*q == '|') *q = '/';
        if (!st) {
            if (cl)
                n += (size_t)snprintf(out + n, cap - n, "| %u | - | - | - | -%s%s%s | %s |\n",
                                      l + 1, nx ? " | -" : "", nx > 1 ? " | -" : "",
                                      nx > 2 ? " | -" : "", code);
            continue;
        }
        *before += agent_stats_time(st);
        samples += st->v[AGENT_STAT_N];
        n += (size_t)snprintf(out + n, cap - n, "| %u | %.1f | %.3f | %.3f | %.3f", l + 1,
                              summary_share(p, st), st->v[AGENT_STAT_PY], st->v[AGENT_STAT_NAT],
                              st->v[AGENT_STAT_SYS]);
        for (int i = 0; i < nx && n < cap - 1; i++)
            n += (size_t)snprintf(out + n, cap - n, " | %.1f", st->v[idx[i]]);
        if (n < cap - 1) n += (size_t)snprintf(out + n, cap - n, " | %s |\n", code);
    }
    if (n >= cap) n = cap - 1;
    out[n] = 0;
    double all = p ? agent_stats_time(&p->total) : 0;
    snprintf(total, tn, "region %.3f s of a %.3f s profile (%.1f%%), %.0f samples", *before, all,
             all > 0 ? 100 * *before / all : 0, samples);
    return out;
}

/* ---- subprocesses (probe, parse check) ----------------------------------- */

typedef void (*opt_done_fn)(struct opt_op *op, int64_t status, const char *out);

/* What proc_helper hands back goes to the step that started it (op->next_step). */
static void proc_done(void *data, int64_t status, const char *out)
{
    struct opt_op *op = data;
    op->proc = NULL;
    op->next_step(op, status, out);
}

/* Run `python -I -S -c script` from "/" with input (stolen) on stdin;
 * done(op, status, stdout) later. -I keeps the script's and the working
 * directory off sys.path (a json.py in the workspace is not imported), and
 * ignores PYTHON* variables and the user site; "/" is a directory nobody's
 * project lives in. The helper has its own process group, killed whole at
 * the timeout (proc/helper.h). 0 or negative errno (then done is never
 * called). */
static int proc_start(struct opt_op *op, const char *script, char *input, opt_done_fn done)
{
    char *argv[] = {op->exe, "-I", "-S", "-c", (char *)script, NULL};
    if (!op->exe[0]) {
        free(input);
        return -EPERM;
    }
    op->next_step = done;
    return proc_helper_start(op->srv->loop, argv, "/", input, LSP_OPT_PROC_TIMEOUT_MS,
                             OPT_PROC_MAX_OUT, proc_done, op, &op->proc);
}

/* ---- ops: lifecycle ------------------------------------------------------ */

/* A report ("report") or the end ("end") of op's progress. */
static void progress(struct opt_op *op, const char *kind, const char *msg)
{
    if (!strcmp(kind, "end"))
        lsp_progress_end(op->srv, &op->progress, msg);
    else
        lsp_progress_report(op->srv, &op->progress, msg);
}

static void op_free(struct opt_op *op)
{
    struct lsp_opt *o = opt_of(op->srv);
    lsp_progress_drop(op->srv, &op->progress);
    lsp_call_forget(op->srv, op->apply_id);
    for (struct opt_op **pp = &o->ops; *pp; pp = &(*pp)->next)
        if (*pp == op) {
            *pp = op->next;
            o->nops--;
            break;
        }
    if (op->req) llm_cancel(op->req);
    if (op->proc) proc_helper_detach(op->proc); /* frees itself */
    llm_call_free(&op->call);
    json_decref(op->id);
    json_decref(op->action);
    json_decref(op->edit);
    free(op->uri);
    free(op->path);
    free(op->region);
    free(op->indent);
    free(op->imports);
    free(op->context);
    free(op->table);
    free(op->modules);
    free(op->from.path);
    free(op->program);
    free(op->code);
    free(op->raw);
    free(op->explanation);
    free(op);
}

/* End op with an error the user sees; nothing is changed. */
static void op_fail(struct opt_op *op, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void op_fail(struct opt_op *op, const char *fmt, ...)
{
    char msg[LLM_MAX_TEXT + 200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    llm_scrub(msg, op->call.key);
    progress(op, "end", "failed: nothing changed");
    lsp_show(op->srv, LSP_MSG_ERROR, "Hotline: Optimize this: %s", msg);
    lsp_reply_error(op->srv, op->id, LSP_REQUEST_FAILED, "%s", msg);
    op_free(op);
}

static void done_free(struct opt_done *dn)
{
    free(dn->uri);
    free(dn->path);
    free(dn->code);
    free(dn->program);
    free(dn->from.path);
    free(dn);
}

static void remember(struct opt_op *op)
{
    struct lsp_opt *o = opt_of(op->srv);
    struct opt_done *dn = calloc(1, sizeof *dn);
    if (!dn) return;
    dn->uri = strdup(op->uri);
    dn->path = strdup(op->path);
    dn->code = strdup(op->code);
    dn->program = op->program ? strdup(op->program) : NULL;
    if (!dn->uri || !dn->path || !dn->code || (op->program && !dn->program)) {
        done_free(dn);
        return;
    }
    dn->before_s = op->before_s;
    dn->runs_at = op->runs_at;
    dn->from = op->from; /* taken */
    op->from.path = NULL;
    dn->next = o->done;
    o->done = dn;
    if (++o->ndone > LSP_OPT_MAX_DONE) { /* forget the oldest */
        struct opt_done **pp = &o->done;
        while ((*pp)->next)
            pp = &(*pp)->next;
        done_free(*pp);
        *pp = NULL;
        o->ndone--;
    }
    if (json_is_true(lsp_client_cap(op->srv, "workspace.codeLens.refreshSupport")))
        lsp_call(op->srv, "workspace/codeLens/refresh", NULL, NULL, NULL);
}

static void show_explanation(struct opt_op *op)
{
    lsp_show(op->srv, LSP_MSG_INFO, "Hotline: %s rewrote lines %u-%u (undo to revert). %s",
             op->call.host, op->l0 + 1, op->l1, op->explanation ? op->explanation : "");
}

/* ---- ops: the steps ------------------------------------------------------ */

/* The probe. stdin: {"modules": "a b", "name", "source"}; stdout: {"python",
 * "libs": {module: version}, "syntax": null or why the file does not
 * compile}. Library versions come from distribution metadata (files read,
 * nothing imported); -I left the user site and PYTHONPATH off sys.path and
 * -S every site-packages folder (and ran no .pth file), so their absolute
 * entries are added after the last import, for the metadata search only; a
 * venv's own folder is found next to its pyvenv.cfg, as 3.9 and 3.10 learn
 * their venv only in site. compile() builds code without running it. */
static const char probe_py[] =
    "import sys, json, os, site\n"
    "d = json.loads(sys.stdin.read())\n"
    "out = {'python': sys.version.split()[0], 'libs': {}, 'syntax': None}\n"
    "try:\n"
    "    compile(d['source'], d['name'], 'exec', dont_inherit=True)\n"
    "except SyntaxError as e:\n"
    "    out['syntax'] = '%s (line %s)' % (e.msg, e.lineno)\n"
    "except Exception as e:\n"
    "    out['syntax'] = str(e)\n"
    "try:\n"
    "    import importlib.metadata as md\n"
    "    extra = os.environ.get('PYTHONPATH', '').split(os.pathsep)\n"
    "    extra.append(site.getusersitepackages())\n"
    "    extra.extend(site.getsitepackages())\n"
    "    venv = os.path.dirname(os.path.dirname(os.path.abspath(sys.executable)))\n"
    "    if os.path.isfile(os.path.join(venv, 'pyvenv.cfg')):\n"
    "        extra.append(os.path.join(venv, 'lib', 'python%d.%d' % sys.version_info[:2],\n"
    "                                  'site-packages'))\n"
    "    sys.path.extend(p for p in extra if os.path.isabs(p) and p not in sys.path)\n"
    "    dists = md.packages_distributions() if hasattr(md, 'packages_distributions') else {}\n"
    "    for name in d['modules'].split():\n"
    "        for dist in dists.get(name, [name]):\n"
    "            try:\n"
    "                out['libs'][name] = md.version(dist); break\n"
    "            except Exception:\n"
    "                pass\n"
    "except Exception:\n"
    "    pass\n"
    "print(json.dumps(out))\n";

/* The check. stdin: {"code": the code block, "name", "file": the whole file
 * with the edit}. Exit 1: the code does not parse; 2: it has no statement
 * that does anything (empty, comments, pass, ..., a lone string): it would
 * delete the region; 3: the file would no longer compile. stdout: why. */
static const char check_py[] =
    "import ast, json, sys, textwrap\n"
    "d = json.loads(sys.stdin.read())\n"
    "try:\n"
    "    tree = ast.parse(textwrap.dedent(d['code']))\n"
    "except SyntaxError as e:\n"
    "    print('%s (line %s of the suggestion)' % (e.msg, e.lineno)); sys.exit(1)\n"
    "except Exception as e:\n"
    "    print(e); sys.exit(1)\n"
    "def noop(s):\n"
    "    return isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and\n"
    "        type(s.value).__name__ in ('Constant', 'Str', 'Ellipsis', 'Num'))\n"
    "if all(noop(s) for s in tree.body):\n"
    "    sys.exit(2)\n"
    "try:\n"
    "    compile(d['file'], d['name'], 'exec', dont_inherit=True)\n"
    "except SyntaxError as e:\n"
    "    print('%s (line %s of the file after the edit)' % (e.msg, e.lineno)); sys.exit(3)\n"
    "except Exception as e:\n"
    "    print(e); sys.exit(3)\n";

/* {"modules", "name", "source"} or {"code", "name", "file"}: the JSON for a
 * helper's stdin (new text, NULL on ENOMEM). */
static char *helper_input(const char *k1, const char *v1, const char *name, const char *k2,
                          const char *v2)
{
    json_t *j = json_pack("{s:s, s:s, s:s}", k1, v1, "name", name, k2, v2);
    char *out = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    return out;
}

static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

static void on_answer(struct llm_req *r, long status, const char *curl_err, long retry_after,
                      const char *body, size_t len, void *ud);

static void on_probed(struct opt_op *op, int64_t status, const char *out)
{
    struct lsp_facilities *s = op->srv;
    char python[64] = "unknown", libs[2048] = "";
    json_t *j = status == 0 ? json_loads(out, 0, NULL) : NULL;
    const char *pv = json_string_value(json_object_get(j, "python"));
    const char *syntax = json_string_value(json_object_get(j, "syntax"));
    if (syntax) { /* nothing could tell whether an edit breaks it: ask nothing */
        op_fail(op,
                "%s does not compile with %s (Python %s): %.300s. Fix it first: nothing was sent",
                base_name(op->path), op->exe, pv ? pv : "?", syntax);
        json_decref(j);
        return;
    }
    if (op->stand_in) { /* python3's versions are not the target's */
        pv = NULL;
        json_object_del(j, "libs");
    }
    if (!pv && lsp_pview_profile(s)) pv = lsp_pview_profile(s)->meta.python_version;
    if (pv) snprintf(python, sizeof python, "%s", pv);
    const char *k;
    json_t *v;
    size_t n = 0;
    json_object_foreach(json_object_get(j, "libs"), k, v)
    {
        if (json_is_string(v) && n < sizeof libs - 1)
            n += (size_t)snprintf(libs + n, sizeof libs - n, "%s%s %s", n ? ", " : "", k,
                                  json_string_value(v));
    }
    json_decref(j);
    if (!n) snprintf(libs, sizeof libs, "none known");
    char first[16], last[16];
    snprintf(first, sizeof first, "%u", op->l0 + 1);
    snprintf(last, sizeof last, "%u", op->l1);
    char total[256];
    struct doc *d = doc_find(&s->docs, op->uri);
    if (!d) {
        op_fail(op, "the document was closed");
        return;
    }
    char *table = profile_table(s, d, op->l0, op->l1, &op->before_s, total, sizeof total);
    region_lines(s, d, op->l0, op->l1, &op->from);
    const char *keys[] = {"file",   "python",  "libraries",  "imports",   "context",
                          "region", "profile", "first_line", "last_line", "total"};
    const char *vals[] = {base_name(op->path),
                          python,
                          libs,
                          op->imports ? op->imports : "",
                          op->context ? op->context : "",
                          op->region,
                          table ? table : "",
                          first,
                          last,
                          total};
    char *prompt = prompt_fill(prompt_user, keys, vals, 10);
    free(table);
    char err[LLM_MAX_TEXT];
    llm_call_free(&op->call);
    if (!prompt || llm_build(&op->call, llm_settings(s), prompt_system, prompt, err, sizeof err)) {
        free(prompt);
        op_fail(op, "%s", prompt ? err : "out of memory");
        return;
    }
    free(prompt);
    if (op->call.withheld[0])
        lsp_log(s, LSP_MSG_INFO,
                "optimize: %s is not sent to %s (only to the provider's own host); name it in "
                "llm.api_key_env to send it there",
                op->call.withheld, op->call.host);
    if (op->call.key && op->call.cleartext)
        lsp_show(s, LSP_MSG_WARNING,
                 "Hotline: Optimize this: the API key (%s) goes over plain http:// to %s, where "
                 "anyone on the way can read it; use https:// or a loopback address",
                 op->call.key_env, op->call.host);
    int rc = llm_post(opt_of(s)->http, &op->call, on_answer, op, &op->req);
    if (rc) {
        op->req = NULL;
        op_fail(op, "cannot send to %s: %s", op->call.host,
                rc == -EBUSY ? "too many requests in flight" : strerror(-rc));
        return;
    }
    char msg[600];
    snprintf(msg, sizeof msg, "waiting for %s (%s)", op->call.host, op->call.model);
    progress(op, "report", msg);
}

/* The first fenced code block of text: code (new) and the rest as the
 * explanation (new). -ENOENT when there is none. */
static int split_answer(const char *text, char **code, char **expl)
{
    const char *open = strstr(text, "```");
    if (!open) return -ENOENT;
    const char *start = strchr(open, '\n');
    if (!start) return -ENOENT;
    start++;
    const char *close = start;
    while ((close = strstr(close, "```"))) {
        if (close == start || close[-1] == '\n') break;
        close += 3;
    }
    if (!close) return -ENOENT;
    *code = strndup(start, (size_t)(close - start));
    const char *after = close + 3;
    while (*after && *after != '\n')
        after++;
    size_t n1 = (size_t)(open - text), n2 = strlen(after);
    *expl = malloc(n1 + n2 + 2);
    if (!*code || !*expl) return -ENOMEM;
    snprintf(*expl, n1 + n2 + 2, "%.*s %s", (int)n1, text, after);
    /* one line, trimmed, capped */
    char *w = *expl;
    for (char *r = *expl; *r; r++) {
        char c = *r == '\n' || *r == '\r' || *r == '\t' ? ' ' : *r;
        if (c == ' ' && (w == *expl || w[-1] == ' ')) continue;
        *w++ = c;
    }
    while (w > *expl && w[-1] == ' ')
        w--;
    *w = 0;
    if (strlen(*expl) > OPT_MAX_EXPLANATION) strcpy(*expl + OPT_MAX_EXPLANATION - 4, "...");
    return 0;
}

static void on_checked(struct opt_op *op, int64_t status, const char *out);
static void on_applied(struct lsp_facilities *s, void *data, json_t *result, json_t *error);

/* 1 when code's first statement line is a decorator (`@...`). */
static int starts_with_decorator(const char *code)
{
    for (const char *l = code; *l;) {
        size_t len = strcspn(l, "\n"), w = pytext_lead_ws(l, len);
        if (w < len && l[w] != '\r' && l[w] != '#') return l[w] == '@';
        l += len + (l[len] ? 1 : 0);
    }
    return 0;
}

/* Where the answer goes. A model often answers with the whole function
 * (`def hot(n): return ...`) although it was shown a loop inside it: put
 * at the loop's place, that would define a nested function and leave the
 * old body to run. So an answer whose top level defines the function
 * around the region replaces that function, at the function's own
 * indentation (op's region, indent become the function's). One that
 * defines other functions is refused when the region is inside a loop (the
 * definition would run on every pass and replace nothing); inside a
 * function body it stays there, a local helper. 0, or -1 after op_fail. */
static int place_answer(struct opt_op *op, struct doc *d)
{
    char names[1024];
    if (!pytext_top_defs(op->raw, names, sizeof names)) return 0;
    unsigned char *st = pytext_logical_starts(d->text, d->len, d->nlines, NULL);
    if (!st) {
        op_fail(op, "out of memory");
        return -1;
    }
    uint32_t f0, f1;
    int in_fn =
        !pytext_enclosing_def(d, st, op->l0, names, starts_with_decorator(op->raw), &f0, &f1) &&
        f0 <= op->l0 && f1 >= op->l1;
    int in_loop = !in_fn && pytext_in_loop(d, st, op->l0);
    free(st);
    size_t nl = strlen(names);
    if (nl) names[nl - 1] = 0; /* the last name's space */
    if (in_fn) {
        size_t len;
        const char *t = doc_line(d, f0, &len);
        char *indent = strndup(t ? t : "", t ? pytext_lead_ws(t, len) : 0);
        char *region = pytext_lines(d, f0, f1);
        if (!indent || !region) {
            free(indent);
            free(region);
            op_fail(op, "out of memory");
            return -1;
        }
        lsp_log(op->srv, LSP_MSG_INFO,
                "optimize: the answer redefines the function around lines %u-%u (%s): it "
                "replaces lines %u-%u, the whole function",
                op->l0 + 1, op->l1, names, f0 + 1, f1);
        free(op->indent);
        free(op->region);
        op->indent = indent;
        op->region = region;
        op->l0 = f0;
        op->l1 = f1;
        return 0;
    }
    if (in_loop) {
        op_fail(op,
                "the answer from %s defines %s, and lines %u-%u are inside a loop: defined "
                "there, it would be defined again on every pass and replace nothing. Nothing "
                "changed",
                op->call.host, names, op->l0 + 1, op->l1);
        return -1;
    }
    return 0;
}

static void on_answer(struct llm_req *r, long status, const char *curl_err, long retry_after,
                      const char *body, size_t len, void *ud)
{
    (void)r;
    struct opt_op *op = ud;
    struct lsp_facilities *s = op->srv;
    op->req = NULL;
    struct llm_answer a;
    llm_parse(&op->call, status, curl_err, retry_after, body, len, &a);
    if (!a.ok) {
        op_fail(op, "%s", a.error);
        llm_answer_free(&a);
        return;
    }
    int rc = split_answer(a.text, &op->raw, &op->explanation);
    llm_answer_free(&a);
    if (rc == -ENOENT) {
        op_fail(op, "the answer from %s has no code block: nothing changed", op->call.host);
        return;
    }
    if (rc) {
        op_fail(op, "out of memory");
        return;
    }
    struct doc *d = doc_find(&s->docs, op->uri);
    if (!d || d->version != op->version) {
        op_fail(op, "the file changed while waiting for the answer: nothing applied");
        return;
    }
    if (place_answer(op, d)) return;
    size_t rl = strlen(op->region);
    op->code = pytext_reindent(op->raw, op->indent, rl && op->region[rl - 1] == '\n');
    char *file = op->code ? pytext_splice(d, op->l0, op->l1, op->code) : NULL;
    char *input = file ? helper_input("code", op->raw, base_name(op->path), "file", file) : NULL;
    free(file);
    if (!input) {
        op_fail(op, "out of memory");
        return;
    }
    progress(op, "report", "checking the suggestion");
    rc = proc_start(op, check_py, input, on_checked);
    if (rc) op_fail(op, "cannot run %s to check the suggestion: %s", "python", uv_strerror(rc));
}

static void on_checked(struct opt_op *op, int64_t status, const char *out)
{
    struct lsp_facilities *s = op->srv;
    size_t n = strlen(out);
    while (n && out[n - 1] == '\n')
        n--;
    if (n > 300) n = 300;
    if (status == 2) {
        op_fail(op,
                "the suggestion from %s has no statements (empty, or only comments / pass): "
                "it would delete lines %u-%u. Nothing changed",
                op->call.host, op->l0 + 1, op->l1);
        return;
    }
    if (status == 3) {
        op_fail(op, "with the suggestion from %s the file would not compile: %.*s. Nothing changed",
                op->call.host, (int)n, out);
        return;
    }
    if (status != 0) {
        op_fail(op, "the suggestion from %s is not valid Python: %.*s. Nothing changed",
                op->call.host, (int)n, n ? out : "the check failed");
        return;
    }
    struct doc *d = doc_find(&s->docs, op->uri);
    if (!d || d->version != op->version) {
        op_fail(op, "the file changed while waiting for the answer: nothing applied");
        return;
    }
    /* the range: whole lines [l0, l1); at the end of the file, up to its end */
    json_int_t el = op->l1, ec = 0;
    if (op->l1 >= d->nlines) {
        size_t len;
        const char *t = doc_line(d, (uint32_t)d->nlines - 1, &len);
        el = (json_int_t)d->nlines - 1;
        ec = t ? pos_line_units(t, len, s->out->enc) : 0;
    }
    json_t *range = json_pack("{s:{s:i, s:i}, s:{s:I, s:I}}", "start", "line", (int)op->l0,
                              "character", 0, "end", "line", el, "character", ec);
    op->edit =
        json_pack("{s:[{s:{s:s, s:i}, s:[{s:o, s:s}]}]}", "documentChanges", "textDocument", "uri",
                  op->uri, "version", op->version, "edits", "range", range, "newText", op->code);
    if (op->action) { /* resolve: the client applies the edit of the action */
        json_object_set(op->action, "edit", op->edit);
        progress(op, "end", "suggestion ready");
        lsp_reply(s, op->id, json_incref(op->action));
        show_explanation(op);
        remember(op);
        op_free(op);
        return;
    }
    char label[300];
    snprintf(label, sizeof label, "Hotline: optimize (%s)", op->call.host);
    progress(op, "report", "applying the edit");
    long cid = lsp_call(s, "workspace/applyEdit",
                        json_pack("{s:s, s:O}", "label", label, "edit", op->edit), on_applied, op);
    if (cid < 0) {
        op_fail(op, "cannot ask the editor to apply the edit: %s", strerror((int)-cid));
        return;
    }
    op->apply_id = cid;
}

/* ---- ops: start ---------------------------------------------------------- */

static int parse_range(json_t *range, json_int_t *l0, json_int_t *c0, json_int_t *l1,
                       json_int_t *c1)
{
    return json_unpack(range, "{s:{s:I, s:I}, s:{s:I, s:I}}", "start", "line", l0, "character", c0,
                       "end", "line", l1, "character", c1) ||
                   *l0 < 0 || *l1 < *l0
               ? -EINVAL
               : 0;
}

static void on_progress_cancel(struct lsp_facilities *s, void *data);

/* The region an optimization of lines l0..l1 (LSP positions) takes, into
 * *r0..*r1 (end exclusive): the enclosing block of one line, whole
 * statements of a selection. Returns d's logical line starts (new, for the
 * imports), or NULL: no memory. */
static unsigned char *pick_region(struct doc *d, json_int_t l0, json_int_t c1, json_int_t l1,
                                  uint32_t *r0, uint32_t *r1)
{
    if (l0 >= (json_int_t)d->nlines) l0 = (json_int_t)d->nlines - 1;
    if (l1 > l0 && c1 == 0) l1--; /* a selection ending at column 0 stops before that line */
    if (l1 >= (json_int_t)d->nlines) l1 = (json_int_t)d->nlines - 1;
    unsigned char *st = pytext_logical_starts(d->text, d->len, d->nlines, NULL);
    if (!st) return NULL;
    if (l0 == l1) {
        pytext_enclosing_block(d, st, (uint32_t)l0, LSP_OPT_MAX_REGION, r0, r1);
    } else { /* whole statements: never half of a string or of a call */
        *r0 = (uint32_t)l0, *r1 = (uint32_t)l1 + 1;
        while (*r0 > 0 && !st[*r0])
            (*r0)--;
        while (*r1 < d->nlines && !st[*r1])
            (*r1)++;
    }
    return st;
}

/* A new op for lines r0..r1 of d (st: its logical line starts), in o's list,
 * answering id later; action stolen. NULL: no memory (action not taken).
 * Its strings may be NULL (no memory): the caller checks. */
static struct opt_op *op_new(struct lsp_facilities *s, struct lsp_opt *o, json_t *id,
                             const struct llm_call *desc, json_t *action, const char *uri,
                             struct doc *d, uint32_t r0, uint32_t r1, const unsigned char *st)
{
    struct opt_op *op = calloc(1, sizeof *op);
    if (!op) return NULL;
    op->srv = s;
    op->call = *desc;
    op->id = json_incref(id);
    lsp_reply_later(s, id); /* when the model has answered, or it failed, or a cancel */
    op->action = action;
    op->uri = strdup(uri);
    op->path = lsp_uri_to_path(uri);
    op->version = d->version;
    op->l0 = r0;
    op->l1 = r1;
    op->region = pytext_lines(d, r0, r1);
    size_t len;
    const char *t = doc_line(d, r0, &len);
    op->indent = strndup(t ? t : "", t ? pytext_lead_ws(t, len) : 0);
    op->context = pytext_lines(d, r0 > LSP_OPT_CONTEXT_LINES ? r0 - LSP_OPT_CONTEXT_LINES : 0, r0);
    pytext_imports(d, st, &op->imports, &op->modules);
    op->runs_at = (int)s->view->gen;
    const char *prog = lsp_pview_profile(s) ? lsp_pview_profile(s)->meta.program : NULL;
    op->program = prog && prog[0] == '/' ? strdup(prog) : NULL;
    op->next = o->ops;
    o->ops = op;
    o->nops++;
    return op;
}

/* op's first steps: its progress, the log line, the probe of the
 * interpreter (then on_probed goes on). */
static void op_begin(struct lsp_facilities *s, struct lsp_opt *o, struct opt_op *op,
                     const struct doc *d)
{
    if (!op->uri || !op->path || !op->region || !op->indent || !op->context || !op->modules) {
        op_fail(op, "out of memory");
        return;
    }
    if (json_is_true(lsp_client_cap(s, "window.workDoneProgress"))) {
        char token[48], title[400];
        snprintf(token, sizeof token, "hotline-optimize-%d", ++o->seq);
        snprintf(title, sizeof title, "Hotline: optimizing with %s", op->call.host);
        lsp_progress_start(s, &op->progress, token, title, "reading the profile",
                           on_progress_cancel, op);
    }
    lsp_log(s, LSP_MSG_INFO, "optimize: sending lines %u-%u of %s to %s (%s)", op->l0 + 1, op->l1,
            op->path, op->call.host, op->call.model);
    pick_exe(op);
    char *input = helper_input("modules", op->modules, base_name(op->path), "source", d->text);
    int rc = input ? proc_start(op, probe_py, input, on_probed) : -ENOMEM;
    if (rc) on_probed(op, -1, ""); /* no interpreter: versions unknown, go on */
}

/* Start an optimization of (uri, range) for request id; action (stolen, may be
 * NULL) is the action to resolve. Answers id itself on every path: a
 * refusal leaves through the one `fail` exit. */
static void op_start(struct lsp_facilities *s, json_t *id, const char *uri, json_t *range,
                     json_t *action)
{
    struct lsp_opt *o = opt_of(s);
    json_int_t l0, c0, l1, c1;
    struct doc *d = uri ? doc_find(&s->docs, uri) : NULL;
    char err[LLM_MAX_TEXT];
    struct llm_call desc;
    unsigned char *st = NULL;
    uint32_t r0, r1;
    int code = LSP_REQUEST_FAILED;
    snprintf(err, sizeof err, "this server cannot reach an LLM endpoint");
    if (o && !o->http && s->loop && s->running) o->http = llm_client_new(s->loop, err, sizeof err);
    if (!o || !o->http) {
        goto fail;
    }
    if (!d || parse_range(range, &l0, &c0, &l1, &c1)) {
        code = RPC_INVALID_PARAMS;
        snprintf(err, sizeof err, "hotline.optimize needs {uri, range} of an open document");
        goto fail;
    }
    if (llm_describe(&desc, llm_settings(s), err, sizeof err)) {
        lsp_show(s, LSP_MSG_ERROR, "Hotline: Optimize this: %s", err);
        goto fail;
    }
    snprintf(err, sizeof err, "out of memory");
    if (o->nops >= LSP_OPT_MAX_OPS) {
        snprintf(err, sizeof err, "too many optimizations in flight");
        goto fail;
    }
    st = pick_region(d, l0, c1, l1, &r0, &r1);
    if (!st) goto fail;
    if (r1 - r0 > LSP_OPT_MAX_REGION) {
        snprintf(err, sizeof err, "the region is longer than %d lines", LSP_OPT_MAX_REGION);
        goto fail;
    }
    struct opt_op *op = op_new(s, o, id, &desc, action, uri, d, r0, r1, st);
    if (!op) goto fail;
    free(st);
    op_begin(s, o, op, d);
    return;
fail:
    free(st);
    json_decref(action);
    lsp_reply_error(s, id, code, "%s", err);
}

/* ---- code actions -------------------------------------------------------- */

static int kind_wanted(json_t *only)
{
    if (!json_is_array(only)) return 1;
    size_t i;
    json_t *k;
    json_array_foreach(only, i, k)
    {
        const char *v = json_string_value(k);
        size_t n = v ? strlen(v) : 0;
        if (v && !strncmp(LSP_OPT_KIND, v, n) && (LSP_OPT_KIND[n] == 0 || LSP_OPT_KIND[n] == '.'))
            return 1;
    }
    return 0;
}

static void opt_code_action(struct lsp_facilities *s, void *self, json_t *params, json_t *out)
{
    (void)self;
    const char *uri =
        json_string_value(json_object_get(json_object_get(params, "textDocument"), "uri"));
    json_t *range = json_object_get(params, "range");
    struct doc *d = uri ? doc_find(&s->docs, uri) : NULL;
    char *path = uri ? lsp_uri_to_path(uri) : NULL;
    json_int_t l0, c0, l1, c1;
    struct llm_call desc;
    char err[LLM_MAX_TEXT];
    int offer = d && prof_file(s, path) && !parse_range(range, &l0, &c0, &l1, &c1) &&
                kind_wanted(json_object_get(json_object_get(params, "context"), "only")) &&
                !json_is_false(json_object_get(llm_settings(s), "enabled"));
    if (offer && l0 == l1 && c0 == c1) { /* a cursor: only on a hot line */
        const struct agent_stats *st =
            l0 < (json_int_t)d->nlines ? line_stats(s, d, (uint32_t)l0) : NULL;
        offer = st &&
                summary_share(lsp_pview_profile(s), st) >= lsp_setting_num(s, "hints.threshold", 1);
    }
    if (offer && !llm_describe(&desc, llm_settings(s), err, sizeof err)) {
        char title[400];
        const char *kv = desc.key_env[0] ? getenv(desc.key_env) : NULL;
        /* said before the pick: plain http to another machine */
        snprintf(title, sizeof title, "Hotline: Optimize this (sends the code%s%s to %s)",
                 desc.cleartext && kv && *kv ? " and the API key" : "",
                 desc.cleartext ? " unencrypted" : "", desc.host);
        json_t *args = json_pack("{s:s, s:O}", "uri", uri, "range", range);
        json_t *a = json_pack("{s:s, s:s}", "title", title, "kind", LSP_OPT_KIND);
        json_t *props = lsp_client_cap(s, "textDocument.codeAction.resolveSupport.properties");
        int resolve = 0;
        size_t i;
        json_t *pv;
        json_array_foreach(props, i, pv) resolve |= !strcmp(json_string_value(pv) ?: "", "edit");
        if (resolve)
            json_object_set_new(a, "data",
                                json_pack("{s:s, s:O}", "hotline", "optimize", "args", args));
        else
            json_object_set_new(a, "command",
                                json_pack("{s:s, s:s, s:[O]}", "title", title, "command",
                                          "hotline.optimize", "arguments", args));
        json_decref(args);
        json_array_append_new(out, a);
    }
    free(path);
}

static void opt_code_action_resolve(struct lsp_facilities *s, void *self, json_t *id,
                                    json_t *params)
{
    (void)self;
    json_t *data = json_object_get(params, "data");
    json_t *args = json_object_get(data, "args");
    if (!json_is_object(params) ||
        strcmp(json_string_value(json_object_get(data, "hotline")) ?: "", "optimize")) {
        lsp_reply(s, id, json_incref(params)); /* not ours: nothing to add */
        return;
    }
    op_start(s, id, json_string_value(json_object_get(args, "uri")), json_object_get(args, "range"),
             json_deep_copy(params));
}

/* hotline.optimize {uri, range}: for clients without codeAction/resolve */
static void cmd_optimize(struct lsp_facilities *s, void *self, json_t *id, json_t *a)
{
    (void)self;
    op_start(s, id, json_string_value(json_object_get(a, "uri")), json_object_get(a, "range"),
             NULL);
}

/* ---- before / after lens ------------------------------------------------- */

/* " (python 1.90)": the kind that holds most of st's time, and its seconds */
static void kind_words(const struct agent_stats *st, char *buf, size_t n)
{
    static const struct {
        int stat;
        const char *word;
    } kinds[] = {
        {AGENT_STAT_PY, "python"}, {AGENT_STAT_NAT, "native"}, {AGENT_STAT_SYS, "waiting"}};
    int top = 0;
    for (int i = 1; i < 3; i++)
        if (st->v[kinds[i].stat] > st->v[kinds[top].stat]) top = i;
    snprintf(buf, n, " (%s %.2f)", kinds[top].word, st->v[kinds[top].stat]);
}

/* The lens title from the comparison of the re-run with the profile the
 * suggestion was made from (lsp_pview_comparison, when the run before the
 * one shown is that one): before, the rows of the region's profiled lines
 * (dn->from); after, the rows of the new code's lines (document lines
 * [line, line + nl) of d), each with the kind of time it was mostly.
 * 0 when there is no such comparison, or nothing on either side: the
 * caller's own wording then. */
static int compared_title(struct lsp_facilities *s, const struct opt_done *dn, struct doc *d,
                          uint32_t line, uint32_t nl, char *title, size_t n)
{
    unsigned long old_gen;
    const struct cmp_result *cmp = lsp_pview_comparison(s, &old_gen);
    if (!cmp || !dn->from.path || (long)old_gen != dn->runs_at) return 0;
    struct agent_stats was = {0}, now = {0};
    for (size_t i = 0; i < cmp->nlines; i++) {
        const struct cmp_row *r = &cmp->lines[i];
        if (r->has_old && r->line_old >= dn->from.lo && r->line_old <= dn->from.hi &&
            !strcmp(r->file_old, dn->from.path))
            agent_stats_merge(&was, &r->old);
    }
    for (uint32_t l = line; l < line + nl; l++) {
        const struct prof_file *pf;
        int pl = lsp_profiled_line(s, d, l, &pf);
        const struct cmp_row *r = pl ? lsp_pview_line_change(s, pf->path, pl) : NULL;
        if (r) agent_stats_merge(&now, &r->cur);
    }
    double b = cmp_time(&was), a = cmp_time(&now);
    if (!(b > 0) || !(a > 0)) return 0;
    char kb[48], ka[48];
    kind_words(&was, kb, sizeof kb);
    kind_words(&now, ka, sizeof ka);
    snprintf(title, n, "Hotline: was %.2f s%s \u2192 now %.2f s%s, %.1f\u00d7 %s", b, kb, a, ka,
             b >= a ? b / a : a / b, b >= a ? "faster" : "slower");
    return 1;
}

/* The lens for one applied suggestion still in the document, or NULL (new). */
static json_t *done_lens(struct lsp_facilities *s, struct opt_done *dn, struct doc *d)
{
    const char *at = strstr(d->text, dn->code);
    if (!at || !*dn->code) return NULL;
    uint32_t line = 0, nl = 0;
    for (const char *q = d->text; q < at; q++)
        line += *q == '\n';
    for (const char *q = dn->code; *q; q++)
        nl += *q == '\n';
    if (dn->code[strlen(dn->code) - 1] != '\n') nl++;
    const struct lsp_pview *pv = s->view;
    int later = (int)pv->gen > dn->runs_at; /* a profile newer than the suggestion */
    char title[300];
    json_t *cmd = NULL;
    if (pv->running && later) {
        snprintf(title, sizeof title, "Hotline: measuring\u2026 (was %.2f s)", dn->before_s);
    } else if (pv->prof && later && compared_title(s, dn, d, line, nl, title, sizeof title)) {
        /* the two runs' rows said it */
    } else if (pv->prof && later) {
        double after = 0;
        int vouched = 0;
        for (uint32_t l = line; l < line + nl; l++) {
            if (lsp_profiled_line(s, d, l, NULL)) vouched++;
            const struct agent_stats *st = line_stats(s, d, l);
            if (st) after += agent_stats_time(st);
        }
        if (!vouched)
            snprintf(title, sizeof title,
                     "Hotline: was %.2f s \u2014 the last run did not profile this code (save, "
                     "then re-run)",
                     dn->before_s);
        else if (after > 0 && dn->before_s >= after)
            snprintf(title, sizeof title,
                     "Hotline: was %.2f s \u2192 now %.2f s, %.1f\u00d7 faster", dn->before_s,
                     after, dn->before_s / after);
        else if (after > 0)
            snprintf(title, sizeof title,
                     "Hotline: was %.2f s \u2192 now %.2f s, %.1f\u00d7 slower", dn->before_s,
                     after, after / (dn->before_s > 0 ? dn->before_s : after));
        else
            snprintf(title, sizeof title,
                     "Hotline: was %.2f s \u2192 now below the sampling resolution", dn->before_s);
    } else {
        snprintf(title, sizeof title, "Hotline: Verify \u2014 re-run to compare (was %.2f s)",
                 dn->before_s);
    }
    if (!pv->running) {
        char *puri = dn->program ? lsp_path_to_uri(dn->program) : NULL;
        cmd = json_pack("{s:s, s:s, s:[{s:s}]}", "title", title, "command", "hotline.run",
                        "arguments", "uri", puri ? puri : dn->uri);
        free(puri);
    } else {
        cmd = json_pack("{s:s, s:s}", "title", title, "command", "");
    }
    return json_pack("{s:{s:{s:i, s:i}, s:{s:i, s:i}}, s:o}", "range", "start", "line", (int)line,
                     "character", 0, "end", "line", (int)line, "character", 0, "command", cmd);
}

/* textDocument/codeLens, joined by the core: the before/after lens of each
 * applied suggestion still in the document, oldest first, above the
 * profile's lenses (the provider list puts this one first). */
static void opt_code_lens(struct lsp_facilities *s, void *self, json_t *params, struct lsp_buf *out)
{
    struct lsp_opt *o = self;
    const char *uri =
        json_string_value(json_object_get(json_object_get(params, "textDocument"), "uri"));
    struct doc *d = uri ? doc_find(&s->docs, uri) : NULL;
    json_t *mine = json_array();
    for (struct opt_done *dn = o ? o->done : NULL; dn && d && mine; dn = dn->next) {
        json_t *l = strcmp(dn->uri, uri) ? NULL : done_lens(s, dn, d);
        if (l) json_array_insert_new(mine, 0, l);
    }
    size_t i;
    json_t *l;
    json_array_foreach(mine, i, l)
    {
        char *t = json_dumps(l, JSON_COMPACT);
        if (!t) {
            out->oom = 1;
            break;
        }
        lsp_buf_sep(out);
        lsp_buf_put(out, t, strlen(t));
        free(t);
    }
    if (!mine) out->oom = 1;
    json_decref(mine);
}

/* ---- cancel, responses, lifecycle ---------------------------------------- */

static int opt_cancel(struct lsp_facilities *s, void *self, json_t *id)
{
    struct lsp_opt *o = self;
    for (struct opt_op *op = o ? o->ops : NULL; op; op = op->next)
        if (json_equal(op->id, id)) {
            progress(op, "end", "cancelled");
            lsp_reply_error(s, op->id, LSP_REQUEST_CANCELLED, "optimization cancelled");
            lsp_log(s, LSP_MSG_INFO, "optimize: cancelled, nothing changed");
            op_free(op);
            return 1;
        }
    return 0;
}

/* window/workDoneProgress/cancel for an op's progress: as $/cancelRequest */
static void on_progress_cancel(struct lsp_facilities *s, void *data)
{
    struct opt_op *op = data;
    opt_cancel(s, opt_of(s), op->id);
}

/* The answer to workspace/applyEdit (command path). */
static void on_applied(struct lsp_facilities *s, void *data, json_t *result, json_t *error)
{
    struct opt_op *op = data;
    op->apply_id = 0;
    if (!error && json_is_true(json_object_get(result, "applied"))) {
        progress(op, "end", "applied");
        lsp_reply(s, op->id,
                  json_pack("{s:b, s:s, s:s}", "applied", 1, "explanation",
                            op->explanation ? op->explanation : "", "host", op->call.host));
        show_explanation(op);
        remember(op);
        op_free(op);
    } else {
        const char *why = json_string_value(json_object_get(result, "failureReason"));
        op_fail(op, "the editor did not apply the edit%s%s", why ? ": " : "", why ? why : "");
    }
}

static int opt_init(struct lsp_facilities *s, void **self)
{
    (void)s;
    /* the HTTP client (and libcurl's TLS setup) waits for the first use */
    *self = calloc(1, sizeof(struct lsp_opt));
    return *self ? 0 : -ENOMEM;
}

static void opt_debug_state(struct lsp_facilities *s, void *self, json_t *r)
{
    (void)s;
    struct lsp_opt *o = self;
    if (!o) return;
    json_object_set_new(r, "optimize",
                        json_pack("{s:i, s:i, s:i}", "inflight", o->nops, "done", o->ndone, "http",
                                  llm_client_inflight(o->http)));
}

static void opt_close(struct lsp_facilities *s, void *self)
{
    (void)s;
    struct lsp_opt *o = self;
    if (!o) return;
    while (o->ops)
        op_free(o->ops);
    llm_client_close(o->http); /* frees itself once the loop closed its handles */
    o->http = NULL;
}

static void opt_free(struct lsp_facilities *s, void *self)
{
    (void)s;
    struct lsp_opt *o = self;
    if (!o) return;
    while (o->ops)
        op_free(o->ops);
    while (o->done) {
        struct opt_done *dn = o->done;
        o->done = dn->next;
        done_free(dn);
    }
    free(o);
}

static const struct lsp_method opt_methods[] = {
    {"codeAction/resolve", opt_code_action_resolve, NULL, "title:s" /* a CodeAction */},
    {NULL, NULL, NULL, NULL},
};

static const struct lsp_command opt_commands[] = {
    {"hotline.optimize", cmd_optimize},
    {NULL, NULL},
};

static const char *const opt_kinds[] = {LSP_OPT_KIND, NULL};

const struct lsp_provider lsp_optimize_provider = {
    .name = "optimize",
    .init = opt_init,
    .methods = opt_methods,
    .commands = opt_commands,
    .code_lens = opt_code_lens,
    .code_action = opt_code_action,
    .code_action_kinds = opt_kinds,
    .cancel = opt_cancel,
    .debug_state = opt_debug_state,
    .close = opt_close,
    .free = opt_free,
};
