/* Unit tests for protocol/framing: the reader must deliver the same messages and errors
 * whatever the split of the stream, tolerate what LSP clients really send, and recover
 * from malformed input without buffering it. Events are recorded as a text log
 * ("M:<body>" / "E<code>" lines) so that each case reads as input => expected log. */
#include "framing.h"
#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LOG_CAP 8192

struct rec {
    char log[LOG_CAP];
    size_t len;
    int overflow;
    int bad_nul;    /* a body without body[len] == 0 */
    int bad_detail; /* an error without a detail string */
};

static void rec_put(struct rec *r, const char *s, size_t n)
{
    if (r->len + n + 1 > LOG_CAP) {
        r->overflow = 1;
        return;
    }
    memcpy(r->log + r->len, s, n);
    r->len += n;
    r->log[r->len] = 0;
}

static void on_msg(void *ud, const char *body, size_t len)
{
    struct rec *r = ud;
    if (body[len] != 0) r->bad_nul = 1;
    rec_put(r, "M:", 2);
    rec_put(r, body, len);
    rec_put(r, "\n", 1);
}

static void on_err(void *ud, enum rpc_frame_error err, const char *detail)
{
    struct rec *r = ud;
    char s[8];
    if (!detail || !*detail) r->bad_detail = 1;
    snprintf(s, sizeof s, "E%d\n", (int)err);
    rec_put(r, s, strlen(s));
}

/* Feed the whole stream in one call to a fresh reader (cap 0 => default); the log is returned
 * in *out (caller's). Returns rpc_reader_feed's result. */
static int run_once(struct rec *out, size_t cap, const char *s, size_t n)
{
    struct rpc_reader r;
    int rc;
    memset(out, 0, sizeof *out);
    rpc_reader_init(&r, cap);
    rc = rpc_reader_feed(&r, s, n, on_msg, on_err, out);
    rpc_reader_free(&r);
    return rc;
}

static void expect_log(size_t cap, const char *stream, const char *want)
{
    struct rec rec;
    CHECK_EQ_U(run_once(&rec, cap, stream, strlen(stream)), 0);
    CHECK(!rec.overflow && !rec.bad_nul && !rec.bad_detail);
    CHECK_STR(rec.log, want);
}

static const char three[] = "Content-Length: 17\r\n\r\n{\"jsonrpc\":\"2.0\"}"
                            "content-length:2\r\nContent-Type: application/vscode-jsonrpc; "
                            "charset=utf-8\r\n\r\n[]"
                            "Content-Length: 42\r\n\r\n"
                            "{\"method\":\"x\",\"params\":{\"s\":\"caf\xc3\xa9 \\r\\n\"}}";
static const char three_log[] = "M:{\"jsonrpc\":\"2.0\"}\nM:[]\n"
                                "M:{\"method\":\"x\",\"params\":{\"s\":\"caf\xc3\xa9 \\r\\n\"}}\n";

static void test_all_splits(void)
{
    size_t n = strlen(three), i, j, bad = 0;
    struct rec rec;
    struct rpc_reader r;

    CHECK_EQ_U(strlen("{\"method\":\"x\",\"params\":{\"s\":\"caf\xc3\xa9 \\r\\n\"}}"), 42);
    for (i = 0; i <= n; i++) {
        for (j = i; j <= n; j++) {
            memset(&rec, 0, sizeof rec);
            rpc_reader_init(&r, 0);
            rpc_reader_feed(&r, three, i, on_msg, on_err, &rec);
            rpc_reader_feed(&r, three + i, j - i, on_msg, on_err, &rec);
            rpc_reader_feed(&r, three + j, n - j, on_msg, on_err, &rec);
            if (strcmp(rec.log, three_log) != 0 || rec.bad_nul || !rpc_reader_idle(&r)) {
                if (bad++ < 3) fprintf(stderr, "split %zu/%zu: got %s\n", i, j, rec.log);
            }
            rpc_reader_free(&r);
        }
    }
    CHECK_EQ_U(bad, 0);
}

static void test_byte_at_a_time_and_batch(void)
{
    struct rec rec = {0};
    struct rpc_reader r;
    size_t n = strlen(three);

    rpc_reader_init(&r, 0);
    for (size_t i = 0; i < n; i++)
        CHECK_EQ_U(rpc_reader_feed(&r, three + i, 1, on_msg, on_err, &rec), 0);
    CHECK_STR(rec.log, three_log);
    CHECK(rpc_reader_idle(&r));
    /* then the same stream twice in one call on the same reader */
    memset(&rec, 0, sizeof rec);
    char twice[2 * sizeof three];
    memcpy(twice, three, n);
    memcpy(twice + n, three, n);
    CHECK_EQ_U(rpc_reader_feed(&r, twice, 2 * n, on_msg, on_err, &rec), 0);
    char want[2 * sizeof three_log];
    snprintf(want, sizeof want, "%s%s", three_log, three_log);
    CHECK_STR(rec.log, want);
    rpc_reader_free(&r);
}

