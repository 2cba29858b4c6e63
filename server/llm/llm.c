/* llm: HTTP to the user's LLM endpoint from the server's libuv loop, and the
 * OpenAI / Anthropic request and answer formats. See llm.h for the contract;
 * docs/optimize.md for the settings and the messages a user can see. */
#include "llm/llm.h"
#include "llm/curl_dl.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- where the key may go ----------------------------------------------- */

/* libcurl's functions, set by curl_ready() (llm/curl_dl.h): every path
 * that calls one of them went through it first (url_split, llm_client_new;
 * the others run only for a client or a call that exists because of them). */
static const struct curl_api *C;

static int curl_ready(char *why, size_t n)
{
    if (!C) C = curl_dl(why, n);
    return C ? 0 : -ENOSYS;
}

struct url_parts {
    char scheme[16], host[256];
    long port;
};

/* scheme (lower case), host (IPv6 without brackets) and port (the scheme's
 * default when absent) of url as curl will connect to it. 0 or -EINVAL. */
static int url_split(const char *url, struct url_parts *u)
{
    if (curl_ready(NULL, 0)) return -ENOSYS; /* no request can go either */
    CURLU *h = C->url();
    char *scheme = NULL, *host = NULL, *port = NULL;
    int rc = -EINVAL;
    if (h && !C->url_set(h, CURLUPART_URL, url, 0) &&
        !C->url_get(h, CURLUPART_SCHEME, &scheme, 0) && !C->url_get(h, CURLUPART_HOST, &host, 0) &&
        !C->url_get(h, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT)) {
        size_t hl = strlen(host);
        const char *hp = host;
        if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') hp++, hl -= 2;
        if (strlen(scheme) < sizeof u->scheme && hl < sizeof u->host) {
            snprintf(u->scheme, sizeof u->scheme, "%s", scheme);
            snprintf(u->host, sizeof u->host, "%.*s", (int)hl, hp);
            for (char *q = u->scheme; *q; q++)
                *q = (char)tolower((unsigned char)*q);
            u->port = strtol(port, NULL, 10);
            rc = 0;
        }
    }
    C->free(scheme);
    C->free(host);
    C->free(port);
    C->url_cleanup(h);
    return rc;
}

const char *llm_key_variable(enum llm_provider p, const char *url, const char *api_key_env)
{
    if (api_key_env && *api_key_env) return api_key_env;
    struct url_parts u;
    const char *home = p == LLM_OPENAI ? "api.openai.com" : "api.anthropic.com";
    if (url_split(url, &u) || strcmp(u.scheme, "https") || strcasecmp(u.host, home) ||
        u.port != 443)
        return NULL; /* a local server, a proxy, a look-alike: never the default key */
    return p == LLM_OPENAI ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY";
}

static int is_loopback(const char *host)
{
    unsigned char a[16];
    if (!strcasecmp(host, "localhost")) return 1;
    if (inet_pton(AF_INET, host, a) == 1) return a[0] == 127;
    if (inet_pton(AF_INET6, host, a) == 1) {
        static const unsigned char one[16] = {[15] = 1};
        static const unsigned char v4[12] = {[10] = 0xff, [11] = 0xff};
        return !memcmp(a, one, 16) || (!memcmp(a, v4, 12) && a[12] == 127);
    }
    return 0;
}

int llm_cleartext(const char *url)
{
    struct url_parts u;
    return !url_split(url, &u) && !strcmp(u.scheme, "http") && !is_loopback(u.host);
}

/* ---- dialects ------------------------------------------------------------ */

static const char *str_setting(const json_t *st, const char *k, const char *dflt)
{
    const char *v = json_string_value(json_object_get(st, k));
    return v && *v ? v : dflt;
}

