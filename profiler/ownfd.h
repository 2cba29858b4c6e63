/* ownfd.h: descriptors of ours in a table shared with the program
 * (ownfd.c). No other module, no state beyond the handle itself.
 */
#ifndef HOTLINE_OWNFD_H
#define HOTLINE_OWNFD_H

#include <sys/types.h>

/* A descriptor of ours, with what it referred to when opened. */
typedef struct {
    int fd; /* -1: none, or no longer ours (never touched again) */
    dev_t dev;
    ino_t ino;
} agent_fd_t;

void ownfd_set(agent_fd_t *o, int fd); /* adopts fd, just opened (none when fd < 0) */
int ownfd_get(agent_fd_t *o);          /* fd while it is still ours, else -1 (forgotten) */
void ownfd_close(agent_fd_t *o);       /* closes it only while it is still ours */
/* The calling thread gets a descriptor table of its own holding only keep
 * (and /dev/null on 0-2); 1, or 0 when refused (the table stays shared). */
int ownfd_private_table(int keep);

#endif