static void test_headers(void)
{
    /* names are case-insensitive; whitespace around values and names is tolerated */
    expect_log(0, "CONTENT-LENGTH: 2\r\n\r\n{}", "M:{}\n");
    expect_log(0, "cOnTeNt-LeNgTh:2\r\n\r\n{}", "M:{}\n");
    expect_log(0, "Content-Length:   2 \t\r\n\r\n{}", "M:{}\n");
    expect_log(0, "Content-Length : 2\r\n\r\n{}", "M:{}\n");
    /* Content-Type before or after, unknown headers, duplicate equal lengths: all fine */
    expect_log(
        0, "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\n\r\n{}",
        "M:{}\n");
    expect_log(0, "X-Unknown: whatever: with colons\r\nContent-Length: 2\r\nX-Other:\r\n\r\n{}",
               "M:{}\n");
    expect_log(0, "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}", "M:{}\n");
    /* bare LF line ends, and a mix */
    expect_log(0, "Content-Length: 2\n\n{}", "M:{}\n");
    expect_log(0, "Content-Length: 2\r\n\n{}Content-Length: 3\n\r\n[1]", "M:{}\nM:[1]\n");
    /* blank lines between messages are skipped */
    expect_log(0, "\r\n\r\nContent-Length: 2\r\n\r\n{}\r\n\nContent-Length: 2\r\n\r\n[]",
               "M:{}\nM:[]\n");
    /* empty body */
    expect_log(0, "Content-Length: 0\r\n\r\nContent-Length: 2\r\n\r\n{}", "M:\nM:{}\n");
    /* leading zeros are still decimal */
    expect_log(0, "Content-Length: 002\r\n\r\n{}", "M:{}\n");
}

static void test_oversize(void)
{
    /* body of 40 bytes over a cap of 16: reported, skipped exactly, even though the skipped
     * bytes look like a complete message; the next message arrives intact */
    const char *s = "Content-Length: 40\r\n\r\n"
                    "Content-Length: 2\r\n\r\n{}xxxxxxxxxxxxxxxxx"
                    "Content-Length: 15\r\n\r\n{\"a\":[1,2,3,4]}";
    CHECK_EQ_U(strlen("Content-Length: 2\r\n\r\n{}xxxxxxxxxxxxxxxxx"), 40);
    expect_log(16, s, "E4\nM:{\"a\":[1,2,3,4]}\n");

    /* split one byte at a time, and the skipped body never gets a buffer */
    struct rec rec = {0};
    struct rpc_reader r;
    rpc_reader_init(&r, 16);
    for (size_t i = 0; s[i]; i++) {
        rpc_reader_feed(&r, s + i, 1, on_msg, on_err, &rec);
        if (i < 62) CHECK_EQ_U(r.rr__body_cap, 0);
    }
    CHECK_STR(rec.log, "E4\nM:{\"a\":[1,2,3,4]}\n");
    rpc_reader_free(&r);

    /* a length that fits size_t but is enormous is TOO_BIG, not a crash or an allocation */
    memset(&rec, 0, sizeof rec);
    rpc_reader_init(&r, 0);
    const char *h = "Content-Length: 18446744073709551615\r\n\r\n{}";
    rpc_reader_feed(&r, h, strlen(h), on_msg, on_err, &rec);
    CHECK_STR(rec.log, "E4\n");
    CHECK_EQ_U(r.rr__body_cap, 0);
    CHECK(!rpc_reader_idle(&r));
    rpc_reader_free(&r);
}

