/* In-process checks of server/llm.c's pure half (request building for both
 * dialects, answer parsing, key scrubbing) and of prompt_fill(): what the
 * endpoint gets and what the user reads, without a network. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "llm/llm.h"
#include "llm/prompt_template.h"

static json_t *settings(const char *text)
{
    json_t *j = json_loads(text, 0, NULL);
    if (!j) {
        fprintf(stderr, "bad test JSON %s\n", text);
        exit(2);
    }
    return j;
}

static int has_header(const struct llm_call *c, const char *line)
{
    for (const struct curl_slist *h = c->headers; h; h = h->next)
        if (!strcmp(h->data, line)) return 1;
    return 0;
}

static int any_header_contains(const struct llm_call *c, const char *text)
{
    for (const struct curl_slist *h = c->headers; h; h = h->next)
        if (strstr(h->data, text)) return 1;
    return 0;
}

static void test_describe(void)
{
    struct llm_call c;
    char err[256];
    json_t *st = settings("{}");
    CHECK(llm_describe(&c, st, err, sizeof err) == 0);
    CHECK(c.provider == LLM_OPENAI);
    CHECK(!strcmp(c.url, "https://api.openai.com/v1/chat/completions"));
    CHECK(!strcmp(c.host, "api.openai.com"));
    CHECK(c.timeout_ms == 120000);
    json_decref(st);

    st = settings("{\"provider\": \"anthropic\"}");
    CHECK(llm_describe(&c, st, err, sizeof err) == 0);
    CHECK(!strcmp(c.url, "https://api.anthropic.com/v1/messages"));
    json_decref(st);

    st = settings("{\"provider\": \"anthropic\", \"base_url\": \"http://h:1/v1/\"}");
    CHECK(llm_describe(&c, st, err, sizeof err) == 0);
    CHECK(!strcmp(c.url, "http://h:1/v1/messages"));
    json_decref(st);

    st = settings("{\"base_url\": \"http://user:pw@localhost:11434/v1\", \"model\": \"q\", "
                  "\"timeout_s\": 2.5}");
    CHECK(llm_describe(&c, st, err, sizeof err) == 0);
    CHECK(!strcmp(c.host, "localhost:11434")); /* credentials never shown */
    CHECK(!strcmp(c.model, "q"));
    CHECK(c.timeout_ms == 2500);
    json_decref(st);

    st = settings("{\"provider\": \"gemini\"}");
    CHECK(llm_describe(&c, st, err, sizeof err) == -EINVAL);
    CHECK(strstr(err, "gemini") != NULL);
    json_decref(st);

    st = settings("{\"base_url\": \"ftp://x\"}");
    CHECK(llm_describe(&c, st, err, sizeof err) == -EINVAL);
    json_decref(st);
}