int llm_describe(struct llm_call *c, const json_t *st, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    const char *prov = str_setting(st, "provider", "openai");
    if (!strcmp(prov, "openai"))
        c->provider = LLM_OPENAI;
    else if (!strcmp(prov, "anthropic"))
        c->provider = LLM_ANTHROPIC;
    else {
        snprintf(err, errlen, "llm.provider must be \"openai\" or \"anthropic\", not \"%.64s\"",
                 prov);
        return -EINVAL;
    }
    const char *base = str_setting(st, "base_url",
                                   c->provider == LLM_OPENAI ? "https://api.openai.com/v1"
                                                             : "https://api.anthropic.com");
    const char *model =
        str_setting(st, "model", c->provider == LLM_OPENAI ? "gpt-4o-mini" : "claude-sonnet-4-0");
    const char *sep = strstr(base, "://");
    if (!sep || (strncmp(base, "http://", 7) && strncmp(base, "https://", 8))) {
        snprintf(err, errlen, "llm.base_url must start with http:// or https://");
        return -EINVAL;
    }
    size_t blen = strlen(base);
    while (blen && base[blen - 1] == '/')
        blen--;
    const char *path = c->provider == LLM_OPENAI                          ? "/chat/completions"
                       : blen >= 3 && !strncmp(base + blen - 3, "/v1", 3) ? "/messages"
                                                                          : "/v1/messages";
    if ((size_t)snprintf(c->url, sizeof c->url, "%.*s%s", (int)blen, base, path) >= sizeof c->url ||
        strlen(model) >= sizeof c->model) {
        snprintf(err, errlen, "llm.base_url or llm.model is too long");
        return -EINVAL;
    }
    snprintf(c->model, sizeof c->model, "%s", model);
    /* host[:port], without any user:password@ */
    const char *h = sep + 3, *e = h + strcspn(h, "/?#");
    const char *at = memchr(h, '@', (size_t)(e - h));
    if (at) h = at + 1;
    snprintf(c->host, sizeof c->host, "%.*s", (int)(e - h), h);
    double t = json_number_value(json_object_get(st, "timeout_s"));
    c->timeout_ms = t > 0 ? (long)(t * 1000) : 120000;
    const char *dflt_env = c->provider == LLM_OPENAI ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY";
    const char *named = str_setting(st, "api_key_env", NULL);
    const char *env = llm_key_variable(c->provider, c->url, named);
    if (named && strlen(named) >= sizeof c->key_env) {
        snprintf(err, errlen, "llm.api_key_env is too long");
        return -EINVAL;
    }
    snprintf(c->key_env, sizeof c->key_env, "%s", env ? env : "");
    const char *dv = getenv(dflt_env);
    if (!env && dv && *dv) snprintf(c->withheld, sizeof c->withheld, "%s", dflt_env);
    c->cleartext = llm_cleartext(c->url);
    return 0;
}

static int add_header(struct llm_call *c, const char *name, const char *value)
{
    char line[4096];
    if ((size_t)snprintf(line, sizeof line, "%s: %s", name, value) >= sizeof line) return -EINVAL;
    struct curl_slist *n = C->slist_append(c->headers, line);
    if (!n) return -ENOMEM;
    c->headers = n;
    return 0;
}

