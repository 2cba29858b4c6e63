/* JSON-RPC base-protocol framing ("Content-Length: N\r\n\r\n<body>"), as LSP uses it.
 *
 * The reader is a push parser: the server feeds it whatever bytes arrived on stdin,
 * in any split, and gets one callback per complete message. It never buffers more than
 * RPC_MAX_HEADER_BYTES of header plus one body of at most max_message bytes, and it
 * resynchronises after malformed input instead of giving up (see docs/protocol.md).
 * Pure code: no I/O, no global state; one struct rpc_reader per stream. */
#ifndef HOTLINE_PROTOCOL_FRAMING_H
#define HOTLINE_PROTOCOL_FRAMING_H

#include <stddef.h>
#include <jansson.h>

#define RPC_DEFAULT_MAX_MESSAGE ((size_t)64 << 20)
#define RPC_MAX_HEADER_BYTES 8192 /* a header block longer than this is an error */

enum rpc_frame_error {
    RPC_FRAME_BAD_HEADER = 1, /* header line without ':' or not ASCII, or header block too long */
    RPC_FRAME_NO_LENGTH,      /* header block ended without Content-Length */
    RPC_FRAME_BAD_LENGTH,     /* Content-Length not a non-negative decimal integer (or overflows) */
    RPC_FRAME_TOO_BIG,        /* Content-Length over the reader's cap: body skipped, not buffered */
};

/* Embeddable; fields are private to framing.c (prefix rr__ says so). */
struct rpc_reader {
    size_t max_message;
    int rr__state;
    /* header block being read */
    char rr__line[RPC_MAX_HEADER_BYTES + 1];
    size_t rr__line_len;
    size_t rr__block_len; /* bytes of the current header block so far, terminators included */
    size_t rr__headers;   /* header lines completed in this block */
    int rr__seen_colon;
    int rr__pending_cr;
    int rr__have_length;
    size_t rr__length;
    /* body being read: rr__body has rr__body_cap bytes, rr__body_len of rr__length filled */
    char *rr__body;
    size_t rr__body_cap;
    size_t rr__body_len;
    /* oversize body being skipped */
    size_t rr__skip_left;
    /* resynchronisation: how much of "content-length" matched, and whether a match may start */
    size_t rr__match;
    int rr__boundary;
};

/* body borrowed, valid during the call only; body[len] == 0 always. */
typedef void (*rpc_message_cb)(void *ud, const char *body, size_t len);
/* detail borrowed (static or on the reader's stack), valid during the call only. */
typedef void (*rpc_error_cb)(void *ud, enum rpc_frame_error err, const char *detail);

/* r is borrowed (caller owns the storage). max_message 0 => RPC_DEFAULT_MAX_MESSAGE. */
void rpc_reader_init(struct rpc_reader *r, size_t max_message);
/* Releases the body buffer; r may be re-initialised afterwards. */
void rpc_reader_free(struct rpc_reader *r);
/* Feed len bytes (any split: 1 byte at a time, several messages at once). Calls on_message
 * once per complete message in order, on_error once per framing error. Returns 0, or -ENOMEM
 * (the message whose body could not be allocated is skipped; the stream stays in sync and
 * the rest of data is still processed). Callbacks may be NULL; they must not feed or free r. */
int rpc_reader_feed(struct rpc_reader *r, const char *data, size_t len, rpc_message_cb on_message,
                    rpc_error_cb on_error, void *ud);
/* True when the reader sits between messages (no partial header, body or skip pending). */
int rpc_reader_idle(const struct rpc_reader *r);

/* Frame a serialised body (borrowed): returns a new malloc'd "Content-Length: N\r\n\r\n<body>"
 * (NUL-terminated, NUL not counted) and sets *out_len. NULL on ENOMEM. */
char *rpc_frame(const char *body, size_t len, size_t *out_len);
/* Serialise msg (borrowed) compactly (JSON_COMPACT) and frame it. New buffer, NULL on failure. */
char *rpc_encode(const json_t *msg, size_t *out_len);

/* Static name of a framing error, e.g. "bad header". */
const char *rpc_frame_error_name(enum rpc_frame_error err);

#endif