static void test_build(void)
{
    struct llm_call c;
    char err[256];
    setenv("TEST_LLM_KEY", "sk-unit-secret-1234", 1);
    json_t *st = settings("{\"model\": \"m1\", \"api_key_env\": \"TEST_LLM_KEY\", "
                          "\"headers\": {\"X-Team\": \"perf\", \"X-Bad\": \"a\\r\\nb\"}}");
    CHECK(llm_build(&c, st, "SYS", "PROMPT \"q\"", err, sizeof err) == 0);
    CHECK(has_header(&c, "Authorization: Bearer sk-unit-secret-1234"));
    CHECK(has_header(&c, "Content-Type: application/json"));
    CHECK(has_header(&c, "X-Team: perf"));
    CHECK(!any_header_contains(&c, "X-Bad")); /* header injection refused */
    CHECK(strstr(c.body, "sk-unit-secret") == NULL);
    json_t *b = json_loads(c.body, 0, NULL);
    CHECK(!strcmp(json_string_value(json_object_get(b, "model")), "m1"));
    json_t *msgs = json_object_get(b, "messages");
    CHECK(json_array_size(msgs) == 2);
    CHECK(!strcmp(json_string_value(json_object_get(json_array_get(msgs, 0), "content")), "SYS"));
    CHECK(!strcmp(json_string_value(json_object_get(json_array_get(msgs, 1), "content")),
                  "PROMPT \"q\""));
    json_decref(b);
    llm_call_free(&c);
    json_decref(st);

    st = settings("{\"provider\": \"anthropic\", \"api_key_env\": \"TEST_LLM_KEY\"}");
    CHECK(llm_build(&c, st, "SYS", "P", err, sizeof err) == 0);
    CHECK(has_header(&c, "x-api-key: sk-unit-secret-1234"));
    CHECK(has_header(&c, "anthropic-version: 2023-06-01"));
    CHECK(!any_header_contains(&c, "Authorization"));
    b = json_loads(c.body, 0, NULL);
    CHECK(json_integer_value(json_object_get(b, "max_tokens")) == 4096);
    CHECK(!strcmp(json_string_value(json_object_get(b, "system")), "SYS"));
    json_decref(b);
    llm_call_free(&c);
    json_decref(st);

    /* a variable named explicitly but unset: an error naming it, no request */
    st = settings("{\"api_key_env\": \"TEST_LLM_NO_SUCH_VARIABLE\"}");
    CHECK(llm_build(&c, st, "S", "P", err, sizeof err) == -EINVAL);
    CHECK(strstr(err, "TEST_LLM_NO_SUCH_VARIABLE") != NULL);
    CHECK(c.headers == NULL && c.body == NULL);
    json_decref(st);

    /* the default variable unset: sent without a key (local servers) */
    unsetenv("OPENAI_API_KEY");
    st = settings("{\"base_url\": \"http://127.0.0.1:9/v1\"}");
    CHECK(llm_build(&c, st, "S", "P", err, sizeof err) == 0);
    CHECK(!any_header_contains(&c, "Authorization"));
    llm_call_free(&c);
    json_decref(st);
}

/* Issue 10: the provider's default key variable goes only to its own host
 * over https; every other host needs llm.api_key_env; plain http to a host
 * that is not loopback is flagged (the title and a warning say so). */
