/* JSON-RPC base-protocol framing: a byte-at-a-time state machine for headers, bulk copies
 * for bodies. Four states: reading a header block, reading a body, skipping an oversize
 * body, and resynchronising after garbage (scan for "Content-Length" at a line start or
 * right after a '}' / ']' that may have closed a discarded JSON body). Every byte moves
 * the machine forward, so the output for a stream does not depend on how it was split.
 * Rules and leniencies are written down in docs/protocol.md. */
#include "framing.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { RR_HEADER, RR_BODY, RR_SKIP, RR_RESYNC };

/* A body buffer larger than this is released after its message instead of being kept. */
#define RR_KEEP_BYTES ((size_t)1 << 20)

static const char rr_cl[] = "content-length";
#define RR_CL_LEN (sizeof rr_cl - 1)

struct feed_ctx {
    rpc_message_cb on_message;
    rpc_error_cb on_error;
    void *ud;
    int rc;
};

void rpc_reader_init(struct rpc_reader *r, size_t max_message)
{
    memset(r, 0, sizeof *r);
    r->max_message = max_message ? max_message : RPC_DEFAULT_MAX_MESSAGE;
    r->rr__state = RR_HEADER;
}

void rpc_reader_free(struct rpc_reader *r)
{
    free(r->rr__body);
    r->rr__body = NULL;
    r->rr__body_cap = 0;
}

int rpc_reader_idle(const struct rpc_reader *r)
{
    return r->rr__state == RR_HEADER && r->rr__block_len == 0 && !r->rr__pending_cr;
}

const char *rpc_frame_error_name(enum rpc_frame_error err)
{
    switch (err) {
    case RPC_FRAME_BAD_HEADER:
        return "bad header";
    case RPC_FRAME_NO_LENGTH:
        return "no Content-Length";
    case RPC_FRAME_BAD_LENGTH:
        return "bad Content-Length";
    case RPC_FRAME_TOO_BIG:
        return "message too big";
    }
    return "unknown framing error";
}

static void reset_header(struct rpc_reader *r)
{
    r->rr__state = RR_HEADER;
    r->rr__line_len = 0;
    r->rr__block_len = 0;
    r->rr__headers = 0;
    r->rr__seen_colon = 0;
    r->rr__pending_cr = 0;
    r->rr__have_length = 0;
    r->rr__length = 0;
}

static void report(struct feed_ctx *c, enum rpc_frame_error err, const char *detail)
{
    if (c->on_error) c->on_error(c->ud, err, detail);
}

/* boundary: whether the next byte may start "Content-Length" (we are at a line start). */
static void enter_resync(struct rpc_reader *r, int boundary)
{
    reset_header(r);
    r->rr__state = RR_RESYNC;
    r->rr__match = 0;
    r->rr__boundary = boundary;
}

static int ascii_lower(int b)
{
    return (b >= 'A' && b <= 'Z') ? b + ('a' - 'A') : b;
}

