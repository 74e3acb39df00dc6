/*
** sk_parallel.h — parallel loops with a grain size
** Work below the grain runs on the calling thread: an OpenMP fork/join
** costs 3–5 µs here, so two threads pay off only past ~64K elements.
*/
#ifndef SK_PARALLEL_H
#define SK_PARALLEL_H

#include <stdint.h>

#define SK_GRAIN 32768

typedef void (*SkRangeFn)(void *ctx, int64_t begin, int64_t end);

/* Runs fn over [begin, end) in chunks of at least grain elements. */
void sk_parallel_for(int64_t begin, int64_t end, int64_t grain, SkRangeFn fn, void *ctx);
/* Threads of the CPU kernels, 1..SK_MAX_THREADS. Raising the count first
** starts that many threads at once and ends them: a count the process cannot
** run (a memory limit) is an error here, not an exit inside libgomp later. */
#define SK_MAX_THREADS 1024
int sk_set_num_threads(int n);
int sk_get_num_threads(void);
int sk_in_parallel_region(void);

#endif
