/* The server's own requests (server/lsp_call.c): an answer reaches the
 * callback of its call once and only then, ids that are not ours (or no
 * longer pending) reach nobody, the table of pending calls is capped, and
 * one work-done progress goes create -> begin (after the client agreed) ->
 * report -> end, with window/workDoneProgress/cancel reaching its owner.
 * Driven in-process: a server without a loop handles what it is fed at once. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/lsp.h"

static char out[1 << 20];
static size_t nout;

static void capture(struct server *s, const char *buf, size_t len)
{
    (void)s;
    if (nout + len < sizeof out) {
        memcpy(out + nout, buf, len);
        nout += len;
        out[nout] = 0;
    }
}

static void feed(struct server *s, const char *json)
{
    char frame[4096];
    int n = snprintf(frame, sizeof frame, "Content-Length: %zu\r\n\r\n%s", strlen(json), json);
    lsp_feed(s, frame, (size_t)n);
}

static int calls;
static json_int_t last_result;
static int last_error;

static void on_answer(struct lsp_facilities *s, void *data, json_t *result, json_t *error)
{
    (void)s;
    calls++;
    last_result = json_integer_value(result);
    last_error = error != NULL;
    CHECK(data == &calls);
}

static void start(struct server *s, int progress)
{
    CHECK(lsp_server_init(s, NULL, 0) == 0);
    s->write = capture;
    feed(s, progress ? "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
                       "{\"capabilities\":{\"window\":{\"workDoneProgress\":true}}}}"
                     : "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
                       "{\"capabilities\":{}}}");
    feed(s, "{\"jsonrpc\":\"2.0\",\"method\":\"initialized\",\"params\":{}}");
    nout = 0;
}

static void stop(struct server *s)
{
    lsp_server_free(s);
}

static void test_answers(void)
{
    struct server s;
    start(&s, 0);
    calls = 0;
    long id = lsp_call(&s.f, "x/ask", json_pack("{s:i}", "n", 1), on_answer, &calls);
    CHECK(id > 0);
    char want[64];
    snprintf(want, sizeof want, "\"id\":\"hotline-%ld\"", id);
    CHECK(strstr(out, want) != NULL); /* the wire form clients have always echoed */
    CHECK(strstr(out, "\"method\":\"x/ask\"") != NULL);
    CHECK_EQ_U(lsp_calls_pending(&s.f), 1);
    /* not ours, or not this call: nobody hears of them */
    feed(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":7}");
    feed(&s, "{\"jsonrpc\":\"2.0\",\"id\":\"hotline-0\",\"result\":7}");
    char buf[256];
    snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":\"hotline-0%ld\",\"result\":7}", id);
    feed(&s, buf);
    snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":\"hotline-%ldx\",\"result\":7}", id);
    feed(&s, buf);
    snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":\"hotline-%ld\",\"result\":7}", id + 1);
    feed(&s, buf);
    CHECK_EQ_U(calls, 0);
    snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":\"hotline-%ld\",\"result\":42}", id);
    feed(&s, buf);
    CHECK_EQ_U(calls, 1);
    CHECK_EQ_U(last_result, 42);
    CHECK(!last_error);
    feed(&s, buf); /* answered twice: once is all the callback hears */
    CHECK_EQ_U(calls, 1);
    CHECK_EQ_U(lsp_calls_pending(&s.f), 0);
    /* an error answer */
    id = lsp_call(&s.f, "x/ask", NULL, on_answer, &calls);
    snprintf(
        buf, sizeof buf,
        "{\"jsonrpc\":\"2.0\",\"id\":\"hotline-%ld\",\"error\":{\"code\":1,\"message\":\"no\"}}",
        id);
    feed(&s, buf);
    CHECK_EQ_U(calls, 2);
    CHECK(last_error);
    /* forgotten: its answer is ignored */
    id = lsp_call(&s.f, "x/ask", NULL, on_answer, &calls);
    lsp_call_forget(&s.f, id);
    snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":\"hotline-%ld\",\"result\":1}", id);
    feed(&s, buf);
    CHECK_EQ_U(calls, 2);
    /* without a callback nothing is remembered */
    CHECK(lsp_call(&s.f, "x/tell", NULL, NULL, NULL) > 0);
    CHECK_EQ_U(lsp_calls_pending(&s.f), 0);
    stop(&s);
}

static void test_cap(void)
{
    struct server s;
    start(&s, 0);
    long first = 0;
    for (int i = 0; i < LSP_MAX_CALLS; i++) {
        long id = lsp_call(&s.f, "x/ask", NULL, on_answer, &calls);
        CHECK(id > 0);
        if (!i) first = id;
    }
    nout = 0;
    CHECK(lsp_call(&s.f, "x/ask", json_object(), on_answer, &calls) == -EBUSY);
    CHECK_EQ_U(nout, 0);                                   /* refused: nothing sent */
    CHECK(lsp_call(&s.f, "x/tell", NULL, NULL, NULL) > 0); /* needs no room */
    lsp_call_forget(&s.f, first);
    CHECK(lsp_call(&s.f, "x/ask", NULL, on_answer, &calls) > 0);
    stop(&s);
}

