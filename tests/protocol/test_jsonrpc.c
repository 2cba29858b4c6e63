/* Unit tests for protocol/jsonrpc: classification of every kind and of the invalid shapes
 * the dispatcher must refuse, and the builders' exact output. Cases are JSON text so they
 * read like the wire. */
#include "jsonrpc.h"
#include "check.h"

#include <stdlib.h>

static json_t *parse(const char *text)
{
    json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
    if (!v) fprintf(stderr, "test JSON does not parse: %s\n", text);
    return v;
}

/* Classify text; returns the kind and copies what came out into the caller's buffers. */
static enum rpc_kind kind_of(const char *text, const char **why_out)
{
    json_t *msg = parse(text), *id = NULL, *params = NULL;
    const char *method = NULL, *why = NULL;
    enum rpc_kind k = rpc_classify(msg, &method, &id, &params, &why);
    if (why_out) *why_out = why; /* static string: outlives msg */
    json_decref(msg);
    return k;
}

static char *dump(const json_t *v)
{
    return json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

static void test_valid_kinds(void)
{
    json_t *msg, *id, *params;
    const char *method, *why;

    msg = parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"a\":1}}");
    CHECK_EQ_U(rpc_classify(msg, &method, &id, &params, &why), RPC_KIND_REQUEST);
    CHECK_STR(method, "initialize");
    CHECK(json_is_integer(id) && json_integer_value(id) == 1);
    CHECK(json_is_object(params) && params == json_object_get(msg, "params"));
    CHECK(why == NULL);
    json_decref(msg);

    msg = parse("{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"shutdown\"}");
    CHECK_EQ_U(rpc_classify(msg, &method, &id, &params, &why), RPC_KIND_REQUEST);
    CHECK_STR(json_string_value(id), "abc");
    CHECK(params == NULL);
    json_decref(msg);

    msg = parse("{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/didOpen\",\"params\":[1,2]}");
    CHECK_EQ_U(rpc_classify(msg, &method, &id, &params, &why), RPC_KIND_NOTIFICATION);
    CHECK_STR(method, "textDocument/didOpen");
    CHECK(id == NULL && json_is_array(params));
    json_decref(msg);

    msg = parse("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":null}");
    CHECK_EQ_U(rpc_classify(msg, &method, &id, &params, &why), RPC_KIND_RESPONSE);
    CHECK(method == NULL && params == NULL && json_integer_value(id) == 3);
    json_decref(msg);

    msg = parse("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"x\"}}");
    CHECK_EQ_U(rpc_classify(msg, &method, &id, &params, &why), RPC_KIND_RESPONSE);
    CHECK(json_is_null(id));
    json_decref(msg);

    /* "params": null is the same as no params (several clients send it) */
    msg = parse("{\"jsonrpc\":\"2.0\",\"method\":\"exit\",\"params\":null}");
    CHECK_EQ_U(rpc_classify(msg, &method, &id, &params, &why), RPC_KIND_NOTIFICATION);
    CHECK_STR(method, "exit");
    CHECK(id == NULL && params == NULL && why == NULL);
    json_decref(msg);
    msg = parse("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"shutdown\",\"params\":null}");
    CHECK_EQ_U(rpc_classify(msg, &method, &id, &params, &why), RPC_KIND_REQUEST);
    CHECK(json_integer_value(id) == 4 && params == NULL);
    json_decref(msg);

    /* all out-pointers may be NULL; extra members are ignored */
    msg = parse("{\"jsonrpc\":\"2.0\",\"method\":\"exit\",\"extra\":true}");
    CHECK_EQ_U(rpc_classify(msg, NULL, NULL, NULL, NULL), RPC_KIND_NOTIFICATION);
    json_decref(msg);
    CHECK_EQ_U(kind_of("{\"jsonrpc\":\"2.0\",\"id\":-9007199254740993,\"method\":\"m\"}", NULL),
               RPC_KIND_REQUEST);
    CHECK_EQ_U(kind_of("{\"jsonrpc\":\"2.0\",\"id\":\"\",\"result\":{\"x\":[1]}}", NULL),
               RPC_KIND_RESPONSE);
}

static void expect_invalid(const char *text)
{
    const char *why = NULL;
    enum rpc_kind k = kind_of(text, &why);
    CHECK_EQ_U(k, RPC_KIND_INVALID);
    CHECK(why != NULL && *why);
    if (k != RPC_KIND_INVALID) fprintf(stderr, "  case: %s\n", text);
}