static void test_key_destination(void)
{
    CHECK(!strcmp(llm_key_variable(LLM_OPENAI, "https://api.openai.com/v1/chat/completions", NULL),
                  "OPENAI_API_KEY"));
    CHECK(!strcmp(llm_key_variable(LLM_OPENAI, "https://API.OpenAI.com:443/v1/x", NULL),
                  "OPENAI_API_KEY"));
    CHECK(!strcmp(llm_key_variable(LLM_ANTHROPIC, "https://api.anthropic.com/v1/messages", NULL),
                  "ANTHROPIC_API_KEY"));
    const char *elsewhere[] = {
        "http://127.0.0.1:18411/v1/chat/completions", /* the docs' local model example */
        "http://api.openai.com/v1/chat/completions",  /* right host, no TLS */
        "https://api.openai.com:8443/v1/chat/completions",
        "https://api.openai.com.evil.example/v1/chat/completions",
        "https://api.openai.com@evil.example/v1/chat/completions",
        "https://evil.example/api.openai.com/v1/chat/completions",
        "https://api.anthropic.com/v1/chat/completions", /* the other provider's host */
        "not a url",
    };
    for (size_t i = 0; i < sizeof elsewhere / sizeof *elsewhere; i++)
        CHECK(llm_key_variable(LLM_OPENAI, elsewhere[i], NULL) == NULL);
    CHECK(llm_key_variable(LLM_ANTHROPIC, "https://api.openai.com/v1/messages", NULL) == NULL);
    CHECK(!strcmp(llm_key_variable(LLM_OPENAI, "http://127.0.0.1:1/v1", "MY_KEY"), "MY_KEY"));

    CHECK(llm_cleartext("http://10.0.0.5:8000/v1/chat/completions"));
    CHECK(llm_cleartext("http://llm.corp.example/v1/chat/completions"));
    CHECK(llm_cleartext("HTTP://api.openai.com/v1/chat/completions"));
    CHECK(llm_cleartext("http://128.0.0.1/v1"));
    CHECK(!llm_cleartext("https://llm.corp.example/v1/chat/completions"));
    CHECK(!llm_cleartext("http://127.0.0.1:18411/v1/chat/completions"));
    CHECK(!llm_cleartext("http://127.8.9.10/v1"));
    CHECK(!llm_cleartext("http://localhost:11434/v1/chat/completions"));
    CHECK(!llm_cleartext("http://[::1]:8080/v1/chat/completions"));
    CHECK(!llm_cleartext("http://[::ffff:127.0.0.1]/v1"));
    CHECK(llm_cleartext("http://[::2]/v1"));

    /* llm_describe / llm_build apply it: OPENAI_API_KEY set, base_url local */
    struct llm_call c;
    char err[256];
    setenv("OPENAI_API_KEY", "sk-default-secret-5678", 1);
    json_t *st = settings("{\"base_url\": \"http://127.0.0.1:18411/v1\"}");
    CHECK(llm_describe(&c, st, err, sizeof err) == 0);
    CHECK(c.key_env[0] == 0 && !strcmp(c.withheld, "OPENAI_API_KEY") && !c.cleartext);
    CHECK(llm_build(&c, st, "S", "P", err, sizeof err) == 0);
    CHECK(!any_header_contains(&c, "Authorization") && c.key == NULL);
    struct llm_answer a;
    llm_parse(&c, 401, NULL, -1, "{}", 2, &a);
    CHECK(!a.ok && strstr(a.error, "no API key was sent (OPENAI_API_KEY goes only to"));
    llm_call_free(&c);
    json_decref(st);

    st = settings("{\"base_url\": \"http://127.0.0.1:18411/v1\", \"api_key_env\": "
                  "\"OPENAI_API_KEY\"}");
    CHECK(llm_build(&c, st, "S", "P", err, sizeof err) == 0);
    CHECK(has_header(&c, "Authorization: Bearer sk-default-secret-5678"));
    CHECK(!strcmp(c.key_env, "OPENAI_API_KEY") && c.withheld[0] == 0);
    llm_call_free(&c);
    json_decref(st);

    st = settings("{}"); /* the default host: the default variable */
    CHECK(llm_build(&c, st, "S", "P", err, sizeof err) == 0);
    CHECK(has_header(&c, "Authorization: Bearer sk-default-secret-5678"));
    llm_call_free(&c);
    json_decref(st);

    st = settings("{\"base_url\": \"http://10.1.2.3:8000/v1\", \"api_key_env\": \"TEST_LLM_KEY\"}");
    CHECK(llm_describe(&c, st, err, sizeof err) == 0);
    CHECK(c.cleartext && !strcmp(c.key_env, "TEST_LLM_KEY"));
    json_decref(st);
    unsetenv("OPENAI_API_KEY");
}

static void parse(const struct llm_call *c, long status, long retry, const char *body,
                  struct llm_answer *a)
{
    llm_parse(c, status, status ? NULL : "Connection refused", retry, body, body ? strlen(body) : 0,
              a);
}