static void test_bad_headers(void)
{
    /* header line without ':' */
    expect_log(0, "Garbage\r\nContent-Length: 2\r\n\r\n{}", "E1\nM:{}\n");
    expect_log(0, "Content-Length: 2\r\nGarbage\r\n\r\n{}Content-Length: 2\r\n\r\n[]",
               "E1\nM:[]\n");
    /* a body with no header at all; the next message follows right after its '}' */
    expect_log(0, "{\"jsonrpc\":\"2.0\",\"method\":\"a\"}Content-Length: 2\r\n\r\n[]",
               "E1\nM:[]\n");
    /* non-ASCII and control bytes */
    expect_log(0, "X-Name: caf\xc3\xa9\r\n\r\n{}\nContent-Length: 2\r\n\r\n[]", "E1\nM:[]\n");
    expect_log(0, "X-N\xc3\xa9: 1\r\nContent-Length: 2\r\n\r\n[]", "E1\nM:[]\n");
    expect_log(0, "Content-Length: 2\rX: 1\r\n\r\n{}\nContent-Length: 2\r\n\r\n[]", "E1\nM:[]\n");
    expect_log(0, ": 2\r\n\r\n{}\nContent-Length: 2\r\n\r\n[]", "E1\nM:[]\n");
    /* missing Content-Length: the block and its body are dropped */
    expect_log(0, "Content-Type: x\r\n\r\n{\"a\":1}Content-Length: 2\r\n\r\n[]", "E2\nM:[]\n");
    expect_log(0, "X: y\n\n[1,2]\ncontent-length: 2\n\n[]", "E2\nM:[]\n");
    /* bad lengths */
    expect_log(0, "Content-Length: abc\r\n\r\n{}\r\nContent-Length: 2\r\n\r\n[]", "E3\nM:[]\n");
    expect_log(0, "Content-Length: 12x\r\n\r\n{}\r\nContent-Length: 2\r\n\r\n[]", "E3\nM:[]\n");
    expect_log(0, "Content-Length: -5\r\n\r\n{}\r\nContent-Length: 2\r\n\r\n[]", "E3\nM:[]\n");
    expect_log(0, "Content-Length: +5\r\n\r\n{}\r\nContent-Length: 2\r\n\r\n[]", "E3\nM:[]\n");
    expect_log(0, "Content-Length:\r\n\r\n{}\r\nContent-Length: 2\r\n\r\n[]", "E3\nM:[]\n");
    expect_log(0, "Content-Length: 1 2\r\n\r\n{}\r\nContent-Length: 2\r\n\r\n[]", "E3\nM:[]\n");
    expect_log(
        0, "Content-Length: 99999999999999999999999999\r\n\r\n{}\r\nContent-Length: 2\r\n\r\n[]",
        "E3\nM:[]\n");
    expect_log(0, "Content-Length: 18446744073709551616\r\n\r\n{}]Content-Length: 2\r\n\r\n[]",
               "E3\nM:[]\n");
    expect_log(0, "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}}Content-Length: 2\r\n\r\n[]",
               "E3\nM:[]\n");
    /* a "Content-Length" in the middle of a line is not a resync point */
    expect_log(0, "Garbage\r\nxContent-Length: 2\r\n\r\n{}", "E1\n");
}

static void test_header_block_cap(void)
{
    size_t n = RPC_MAX_HEADER_BYTES + 200;
    char *s = malloc(n + 64);
    struct rec rec;

    /* one header line longer than the cap */
    memcpy(s, "X-Long: ", 8);
    memset(s + 8, 'a', n - 8);
    strcpy(s + n, "\r\nContent-Length: 2\r\n\r\n{}");
    CHECK_EQ_U(run_once(&rec, 0, s, strlen(s)), 0);
    CHECK_STR(rec.log, "E1\nM:{}\n");

    /* many short lines whose total is over the cap */
    size_t k = 0;
    while (k < n)
        k += (size_t)sprintf(s + k, "X: 1\r\n");
    strcpy(s + k, "\r\n{}\nContent-Length: 2\r\n\r\n[]");
    CHECK_EQ_U(run_once(&rec, 0, s, strlen(s)), 0);
    CHECK_STR(rec.log, "E1\nM:[]\n");

    /* exactly at the cap is still fine */
    const char *tail = "\r\nContent-Length: 2\r\n\r\n";
    size_t fill = RPC_MAX_HEADER_BYTES - strlen(tail) - 3; /* "X: " */
    memcpy(s, "X: ", 3);
    memset(s + 3, 'b', fill);
    strcpy(s + 3 + fill, tail);
    CHECK_EQ_U(strlen(s), RPC_MAX_HEADER_BYTES);
    strcat(s, "{}");
    CHECK_EQ_U(run_once(&rec, 0, s, strlen(s)), 0);
    CHECK_STR(rec.log, "M:{}\n");

    /* blank lines between messages do not count towards the cap */
    k = 0;
    while (k < n)
        k += (size_t)sprintf(s + k, "\r\n");
    strcpy(s + k, "Content-Length: 2\r\n\r\n{}");
    CHECK_EQ_U(run_once(&rec, 0, s, strlen(s)), 0);
    CHECK_STR(rec.log, "M:{}\n");
    free(s);
}

