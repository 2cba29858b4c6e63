/* aggregate.h: what the sampler accumulates between two deltas
 * (aggregate.c): interned strings and stacks, and one keyed table type used
 * for lines, funcs, threads, stacks and stack weights per thread. The tables live in struct agent
 * (agent.h); the functions take the agent for its tables and output buffer.
 */
#ifndef HOTLINE_AGGREGATE_H
#define HOTLINE_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

typedef struct agent agent_t;
struct agent_emit_frame; /* protocol/agent_emit.h */

/* One resolved frame: what walk.c produces and the tables key on. */
typedef struct {
    int file_id, name_id, line, first, last;
    int profiled;
} agent_frame_t;

typedef struct {
    uint32_t k[3];
    uint32_t extra; /* funcs: last line; threads: name string id */
    double py, nat, sys, cpu, w;
    uint32_t n;
    uint8_t dirty;
} agg_row_t;

typedef struct {
    agg_row_t *rows;
    int nrows, caprows, maxrows;
    int *slots; /* row index + 1, 0 = empty */
    int nslots;
    int *dirty;
    int ndirty;
} agg_table_t;

typedef struct {
    char **s;
    uint32_t *hash;
    int n, cap;
    int *slots;
    int nslots;
    size_t bytes;
} agg_strings_t;

int agg_intern(agent_t *a, const char *s, size_t n); /* id > 0 or -errno */
const char *agg_string(agent_t *a, int id);          /* borrowed */
int agg_get(agg_table_t *t, uint32_t k0, uint32_t k1, uint32_t k2, int *created);
void agg_mark(agg_table_t *t, int row);
int agg_stack_id(agent_t *a, const agent_frame_t *fr, int n); /* id > 0 or <0 */
/* fr[0..n) as the wire's frames into out (cap of them at most): the count. */
int agg_wire_frames(const agent_frame_t *fr, int n, struct agent_emit_frame *out, int cap);
int agg_stack_add(agent_t *a, int sid, uint32_t tid, double dw);
void agg_free(agent_t *a);
int agg_emit_delta(agent_t *a, double ts);

#endif
