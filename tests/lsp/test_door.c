/* At the door (server/core/params.c, server/core/lsp_out.c): a method's
 * params spec accepts exactly the shapes it names, and a request is
 * answered exactly once: a handler that forgets gets an internal-error
 * answer sent for it, a second answer is dropped, an answer promised for
 * later goes out once. The violations assert in debug builds (NDEBUG
 * unset), so those cases run only where they are reported, not fatal. */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "core/lsp_out.h"
#include "core/params.h"

static int ok(const char *params, const char *spec)
{
    json_t *p = params ? json_loads(params, JSON_DECODE_ANY, NULL) : NULL;
    char why[256];
    int rc = lsp_params_check(p, spec, why, sizeof why);
    json_decref(p);
    return rc == 0;
}

static void test_params(void)
{
    const char *hover = "textDocument.uri:s position.line:i position.character:i";
    CHECK(ok("{\"textDocument\":{\"uri\":\"file:///a\"},\"position\":{\"line\":1,\"character\":0},"
             "\"extra\":true}",
             hover));
    CHECK(!ok("{\"textDocument\":{\"uri\":\"file:///a\"}}", hover));
    CHECK(!ok("{\"textDocument\":{\"uri\":1},\"position\":{\"line\":1,\"character\":0}}", hover));
    CHECK(!ok("{\"textDocument\":{\"uri\":\"u\"},\"position\":{\"line\":1.5,\"character\":0}}",
              hover));
    CHECK(!ok(NULL, hover));
    CHECK(!ok("[1]", ""));
    CHECK(ok("{}", ""));
    /* optional members: absent is fine, another type is not */
    CHECK(ok("{}", "range?:o"));
    CHECK(!ok("{\"range\":3}", "range?:o"));
    CHECK(ok("{\"n\":1.5,\"b\":false,\"a\":[]}", "n:n b:b a:a"));
    CHECK(!ok("{\"n\":\"1\"}", "n:n"));
    /* the reason names the member */
    json_t *p = json_pack("{s:{}}", "textDocument");
    char why[256];
    CHECK_EQ(lsp_params_check(p, "textDocument.uri:s", why, sizeof why), -EINVAL);
    CHECK(strstr(why, "textDocument.uri") != NULL);
    /* a spec the server cannot read is refused, not half-checked */
    CHECK_EQ(lsp_params_check(p, "textDocument:q", why, sizeof why), -EINVAL);
    CHECK(strstr(why, "bad spec") != NULL);
    json_decref(p);
}

static char out[1 << 16];
static size_t nout;

static void capture(void *ctx, const char *buf, size_t len)
{
    (void)ctx;
    if (nout + len < sizeof out) {
        memcpy(out + nout, buf, len);
        nout += len;
        out[nout] = 0;
    }
}

static int count(const char *needle)
{
    int n = 0;
    for (const char *p = out; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static void test_reply_once(void)
{
    struct lsp_out o;
    struct lsp_facilities f = {.out = &o};
    CHECK_EQ(lsp_out_init(&o), 0);
    o.write = capture;
    json_t *id = json_integer(7);

    /* answered once: nothing else goes out */
    nout = 0;
    lsp_out_request_begin(&o, id);
    lsp_reply(&f, id, json_true());
    CHECK_EQ(lsp_out_request_end(&f, "x/once"), 0);
    CHECK_EQ(count("\"id\":7"), 1);

    /* answered later: end sends nothing; the later answer goes out once */
    nout = 0;
    lsp_out_request_begin(&o, id);
    lsp_reply_later(&f, id);
    CHECK_EQ(lsp_out_request_end(&f, "x/later"), 0);
    CHECK_EQ(nout, 0);
    lsp_reply(&f, id, json_integer(1));
    CHECK_EQ(count("\"id\":7"), 1);
    CHECK_EQ(json_array_size(o.later), 0);

#ifdef NDEBUG
    /* forgotten: an internal-error answer is sent for the handler */
    nout = 0;
    lsp_out_request_begin(&o, id);
    CHECK_EQ(lsp_out_request_end(&f, "x/forgot"), -EPROTO);
    CHECK_EQ(count("\"id\":7"), 1);
    CHECK(strstr(out, "-32603") != NULL);

    /* answered twice: the second is dropped */
    nout = 0;
    lsp_out_request_begin(&o, id);
    lsp_reply(&f, id, json_integer(1));
    lsp_reply_error(&f, id, -32000, "again");
    CHECK_EQ(lsp_out_request_end(&f, "x/twice"), 0);
    CHECK_EQ(count("\"id\":7"), 1);
    CHECK(strstr(out, "again") == NULL);

    /* an answer to a request nobody awaits (answered later already) */
    nout = 0;
    lsp_reply(&f, id, json_integer(2));
    CHECK_EQ(nout, 0);
#endif
    json_decref(id);
    lsp_out_free(&o);
}

int main(void)
{
    test_params();
    test_reply_once();
    return check_exit("test_door");
}
