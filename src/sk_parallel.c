/*
** sk_parallel.c — parallel_for on OpenMP
** Nested calls run serially: a kernel called from a parallel region
** never forks again.
*/
#include "sk_parallel.h"

#ifdef _OPENMP
#include <omp.h>
#endif

static int num_threads;

void sk_set_num_threads(int n) { num_threads = n > 0 ? n : 1; }

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
