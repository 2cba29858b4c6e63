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
 * cell). By default a sample counts in the profile only when its stack holds
 * a frame of the user's code (charge_frame() >= 0). So threads that are not
 * in the user's code (ipykernel's IOPub, heartbeat, control and history
 * threads, zmq pollers, marimo's server threads, an idle
 * ThreadPoolExecutor's workers, a kernel's main thread between cells) count
 * nowhere: not in lines, threads, stacks nor totals, so every total agrees.
 * A thread waiting inside the user's code (a feeder that sleeps, a reader
 * blocked on a pipe, a worker parked on an Event in the user's function)
 * still counts: that wait is where the user's code is, and its line shows
 * it as system time. A rule that also hid such waits (counting them only
 * once the thread had used some CPU in the user's code) was tried and
 * dropped: it hid I/O-bound threads, whose waiting is what the python /
 * native / system split is for. `all_threads` counts every sample. */
int charge_counts(int user, int all_threads);
#endif