static void test_parse(void)
{
    struct llm_call c;
    char err[256];
    struct llm_answer a;
    setenv("TEST_LLM_KEY", "sk-unit-secret-1234", 1);
    json_t *st = settings("{\"api_key_env\": \"TEST_LLM_KEY\", \"base_url\": \"http://h/v1\", "
                          "\"model\": \"m1\"}");
    CHECK(llm_build(&c, st, "S", "P", err, sizeof err) == 0);

    parse(&c, 200, -1,
          "{\"choices\":[{\"message\":{\"content\":\"```python\\nx\\n```\"},"
          "\"finish_reason\":\"stop\"}]}",
          &a);
    CHECK(a.ok && !strcmp(a.text, "```python\nx\n```"));
    llm_answer_free(&a);

    parse(&c, 200, -1,
          "{\"choices\":[{\"message\":{\"content\":\"x\"},\"finish_reason\":\"length\"}]}", &a);
    CHECK(!a.ok && a.truncated && strstr(a.error, "token limit"));
    llm_answer_free(&a);

    parse(&c, 401, -1,
          "{\"error\":{\"message\":\"Incorrect API key provided: sk-unit-secret-1234\"}}", &a);
    CHECK(!a.ok && strstr(a.error, "(401)") && strstr(a.error, "provided: ***"));
    CHECK(strstr(a.error, "sk-unit-secret") == NULL);
    llm_answer_free(&a);

    parse(&c, 404, -1, NULL, &a);
    CHECK(!a.ok && strstr(a.error, "no model \"m1\""));
    parse(&c, 429, 12, "{}", &a);
    CHECK(!a.ok && strstr(a.error, "retry after 12 s"));
    parse(&c, 429, -1, "{}", &a);
    CHECK(!a.ok && strstr(a.error, "retry later"));
    parse(&c, 502, -1, "<html>", &a);
    CHECK(!a.ok && strstr(a.error, "server error (502)"));
    parse(&c, 200, -1, "<html>", &a);
    CHECK(!a.ok && strstr(a.error, "not JSON"));
    parse(&c, 200, -1, "{\"choices\":[]}", &a);
    CHECK(!a.ok && strstr(a.error, "without a message text"));
    parse(&c, 0, -1, NULL, &a);
    CHECK(!a.ok && strstr(a.error, "did not answer: Connection refused"));
    llm_call_free(&c);
    json_decref(st);

    st = settings("{\"provider\": \"anthropic\"}");
    CHECK(llm_describe(&c, st, err, sizeof err) == 0);
    parse(&c, 200, -1,
          "{\"content\":[{\"type\":\"text\",\"text\":\"hello\"}],\"stop_reason\":\"end_turn\"}",
          &a);
    CHECK(a.ok && !strcmp(a.text, "hello"));
    llm_answer_free(&a);
    parse(&c, 200, -1,
          "{\"content\":[{\"type\":\"text\",\"text\":\"hel\"}],\"stop_reason\":\"max_tokens\"}",
          &a);
    CHECK(!a.ok && a.truncated);
    llm_answer_free(&a);
    json_decref(st);
}

static void test_scrub_and_fill(void)
{
    char buf[128] = "a KEY12345 b KEY12345";
    llm_scrub(buf, "KEY12345");
    CHECK(!strcmp(buf, "a *** b ***"));
    char shortk[32] = "abc";
    llm_scrub(shortk, "ab"); /* too short to be a key: left alone */
    CHECK(!strcmp(shortk, "abc"));
    llm_scrub(shortk, NULL);

    const char *keys[] = {"a", "bb"};
    const char *vals[] = {"1", "{{a}}"};
    char *s = prompt_fill("x{{a}}y{{bb}}z{{c}}{{a}}", keys, vals, 2);
    CHECK(s && !strcmp(s, "x1y{{a}}z{{c}}1")); /* values are not re-expanded */
    free(s);
    s = prompt_fill("{{", keys, vals, 2);
    CHECK(s && !strcmp(s, "{{"));
    free(s);
    /* the template names every placeholder providers/optimize.c fills */
    const char *need[] = {"{{file}}",      "{{python}}", "{{libraries}}", "{{imports}}",
                          "{{context}}",   "{{region}}", "{{profile}}",   "{{first_line}}",
                          "{{last_line}}", "{{total}}"};
    for (size_t i = 0; i < sizeof need / sizeof *need; i++)
        CHECK(strstr(prompt_user, need[i]) != NULL);
}

int main(void)
{
    test_describe();
    test_build();
    test_parse();
    test_key_destination();
    test_scrub_and_fill();
    return check_exit("test_llm");
}