int llm_build(struct llm_call *c, const json_t *st, const char *sys, const char *prompt, char *err,
              size_t errlen)
{
    int rc = llm_describe(c, st, err, errlen);
    if (rc) return rc;
    if (curl_ready(err, errlen)) return -ENOSYS; /* its headers are a curl list */
    const char *env = str_setting(st, "api_key_env", NULL);
    const char *key = c->key_env[0] ? getenv(c->key_env) : NULL;
    if (env && (!key || !*key)) {
        snprintf(err, errlen,
                 "the environment variable %.100s (llm.api_key_env) is not set in the "
                 "server's environment",
                 env);
        return -EINVAL;
    }
    if (key && *key) c->key = strdup(key);
    json_t *body;
    if (c->provider == LLM_OPENAI)
        body = json_pack("{s:s, s:[{s:s, s:s}, {s:s, s:s}]}", "model", c->model, "messages", "role",
                         "system", "content", sys, "role", "user", "content", prompt);
    else
        body = json_pack("{s:s, s:i, s:s, s:[{s:s, s:s}]}", "model", c->model, "max_tokens", 4096,
                         "system", sys, "messages", "role", "user", "content", prompt);
    c->body = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    rc = c->body ? add_header(c, "Content-Type", "application/json") : -ENOMEM;
    if (!rc && c->key) {
        if (c->provider == LLM_OPENAI) {
            char v[2048];
            if ((size_t)snprintf(v, sizeof v, "Bearer %s", c->key) >= sizeof v)
                rc = -EINVAL;
            else
                rc = add_header(c, "Authorization", v);
            memset(v, 0, sizeof v);
        } else {
            rc = add_header(c, "x-api-key", c->key);
        }
    }
    if (!rc && c->provider == LLM_ANTHROPIC) rc = add_header(c, "anthropic-version", "2023-06-01");
    const char *hk;
    json_t *hv;
    json_t *extra = json_object_get(st, "headers");
    if (json_is_object(extra)) json_object_foreach(extra, hk, hv)
        {
            if (!rc && json_is_string(hv) && !strpbrk(hk, ":\r\n") &&
                !strpbrk(json_string_value(hv), "\r\n"))
                rc = add_header(c, hk, json_string_value(hv));
        }
    if (rc) {
        snprintf(err, errlen, rc == -ENOMEM ? "out of memory" : "a header is too long");
        llm_call_free(c);
    }
    return rc;
}

void llm_call_free(struct llm_call *c)
{
    for (struct curl_slist *h = c->headers; h; h = h->next) /* one of them holds the key */
        memset(h->data, 0, strlen(h->data));
    if (c->headers) C->slist_free_all(c->headers); /* headers exist only with libcurl */
    c->headers = NULL;
    free(c->body);
    c->body = NULL;
    if (c->key) {
        memset(c->key, 0, strlen(c->key));
        free(c->key);
        c->key = NULL;
    }
}

void llm_scrub(char *buf, const char *key)
{
    size_t k = key ? strlen(key) : 0;
    if (k < 4) return; /* too short to be a key; scrubbing would mangle text */
    for (char *p = strstr(buf, key); p; p = strstr(p, key)) {
        memmove(p + 3, p + k, strlen(p + k) + 1);
        memcpy(p, "***", 3);
        p += 3;
    }
}

/* The endpoint's own error message, if the body carries one (borrowed). */
static const char *endpoint_message(const json_t *j)
{
    json_t *e = json_object_get(j, "error");
    const char *m = json_string_value(json_object_get(e, "message"));
    if (!m) m = json_string_value(e);
    if (!m) m = json_string_value(json_object_get(j, "message"));
    return m;
}

static void fail(struct llm_answer *a, const struct llm_call *c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(struct llm_answer *a, const struct llm_call *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->error, sizeof a->error, fmt, ap);
    va_end(ap);
    llm_scrub(a->error, c->key);
    a->ok = 0;
}

