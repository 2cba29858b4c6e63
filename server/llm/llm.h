/* llm: the HTTP client that talks to the user's LLM endpoint, and the two
 * wire dialects it speaks (OpenAI-compatible chat completions, Anthropic
 * messages).
 *
 * Transport: one libcurl multi handle driven by the server's libuv loop
 * through the multi-socket interface (one uv_poll_t per socket curl opens,
 * one uv_timer_t for curl's timeout). Nothing here blocks: DNS is curl's
 * threaded resolver, connects and TLS run from poll callbacks.
 *
 * Dialects: llm_build() turns (settings, prompt) into URL, headers and body;
 * llm_parse() turns the HTTP status and body into text or a clear error.
 * Both are pure so that the unit test can check them without a network.
 *
 * Secrets: the API key is read from the environment variable the user named
 * (llm.api_key_env) by llm_build(), placed in one request header and nowhere
 * else; every error text that could carry it goes through llm_scrub(). The
 * provider's default variable (OPENAI_API_KEY, ANTHROPIC_API_KEY) goes only
 * to that provider's own host over https (llm_key_variable): a base_url
 * pointing anywhere else gets a key only from a variable named explicitly. */
#ifndef HOTLINE_LLM_H
#define HOTLINE_LLM_H

#include <curl/curl.h>
#include <jansson.h>
#include <stddef.h>
#include <uv.h>

#define LLM_MAX_BODY ((size_t)8 << 20) /* answer bytes kept; more is an error */
#define LLM_MAX_INFLIGHT 16            /* requests at once per client */
#define LLM_MAX_TEXT 1024              /* error / host strings */

enum llm_provider { LLM_OPENAI, LLM_ANTHROPIC };

/* ---- dialects (pure) ---------------------------------------------------- */

/* A request ready to send. */
struct llm_call {
    enum llm_provider provider;
    char url[2048];
    char host[256]; /* for titles and messages: "api.openai.com", "127.0.0.1:8080" */
    char model[256];
    char key_env[128];          /* the variable whose key goes with the request, "" none */
    char withheld[32];          /* the default variable, set but not sent to this host, or "" */
    int cleartext;              /* plain http:// to a host that is not loopback */
    struct curl_slist *headers; /* owned: the key lives only here */
    char *body;                 /* owned JSON */
    char *key;                  /* owned copy of the key (for scrubbing), or NULL */
    long timeout_ms;
};

/* Fill c from the `llm` settings object (borrowed, may be NULL) for prompt
 * (borrowed) with system text sys (borrowed). 0, or -EINVAL with a reason
 * in err (unknown provider, bad base_url, key variable named but unset). */
int llm_build(struct llm_call *c, const json_t *settings, const char *sys, const char *prompt,
              char *err, size_t errlen);
/* Only host / provider / model / timeout / key_env / withheld / cleartext:
 * for titles, before anything is sent (the key's value is not read, only
 * whether its variable is set). 0 or -EINVAL. */
int llm_describe(struct llm_call *c, const json_t *settings, char *err, size_t errlen);
void llm_call_free(struct llm_call *c);

/* The environment variable whose key may go with a request of provider p to
 * url (borrowed): api_key_env (borrowed, may be NULL) when named, else the
 * provider's default variable, but only when url is https:// to the
 * provider's default host and port. NULL: send no key. Pure (url parsed by
 * curl's own parser, as the transfer will be). */
const char *llm_key_variable(enum llm_provider p, const char *url, const char *api_key_env);
/* 1 when url (borrowed) is plain http:// to a host that is not loopback
 * (localhost, 127.0.0.0/8, ::1): whatever goes there can be read on the
 * way. 0 otherwise (https, loopback, unparsable). */
int llm_cleartext(const char *url);

/* What came back. */
struct llm_answer {
    int ok;                   /* text is the model's answer */
    char *text;               /* owned, or NULL */
    char error[LLM_MAX_TEXT]; /* when !ok: one sentence for the user */
    int truncated;            /* the token limit cut the answer */
};

/* Interpret an HTTP answer: status (0 = transport error, then curl_err says
 * why), retry_after (seconds from the header, -1 none), body (borrowed,
 * may be NULL). Fills a (free with llm_answer_free). */
void llm_parse(const struct llm_call *c, long status, const char *curl_err, long retry_after,
               const char *body, size_t len, struct llm_answer *a);
void llm_answer_free(struct llm_answer *a);

/* Replace every occurrence of key (borrowed, may be NULL) in buf with "***". */
void llm_scrub(char *buf, const char *key);

/* ---- transport ----------------------------------------------------------- */

struct llm_client;
struct llm_req;

/* status: HTTP status, 0 on a transport error (curl_err set: timeout,
 * connection refused, TLS ...). body borrowed for the call. */
typedef void (*llm_done_cb)(struct llm_req *r, long status, const char *curl_err, long retry_after,
                            const char *body, size_t len, void *ud);

/* New client on loop, or NULL with the reason in why (n > 0): libcurl
 * missing (llm/curl_dl.h; loaded here on first use) or out of memory. */
struct llm_client *llm_client_new(uv_loop_t *loop, char *why, size_t n);
/* Cancel every request (their callbacks are not called) and close the
 * handles; the client frees itself once the loop has closed them. */
void llm_client_close(struct llm_client *cl);
/* Requests in flight. */
int llm_client_inflight(const struct llm_client *cl);

/* POST c->body to c->url with c->headers (c borrowed: must outlive the
 * request). On success *out (borrowed handle, valid until cb or llm_cancel)
 * and 0; -EBUSY over LLM_MAX_INFLIGHT, -ENOMEM, -EIO. cb is called once,
 * from the loop, never from inside llm_post. */
int llm_post(struct llm_client *cl, const struct llm_call *c, llm_done_cb cb, void *ud,
             struct llm_req **out);
/* Abort a request in flight: its callback is never called. */
void llm_cancel(struct llm_req *r);

#endif