/* RFC 9110 token characters: what a header name may contain. */
static int is_tchar(int b)
{
    if ((b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z')) return 1;
    return b != 0 && strchr("!#$%&'*+-.^_`|~", b) != NULL;
}

static void trim(const char **s, size_t *n)
{
    while (*n && (**s == ' ' || **s == '\t'))
        (*s)++, (*n)--;
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

static int name_is(const char *name, size_t n, const char *want)
{
    if (strlen(want) != n) return 0;
    for (size_t i = 0; i < n; i++)
        if (ascii_lower((unsigned char)name[i]) != want[i]) return 0;
    return 1;
}

/* Decimal, digits only, no sign; -ERANGE on overflow, -EINVAL otherwise. */
static int parse_length(const char *s, size_t n, size_t *out)
{
    size_t v = 0;
    if (n == 0) return -EINVAL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -EINVAL;
        size_t d = (size_t)(s[i] - '0');
        if (v > (SIZE_MAX - d) / 10) return -ERANGE;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

static void deliver(struct feed_ctx *c, const char *body, size_t len)
{
    if (c->on_message) c->on_message(c->ud, body, len);
}

/* The empty line after at least one header: decide what the body is. */
static void end_block(struct rpc_reader *r, struct feed_ctx *c)
{
    char detail[96];
    size_t len = r->rr__length;

    if (!r->rr__have_length) {
        report(c, RPC_FRAME_NO_LENGTH, "header block ended without Content-Length");
        enter_resync(r, 1);
        return;
    }
    reset_header(r);
    if (len > r->max_message) {
        snprintf(detail, sizeof detail, "Content-Length %zu exceeds the cap of %zu bytes", len,
                 r->max_message);
        report(c, RPC_FRAME_TOO_BIG, detail);
        r->rr__state = RR_SKIP;
        r->rr__skip_left = len;
        return;
    }
    if (len == 0) {
        deliver(c, "", 0);
        return;
    }
    if (r->rr__body_cap < len + 1) {
        free(r->rr__body);
        r->rr__body = malloc(len + 1);
        r->rr__body_cap = r->rr__body ? len + 1 : 0;
        if (!r->rr__body) {
            /* Skip the body so that the next message still frames correctly. */
            c->rc = -ENOMEM;
            r->rr__state = RR_SKIP;
            r->rr__skip_left = len;
            return;
        }
    }
    r->rr__state = RR_BODY;
    r->rr__body_len = 0;
    r->rr__length = len;
}

/* A complete header line (without its terminator) is in rr__line. */
static void end_line(struct rpc_reader *r, struct feed_ctx *c)
{
    const char *line = r->rr__line, *colon, *name, *value;
    size_t n = r->rr__line_len, name_len, value_len, len;
    int err;

    if (n == 0) {
        if (r->rr__headers == 0) {
            r->rr__block_len = 0; /* blank lines between messages are tolerated */
            return;
        }
        end_block(r, c);
        return;
    }
    if (!r->rr__seen_colon) {
        report(c, RPC_FRAME_BAD_HEADER, "header line without ':'");
        enter_resync(r, 1);
        return;
    }
    colon = memchr(line, ':', n);
    name = line;
    name_len = (size_t)(colon - line);
    value = colon + 1;
    value_len = n - name_len - 1;
    trim(&name, &name_len);
    trim(&value, &value_len);
    if (name_len == 0) {
        report(c, RPC_FRAME_BAD_HEADER, "header line with an empty name");
        enter_resync(r, 1);
        return;
    }
    r->rr__headers++;
    r->rr__line_len = 0;
    r->rr__seen_colon = 0;
    if (!name_is(name, name_len, rr_cl)) return; /* Content-Type and unknown headers: ignored */
    err = parse_length(value, value_len, &len);
    if (err == 0 && r->rr__have_length && len != r->rr__length) {
        report(c, RPC_FRAME_BAD_LENGTH, "conflicting Content-Length headers");
        enter_resync(r, 1);
        return;
    }
    if (err) {
        report(c, RPC_FRAME_BAD_LENGTH,
               err == -ERANGE ? "Content-Length overflows"
                              : "Content-Length is not a decimal integer");
        enter_resync(r, 1);
        return;
    }
    r->rr__have_length = 1;
    r->rr__length = len;
}

/* Returns 1 if the byte was consumed, 0 if the state changed and it must be seen again. */
static int header_byte(struct rpc_reader *r, struct feed_ctx *c, unsigned char b)
{
    int at_line_start = r->rr__line_len == 0 && !r->rr__pending_cr;

    if (r->rr__block_len + 1 > RPC_MAX_HEADER_BYTES) {
        report(c, RPC_FRAME_BAD_HEADER, "header block longer than RPC_MAX_HEADER_BYTES");
        enter_resync(r, at_line_start);
        return 0;
    }
    if (r->rr__pending_cr) {
        r->rr__pending_cr = 0;
        if (b != '\n') {
            report(c, RPC_FRAME_BAD_HEADER, "CR not followed by LF in header");
            enter_resync(r, 0);
            return 0;
        }
        r->rr__block_len++;
        end_line(r, c);
        return 1;
    }
    if (b == '\r') {
        r->rr__block_len++;
        r->rr__pending_cr = 1;
        return 1;
    }
    if (b == '\n') { /* bare LF accepted as a line end */
        r->rr__block_len++;
        end_line(r, c);
        return 1;
    }
    if (!r->rr__seen_colon) {
        if (b == ':') {
            r->rr__seen_colon = 1;
        } else if (!is_tchar(b) && b != ' ' && b != '\t') {
            report(c, RPC_FRAME_BAD_HEADER, "invalid byte in header name");
            enter_resync(r, at_line_start);
            return 0;
        }
    } else if ((b < 0x20 || b > 0x7e) && b != '\t') {
        report(c, RPC_FRAME_BAD_HEADER, "non-ASCII or control byte in header value");
        enter_resync(r, 0);
        return 0;
    }
    r->rr__block_len++;
    r->rr__line[r->rr__line_len++] = (char)b; /* line_len <= block_len <= cap: fits */
    return 1;
}

static void resync_byte(struct rpc_reader *r, unsigned char b)
{
    int lower = ascii_lower(b);

    if (r->rr__match > 0) {
        if (lower == rr_cl[r->rr__match]) {
            if (++r->rr__match == RR_CL_LEN) {
                reset_header(r);
                memcpy(r->rr__line, rr_cl, RR_CL_LEN);
                r->rr__line_len = RR_CL_LEN;
                r->rr__block_len = RR_CL_LEN;
            }
            return;
        }
        r->rr__match = 0;
    } else if (r->rr__boundary && lower == rr_cl[0]) {
        r->rr__match = 1;
        r->rr__boundary = 0;
        return;
    }
    r->rr__boundary = b == '\n' || b == '}' || b == ']';
}

static void body_done(struct rpc_reader *r, struct feed_ctx *c)
{
    size_t len = r->rr__length;

    r->rr__body[len] = 0;
    reset_header(r);
    deliver(c, r->rr__body, len);
    if (r->rr__body_cap > RR_KEEP_BYTES) rpc_reader_free(r);
}

int rpc_reader_feed(struct rpc_reader *r, const char *data, size_t len, rpc_message_cb on_message,
                    rpc_error_cb on_error, void *ud)
{
    struct feed_ctx c = {on_message, on_error, ud, 0};
    size_t i = 0, n;

    while (i < len) {
        switch (r->rr__state) {
        case RR_HEADER:
            i += (size_t)header_byte(r, &c, (unsigned char)data[i]);
            break;
        case RR_RESYNC:
            resync_byte(r, (unsigned char)data[i++]);
            break;
        case RR_BODY:
            n = r->rr__length - r->rr__body_len;
            if (n > len - i) n = len - i;
            memcpy(r->rr__body + r->rr__body_len, data + i, n);
            r->rr__body_len += n;
            i += n;
            if (r->rr__body_len == r->rr__length) body_done(r, &c);
            break;
        case RR_SKIP:
            n = r->rr__skip_left;
            if (n > len - i) n = len - i;
            r->rr__skip_left -= n;
            i += n;
            if (r->rr__skip_left == 0) reset_header(r);
            break;
        }
    }
    return c.rc;
}

char *rpc_frame(const char *body, size_t len, size_t *out_len)
{
    char head[64];
    int hn = snprintf(head, sizeof head, "Content-Length: %zu\r\n\r\n", len);
    char *out;

    if (hn < 0 || len > SIZE_MAX - (size_t)hn - 1) return NULL;
    out = malloc((size_t)hn + len + 1);
    if (!out) return NULL;
    memcpy(out, head, (size_t)hn);
    if (len) memcpy(out + hn, body, len);
    out[(size_t)hn + len] = 0;
    if (out_len) *out_len = (size_t)hn + len;
    return out;
}

char *rpc_encode(const json_t *msg, size_t *out_len)
{
    char *body = json_dumps(msg, JSON_COMPACT), *out;

    if (!body) return NULL;
    out = rpc_frame(body, strlen(body), out_len);
    free(body);
    return out;
}
