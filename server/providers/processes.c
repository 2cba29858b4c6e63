/* hotline.listProcesses: the Python processes one could attach to
 * (proc/pylist.c), for the editor's process picker before hotline.attach. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/lsp_out.h"
#include "core/lsp_provider.h"
#include "jsonrpc.h"
#include "proc/pylist.h"

struct lsp_list;

/* The provider's state. */
struct list_state {
    struct lsp_list *lists;         /* hotline.listProcesses in flight */
    pid_t blocked[PYLIST_MAX_SKIP]; /* processes whose image open blocked a listing */
    int nblocked;
    int nstuck; /* listings answered at their bound whose thread is still blocked, maybe */
    int exiting;
};

extern const struct lsp_provider lsp_processes_provider;

/* Borrowed: this provider's state in s. */
static struct list_state *list_of(struct lsp_facilities *s)
{
    return lsp_provider_self(s, &lsp_processes_provider);
}

/* One hotline.listProcesses. pyproc_list reads /proc and opens every
 * Python process's interpreter image (attach_open: ELF symbols, a few ms
 * each, more on a machine with many processes or a slow disk), so it runs
 * on a thread of its own and the loop keeps serving. An open can also never
 * return (the image a FIFO, or on a hung NFS or FUSE mount): the thread is
 * detached, not on libuv's pool (whose threads are joined at exit), and
 * after LIST_BOUND_MS the request is answered with what the thread listed
 * so far, the blocked process marked; the thread then frees its job
 * whenever it ends (never, maybe), and that pid is not opened again. */
#define LIST_BOUND_MS 3000
#define LIST_MAX_THREADS 8 /* listings in flight, blocked ones included */

struct list_job { /* shared by the thread and the loop, under sh.mu */
    struct pylist_share sh;
    char *root; /* owned, or NULL */
    pid_t self;
    int finished;     /* the thread is done with the listing */
    int abandoned;    /* the loop let go: the thread frees the job */
    uv_async_t *wake; /* the loop's, valid while !abandoned */
};

struct lsp_list {
    struct lsp_facilities *srv; /* borrowed; NULL once the provider let go */
    json_t *id;                 /* owned copy of the request id */
    struct list_job *job;
    uv_async_t wake;
    uv_timer_t timer;
    int nclosing;
    struct lsp_list *next;
};

static void job_free(struct list_job *j)
{
    pthread_mutex_destroy(&j->sh.mu);
    json_decref(j->sh.out);
    json_decref(j->sh.cur);
    free(j->root);
    free(j);
}

static void *list_thread(void *arg)
{
    struct list_job *j = arg;
    pyproc_list_shared(j->root, j->self, &j->sh);
    pthread_mutex_lock(&j->sh.mu);
    j->finished = 1;
    int mine = j->abandoned;
    if (!mine) uv_async_send(j->wake);
    pthread_mutex_unlock(&j->sh.mu);
    if (mine) job_free(j);
    return NULL;
}

static void list_closed(uv_handle_t *h)
{
    struct lsp_list *l = h->data;
    if (--l->nclosing) return;
    json_decref(l->id);
    free(l);
}

/* Let go of l: out of the provider's list, the job handed to the thread
 * unless it is done (then freed here), the handles closed (l freed then). */
static void list_release(struct lsp_list *l)
{
    struct list_state *f = l->srv ? list_of(l->srv) : NULL;
    for (struct lsp_list **pp = f ? &f->lists : NULL; pp && *pp; pp = &(*pp)->next)
        if (*pp == l) {
            *pp = l->next;
            break;
        }
    pthread_mutex_lock(&l->job->sh.mu);
    int done = l->job->finished;
    l->job->abandoned = 1;
    pthread_mutex_unlock(&l->job->sh.mu);
    if (done) job_free(l->job);
    l->job = NULL;
    l->nclosing = 2;
    uv_close((uv_handle_t *)&l->wake, list_closed);
    uv_close((uv_handle_t *)&l->timer, list_closed);
}

/* The thread is done: answer with its list. */
static void list_woken(uv_async_t *h)
{
    struct lsp_list *l = h->data;
    if (!l->job) return;
    struct lsp_facilities *s = l->srv;
    struct list_state *f = s ? list_of(s) : NULL;
    if (f && !f->exiting) lsp_reply(s, l->id, json_incref(l->job->sh.out));
    list_release(l);
}

/* The bound passed: answer with what was listed, the blocked one marked, and
 * remember its pid so that the next listings do not wait on it again. */
