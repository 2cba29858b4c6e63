/* charge.h: the charging rule, one sample of one thread -> seconds per
 * category, the frame they go to, and how long the thread has been there.
 * Shared by the in-process agent (profiler/sampler.c) and the out-of-process
 * attach, so that both charge a sample the same way (method:
 * docs/sampling.md). Pure code, no state of its own: plain structs in,
 * result out; tests/unit/test_charge.c feeds it synthetic samples.
 */
#ifndef HOTLINE_CHARGE_H
#define HOTLINE_CHARGE_H

#include <stddef.h>

/* One sample of one thread: the interval since its previous sample. */
typedef struct {
    double dw;   /* wall seconds since the thread's previous sample (> 0) */
    double dc;   /* CPU seconds the thread used in dw (>= 0) */
    double busy; /* CPU + run-queue wait in dw; a caller that cannot read the
                  * wait passes dw (then cpu is min(dc, dw)) */
    int running; /* on a CPU or runnable at the sample instant */
    int cat;     /* CAT_PY or CAT_NAT (probe.h): the thread's running category,
                  * from this tick's probe window or kept from an earlier one */
} charge_in_t;

/* What the sample charges. py + nat + sys == dw. */
typedef struct {
    double py, nat, sys;
    double cpu; /* on-CPU seconds of the running part (the rest waited for a CPU) */
    int state;  /* CAT_SYS when not running, else cat: the `now` state */
} charge_t;

/* The whole interval goes to the thread's state at the sample instant (a
 * point estimate: sample instants are random, so each line gets its true
 * time per category on average). Splitting the interval by its busy
 * fraction instead would charge the CPU burnt on one line to the line where
 * the thread then blocked (a copy loop followed by a sleep showed its time on
 * the sleep line). in and out are borrowed. */
void charge_interval(const charge_in_t *in, charge_t *out);

/* The frame charged: the index of the innermost frame (index 0 is the
 * innermost) whose `profiled` flag is non-zero, or -1 when no frame is part
 * of the profiled program. Frame i's flag is the int `stride` bytes after
 * frame i-1's, so a caller passes a member of its own frame array,
 * charge_frame(&fr[0].profiled, sizeof fr[0], n), or a plain int array
 * with stride sizeof(int). Borrowed. */
int charge_frame(const int *profiled, size_t stride, int n);

/* Where a thread is (its charged file and line) and since when. */
typedef struct {
    long long file;
    int line;
    double since; /* the caller's clock; 0 before the first move */
} charge_pos_t;

/* The thread is at (file, line) at time now: since restarts when that
 * differs from where it was. Returns the seconds spent there so far. */
double charge_pos_at(charge_pos_t *pos, long long file, int line, double now);

/* ---- which samples count (the notebook issue: idle threads drowned the
 * cell). A sample counts in the profile, by default, when its stack holds a
 * frame of the user's code (charge_frame() >= 0) and either the thread is
 * running (python or native: state != CAT_SYS) or the thread is "active":
 * the main thread, or one that has used CHARGE_ACTIVE_CPU_S of CPU with the
 * user's code on its stack. So threads that never executed the user's code
 * (ipykernel's IOPub, heartbeat, control and history threads, zmq pollers,
 * marimo's server threads, an idle ThreadPoolExecutor's workers: no user
 * frame ever) and the waiting of a thread parked in the user's code before
 * it ever ran there (threading.Thread(target=f) with f blocked on an Event
 * or a queue) never count, nor a kernel's main thread between cells. The
 * CPU bound, not "one running sample", keeps a parked thread's start-up
 * (~0.1-0.3 ms of CPU, sometimes caught running) from making it active;
 * running samples always count, so short worker threads keep their time.
 * A thread that only waits in the user's code (a reader blocked on a pipe
 * from its first instruction) is idle by this rule too: the sampler cannot
 * tell its wait from a parked thread's. The setting `all_threads` counts
 * every sample, as before. */
#define CHARGE_ACTIVE_CPU_S 0.002

/* Per thread: the CPU it used with the user's code on its stack. */
typedef struct {
    double user_cpu;
} charge_active_t;

/* One sample of a thread (main: 1 for the process's main thread; user:
 * charge_frame() >= 0; state: charge_t's; dc: the CPU of the interval):
 * updates act and returns 1 when the sample counts by the rule above. */
int charge_counts(charge_active_t *act, int main, int user, int state, double dc);
#endif
