/* JSON-RPC 2.0 message helpers for LSP: classify an incoming message (request,
 * notification, response or invalid, with the reason) and build outgoing ones.
 * Error codes are JSON-RPC's plus LSP's. Pure code over jansson values, no I/O. */
#ifndef HOTLINE_PROTOCOL_JSONRPC_H
#define HOTLINE_PROTOCOL_JSONRPC_H

#include <jansson.h>

enum {
    RPC_PARSE_ERROR = -32700,
    RPC_INVALID_REQUEST = -32600,
    RPC_METHOD_NOT_FOUND = -32601,
    RPC_INVALID_PARAMS = -32602,
    RPC_INTERNAL_ERROR = -32603,
    LSP_SERVER_NOT_INITIALIZED = -32002,
    LSP_UNKNOWN_ERROR_CODE = -32001,
    LSP_REQUEST_FAILED = -32803,
    LSP_SERVER_CANCELLED = -32802,
    LSP_CONTENT_MODIFIED = -32801,
    LSP_REQUEST_CANCELLED = -32800
};

enum rpc_kind { RPC_KIND_INVALID, RPC_KIND_REQUEST, RPC_KIND_NOTIFICATION, RPC_KIND_RESPONSE };

/* Classify a parsed message (borrowed). Out-pointers (any may be NULL) are borrowed from msg
 * and set to NULL when absent. request/notification: *method, *params (NULL if none or
 * JSON null, which several clients send for "no params");
 * request/response: *id (a response to an unparseable request may carry JSON null).
 * For RPC_KIND_INVALID, *why says why (static string) and *id is set if a usable id
 * (string or integer) was present, so that an error response can be addressed. */
enum rpc_kind rpc_classify(const json_t *msg, const char **method, json_t **id, json_t **params,
                           const char **why);

/* New. id stolen, params stolen (may be NULL: omitted). NULL on ENOMEM (refs released). */
json_t *rpc_request(json_t *id, const char *method, json_t *params);
/* New. params stolen (may be NULL: omitted). NULL on ENOMEM. */
json_t *rpc_notification(const char *method, json_t *params);
/* New. id borrowed (NULL => null); result stolen (NULL => null). NULL on ENOMEM. */
json_t *rpc_response(json_t *id, json_t *result);
/* New. id borrowed (NULL => null); message copied; data stolen (may be NULL: omitted). */
json_t *rpc_error_response(json_t *id, int code, const char *message, json_t *data);

/* Static name of a code ("InvalidParams", "RequestCancelled"...), or NULL if unknown. */
const char *rpc_error_code_name(int code);

#endif