static void list_timeout(uv_timer_t *h)
{
    struct lsp_list *l = h->data;
    struct lsp_facilities *s = l->srv;
    struct list_state *f = s ? list_of(s) : NULL;
    pthread_mutex_lock(&l->job->sh.mu);
    json_t *out = json_deep_copy(l->job->sh.out);
    json_t *cur = l->job->sh.cur ? json_deep_copy(l->job->sh.cur) : NULL;
    int stuck = !l->job->finished;
    pthread_mutex_unlock(&l->job->sh.mu);
    if (f && stuck) f->nstuck++;
    int pid = (int)json_integer_value(json_object_get(cur, "pid"));
    if (f && pid > 0 && f->nblocked < PYLIST_MAX_SKIP) f->blocked[f->nblocked++] = pid;
    if (out && cur) json_array_append(out, cur);
    json_decref(cur);
    if (f && !f->exiting) {
        lsp_log(s, LSP_MSG_WARNING,
                "listProcesses: process %d's interpreter image did not open within %d ms "
                "(a FIFO, or a hung mount?): listed without its version",
                pid, LIST_BOUND_MS);
        if (out)
            lsp_reply(s, l->id, out);
        else
            lsp_reply_error(s, l->id, LSP_REQUEST_FAILED, "cannot list the processes");
    } else {
        json_decref(out);
    }
    list_release(l);
}

static void cmd_list_processes(struct lsp_facilities *s, void *self, json_t *id, json_t *a)
{
    (void)a;
    struct list_state *f = self;
    int n = 0;
    for (struct lsp_list *l = f->lists; l; l = l->next)
        n++;
    if (s->loop && n + f->nstuck >= LIST_MAX_THREADS) {
        lsp_reply_error(s, id, LSP_REQUEST_FAILED,
                        "too many process listings in flight or blocked: try again later");
        return;
    }
    struct lsp_list *l = s->loop ? calloc(1, sizeof *l) : NULL;
    struct list_job *j = l ? calloc(1, sizeof *j) : NULL;
    if (!j) { /* no loop (fuzzing) or ENOMEM: in place */
        free(l);
        lsp_reply(s, id, pyproc_list(s->root_path, getpid()));
        return;
    }
    pthread_mutex_init(&j->sh.mu, NULL);
    j->sh.out = json_array();
    j->root = s->root_path ? strdup(s->root_path) : NULL;
    j->self = getpid();
    memcpy(j->sh.skip, f->blocked, sizeof j->sh.skip);
    j->sh.nskip = f->nblocked;
    const char *hang = getenv("HOTLINE_TEST_LIST_HANG_PID");
    j->sh.hang_pid = hang ? (pid_t)atoi(hang) : 0;
    j->wake = &l->wake;
    l->srv = s;
    l->id = json_deep_copy(id);
    l->job = j;
    pthread_attr_t at;
    pthread_t t;
    int ok = l->id && j->sh.out && (!s->root_path || j->root) && !pthread_attr_init(&at);
    if (ok) {
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        uv_async_init(s->loop, &l->wake, list_woken);
        uv_timer_init(s->loop, &l->timer);
        l->wake.data = l->timer.data = l;
        ok = !pthread_create(&t, &at, list_thread, j);
        pthread_attr_destroy(&at);
        if (!ok) {
            j->finished = 1; /* no thread: list_release frees the job */
            l->next = f->lists;
            f->lists = l;
            list_release(l);
            lsp_reply_error(s, id, LSP_REQUEST_FAILED, "cannot list the processes");
            return;
        }
        uv_timer_start(&l->timer, list_timeout, LIST_BOUND_MS, 0);
        lsp_reply_later(s, id); /* list_woken or list_timeout */
        l->next = f->lists;
        f->lists = l;
        return;
    }
    json_decref(l->id);
    free(l);
    job_free(j);
    lsp_reply(s, id, pyproc_list(s->root_path, getpid()));
}

static int list_init(struct lsp_facilities *s, void **self)
{
    (void)s;
    *self = calloc(1, sizeof(struct list_state));
    return *self ? 0 : -ENOMEM;
}

static void list_close(struct lsp_facilities *s, void *self)
{
    (void)s;
    struct list_state *f = self;
    if (!f) return;
    f->exiting = 1;
    while (f->lists) /* unanswered; a thread still blocked keeps only its job */
        list_release(f->lists);
}

static void list_free(struct lsp_facilities *s, void *self)
{
    (void)s;
    struct list_state *f = self;
    if (!f) return;
    for (struct lsp_list *l = f->lists; l; l = l->next)
        l->srv = NULL; /* closed by list_close */
    free(f);
}

static const struct lsp_command list_commands[] = {
    {"hotline.listProcesses", cmd_list_processes},
    {NULL, NULL},
};

const struct lsp_provider lsp_processes_provider = {
    .name = "processes",
    .init = list_init,
    .commands = list_commands,
    .close = list_close,
    .free = list_free,
};