void llm_parse(const struct llm_call *c, long status, const char *curl_err, long retry_after,
               const char *body, size_t len, struct llm_answer *a)
{
    memset(a, 0, sizeof *a);
    json_t *j = body && len ? json_loadb(body, len, 0, NULL) : NULL;
    const char *em = j ? endpoint_message(j) : NULL;
    char said[400] = "";
    if (em) snprintf(said, sizeof said, ": %.380s", em);
    const char *keyvar = c->provider == LLM_OPENAI ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY";
    if (status == 0)
        fail(a, c, "%s did not answer: %s", c->host, curl_err ? curl_err : "transport error");
    else if ((status == 401 || status == 403) && !c->key && c->withheld[0])
        fail(a, c,
             "%s refused the request (%ld): no API key was sent (%s goes only to the "
             "provider's own host; name it in llm.api_key_env to send it to this one)%s",
             c->host, status, c->withheld, said);
    else if (status == 401 || status == 403)
        fail(a, c,
             "%s refused the request (%ld): check the API key (the variable named by "
             "llm.api_key_env, default %s)%s",
             c->host, status, keyvar, said);
    else if (status == 404)
        fail(a, c, "%s answered 404: no model \"%s\" or wrong llm.base_url (%s)%s", c->host,
             c->model, c->url, said);
    else if (status == 429 && retry_after >= 0)
        fail(a, c, "%s is rate limiting (429): retry after %ld s%s", c->host, retry_after, said);
    else if (status == 429)
        fail(a, c, "%s is rate limiting (429): retry later%s", c->host, said);
    else if (status >= 500)
        fail(a, c, "%s had a server error (%ld): try again later%s", c->host, status, said);
    else if (status < 200 || status >= 300)
        fail(a, c, "%s answered HTTP %ld%s", c->host, status, said);
    else if (!j)
        fail(a, c, "%s answered with something that is not JSON", c->host);
    else {
        const char *text = NULL, *stop = NULL;
        if (c->provider == LLM_OPENAI) {
            json_t *ch = json_array_get(json_object_get(j, "choices"), 0);
            text = json_string_value(json_object_get(json_object_get(ch, "message"), "content"));
            stop = json_string_value(json_object_get(ch, "finish_reason"));
            a->truncated = stop && !strcmp(stop, "length");
        } else {
            size_t i;
            json_t *part;
            json_array_foreach(json_object_get(j, "content"), i, part)
            {
                if (!text && json_is_string(json_object_get(part, "text")))
                    text = json_string_value(json_object_get(part, "text"));
            }
            stop = json_string_value(json_object_get(j, "stop_reason"));
            a->truncated = stop && !strcmp(stop, "max_tokens");
        }
        if (a->truncated)
            fail(a, c, "the answer from %s was cut off by the token limit: nothing changed",
                 c->host);
        else if (!text)
            fail(a, c, "%s answered JSON without a message text (%s format expected)", c->host,
                 c->provider == LLM_OPENAI ? "OpenAI chat completions" : "Anthropic messages");
        else {
            a->text = strdup(text);
            a->ok = a->text != NULL;
            if (!a->ok) fail(a, c, "out of memory");
        }
    }
    json_decref(j);
}

void llm_answer_free(struct llm_answer *a)
{
    free(a->text);
    a->text = NULL;
}

/* ---- transport ----------------------------------------------------------- */

struct llm_sock {
    uv_poll_t poll;
    curl_socket_t fd;
    struct llm_client *cl;
};

struct llm_req {
    CURL *easy;
    struct llm_client *cl;
    llm_done_cb cb;
    void *ud;
    char *buf; /* owned response body */
    size_t len, cap;
    int too_big;
    long retry_after;
    char errbuf[CURL_ERROR_SIZE];
    struct llm_req *next;
};

struct llm_client {
    uv_loop_t *loop;
    CURLM *multi;
    uv_timer_t timer;
    struct llm_req *reqs;
    int nreqs;
    int nsocks; /* poll handles not yet closed */
    int closing, timer_closed;
};

static void client_maybe_free(struct llm_client *cl)
{
    if (cl->closing && cl->timer_closed && cl->nsocks == 0) {
        C->multi_cleanup(cl->multi);
        free(cl);
        C->global_cleanup();
    }
}

static void req_unlink_free(struct llm_req *r)
{
    struct llm_client *cl = r->cl;
    for (struct llm_req **pp = &cl->reqs; *pp; pp = &(*pp)->next)
        if (*pp == r) {
            *pp = r->next;
            cl->nreqs--;
            break;
        }
    C->multi_remove_handle(cl->multi, r->easy);
    C->easy_cleanup(r->easy);
    free(r->buf);
    free(r);
}

