/* libFuzzer target for protocol/framing and protocol/jsonrpc.
 *
 * Input layout: byte 0 is a control byte, the rest is the stream a client would send.
 *   bit 7 set   => the reader's default cap; clear => a small cap, 16 + 4 * (bits 0..5),
 *                  so that oversize bodies and the skip path are reached;
 *   bits 0..7   => seed of the generator that picks the chunk sizes (1..64 bytes).
 * Oracles: nothing crashes or leaks (ASan/UBSan); every body is NUL-terminated and within
 * the cap; every error has a detail; feeding the stream in one call and in chunks gives
 * exactly the same sequence of messages and errors; rpc_classify's answers are coherent. */
#include "framing.h"
#include "jsonrpc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct trace {
    uint64_t hash; /* FNV-1a over every event, in order */
    size_t events;
    size_t cap;
    int classify; /* parse and classify each message (first pass only) */
};

static void mix(struct trace *t, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        t->hash = (t->hash ^ b[i]) * 0x100000001b3ull;
}

static void check_classify(const char *body, size_t len)
{
    json_t *msg = json_loadb(body, len, 0, NULL), *id, *params;
    const char *method, *why;
    enum rpc_kind k;

    if (!msg) return;
    k = rpc_classify(msg, &method, &id, &params, &why);
    switch (k) {
    case RPC_KIND_REQUEST:
        if (!method || !id || !(json_is_string(id) || json_is_integer(id)) || why) abort();
        if (params && !json_is_object(params) && !json_is_array(params)) abort();
        break;
    case RPC_KIND_NOTIFICATION:
        if (!method || id || why) abort();
        break;
    case RPC_KIND_RESPONSE:
        if (!id || method || params || why) abort();
        break;
    case RPC_KIND_INVALID:
        if (!why || params) abort();
        if (id && !json_is_string(id) && !json_is_integer(id)) abort();
        break;
    default:
        abort();
    }
    if (k == RPC_KIND_REQUEST) { /* answer it, as a server would, and frame the answer */
        json_t *resp = rpc_error_response(id, RPC_METHOD_NOT_FOUND, method, NULL);
        size_t n = 0;
        char *f = rpc_encode(resp, &n);
        if (!resp || !f || strncmp(f, "Content-Length: ", 16) != 0) abort();
        free(f);
        json_decref(resp);
    }
    json_decref(msg);
}

static void on_message(void *ud, const char *body, size_t len)
{
    struct trace *t = ud;
    if (body[len] != 0 || len > t->cap) abort();
    t->events++;
    mix(t, "M", 1);
    mix(t, &len, sizeof len);
    mix(t, body, len);
    if (t->classify) check_classify(body, len);
}

static void on_error(void *ud, enum rpc_frame_error err, const char *detail)
{
    struct trace *t = ud;
    int e = (int)err;
    if (!detail || !*detail || e < RPC_FRAME_BAD_HEADER || e > RPC_FRAME_TOO_BIG) abort();
    t->events++;
    mix(t, "E", 1);
    mix(t, &e, sizeof e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rpc_reader r;
    struct trace whole = {0xcbf29ce484222325ull, 0, 0, 1}, split = whole;
    uint32_t seed;
    size_t cap;

    if (size < 1) return 0;
    cap = (data[0] & 0x80) ? 0 : 16 + 4 * (size_t)(data[0] & 0x3f);
    seed = 0x9e3779b9u ^ data[0];
    data++, size--;

    rpc_reader_init(&r, cap);
    whole.cap = split.cap = r.max_message;
    split.classify = 0;
    if (rpc_reader_feed(&r, (const char *)data, size, on_message, on_error, &whole)) abort();
    rpc_reader_free(&r);

    rpc_reader_init(&r, cap);
    for (size_t i = 0; i < size;) {
        seed ^= seed << 13, seed ^= seed >> 17, seed ^= seed << 5;
        size_t n = 1 + seed % 64;
        if (n > size - i) n = size - i;
        if (rpc_reader_feed(&r, (const char *)data + i, n, on_message, on_error, &split)) abort();
        i += n;
    }
    rpc_reader_free(&r);

    if (whole.hash != split.hash || whole.events != split.events) abort();
    return 0;
}
