/* wire.h: the agent's side of the connection (wire.c): sends struct
 * agent's output buffer, reads "now"/"stop", watches the server in LSP mode.
 * Sampler thread only after start, except wire_open / the first flush. */
#ifndef HOTLINE_WIRE_H
#define HOTLINE_WIRE_H

typedef struct agent agent_t;

int wire_open(agent_t *a, const char *path, int is_socket); /* 0 or -errno */
void wire_flush(agent_t *a);                                /* non-blocking */
void wire_drain(agent_t *a, double timeout_s);              /* at the end */
int wire_poll_in(agent_t *a);                               /* handles now/stop; 1 = stop asked */
void wire_close(agent_t *a);                  /* closes our descriptor only if still ours */
void wire_report_lost(agent_t *a, double ts); /* the program closed it: say so to the server */
void wire_server_init(agent_t *a, long pid);  /* LSP mode: the server to die with */
void wire_server_check(agent_t *a);           /* LSP mode: SIGKILL us if the server is gone */

#endif
