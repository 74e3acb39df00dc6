/*
** sk_parallel.c — parallel_for on OpenMP
** Nested calls run serially: a kernel called from a parallel region
** never forks again.
*/
#include "sk_parallel.h"
#include "sk_error.h"

#include <pthread.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

static int num_threads, proven = 1; /* proven: a count known to start */

static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static void *wait_gate(void *p) {
  (void)p;
  pthread_mutex_lock(&gate);
  pthread_mutex_unlock(&gate);
  return NULL;
}

/* Starts n - 1 threads that live at the same time, then ends them. */
static int probe_threads(int n) {
  pthread_t th[SK_MAX_THREADS];
  int started = 0, rc = 0;
  pthread_mutex_lock(&gate);
  while (started < n - 1 && (rc = pthread_create(&th[started], NULL, wait_gate, NULL)) == 0) started++;
  pthread_mutex_unlock(&gate);
  for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
  if (rc) return sk_error("cannot run %d threads (%d started): %s", n, started + 1, strerror(rc));
  return 0;
}

int sk_set_num_threads(int n) {
  if (n < 1 || n > SK_MAX_THREADS) return sk_error("the thread count must be between 1 and %d, got %d", SK_MAX_THREADS, n);
  if (n > proven) {
    if (probe_threads(n)) return -1;
    proven = n;
  }
  num_threads = n;
#ifdef _OPENMP
  omp_set_num_threads(n); /* libraries on sk's OpenMP pool (oneDNN) follow sk's count */
#endif
  return 0;
}

int sk_get_num_threads(void) {
#ifdef _OPENMP
  if (!num_threads) num_threads = omp_get_num_procs();
  return num_threads;
#else
  return 1;
#endif
}

int sk_in_parallel_region(void) {
#ifdef _OPENMP
  return omp_in_parallel();
#else
  return 0;
#endif
}

void sk_parallel_for(int64_t begin, int64_t end, int64_t grain, SkRangeFn fn, void *ctx) {
  int64_t n = end - begin;
  if (n <= 0) return;
  int nt = sk_get_num_threads();
  if (grain < 1) grain = 1;
  int64_t max_chunks = (n + grain - 1) / grain;
  if (nt > max_chunks) nt = (int)max_chunks;
  if (nt <= 1 || sk_in_parallel_region()) { fn(ctx, begin, end); return; }
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
  {
    int tid = omp_get_thread_num(), cnt = omp_get_num_threads();
    int64_t chunk = (n + cnt - 1) / cnt;
    int64_t b = begin + tid * chunk, e = b + chunk < end ? b + chunk : end;
    if (b < e) fn(ctx, b, e);
  }
#else
  fn(ctx, begin, end);
#endif
}