static int cancelled;

static void on_cancel(struct lsp_facilities *s, void *data)
{
    (void)s;
    CHECK(data == &cancelled);
    cancelled++;
}

/* The id of the last window/workDoneProgress/create in out, or 0. */
static long create_id(void)
{
    const char *m = strstr(out, "window/workDoneProgress/create");
    const char *b = m;
    while (b > out && strncmp(b, "Content-Length", 14))
        b--;
    const char *q = strstr(b, "\"id\":\"hotline-");
    return q && q < m + 200 ? strtol(q + 14, NULL, 10) : 0;
}

static void test_progress(void)
{
    struct server s;
    struct lsp_progress p;
    char buf[256];
    start(&s, 1);
    lsp_progress_start(&s.f, &p, "tok-1", "Title", "starting", on_cancel, &cancelled);
    long id = create_id();
    CHECK(id > 0);
    CHECK(strstr(out, "\"token\":\"tok-1\"") != NULL);
    lsp_progress_report(&s.f, &p, "early"); /* not begun: nothing */
    CHECK(strstr(out, "early") == NULL);
    CHECK(!lsp_progress_begun(&p));
    nout = 0;
    snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":\"hotline-%ld\",\"result\":null}", id);
    feed(&s, buf);
    CHECK(lsp_progress_begun(&p));
    CHECK(strstr(out, "\"kind\":\"begin\"") && strstr(out, "\"title\":\"Title\"") &&
          strstr(out, "\"cancellable\":true") && strstr(out, "\"message\":\"starting\""));
    nout = 0;
    lsp_progress_report(&s.f, &p, "halfway");
    CHECK(strstr(out, "\"kind\":\"report\"") && strstr(out, "halfway"));
    feed(&s, "{\"jsonrpc\":\"2.0\",\"method\":\"window/workDoneProgress/cancel\","
             "\"params\":{\"token\":\"other\"}}");
    CHECK_EQ_U(cancelled, 0);
    feed(&s, "{\"jsonrpc\":\"2.0\",\"method\":\"window/workDoneProgress/cancel\","
             "\"params\":{\"token\":\"tok-1\"}}");
    CHECK_EQ_U(cancelled, 1);
    nout = 0;
    lsp_progress_end(&s.f, &p, "done");
    CHECK(strstr(out, "\"kind\":\"end\"") && strstr(out, "\"message\":\"done\""));
    nout = 0;
    lsp_progress_report(&s.f, &p, "late"); /* ended: nothing more */
    lsp_progress_end(&s.f, &p, "again");
    CHECK_EQ_U(nout, 0);
    feed(&s, "{\"jsonrpc\":\"2.0\",\"method\":\"window/workDoneProgress/cancel\","
             "\"params\":{\"token\":\"tok-1\"}}");
    CHECK_EQ_U(cancelled, 1);

    /* refused by the client: no begin, no reports, no end */
    lsp_progress_start(&s.f, &p, "tok-2", "Title", NULL, NULL, NULL);
    id = create_id();
    nout = 0;
    snprintf(
        buf, sizeof buf,
        "{\"jsonrpc\":\"2.0\",\"id\":\"hotline-%ld\",\"error\":{\"code\":1,\"message\":\"no\"}}",
        id);
    feed(&s, buf);
    lsp_progress_report(&s.f, &p, "x");
    lsp_progress_end(&s.f, &p, "y");
    CHECK_EQ_U(nout, 0);

    /* dropped before the client agreed: its late answer begins nothing */
    lsp_progress_start(&s.f, &p, "tok-3", "Title", NULL, NULL, NULL);
    id = create_id();
    lsp_progress_drop(&s.f, &p);
    nout = 0;
    snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":\"hotline-%ld\",\"result\":null}", id);
    feed(&s, buf);
    CHECK_EQ_U(nout, 0);
    CHECK_EQ_U(lsp_calls_pending(&s.f), 0);
    stop(&s);

    /* a client without workDoneProgress: nothing at all */
    start(&s, 0);
    lsp_progress_start(&s.f, &p, "tok-4", "Title", NULL, on_cancel, &cancelled);
    lsp_progress_report(&s.f, &p, "x");
    lsp_progress_end(&s.f, &p, "y");
    CHECK_EQ_U(nout, 0);
    stop(&s);
}

int main(void)
{
    test_answers();
    test_cap();
    test_progress();
    return check_exit("test_call");
}
