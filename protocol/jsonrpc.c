/* JSON-RPC 2.0 classification and builders. rpc_classify is the one place that decides
 * whether an incoming LSP message is well formed, so the dispatcher can trust the shape
 * of what it is handed; the builders keep "jsonrpc":"2.0" and the id rules in one spot. */
#include "jsonrpc.h"

#include <string.h>

static int usable_id(const json_t *id)
{
    return id && (json_is_string(id) || json_is_integer(id));
}

static int valid_error(const json_t *err)
{
    return json_is_object(err) && json_is_integer(json_object_get(err, "code")) &&
           json_is_string(json_object_get(err, "message"));
}

/* Decide the kind; *why is set for RPC_KIND_INVALID only. */
static enum rpc_kind classify(const json_t *msg, const char **why)
{
    json_t *v = json_object_get(msg, "jsonrpc"), *m = json_object_get(msg, "method");
    json_t *id = json_object_get(msg, "id"), *p = json_object_get(msg, "params");
    json_t *res = json_object_get(msg, "result"), *err = json_object_get(msg, "error");

    if (!v) return *why = "missing \"jsonrpc\"", RPC_KIND_INVALID;
    if (!json_is_string(v) || strcmp(json_string_value(v), "2.0") != 0)
        return *why = "\"jsonrpc\" is not \"2.0\"", RPC_KIND_INVALID;
    /* "params": null is absent: several clients send it, and refusing it
     * would even keep `exit` from exiting */
    if (p && !json_is_null(p) && !json_is_object(p) && !json_is_array(p))
        return *why = "\"params\" must be an object or an array", RPC_KIND_INVALID;
    if (m) {
        if (!json_is_string(m)) return *why = "\"method\" is not a string", RPC_KIND_INVALID;
        if (res || err)
            return *why = "\"method\" together with \"result\" or \"error\"", RPC_KIND_INVALID;
        if (!id) return RPC_KIND_NOTIFICATION;
        if (!usable_id(id))
            return *why = "request \"id\" must be a string or an integer", RPC_KIND_INVALID;
        return RPC_KIND_REQUEST;
    }
    if (!id) return *why = "neither \"method\" nor \"id\"", RPC_KIND_INVALID;
    if (!usable_id(id) && !json_is_null(id))
        return *why = "response \"id\" must be a string, an integer or null", RPC_KIND_INVALID;
    if (res && err) return *why = "both \"result\" and \"error\"", RPC_KIND_INVALID;
    if (!res && !err) return *why = "response without \"result\" or \"error\"", RPC_KIND_INVALID;
    if (err && !valid_error(err))
        return *why = "\"error\" needs an integer \"code\" and a string \"message\"",
               RPC_KIND_INVALID;
    return RPC_KIND_RESPONSE;
}

enum rpc_kind rpc_classify(const json_t *msg, const char **method, json_t **id, json_t **params,
                           const char **why)
{
    const char *w = NULL;
    enum rpc_kind kind;
    json_t *jid, *jm, *jp;

    if (method) *method = NULL;
    if (id) *id = NULL;
    if (params) *params = NULL;
    if (why) *why = NULL;
    if (!json_is_object(msg)) {
        if (why) *why = "message is not a JSON object";
        return RPC_KIND_INVALID;
    }
    kind = classify(msg, &w);
    jid = json_object_get(msg, "id");
    jm = json_object_get(msg, "method");
    jp = json_object_get(msg, "params");
    switch (kind) {
    case RPC_KIND_INVALID:
        if (why) *why = w;
        if (id && usable_id(jid)) *id = jid;
        if (method && json_is_string(jm)) *method = json_string_value(jm);
        break;
    case RPC_KIND_REQUEST:
    case RPC_KIND_NOTIFICATION:
        if (method) *method = json_string_value(jm);
        if (params) *params = json_is_null(jp) ? NULL : jp;
        if (id) *id = jid; /* NULL for a notification */
        break;
    case RPC_KIND_RESPONSE:
        if (id) *id = jid;
        break;
    }
    return kind;
}

/* obj stolen; value stolen (NULL fails). Returns obj, or NULL with both released. */
static json_t *put(json_t *obj, const char *key, json_t *value)
{
    if (!obj) {
        json_decref(value);
        return NULL;
    }
    if (json_object_set_new(obj, key, value) != 0) { /* set_new releases value on failure */
        json_decref(obj);
        return NULL;
    }
    return obj;
}

static json_t *envelope(void)
{
    return put(json_object(), "jsonrpc", json_string("2.0"));
}

json_t *rpc_request(json_t *id, const char *method, json_t *params)
{
    json_t *msg = put(envelope(), "id", id);

    msg = put(msg, "method", method ? json_string(method) : NULL);
    if (params) msg = put(msg, "params", params);
    return msg;
}

json_t *rpc_notification(const char *method, json_t *params)
{
    json_t *msg = put(envelope(), "method", method ? json_string(method) : NULL);

    if (params) msg = put(msg, "params", params);
    return msg;
}

json_t *rpc_response(json_t *id, json_t *result)
{
    json_t *msg = put(envelope(), "id", id ? json_incref(id) : json_null());

    return put(msg, "result", result ? result : json_null());
}

json_t *rpc_error_response(json_t *id, int code, const char *message, json_t *data)
{
    json_t *err = put(json_object(), "code", json_integer(code));

    err = put(err, "message", json_string(message ? message : ""));
    if (data) err = put(err, "data", data);
    return put(put(envelope(), "id", id ? json_incref(id) : json_null()), "error", err);
}

const char *rpc_error_code_name(int code)
{
    switch (code) {
    case RPC_PARSE_ERROR:
        return "ParseError";
    case RPC_INVALID_REQUEST:
        return "InvalidRequest";
    case RPC_METHOD_NOT_FOUND:
        return "MethodNotFound";
    case RPC_INVALID_PARAMS:
        return "InvalidParams";
    case RPC_INTERNAL_ERROR:
        return "InternalError";
    case LSP_SERVER_NOT_INITIALIZED:
        return "ServerNotInitialized";
    case LSP_UNKNOWN_ERROR_CODE:
        return "UnknownErrorCode";
    case LSP_REQUEST_FAILED:
        return "RequestFailed";
    case LSP_SERVER_CANCELLED:
        return "ServerCancelled";
    case LSP_CONTENT_MODIFIED:
        return "ContentModified";
    case LSP_REQUEST_CANCELLED:
        return "RequestCancelled";
    }
    return NULL;
}