static void check_done(struct llm_client *cl)
{
    CURLMsg *m;
    int left;
    while ((m = C->multi_info_read(cl->multi, &left))) {
        if (m->msg != CURLMSG_DONE) continue;
        struct llm_req *r = NULL;
        C->easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&r);
        if (!r) continue;
        CURLcode res = m->data.result;
        long status = 0;
        const char *why = NULL;
        char why_buf[CURL_ERROR_SIZE + 64];
        if (res == CURLE_OK) {
            C->easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
        } else if (r->too_big) {
            why = "the answer is larger than the cap";
        } else {
            snprintf(why_buf, sizeof why_buf, "%s",
                     r->errbuf[0] ? r->errbuf : C->easy_strerror(res));
            if (res == CURLE_OPERATION_TIMEDOUT) snprintf(why_buf, sizeof why_buf, "timed out");
            why = why_buf;
        }
        if (r->buf) r->buf[r->len] = 0;
        r->cb(r, status, why, r->retry_after, r->buf, r->len, r->ud);
        req_unlink_free(r);
    }
}

static void on_poll(uv_poll_t *h, int status, int events)
{
    struct llm_sock *sk = h->data;
    struct llm_client *cl = sk->cl;
    int flags = 0;
    if (status < 0)
        flags = CURL_CSELECT_ERR;
    else {
        if (events & UV_READABLE) flags |= CURL_CSELECT_IN;
        if (events & UV_WRITABLE) flags |= CURL_CSELECT_OUT;
    }
    int running;
    C->multi_socket_action(cl->multi, sk->fd, flags, &running);
    check_done(cl);
}

static void on_sock_closed(uv_handle_t *h)
{
    struct llm_sock *sk = h->data;
    struct llm_client *cl = sk->cl;
    free(sk);
    cl->nsocks--;
    client_maybe_free(cl);
}

static int sock_cb(CURL *e, curl_socket_t fd, int what, void *userp, void *socketp)
{
    (void)e;
    struct llm_client *cl = userp;
    struct llm_sock *sk = socketp;
    if (what == CURL_POLL_REMOVE) {
        if (sk) {
            C->multi_assign(cl->multi, fd, NULL);
            uv_poll_stop(&sk->poll);
            uv_close((uv_handle_t *)&sk->poll, on_sock_closed);
        }
        return 0;
    }
    if (!sk) {
        sk = calloc(1, sizeof *sk);
        if (!sk) return -1;
        sk->fd = fd;
        sk->cl = cl;
        if (uv_poll_init_socket(cl->loop, &sk->poll, fd)) {
            free(sk);
            return -1;
        }
        sk->poll.data = sk;
        cl->nsocks++;
        C->multi_assign(cl->multi, fd, sk);
    }
    int ev = (what == CURL_POLL_IN || what == CURL_POLL_INOUT ? UV_READABLE : 0) |
             (what == CURL_POLL_OUT || what == CURL_POLL_INOUT ? UV_WRITABLE : 0);
    uv_poll_start(&sk->poll, ev, on_poll);
    return 0;
}

