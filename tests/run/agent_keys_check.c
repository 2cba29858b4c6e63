/* agent_keys_check: every key of every message in an agent's wire stream is
 * listed in protocol/agent_keys.h (AGENT_KEYS for its place, or AGENT_STATS
 * in a delta entry). Driven by agent_keys.py, which records the stream of a
 * real agent; also run on a line with an unknown key to show it fails.
 *
 * usage: agent_keys_check <wire.jsonl> [PLACE,PLACE,...]
 * The optional list names places (enum agent_place without AGENT_IN_) that
 * must have been seen at least once, so that a stream that never reached a
 * message kind cannot pass by saying nothing about it. Exit 0 when every key
 * is known and every needed place was seen, else 1 with one line per
 * problem. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "agent_keys.h"

static const char *const place_names[] = {
#define P(e, t) #e,
    AGENT_PLACES(P)
#undef P
};

static int seen[AGENT_NPLACES];
static int problems;
static long keys_checked;

static void problem(int lineno, const char *fmt, const char *a, const char *b)
{
    if (problems++ < 50) {
        fprintf(stderr, "line %d: ", lineno);
        fprintf(stderr, fmt, a, b);
        fputc('\n', stderr);
    }
}

/* 1 when key may appear in place. */
static int key_known(const char *key, enum agent_place p)
{
    for (int k = 0; k < AGENT_NKEYS; k++)
        if (!strcmp(agent_key_name((enum agent_key)k), key) &&
            (agent_key_places((enum agent_key)k) & (1u << p)))
            return 1;
    /* statistics: every one in line and function entries; a thread carries
     * its own time categories only */
    int nstats = p == AGENT_IN_LINE || p == AGENT_IN_FUNC ? AGENT_NSTATS
                 : p == AGENT_IN_THREAD                   ? AGENT_STAT_SYS + 1
                                                          : 0;
    for (int s = 0; s < nstats; s++)
        if (!strcmp(agent_stat_wire((enum agent_stat)s), key)) return 1;
    return 0;
}

/* Place of the objects under key in an object of place p, or -1. */
static int child_place(enum agent_place p, const char *key)
{
    if (p == AGENT_IN_DELTA) {
        if (!strcmp(key, agent_key_name(AGENT_KEY_LINES))) return AGENT_IN_LINE;
        if (!strcmp(key, agent_key_name(AGENT_KEY_FUNCS))) return AGENT_IN_FUNC;
        if (!strcmp(key, agent_key_name(AGENT_KEY_THREADS))) return AGENT_IN_THREAD;
        if (!strcmp(key, agent_key_name(AGENT_KEY_MEM))) return AGENT_IN_MEM;
        if (!strcmp(key, agent_key_name(AGENT_KEY_GPU))) return AGENT_IN_GPU;
    }
    if (p == AGENT_IN_NOW && !strcmp(key, agent_key_name(AGENT_KEY_THREADS)))
        return AGENT_IN_NOW_THREAD;
    return -1;
}

/* 1 when v holds a JSON object anywhere inside (arrays of arrays too). */
static int has_object(const json_t *v)
{
    if (json_is_object(v)) return 1;
    if (json_is_array(v))
        for (size_t i = 0; i < json_array_size(v); i++)
            if (has_object(json_array_get(v, i))) return 1;
    return 0;
}

static void check_obj(const json_t *o, enum agent_place p, int lineno)
{
    seen[p]++;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)o, key, v)
    {
        keys_checked++;
        if (!key_known(key, p))
            problem(lineno, "key '%s' in %s is not in protocol/agent_keys.h", key, place_names[p]);
        int cp = child_place(p, key);
        if (cp < 0) {
            if (has_object(v))
                problem(lineno, "objects under '%s' in %s have no place in agent_keys.h", key,
                        place_names[p]);
            continue;
        }
        if (json_is_object(v)) {
            check_obj(v, (enum agent_place)cp, lineno);
        } else if (json_is_array(v)) {
            for (size_t i = 0; i < json_array_size(v); i++) {
                json_t *e = json_array_get(v, i);
                if (json_is_object(e))
                    check_obj(e, (enum agent_place)cp, lineno);
                else
                    problem(lineno, "an entry of '%s' in %s is not an object", key, place_names[p]);
            }
        }
    }
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s wire.jsonl [PLACE,...]\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0, messages = 0;
    while (getline(&line, &cap, f) > 0) {
        lineno++;
        json_error_t je;
        json_t *o = json_loads(line, 0, &je);
        if (!json_is_object(o)) {
            problem(lineno, "not a JSON object: %s%s", je.text, "");
            json_decref(o);
            continue;
        }
        const char *t = json_string_value(json_object_get(o, agent_key_name(AGENT_KEY_T)));
        int p = -1;
        for (int i = 0; t && i < AGENT_NPLACES; i++)
            if (agent_place_type((enum agent_place)i) &&
                !strcmp(agent_place_type((enum agent_place)i), t))
                p = i;
        if (p < 0)
            problem(lineno, "message type '%s' is not in protocol/agent_keys.h%s", t ? t : "(none)",
                    "");
        else
            check_obj(o, (enum agent_place)p, lineno);
        messages++;
        json_decref(o);
    }
    free(line);
    fclose(f);
    if (argc == 3) {
        char *need = strdup(argv[2]);
        for (char *tok = strtok(need, ","); tok; tok = strtok(NULL, ",")) {
            int found = 0;
            for (int i = 0; i < AGENT_NPLACES; i++)
                if (!strcmp(place_names[i], tok)) {
                    found = 1;
                    if (!seen[i]) problem(0, "no %s in the stream%s", tok, "");
                }
            if (!found) problem(0, "unknown place '%s'%s", tok, "");
        }
        free(need);
    }
    printf("%d messages, %ld keys checked:", messages, keys_checked);
    for (int i = 0; i < AGENT_NPLACES; i++)
        printf(" %s=%d", place_names[i], seen[i]);
    printf("\n");
    if (!messages) problem(0, "empty stream%s%s", "", "");
    if (problems) fprintf(stderr, "%d problem(s)\n", problems);
    return problems ? 1 : 0;
}