static void test_invalid(void)
{
    expect_invalid("[1,2]");
    expect_invalid("\"text\"");
    expect_invalid("{}");
    expect_invalid("{\"id\":1,\"method\":\"m\"}");                       /* missing jsonrpc */
    expect_invalid("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"m\"}");   /* wrong version */
    expect_invalid("{\"jsonrpc\":2.0,\"id\":1,\"method\":\"m\"}");       /* version not a string */
    expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"m\"}"); /* float id */
    expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1.0,\"method\":\"m\"}");
    expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"m\"}");
    expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"m\"}");
    expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"m\"}");
    expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}");
    expect_invalid("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":\"s\"}"); /* params string */
    expect_invalid("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":3}");
    expect_invalid(
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":1,\"error\":{\"code\":1,\"message\":\"\"}}");
    expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1}");     /* neither result nor error */
    expect_invalid("{\"jsonrpc\":\"2.0\",\"result\":1}"); /* response without id */
    expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"result\":1}");
    expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"result\":1}");
    expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":\"bad\"}");
    expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":\"1\",\"message\":\"m\"}}");
    expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1}}");
    CHECK_EQ_U(rpc_classify(NULL, NULL, NULL, NULL, NULL), RPC_KIND_INVALID);

    /* an invalid request still yields its usable id (to address the error) and method */
    json_t *msg = parse("{\"jsonrpc\":\"2.0\",\"id\":\"q7\",\"method\":\"m\",\"params\":\"s\"}"),
           *id, *p;
    const char *method, *why;
    CHECK_EQ_U(rpc_classify(msg, &method, &id, &p, &why), RPC_KIND_INVALID);
    CHECK_STR(json_string_value(id), "q7");
    CHECK_STR(method, "m");
    CHECK(p == NULL);
    CHECK_STR(why, "\"params\" must be an object or an array");
    json_decref(msg);
    msg = parse("{\"jsonrpc\":\"2.0\",\"id\":2.5,\"method\":\"m\"}");
    CHECK_EQ_U(rpc_classify(msg, &method, &id, &p, &why), RPC_KIND_INVALID);
    CHECK(id == NULL);
    json_decref(msg);
}

static void expect_json(json_t *v /* stolen */, const char *want)
{
    char *s = v ? dump(v) : NULL;
    CHECK_STR(s, want);
    free(s);
    json_decref(v);
}

static void test_builders(void)
{
    expect_json(
        rpc_request(json_integer(4), "workspace/configuration", json_pack("{s:[]}", "items")),
        "{\"id\":4,\"jsonrpc\":\"2.0\",\"method\":\"workspace/"
        "configuration\",\"params\":{\"items\":[]}}");
    expect_json(rpc_request(json_string("s1"), "shutdown", NULL),
                "{\"id\":\"s1\",\"jsonrpc\":\"2.0\",\"method\":\"shutdown\"}");
    expect_json(rpc_notification("window/logMessage", json_pack("{s:i}", "type", 3)),
                "{\"jsonrpc\":\"2.0\",\"method\":\"window/logMessage\",\"params\":{\"type\":3}}");
    expect_json(rpc_notification("exit", NULL), "{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}");

    json_t *id = json_integer(9);
    expect_json(rpc_response(id, json_pack("[i]", 1)),
                "{\"id\":9,\"jsonrpc\":\"2.0\",\"result\":[1]}");
    expect_json(rpc_response(id, NULL), "{\"id\":9,\"jsonrpc\":\"2.0\",\"result\":null}");
    CHECK_EQ_U(id->refcount, 1); /* borrowed, not stolen */
    expect_json(rpc_response(NULL, json_true()),
                "{\"id\":null,\"jsonrpc\":\"2.0\",\"result\":true}");
    expect_json(rpc_error_response(id, RPC_METHOD_NOT_FOUND, "no such method", NULL),
                "{\"error\":{\"code\":-32601,\"message\":\"no such "
                "method\"},\"id\":9,\"jsonrpc\":\"2.0\"}");
    expect_json(
        rpc_error_response(NULL, RPC_PARSE_ERROR, "bad json", json_string("at 3")),
        "{\"error\":{\"code\":-32700,\"data\":\"at 3\",\"message\":\"bad json\"},\"id\":null,"
        "\"jsonrpc\":\"2.0\"}");
    CHECK_EQ_U(id->refcount, 1);
    json_decref(id);

    /* what we build, we classify as what we meant */
    json_t *m = rpc_request(json_integer(1), "m", NULL);
    CHECK_EQ_U(rpc_classify(m, NULL, NULL, NULL, NULL), RPC_KIND_REQUEST);
    json_decref(m);
    m = rpc_notification("n", json_array());
    CHECK_EQ_U(rpc_classify(m, NULL, NULL, NULL, NULL), RPC_KIND_NOTIFICATION);
    json_decref(m);
    m = rpc_error_response(NULL, LSP_REQUEST_CANCELLED, "cancelled", NULL);
    CHECK_EQ_U(rpc_classify(m, NULL, NULL, NULL, NULL), RPC_KIND_RESPONSE);
    json_decref(m);

    /* a method that is not valid UTF-8 cannot be built: NULL, and the stolen refs are released
     * (ASan's leak check holds us to that) */
    CHECK(rpc_request(json_integer(1), "bad\xff", json_object()) == NULL);
    CHECK(rpc_notification(NULL, json_object()) == NULL);
}

static void test_codes(void)
{
    CHECK_EQ_U(RPC_PARSE_ERROR, -32700);
    CHECK_EQ_U(LSP_REQUEST_CANCELLED, -32800);
    CHECK_EQ_U(LSP_CONTENT_MODIFIED, -32801);
    CHECK_EQ_U(LSP_SERVER_CANCELLED, -32802);
    CHECK_EQ_U(LSP_REQUEST_FAILED, -32803);
    CHECK_EQ_U(LSP_SERVER_NOT_INITIALIZED, -32002);
    CHECK_STR(rpc_error_code_name(RPC_INVALID_PARAMS), "InvalidParams");
    CHECK_STR(rpc_error_code_name(LSP_CONTENT_MODIFIED), "ContentModified");
    CHECK(rpc_error_code_name(12345) == NULL);
}

int main(void)
{
    test_valid_kinds();
    test_invalid();
    test_builders();
    test_codes();
    return check_exit("test_jsonrpc");
}