static void test_frame_encode_roundtrip(void)
{
    size_t n = 0, n2 = 0;
    char *f = rpc_frame("{\"x\":1}", 7, &n);
    CHECK(f != NULL);
    CHECK_EQ_U(n, strlen("Content-Length: 7\r\n\r\n{\"x\":1}"));
    CHECK_STR(f, "Content-Length: 7\r\n\r\n{\"x\":1}");
    char *e = rpc_frame("", 0, &n2);
    CHECK_STR(e, "Content-Length: 0\r\n\r\n");

    json_t *msg = json_pack("{s:s,s:i,s:s,s:{s:s}}", "jsonrpc", "2.0", "id", 7, "method", "m",
                            "params", "text", "\xf0\x9f\x98\x80 \"q\" \n");
    size_t n3 = 0;
    char *g = rpc_encode(msg, &n3);
    CHECK(g != NULL);
    CHECK(strncmp(g, "Content-Length: ", 16) == 0);
    CHECK(strstr(g, "\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":7,") != NULL); /* compact */

    struct rec rec = {0};
    struct rpc_reader r;
    rpc_reader_init(&r, 0);
    CHECK_EQ_U(rpc_reader_feed(&r, f, n, on_msg, on_err, &rec), 0);
    CHECK_EQ_U(rpc_reader_feed(&r, e, n2, on_msg, on_err, &rec), 0);
    CHECK_STR(rec.log, "M:{\"x\":1}\nM:\n");
    rpc_reader_free(&r);

    /* the encoded message parses back to an equal value */
    struct rec rec2 = {0};
    run_once(&rec2, 0, g, n3);
    json_t *back = json_loadb(rec2.log + 2, rec2.len - 3, 0, NULL);
    CHECK(back != NULL && json_equal(back, msg));
    json_decref(back);
    json_decref(msg);
    free(f);
    free(e);
    free(g);
}

/* Large bodies: copied in bulk across many feeds, and the big buffer is not kept. */
struct big {
    size_t count, len;
    int ok;
};
static void on_big(void *ud, const char *body, size_t len)
{
    struct big *b = ud;
    b->count++;
    b->len = len;
    b->ok = body[0] == '"' && body[len - 1] == '"' && body[len] == 0 && body[len / 2] == 'z';
}
static void test_large(void)
{
    size_t len = (size_t)3 << 20, n;
    char *body = malloc(len);
    memset(body, 'z', len);
    body[0] = body[len - 1] = '"';
    char *f = rpc_frame(body, len, &n);
    struct big b = {0};
    struct rpc_reader r;
    rpc_reader_init(&r, 0);
    for (size_t i = 0; i < n; i += 65536)
        rpc_reader_feed(&r, f + i, n - i < 65536 ? n - i : 65536, on_big, NULL, &b);
    CHECK_EQ_U(b.count, 1);
    CHECK_EQ_U(b.len, len);
    CHECK(b.ok);
    CHECK_EQ_U(r.rr__body_cap, 0);
    rpc_reader_free(&r);
    free(f);
    free(body);
}

/* Property: for random streams of valid and malformed pieces, any chunking gives the same
 * log as one feed. Deterministic generator so a failure reproduces. */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}
static void test_split_invariance(void)
{
    static const char *pieces[] = {
        "Content-Length: 2\r\n\r\n{}",
        "content-length: 3\n\n[1]",
        "Content-Length: 0\r\n\r\n",
        "Garbage\r\n",
        "X: y\r\n\r\n{\"a\":1}",
        "Content-Length: -1\r\n\r\n",
        "\r\n",
        "Content-Length: 40\r\n\r\n",
        "}",
        "Content-Length: 5\r\nContent-Type: t\r\n\r\n[1,2]",
        "Content-Len",
        "gth: 2\r\n\r\n{}",
        "\xff\xfe",
        "Content-Length: 2\r",
    };
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    char stream[2048];
    int bad = 0;

    for (int iter = 0; iter < 2000; iter++) {
        size_t n = 0;
        while (n < 1500) {
            const char *p = pieces[rng_next(&seed) % (sizeof pieces / sizeof pieces[0])];
            size_t pl = strlen(p);
            memcpy(stream + n, p, pl);
            n += pl;
        }
        size_t cap = (rng_next(&seed) % 2) ? 0 : 8;
        struct rec once, chunked = {0};
        run_once(&once, cap, stream, n);
        struct rpc_reader r;
        rpc_reader_init(&r, cap);
        for (size_t i = 0; i < n;) {
            size_t c = 1 + rng_next(&seed) % 40;
            if (c > n - i) c = n - i;
            rpc_reader_feed(&r, stream + i, c, on_msg, on_err, &chunked);
            i += c;
        }
        rpc_reader_free(&r);
        if (once.overflow || strcmp(once.log, chunked.log) != 0 || once.bad_nul || once.bad_detail)
            bad++;
    }
    CHECK_EQ_U(bad, 0);
}

static void test_names(void)
{
    CHECK_STR(rpc_frame_error_name(RPC_FRAME_TOO_BIG), "message too big");
    CHECK_STR(rpc_frame_error_name((enum rpc_frame_error)99), "unknown framing error");
}

int main(void)
{
    test_all_splits();
    test_byte_at_a_time_and_batch();
    test_headers();
    test_oversize();
    test_bad_headers();
    test_header_block_cap();
    test_frame_encode_roundtrip();
    test_large();
    test_split_invariance();
    test_names();
    return check_exit("test_framing");
}