static void on_timer(uv_timer_t *t)
{
    struct llm_client *cl = t->data;
    int running;
    C->multi_socket_action(cl->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    check_done(cl);
}

static int timer_cb(CURLM *m, long timeout_ms, void *userp)
{
    (void)m;
    struct llm_client *cl = userp;
    if (cl->closing) return 0;
    if (timeout_ms < 0)
        uv_timer_stop(&cl->timer);
    else /* never 0: a 0 ms timer re-armed from its own callback starves I/O */
        uv_timer_start(&cl->timer, on_timer, timeout_ms > 0 ? (uint64_t)timeout_ms : 1, 0);
    return 0;
}

struct llm_client *llm_client_new(uv_loop_t *loop, char *why, size_t n)
{
    if (curl_ready(why, n)) return NULL;
    /* reference-counted and thread-safe since curl 7.84 (feature "threadsafe"):
     * paired with curl_global_cleanup when the client is freed */
    if (C->global_init(CURL_GLOBAL_DEFAULT)) return NULL;
    struct llm_client *cl = calloc(1, sizeof *cl);
    if (cl) cl->loop = loop;
    if (cl) cl->multi = C->multi_init();
    if (!cl || !cl->multi) {
        free(cl);
        C->global_cleanup();
        return NULL;
    }
    uv_timer_init(loop, &cl->timer);
    cl->timer.data = cl;
    C->multi_setopt(cl->multi, CURLMOPT_SOCKETFUNCTION, sock_cb);
    C->multi_setopt(cl->multi, CURLMOPT_SOCKETDATA, cl);
    C->multi_setopt(cl->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
    C->multi_setopt(cl->multi, CURLMOPT_TIMERDATA, cl);
    return cl;
}

static void on_timer_closed(uv_handle_t *h)
{
    struct llm_client *cl = h->data;
    cl->timer_closed = 1;
    client_maybe_free(cl);
}

void llm_client_close(struct llm_client *cl)
{
    if (!cl || cl->closing) return;
    while (cl->reqs)
        req_unlink_free(cl->reqs); /* removing a handle makes curl drop its sockets (REMOVE) */
    cl->closing = 1;
    uv_timer_stop(&cl->timer);
    uv_close((uv_handle_t *)&cl->timer, on_timer_closed);
}

int llm_client_inflight(const struct llm_client *cl)
{
    return cl ? cl->nreqs : 0;
}

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    struct llm_req *r = ud;
    size_t add = size * n;
    if (r->len + add + 1 > LLM_MAX_BODY) {
        r->too_big = 1;
        return 0; /* aborts the transfer */
    }
    if (r->len + add + 1 > r->cap) {
        size_t cap = r->cap ? r->cap : 16384;
        while (cap < r->len + add + 1)
            cap *= 2;
        char *nb = realloc(r->buf, cap);
        if (!nb) return 0;
        r->buf = nb;
        r->cap = cap;
    }
    memcpy(r->buf + r->len, p, add);
    r->len += add;
    return add;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    struct llm_req *r = ud;
    size_t len = size * n;
    if (len > 12 && !strncasecmp(p, "retry-after:", 12)) {
        char tmp[64];
        snprintf(tmp, sizeof tmp, "%.*s", (int)(len - 12 < 63 ? len - 12 : 63), p + 12);
        char *e;
        long v = strtol(tmp, &e, 10);
        if (e != tmp && v >= 0) r->retry_after = v;
    }
    return len;
}

int llm_post(struct llm_client *cl, const struct llm_call *c, llm_done_cb cb, void *ud,
             struct llm_req **out)
{
    if (!cl || cl->closing) return -EIO;
    if (cl->nreqs >= LLM_MAX_INFLIGHT) return -EBUSY;
    struct llm_req *r = calloc(1, sizeof *r);
    if (!r) return -ENOMEM;
    r->easy = C->easy_init();
    if (!r->easy) {
        free(r);
        return -ENOMEM;
    }
    r->cl = cl;
    r->cb = cb;
    r->ud = ud;
    r->retry_after = -1;
    CURL *e = r->easy;
    C->easy_setopt(e, CURLOPT_URL, c->url);
    C->easy_setopt(e, CURLOPT_HTTPHEADER, c->headers);
    C->easy_setopt(e, CURLOPT_POSTFIELDS, c->body);
    C->easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)strlen(c->body));
    C->easy_setopt(e, CURLOPT_TIMEOUT_MS, c->timeout_ms);
    C->easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, c->timeout_ms < 30000 ? c->timeout_ms : 30000L);
    C->easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    C->easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    C->easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L); /* never carry the key elsewhere */
    C->easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    C->easy_setopt(e, CURLOPT_WRITEDATA, r);
    C->easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    C->easy_setopt(e, CURLOPT_HEADERDATA, r);
    C->easy_setopt(e, CURLOPT_ERRORBUFFER, r->errbuf);
    C->easy_setopt(e, CURLOPT_PRIVATE, r);
    C->easy_setopt(e, CURLOPT_USERAGENT, "hotline");
    if (C->multi_add_handle(cl->multi, e) != CURLM_OK) {
        C->easy_cleanup(e);
        free(r);
        return -EIO;
    }
    r->next = cl->reqs;
    cl->reqs = r;
    cl->nreqs++;
    *out = r;
    return 0;
}

void llm_cancel(struct llm_req *r)
{
    if (r) req_unlink_free(r);
}
